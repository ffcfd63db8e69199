"""The import layers of ``cedar`` (docs/ARCHITECTURE.md): a module imports only from its own
layer or the ones below, never upwards, not even inside a function or under TYPE_CHECKING.

Bottom to top; one entry per top-level module or package of ``cedar``.  A new top-level
module must be added here (the test names it), so that its place is a decision.

Inside the layers (further down): no import circle among the files of one folder, no
``_private`` name imported from another file, no module over ``MAX_LINES`` lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "cedar"

LAYERS: list[set[str]] = [
    {
        "errors",
        "lazy",
        "old_names",
        "numbers",
        "record",
        "version",
    },  # facts and exceptions: import nothing of cedar but each other
    {"stream"},  # framing, primitives, connection, protocol coroutines, drivers
    {"classad_wire"},  # ClassAd values, expressions, wire codec
    {"jobid"},  # the one job-id grammar (its constraints are classad_wire trees)
    {"config"},  # the HTCondor configuration language
    {"submit_language"},  # the submit language: a description -> job ads
    {"auth"},  # the security handshake in both roles, methods, sessions, tokens
    {"commands"},  # the clients of each daemon command
    {"daemons"},  # the mock daemons
    {"capture", "conformance"},  # dissector and replay; the conformance battery (clients)
    {"output", "analysis"},  # condor-style printing of ads (-af, -format, tables); match analysis
    # what every service shares: the caller's identity, scoping, per-token sessions
    {"service_core"},
    # programs, compatibility layers, conformance battery, the HTTP API and the MCP server
    {"cli", "compat", "conformance", "http_api", "mcp"},
    {"__init__", "__main__"},  # the package's public face
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _top(module: str) -> str | None:
    """``cedar.auth.client`` -> ``auth``; anything outside cedar -> None."""
    parts = module.split(".")
    if parts[0] != "cedar":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            if node.module == "cedar":  # from cedar import auth
                found += [(node.lineno, f"cedar.{alias.name}") for alias in node.names]
    return found


def _own_layer(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 else rel.stem


FILES = sorted(ROOT.rglob("*.py"))


def test_every_top_level_module_has_a_layer() -> None:
    unknown = sorted({_own_layer(path) for path in FILES} - set(RANK))
    assert not unknown, f"add {unknown} to LAYERS in {Path(__file__).name}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_upward_import(path: Path) -> None:
    own = _own_layer(path)
    if own not in RANK:
        pytest.skip(f"{own} has no layer (see the test above)")
    upward = []
    for line, module in _imports(path):
        target = _top(module)
        if target is None or target == own:
            continue
        if target not in RANK or RANK[target] > RANK[own]:
            upward.append(f"line {line}: {module}")
    assert not upward, f"{path.relative_to(ROOT)} ({own}) imports upwards: {upward}"


# --- The seams inside a folder -------------------------------------------------------------
#
# A folder's files form a tree of imports, never a circle: a circle means two files are one
# thing split badly (merge them) or share a thing that belongs in a lower file (move it).
# A ``_name`` is its file's business: another file that needs it needs a public name.
# A module over MAX_LINES lines is several things; split it by what it does.

MAX_LINES = 900


def _check(key: str, problems: list[str], message: str) -> None:
    """Fail on ``problems``, naming the rule (``key``) and what breaks it."""
    assert not problems, f"{key}: {message}: {problems}"


def _module_name(path: Path) -> str:
    """``cedar/capture/replay.py`` -> ``cedar.capture.replay``; a package's ``__init__.py`` is
    the package's name."""
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULE_FILES: dict[str, Path] = {_module_name(path): path for path in FILES}


def _package_of(path: Path) -> str:
    """The package a file's relative imports start from."""
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _resolve_from(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names (``from ..x import y`` -> ``cedar.x``)."""
    if node.level == 0:
        return node.module or ""
    base = _package_of(path).split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _cedar_imports(path: Path, tree: ast.Module) -> list[tuple[int, str, str | None]]:
    """Every import of a cedar module by ``path``, wherever it stands (top level, function,
    TYPE_CHECKING): ``(line, module, name)``; ``name`` is the imported attribute of a
    ``from ... import name`` that is not itself a module, else None."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name, None)
                for alias in node.names
                if alias.name.split(".")[0] == "cedar"
            ]
        elif isinstance(node, ast.ImportFrom):
            module = _resolve_from(path, node)
            if module.split(".")[0] != "cedar":
                continue
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                if submodule in MODULE_FILES:  # from pkg import module
                    found.append((node.lineno, submodule, None))
                else:
                    found.append((node.lineno, module, alias.name))
    return found


