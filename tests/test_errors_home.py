"""Errors live in at most one module per package (issue 26): ``cedar/errors.py`` for the
hierarchy, then one ``errors.py`` (or the package's single module that defines any) per package.

An exception class is found by its bases, resolved by name across the whole tree: a class is an
exception when one of its bases is a builtin exception or another exception class of cedar.
"""

from __future__ import annotations

import ast
import builtins
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "cedar"


def _exception_classes() -> dict[Path, list[str]]:
    """Every module's exception classes (a fixpoint over the base names)."""
    known = {name for name, value in vars(builtins).items() if isinstance(value, type)}
    known = {name for name in known if issubclass(getattr(builtins, name), BaseException)}
    classes: list[tuple[Path, str, list[str]]] = []
    for path in sorted(ROOT.rglob("*.py")):
        if "_sync" in path.parts:  # generated from _async
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
                classes.append((path, node.name, bases))
    changed = True
    while changed:
        changed = False
        for _, name, bases in classes:
            if name not in known and any(base in known for base in bases):
                known.add(name)
                changed = True
    found: dict[Path, list[str]] = defaultdict(list)
    for path, name, bases in classes:
        if any(base in known for base in bases):
            found[path].append(name)
    return found


def _package(path: Path) -> str:
    """The package a module belongs to, relative to cedar (``commands/submit`` is its own)."""
    return str(path.parent.relative_to(ROOT)) if path.parent != ROOT else "."


def test_each_package_defines_exceptions_in_one_module() -> None:
    by_package: dict[str, set[str]] = defaultdict(set)
    for path in _exception_classes():
        by_package[_package(path)].add(path.name)
    crowded = {package: modules for package, modules in by_package.items() if len(modules) > 1}
    assert not crowded, f"exceptions defined in several modules of one package: {crowded}"


def test_the_finder_sees_the_known_homes() -> None:
    found = {str(path.relative_to(ROOT)) for path in _exception_classes()}
    assert {"errors.py", "commands/errors.py", "submit_language/errors.py"} <= found
    assert "service_core/errors.py" in found and "commands/qmgmt.py" not in found
