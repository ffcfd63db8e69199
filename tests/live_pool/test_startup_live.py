"""``cedar ping``/``cedar q`` against the real pool load only what they use, over their whole
run (handshake, session key, answer): never submission, spooling, peek, file transfer,
Construct or the server side, and with FS no credential method's module either.

The unit tests (``tests/cli/test_startup.py``) pin what is loaded before the first byte; this
one the rest of the way, against real daemons.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.cli.test_startup import NOT_ON_A_QUERY, NOT_ON_CLIENT_PATHS

#: Loaded only when a credential method really runs (not with FS).
CREDENTIAL_MODULES = (
    "cedar.auth.token",
    "cedar.auth.signing_key",
    "cedar.auth.tls",
    "cedar.auth.scitoken",
    "cedar.auth.methods.idtokens",
    "cedar.auth.methods.ssl_methods",
    "ssl",
)


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, set[str]]:
    # What the interpreter loaded before the program (a system Python's site packages may
    # load pathlib, fnmatch, ... at start-up, as the one the as-testuser run uses does) is not
    # the program's: only modules that appear after the first line count.
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import json\n"
        "from cedar.cli.main import main\n"
        f"status = main({argv!r})\n"
        "sys.stdout.flush()\n"
        "print('\\nMODULES ' + json.dumps([status, sorted(set(sys.modules) - before)]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=env,
    )
    output, _, line = result.stdout.rpartition("\nMODULES ")
    status, modules = json.loads(line)
    return int(status), output, set(modules)


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_ping_loads_only_its_method() -> None:
    pool = os.environ["CEDAR_LIVE_COLLECTOR"]
    status, output, modules = _run(["ping", "--pool", pool, "--json", "WRITE"])
    assert status == 0, output
    method = json.loads(output)["results"][0]["method"]
    if method == "FS":
        assert _loaded(modules, NOT_ON_CLIENT_PATHS + CREDENTIAL_MODULES) == []
    else:  # another user's environment: at least nothing but that method's own modules
        other = tuple(n for n in NOT_ON_CLIENT_PATHS if n not in CREDENTIAL_MODULES)
        assert _loaded(modules, other) == []
    assert "cedar.classad_wire.builtins" not in modules  # a ping evaluates no function call


def test_q_loads_no_submission_peek_or_transfer() -> None:
    pool = os.environ["CEDAR_LIVE_COLLECTOR"]
    status, output, modules = _run(["q", "-allusers", "-pool", pool])
    if status != 0:
        pytest.fail(f"cedar q failed ({status}): {output}")
    assert "Total for query" in output
    other = tuple(n for n in NOT_ON_CLIENT_PATHS if n not in CREDENTIAL_MODULES)
    assert _loaded(modules, other) == []


def test_q_totals_with_a_token_loads_none_of_the_costly_standard_modules(
    live_token_dir: str | None,
) -> None:
    """Issue 39's case: ``cedar q -totals`` authenticating with IDTOKENS under AES-GCM (FS
    when this user cannot read the pool's token), over its whole run: no ``dataclasses``,
    ``inspect``, ``logging``, ``threading``, second OpenSSL, ..."""
    pool = os.environ["CEDAR_LIVE_COLLECTOR"]
    env = dict(os.environ)
    if live_token_dir is not None:
        env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
        env["_condor_SEC_TOKEN_DIRECTORY"] = live_token_dir
    status, output, modules = _run(["q", "-totals", "-pool", pool], env)
    if status != 0:
        pytest.fail(f"cedar q failed ({status}): {output}")
    assert "Total for query" in output
    if live_token_dir is not None:
        assert "cedar.auth.methods.idtokens" in modules  # it did authenticate with the token
    assert _loaded(modules, NOT_ON_A_QUERY) == []
