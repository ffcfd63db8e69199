"""Start-up stays cheap: the modules each command path loads, by module list (never by timing).

``cedar q``/``cedar status``/``cedar ping`` are run in a fresh interpreter against a port that
refuses connections, so the whole client path (configuration, security, connection) is
imported and the command fails fast with exit 3; then ``sys.modules`` is compared against what
that path must never need.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Never on a listing or ping path: optional extras, the servers, the async runtime, the
#: credential libraries (imported only when a token or SciToken is really used).
NEVER = (
    "trio",
    "jwt",
    "scitokens",
    "cedar.serve",
    "cedar.mcp_server",
    "cedar.service",
    "cedar.compat",
    "cedar.server",
    "cedar.analysis",
    "cedar.capture",
)


def _loaded(argv: list[str]) -> tuple[int, set[str]]:
    code = (
        "import json, sys\n"
        "from cedar.cli.main import main\n"
        "try:\n"
        f"    status = main({argv!r})\n"
        "except SystemExit as exc:  # argparse's --help\n"
        "    status = exc.code or 0\n"
        "print('MODULES ' + json.dumps([status, sorted(sys.modules)]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    line = [x for x in result.stdout.splitlines() if x.startswith("MODULES ")][-1]
    status, modules = json.loads(line.removeprefix("MODULES "))
    return int(status), set(modules)


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


REFUSED = "127.0.0.1:1"  # nothing listens on port 1: connection refused at once


@pytest.mark.parametrize(
    "argv",
    [
        ["q", "-all", "-addr", REFUSED, "-timeout", "5"],
        ["q", "-all", "-long", "-addr", REFUSED, "-timeout", "5"],
        ["status", "-pool", REFUSED, "-timeout", "5"],
        ["ping", "--address", f"<{REFUSED}>", "--timeout", "5", "READ"],
    ],
    ids=["q", "q-long", "status", "ping"],
)
def test_command_paths_load_no_extras(argv: list[str]) -> None:
    status, modules = _loaded(argv)
    assert status in (1, 3)  # it really tried to connect (and loaded the client stack)
    assert "cedar.stream.connection" in modules or argv[0] == "ping"
    assert _heavy(modules, NEVER) == []


def test_q_loads_no_slot_tables_submission_or_peek() -> None:
    _, modules = _loaded(["q", "-all", "-addr", REFUSED, "-timeout", "5"])
    assert _heavy(modules, ("cedar.output.stables", "cedar.output.whole")) == []


def test_help_loads_no_protocol_stack() -> None:
    """``cedar q --help`` and ``cedar ping --help``: the parser alone (no ClassAds, no crypto)."""
    for argv in (["q", "--help"], ["ping", "--help"]):
        status, modules = _loaded(argv)
        assert status == 0
        heavy = ("cedar.classad_wire", "cedar.stream", "cedar.auth", "cedar.commands")
        assert _heavy(modules, heavy + ("cryptography", "construct")) == [], argv