def _folder_graph() -> dict[str, dict[str, set[str]]]:
    """folder -> file -> the files of the same folder it imports."""
    graph: dict[str, dict[str, set[str]]] = {}
    for path in FILES:
        folder = str(path.parent.relative_to(ROOT))
        edges = graph.setdefault(folder, {}).setdefault(path.name, set())
        for _line, module, _name in _cedar_imports(path, _parse(path)):
            target = MODULE_FILES.get(module)
            if target is not None and target.parent == path.parent and target != path:
                edges.add(target.name)
    return graph


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


FOLDERS = _folder_graph()


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_no_import_circle_inside_a_folder(folder: str) -> None:
    circles = [" <-> ".join(circle) for circle in _circles(FOLDERS[folder])]
    _check(f"circle:{folder}", circles, f"cedar/{folder}: files that import each other")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_bindings(tree: ast.AST, path: Path) -> dict[str, str]:
    """Local names bound to a cedar module (``import cedar.x as m``, ``from cedar import x``,
    ``from . import x``) -> the module's name."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "cedar":
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["cedar"] = "cedar"
        elif isinstance(node, ast.ImportFrom):
            module = _resolve_from(path, node)
            for alias in node.names:
                if f"{module}.{alias.name}" in MODULE_FILES:
                    bound[alias.asname or alias.name] = f"{module}.{alias.name}"
    return bound


def _dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The cedar module an expression like ``m`` or ``cedar.x.y`` names, if any."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, bound)
        if base is not None and f"{base}.{node.attr}" in MODULE_FILES:
            return f"{base}.{node.attr}"
    return None


def _private_crossings(path: Path, tree: ast.Module) -> list[str]:
    own = _module_name(path)
    crossings = [
        f"line {line}: from {module} import {name}"
        for line, module, name in _cedar_imports(path, tree)
        if name is not None and _private(name) and module != own
    ]
    bound = _module_bindings(tree, path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            module = _dotted(node.value, bound)
            if module is not None and module != own:
                crossings.append(f"line {node.lineno}: {module}.{node.attr}")
    return crossings


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_name_crosses_a_file(path: Path) -> None:
    rel = path.relative_to(ROOT)
    _check(
        f"private:{rel}",
        _private_crossings(path, _parse(path)),
        f"{rel} uses another file's _private names (make them public in the lower file)",
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_over_max_lines(path: Path) -> None:
    rel = path.relative_to(ROOT)
    lines = len(path.read_text(encoding="utf-8").splitlines())
    too_long = [f"{lines} lines"] if lines > MAX_LINES else []
    _check(f"lines:{rel}", too_long, f"{rel} is over {MAX_LINES} lines: split it by what it does")


def test_the_seam_checks_can_fail() -> None:
    """The detectors find what they are for (a fabricated file in ``cedar/capture``)."""
    assert _circles({"a.py": {"b.py"}, "b.py": {"c.py"}, "c.py": {"a.py"}, "d.py": {"a.py"}}) == [
        ["a.py", "b.py", "c.py"]
    ]
    assert _circles({"a.py": {"b.py"}, "b.py": set()}) == []
    source = """
import cedar.capture.pcap as pcap_module
from . import tcp
from .tcp import _hidden, public, __version__
from cedar.capture import _dpkt
import cedar.capture.writer
def f():
    from cedar.capture.messages import _inner
    return tcp._helper, pcap_module._reader, cedar.capture.writer._w, tcp.__name__
"""
    fake = ROOT / "capture" / "fake.py"
    crossings = _private_crossings(fake, ast.parse(source))
    assert [c.split(": ", 1)[1] for c in crossings] == [
        "from cedar.capture.tcp import _hidden",
        "from cedar.capture.messages import _inner",
        "cedar.capture.tcp._helper",
        "cedar.capture.pcap._reader",
        "cedar.capture.writer._w",
    ]
    modules = {module for _line, module, _name in _cedar_imports(fake, ast.parse(source))}
    assert {"cedar.capture.tcp", "cedar.capture.pcap", "cedar.capture._dpkt"} <= modules
