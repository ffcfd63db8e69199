"""Give the packages names that show the layers (issue 37, point 5), by a re-runnable script.

    python tools/relayer.py           # move the packages and rewrite every reference (idempotent)
    python tools/relayer.py --check   # exit 1, naming each place, if anything uses the old layout

The move (``git mv``, so history follows) and what the script rewrites:

====================================  ================================================
old                                   new
====================================  ================================================
``cedar/server/``                     ``cedar/daemons/`` (daemon framework, mock pool)
``cedar/serve/``                      ``cedar/http_api/`` (REST, restd /v1, IRI, web page)
``cedar/service/``                    ``cedar/service_core/`` (what every mouth shares)
``cedar/mcp_server/``                 ``cedar/mcp/`` (the MCP shell)
``cedar/commands/submit/``            ``cedar/submit_language/`` (its own layer)
``tests/server``, ``serve``,          ``tests/daemons``, ``http_api``, ``service_core``,
``service``, ``submit``               ``submit_language`` (``tests/mcp_server`` keeps its
                                      name: ``tests/`` is on ``sys.path`` under pytest, and
                                      a ``tests/mcp`` package would shadow the MCP SDK)
====================================  ================================================

Every tracked text file outside ``captures/`` (recordings, kept verbatim) is rewritten:
dotted module names (``cedar.serve.app``, ``tests.serve.conftest``), paths (``cedar/serve/``,
``tests/serve``) and paths below ``cedar/`` written without it (``"serve/models.py"``,
``commands/submit/``), plus the layer table of ``tests/test_layers.py``. Each pattern's old form
cannot match its new form, so a second run changes nothing. Python files it changed are then
sorted (ruff's import rule) and formatted, as the suite's style test wants.

Left alone: the files in :data:`KEEP` (this script and the old-name aliases, which must spell
the old names) and any line carrying ``relayer: keep``.

``--check`` also parses every Python file and reports an import of an old name written in a
form the text patterns do not see (``from cedar import serve``, ``from cedar.commands import
submit``, relative imports). ``tests/test_relayer.py`` runs it, so new code written against
the old layout fails the suite.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (old path, new path), packages first; applied in this order.
MOVES: list[tuple[str, str]] = [
    ("cedar/commands/submit", "cedar/submit_language"),
    ("cedar/server", "cedar/daemons"),
    ("cedar/serve", "cedar/http_api"),
    ("cedar/service", "cedar/service_core"),
    ("cedar/mcp_server", "cedar/mcp"),
    ("tests/submit", "tests/submit_language"),
    ("tests/server", "tests/daemons"),
    ("tests/serve", "tests/http_api"),
    ("tests/service", "tests/service_core"),
]

#: Old module name -> new (the package moves of MOVES, as Python names).
MODULES: dict[str, str] = {
    old.replace("/", "."): new.replace("/", ".") for old, new in MOVES if old.startswith("cedar/")
}
#: Old top-level package of cedar -> new, as ``tests/test_layers.py``'s LAYERS names them.
LAYER_NAMES: dict[str, str] = {
    old.split("/")[1]: new.split("/")[1]
    for old, new in MOVES
    if old.startswith("cedar/") and old.count("/") == 1
}
#: The layer the submit language gets, and the layer it sits on.
NEW_LAYER = '    {"submit_language"},  # the submit language: a description -> job ads\n'
BELOW_NEW_LAYER = re.compile(r'^\s*\{"config"\},.*\n', re.MULTILINE)

#: Files that spell the old names on purpose.
KEEP = frozenset(
    {"tools/relayer.py", "cedar/old_names.py", "tests/test_old_names.py", "tests/test_relayer.py"}
)
#: Folders whose files are kept verbatim.
KEEP_FOLDERS = ("captures/",)
KEEP_MARK = "relayer: keep"
#: Not text.
BINARY_SUFFIXES = frozenset({".png", ".jpg", ".gif", ".ico", ".pcap", ".pcapng", ".woff2", ".gz"})


def _alternatives(names: list[str]) -> str:
    """A regex alternation, longest first (``server`` before ``serve``)."""
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


def _lookup(table: dict[str, str]) -> Callable[[re.Match[str]], str]:
    return lambda match: table[match.group(1)]


def _patterns() -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    """(pattern, replacement) pairs; the lookarounds keep ``cedar.server`` from matching in
    ``cedar.service_core`` or ``mycedar.server``."""
    found: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = []
    for sep in (".", "/"):
        table = {old.replace("/", sep): new.replace("/", sep) for old, new in MOVES}
        before = r"(?<![\w.])" if sep == "." else r"(?<![\w.-])"
        after = r"(?!\w)" if sep == "." else r"(?![\w-])"
        pattern = re.compile(before + "(" + _alternatives(list(table)) + ")" + after)
        found.append((pattern, _lookup(table)))
    # paths below cedar/ written without it: "serve/models.py", commands/submit/
    bare = {old.removeprefix("cedar/"): new.removeprefix("cedar/") for old, new in MOVES}
    bare = {old: new for old, new in bare.items() if not old.startswith("tests/")}
    pattern = re.compile(r"(?<![\w./-])(" + _alternatives(list(bare)) + r")/(?=[\w/]*\.py\b)")
    found.append((pattern, lambda m: bare[m.group(1)] + "/"))
    found.append((re.compile(r"(?<![\w./-])commands/submit(?=/)"), lambda m: "submit_language"))
    return found


PATTERNS = _patterns()


def rewrite_text(text: str) -> str:
    """``text`` with every old name replaced (lines marked ``relayer: keep`` as they are)."""
    if not any(pattern.search(text) for pattern, _ in PATTERNS):
        return text
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if KEEP_MARK in line:
            continue
        for pattern, replace in PATTERNS:
            line = pattern.sub(replace, line)
        lines[index] = line
    return "".join(lines)


def rewrite_layers(text: str) -> str:
    """``tests/test_layers.py`` with LAYERS naming the new packages and the submit layer."""
    block = re.search(r"^LAYERS: .*?^\]\n", text, re.MULTILINE | re.DOTALL)
    if block is None:
        raise SystemExit("tests/test_layers.py: no LAYERS block found; edit it by hand")
    names = _alternatives(list(LAYER_NAMES))
    layers = re.sub(r'"(' + names + r')"', lambda m: f'"{LAYER_NAMES[m.group(1)]}"', block[0])
    if '"submit_language"' not in layers:
        below = BELOW_NEW_LAYER.search(layers)
        if below is None:
            raise SystemExit('tests/test_layers.py: no {"config"} layer; add submit_language')
        layers = layers[: below.end()] + NEW_LAYER + layers[below.end() :]
    lines = [_comment_above(line) for line in layers.splitlines(keepends=True)]
    return text[: block.start()] + "".join(lines) + text[block.end() :]


def _comment_above(line: str, width: int = 100) -> str:
    """A layer line grown past the line length: its comment on the line above (as ruff
    format would otherwise split the set over three lines)."""
    code, mark, comment = line.rstrip("\n").partition("  # ")
    if len(line.rstrip("\n")) <= width or not mark:
        return line
    indent = code[: len(code) - len(code.lstrip())]
    return f"{indent}# {comment}\n{code}\n"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def tracked(below: str = "") -> list[str]:
    """Tracked files (as the index has them), optionally below one folder."""
    listed = _git("ls-files", "-z", *([below] if below else [])).split("\0")
    return [name for name in listed if name and (ROOT / name).is_file()]


def _text_files() -> list[str]:
    return [
        name
        for name in tracked()
        if name not in KEEP
        and not name.startswith(KEEP_FOLDERS)
        and Path(name).suffix not in BINARY_SUFFIXES
    ]


def _read(name: str) -> str | None:
    data = (ROOT / name).read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _clean_caches(folder: Path) -> None:
    """Remove ``__pycache__`` below ``folder``, then ``folder`` and its parents if empty."""
    if folder.is_dir():
        for cache in sorted(folder.rglob("__pycache__"), reverse=True):
            shutil.rmtree(cache, ignore_errors=True)
        for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
            if not any(sub.iterdir()):
                sub.rmdir()
        if not any(folder.iterdir()):
            folder.rmdir()


def move_packages() -> list[str]:
    """``git mv`` each old folder (or each file of it, when the new folder exists already)."""
    moved = []
    for old, new in MOVES:
        files = tracked(old + "/")
        if not files:
            _clean_caches(ROOT / old)
            continue
        if not (ROOT / new).exists():
            _clean_caches_only(ROOT / old)
            _git("mv", old, new)
        else:
            for name in files:
                target = new + name[len(old) :]
                (ROOT / target).parent.mkdir(parents=True, exist_ok=True)
                _git("mv", name, target)
        _clean_caches(ROOT / old)
        _clean_caches_only(ROOT / new)
        moved.append(f"{old}/ -> {new}/ ({len(files)} files)")
    return moved


def _clean_caches_only(folder: Path) -> None:
    """Stale ``__pycache__`` would name the old paths in tracebacks."""
    for cache in sorted(folder.rglob("__pycache__"), reverse=True):
        shutil.rmtree(cache, ignore_errors=True)


def planned_edits() -> dict[str, str]:
    """File -> its rewritten text, for every file the rewrite changes."""
    edits: dict[str, str] = {}
    for name in _text_files():
        text = _read(name)
        if text is None:
            continue
        new = rewrite_text(text)
        if name == "tests/test_layers.py":
            new = rewrite_layers(new)
        if new != text:
            edits[name] = new
    return edits


def _old_module(module: str) -> str | None:
    for old in MODULES:
        if module == old or module.startswith(old + "."):
            return old
    return None


def _resolve(name: str, node: ast.ImportFrom) -> str:
    """The absolute module of a (maybe relative) ``from ... import``."""
    if node.level == 0:
        return node.module or ""
    package = list(Path(name).with_suffix("").parts[:-1])  # a package's __init__ too
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


#: The import forms the text patterns cannot see (``from cedar import serve``, relative
#: imports): only a file with one of them is parsed.
NEEDS_PARSING = re.compile(r"^\s*from\s+(?:cedar(?:\.commands)?\s+import\b|\.)", re.MULTILINE)


def old_imports(name: str, text: str) -> list[str]:
    """Imports of an old module name in one Python file written in a form the text patterns
    do not see (``from cedar import serve``, ``from . import submit``, ...)."""
    if not NEEDS_PARSING.search(text):
        return []
    try:
        tree = ast.parse(text, name)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            base = _resolve(name, node)
            modules = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for module in modules:
            old = _old_module(module)
            if old is not None:
                new = MODULES[old] + module[len(old) :]
                found.append(f"{name}:{node.lineno}: {module} is now {new}")
                break
    return found


def check() -> list[str]:
    """Every place that still uses the old layout."""
    problems = []
    for old, new in MOVES:
        if files := tracked(old + "/"):
            problems.append(f"{old}/ still holds {len(files)} tracked files (move to {new}/)")
    for name, new in planned_edits().items():
        old_lines = (_read(name) or "").splitlines()
        for number, (before, after) in enumerate(zip(old_lines, new.splitlines(), strict=False), 1):
            if before != after:
                problems.append(f"{name}:{number}: {before.strip()[:100]}")
    for name in _text_files():
        if name.endswith(".py") and (text := _read(name)) is not None:
            problems += old_imports(name, text)
    return problems


def _ruff(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if needed")
    options = parser.parse_args(argv)
    if options.check:
        problems = check()
        for problem in problems:
            print(problem)
        if problems:
            print(f"{len(problems)} uses of the old layout: run python tools/relayer.py")
        return 1 if problems else 0
    for line in move_packages():
        print("moved", line)
    edits = planned_edits()
    for name, text in sorted(edits.items()):
        (ROOT / name).write_text(text, encoding="utf-8")
    print(f"rewrote {len(edits)} files")
    python = sorted(name for name in edits if name.endswith(".py"))
    if python:  # the new names sort and wrap differently
        _ruff("check", "--quiet", "--fix", "--select", "I001", *python)
        _ruff("format", "--quiet", *python)
    left = [problem for problem in check() if " is now " in problem or "still holds" in problem]
    if python:  # a comment or docstring grown past the line length
        long = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "check",
                "--select",
                "E501",
                "--output-format",
                "concise",
                *python,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        left += [line for line in long.splitlines() if "E501" in line]
    for problem in left:
        print("by hand:", problem)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
