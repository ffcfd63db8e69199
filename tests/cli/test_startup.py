"""Start-up stays cheap: the modules each command path loads, by module list (never by timing).

``cedar q``/``cedar status``/``cedar ping`` are run in a fresh interpreter against a port that
refuses connections, so the whole client path (configuration, security, connection) is
imported and the command fails fast with exit 3; then ``sys.modules`` is compared against what
that path must never need.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.loopback import first_bytes, serving

#: Never on a listing or ping path: optional extras, the servers, the async runtime, the
#: credential libraries (imported only when a token or SciToken is really used).
NEVER = (
    "trio",
    "jwt",
    "scitokens",
    "cedar.http_api",
    "cedar.mcp",
    "cedar.service_core",
    "cedar.compat",
    "cedar.daemons",
    "cedar.analysis",
    "cedar.capture",
)


def _loaded(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, set[str]]:
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
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=env,
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


#: Never before the first byte of a ``q``/``ping`` (nor on their whole run, when the daemon
#: accepts FS: ``tests/live_pool/test_startup_live.py``): job-queue transactions, history,
#: submission, spooling, peek and file transfer; the credential methods' modules (imported when
#: a handshake uses one); the server side of the handshake; Construct (only ``PACKET_HEADER``).
NOT_ON_CLIENT_PATHS = (
    "cedar.commands.qmgmt",
    "cedar.commands.history",
    "cedar.submit_language",
    "cedar.commands.spool",
    "cedar.commands.peek",
    "cedar.commands._sync.peek",
    "cedar.commands.filetransfer",
    "cedar.auth.token",
    "cedar.auth.signing_key",
    "cedar.auth.tls",
    "cedar.auth.scitoken",
    "cedar.auth.methods.idtokens",
    "cedar.auth.methods.ssl_methods",
    "cedar.auth.server",
    "cedar.auth.server_policy",
    "ssl",
    "construct",
)
#: Not before the first byte either: what only a session key needs (AES-GCM, HKDF), the
#: ClassAd built-in functions (imported when a call is evaluated), and modules a client's
#: configuration reads only in rare cases.
NOT_BEFORE_FIRST_BYTE = (
    "cryptography.hazmat.primitives.ciphers",
    "cryptography.hazmat.primitives.kdf",
    "cryptography.hazmat.primitives.serialization",
    "cedar.classad_wire.builtins",
    "subprocess",
    "platform",
    "shutil",
    "pathlib",
    "encodings.idna",  # the host name is looked up as bytes; the daemon is an IP literal
)


@contextlib.contextmanager
def _hanging_up_daemon() -> Iterator[str]:
    """A listener that reads a client's first bytes and hangs up: the client has then sent
    its first message (command and security policy) and fails at once (connection closed)."""
    received: list[bytes] = []
    with serving(first_bytes(received)) as address:
        yield address
    assert received and received[0], "the client sent nothing"


@pytest.mark.parametrize(
    "argv",
    [
        ["q", "-all", "-addr", "{daemon}", "-timeout", "20"],
        ["ping", "--address", "<{daemon}>", "--timeout", "20", "WRITE"],
    ],
    ids=["q", "ping"],
)
def test_nothing_heavy_before_the_first_byte(argv: list[str]) -> None:
    """What a ``q``/``ping`` has loaded once its first message is sent (and the daemon hung
    up): nothing that only later steps, other commands or other methods need."""
    with _hanging_up_daemon() as daemon:
        status, modules = _loaded([arg.replace("{daemon}", daemon) for arg in argv])
    assert status in (1, 3)
    assert "cedar.auth.client" in modules and "cedar.stream.connection" in modules
    assert _heavy(modules, NOT_ON_CLIENT_PATHS + NOT_BEFORE_FIRST_BYTE) == []


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


#: Standard-library modules a query does without (issue 39: each costs start-up time):
#: logging (until a record could be shown), threading (locks come from ``_thread``), a second
#: OpenSSL (``hmac``/``hashlib``: HMACs and digests go through ``cryptography``), what only
#: rare addresses, dates or random choices need, and ``dataclasses`` with the ``inspect`` and
#: ``ast`` it imports (~75 M instructions; the classes are ``cedar.record.Record``\ s).
NOT_ON_A_QUERY = (
    "dataclasses",
    "inspect",
    "ast",
    "logging",
    "threading",
    "hmac",
    "hashlib",
    "_hashlib",
    "secrets",
    "random",
    "datetime",
    "ipaddress",
    "urllib",
    "fnmatch",
    "traceback",
)


def test_q_loads_none_of_the_costly_standard_modules() -> None:
    with _hanging_up_daemon() as daemon:
        # a configuration read cleanly (a missing one is a warning, which is logged)
        env = {**os.environ, "CONDOR_CONFIG": "/dev/null"}
        _, modules = _loaded(["q", "-all", "-addr", daemon, "-timeout", "20"], env)
    assert "cedar.auth.client" in modules
    assert _heavy(modules, NOT_ON_A_QUERY) == []


def test_the_program_exits_quickly_with_its_output_status_and_exit_handlers() -> None:
    """``cedar`` (the console script: :func:`cedar.cli.main.console`) ends with ``os._exit``
    after the command: everything printed still arrives through a pipe, the status is the
    command's, ``atexit`` handlers run, and the garbage collector was on again for them."""
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('atexit, gc on:', gc.isenabled(), file=sys.stderr))\n"
        "from cedar.cli.main import console\n"
        "sys.argv = sys.argv[1:]\n"
        "console()\n"
        "print('after console()', file=sys.stderr)\n"
    )
    cases = ((["condor_version", "-arch"], 0), (["condor_q", "-addr", REFUSED, "-timeout", "5"], 1))
    for argv, status in cases:
        result = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == status
        assert "atexit, gc on: True" in result.stderr
        assert "after console()" not in result.stderr  # it did exit at once
        if status == 0:
            assert result.stdout.strip() == "X86_64"
        else:  # a mounted command (imported with the collector paused): refused, exit 1
            assert "127.0.0.1:1" in result.stderr
