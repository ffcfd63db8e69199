"""The import layers of ``cedar`` (docs/ARCHITECTURE.md): a module imports only from its own
layer or the ones below, never upwards, not even inside a function or under TYPE_CHECKING.

Bottom to top; one entry per top-level module or package of ``cedar``.  A new top-level
module must be added here (the test names it), so that its place is a decision.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "cedar"

LAYERS: list[set[str]] = [
    {
        "errors",
        "numbers",
        "version",
    },  # facts and exceptions: import nothing of cedar but each other
    {"stream"},  # framing, primitives, connection, protocol coroutines, drivers
    {"classad_wire"},  # ClassAd values, expressions, wire codec
    {"jobid"},  # the one job-id grammar (its constraints are classad_wire trees)
    {"config"},  # the HTCondor configuration language
    {"auth"},  # the security handshake in both roles, methods, sessions, tokens
    {"commands"},  # the clients of each daemon command
    {"server"},  # the mock daemons
    {"capture", "conformance"},  # dissector and replay; the conformance battery (clients)
    {"output", "analysis"},  # condor-style printing of ads (-af, -format, tables); match analysis
    {"service"},  # what every service shares: the caller's identity, scoping, per-token sessions
    # programs, compatibility layers, conformance battery, the HTTP API and the MCP server
    {"cli", "compat", "conformance", "serve", "mcp_server"},
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
