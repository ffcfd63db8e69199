"""``cedar rm|hold|release|edit`` (cedar/cli/actions.py) and the shared option machinery
(cedar/cli/common.py, cedar/cli/main.py) against a mock pool: condor's option spellings, repeated
constraints ANDed, messages and exit codes, the subcommand's own usage, quiet interrupts."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import redirect_stderr
from pathlib import Path

import pytest

import cedar
from cedar.cli.common import (
    DEFAULT_TIMEOUT,
    UsageError,
    combined_constraint,
    condor_style,
    parse_command_line,
)
from cedar.cli.main import main
from cedar.commands import DEFAULT_TIMEOUT as LIBRARY_TIMEOUT
from cedar.commands import Schedd
from cedar.daemons.pool import MockPool
from cedar.submit_language import Submit
from tests.loopback import serving

SCRIPT = Path(sys.executable).parent / "cedar"
PACKAGE = Path(cedar.__file__).parent


@pytest.fixture
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        schedd = Schedd(running.schedd_address)
        for _ in range(2):  # clusters 1 and 2, three jobs each
            schedd.submit(
                Submit("executable = /bin/sleep\narguments = 60\nqueue 3\n"), submit_dir="/tmp"
            )
        yield running


def default_sigint() -> None:
    """In the child: SIGINT as a terminal gives it.  A test run started in the background of a
    script (``.ci/run``'s extra Pythons) inherits SIGINT *ignored*, and so would the child."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cedar(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        status = main(list(argv), out=out)
    return status, out.getvalue(), err.getvalue()


def states(pool: MockPool) -> dict[str, int]:
    ads = Schedd(pool.schedd_address).query(projection=["ClusterId", "ProcId", "JobStatus"])
    return {f"{ad['ClusterId']}.{ad['ProcId']}": ad["JobStatus"] for ad in ads}


def where(pool: MockPool) -> list[str]:
    return ["-addr", pool.schedd_address]


# ------------------------------------------------------------------ the option machinery


def test_the_cli_deadline_is_the_librarys() -> None:
    assert DEFAULT_TIMEOUT == LIBRARY_TIMEOUT


def test_condor_spellings_and_unambiguous_prefixes() -> None:
    from cedar.cli.actions import subcommand_parser

    parser = subcommand_parser("hold")
    assert condor_style(["-constraint", "x", "-reas", "r", "-Name", "n"], parser) == [
        "--constraint",
        "x",
        "--reason",
        "r",
        "--name",
        "n",
    ]
    assert condor_style(["-bogus", "--", "-all"], parser) == ["-bogus", "--", "-all"]
    args = parse_command_line(parser, ["1.0", "-reason", "why", "2", "-c", "A", "-const", "B"])
    assert args.ids == ["1.0", "2"] and args.reason == "why"
    assert args.constraint == ["A", "B"]


def test_repeated_constraints_are_one_tree() -> None:
    assert combined_constraint(["ProcId == 0", "ClusterId == 2"]) == (
        "(ProcId == 0) && (ClusterId == 2)"
    )
    assert combined_constraint(None) is None
    # a part cannot escape its parentheses
    with pytest.raises(UsageError):
        combined_constraint(["true) || (true"])


LISTING_COMMANDS = ("q", "history")


@pytest.mark.parametrize("command", ["rm", "hold", "release", "edit", "q", "history", "submit"])
def test_unknown_option_prints_the_subcommands_usage(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code: object = main([command, "1", "-bogus"])
    except SystemExit as stopped:  # argparse's way out
        code = stopped.code
    assert code == 2
    err = capsys.readouterr().err
    assert f"usage: cedar {command} " in err
    if command in LISTING_COMMANDS:  # condor-style scanners of their own name the option
        assert f"cedar {command}: " in err and "-bogus" in err and " 1 " not in err
    else:
        assert err.startswith(f"usage: cedar {command} ")
        assert f"cedar {command}: error: unrecognized arguments: -bogus" in err


def test_token_create_takes_single_dash_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "POOL"
    assert main(["token", "create-signing-key", str(key)]) == 0
    status = main(
        ["token", "create", "-identity", "alice@x", "-key-file", str(key), "-issuer", "x"]
        + ["-authz", "READ", "-lifetime", "60", "-file", str(tmp_path / "tok")]
    )
    assert status == 0
    assert (tmp_path / "tok").stat().st_mode & 0o777 == 0o600
    capsys.readouterr()
    assert main(["token", "list", "-file", str(tmp_path / "tok")]) == 0
    line = capsys.readouterr().out
    assert line.startswith('Header: {"alg":"HS256","kid":"POOL"} Payload: {"exp":')
    assert '"scope":"condor:\\/READ","sub":"alice@x"}' in line
    assert line.endswith(f" File: {tmp_path / 'tok'}\n")
    with pytest.raises(SystemExit):
        main(["token", "create", "-identity", "x", "-bogus"])
    assert capsys.readouterr().err.startswith("usage: cedar token create ")


def test_not_a_cedar_daemon_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    def answer_http(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    with serving(answer_http) as web_server:
        status, _, err = cedar("q", "-addr", web_server)
    assert status == 3
    assert "this is not a CEDAR daemon" in err and "Traceback" not in err


# ------------------------------------------------------------------ rm / hold / release


def test_two_constraints_act_on_the_intersection(pool: MockPool) -> None:
    status, out, err = cedar(
        "hold", "-constraint", "ProcId == 0", "-constraint", "ClusterId == 2", *where(pool)
    )
    assert (status, err) == (0, "")
    assert out == (
        "All jobs matching constraint ((ProcId == 0) && (ClusterId == 2)) have been held\n"
    )
    held = {job for job, state in states(pool).items() if state == 5}
    assert held == {"2.0"}


def test_job_ids_report_each_job_and_failures_go_to_stderr(pool: MockPool) -> None:
    assert cedar("hold", "1.0", *where(pool)) == (0, "Job 1.0 held\n", "")
    # as condor_release: one job released, so exit 0 and no blank line before the failures
    status, out, err = cedar("release", "1.0", "1.1", "9.9", *where(pool))
    assert status == 0
    assert out == "Job 1.0 released\n"
    assert err == "Job 1.1 not held to be released\nJob 9.9 not found\n"
    status, out, err = cedar("release", "1.1", "9.9", *where(pool))
    assert (status, out) == (1, "")
    assert err == "\nJob 1.1 not held to be released\nJob 9.9 not found\n"
    status, out, err = cedar("hold", "1.2", "-reason", "x", *where(pool))
    assert (status, out) == (0, "Job 1.2 held\n")
    status, out, err = cedar("hold", "1.2", *where(pool))
    assert (status, out, err) == (1, "", "\nJob 1.2 already held\n")


def test_cluster_user_and_all(pool: MockPool) -> None:
    owner = Schedd(pool.schedd_address).query(projection=["Owner"])[0]["Owner"]
    assert cedar("hold", "2", *where(pool)) == (0, "All jobs in cluster 2 have been held\n", "")
    assert cedar("release", owner, *where(pool)) == (
        0,
        f'All jobs of user "{owner}" have been released\n',
        "",
    )
    assert cedar("hold", "-all", *where(pool)) == (0, "All jobs have been held\n", "")
    assert set(states(pool).values()) == {5}
    status, out, err = cedar("hold", "-all", "1", *where(pool))
    assert status == 2 and "-all cannot be used" in err


def test_nothing_matched(pool: MockPool) -> None:
    status, out, err = cedar("release", "7", *where(pool))
    assert out == "" and "all jobs in cluster 7" in err
    assert status in (0, 1)  # 0 only when the schedd says its queue is empty (TotalJobAds)


def test_totals_long_and_json(pool: MockPool) -> None:
    status, out, _ = cedar("hold", "1", "-totals", *where(pool))
    assert status == 0
    assert out.splitlines()[0] == (
        "3 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, 0 Permission Denied"
    )
    status, out, _ = cedar("release", "1", "-long", *where(pool))
    assert "ActionResult = 1" in out and "job_1_0 = 1" in out
    status, out, _ = cedar("rm", "1.0", "2", "-json", *where(pool))
    assert status == 0 and '"target": ["1.0"]' in out and '"target": "in cluster 2"' in out


def test_rm_forcex_sends_remove_x(pool: MockPool) -> None:
    status, out, err = cedar("rm", "-forcex", "1.0", *where(pool))
    # the mock schedd only force-removes jobs already being removed
    assert status in (0, 1) and "Traceback" not in err


# ------------------------------------------------------------------ edit


def test_edit_forms(pool: MockPool) -> None:
    assert cedar("edit", "1.0", "Foo=2", "Bar=3", *where(pool)) == (
        0,
        'Set attribute "Bar" for 1 matching jobs.\nSet attribute "Foo" for 1 matching jobs.\n',
        "",
    )
    status, out, _ = cedar(
        "edit", "-const", "ProcId == 1", "-constraint", "ClusterId == 2", "Foo", '"x"'
    )
    assert status != 0  # no -addr: no schedd configured
    status, out, _ = cedar(
        "edit", *where(pool), "-const", "ProcId == 1", "-constraint", "ClusterId == 2", "Foo", "7"
    )
    assert (status, out) == (0, 'Set attribute "Foo" for 1 matching jobs.\n')
    owner = Schedd(pool.schedd_address).query(projection=["Owner"])[0]["Owner"]
    status, out, _ = cedar("edit", owner, "Baz", "1", *where(pool))
    assert (status, out) == (0, 'Set attribute "Baz" for 6 matching jobs.\n')
    ads = Schedd(pool.schedd_address).query("ClusterId == 2 && ProcId == 1", ["Foo", "Baz"])
    assert (ads[0]["Foo"], ads[0]["Baz"]) == (7, 1)


def test_edit_errors(pool: MockPool) -> None:
    status, out, err = cedar("edit", "-constraint", "ClusterId ==", "Foo", "1", *where(pool))
    assert (status, out, err) == (1, "", "cedar edit: invalid constraint: ClusterId ==\n")
    status, out, err = cedar("edit", "1", "Foo", *where(pool))
    assert status == 2 and "expression required after attribute Foo" in err
    status, out, err = cedar("edit", "99.0", "Foo", "1", *where(pool))
    assert status == 1 and err.startswith('Failed to set attribute "Foo" for job 99.0.\n')
    assert err.endswith("Queue transaction failed.  No attributes were set.\n")


# ------------------------------------------------------------------ start-up


def test_import_cedar_imports_no_protocol_stack() -> None:
    """``import cedar`` is cheap: no Trio, no crypto, no optional extras until a name is used
    (by module list, not by timing)."""
    code = (
        "import sys, cedar; heavy = ('trio', 'cryptography', 'jwt', 'scitokens', 'construct', "
        "'dpkt', 'cedar.commands', 'cedar.auth', 'cedar.stream', 'cedar.daemons', "
        "'cedar.classad_wire'); print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "heavy or any(m == h or m.startswith(h + '.') for h in heavy)))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert found.stdout.strip() == "[]"
    # and the lazy names still resolve to the same objects
    import cedar as package
    from cedar.commands import Schedd as Direct

    assert package.Schedd is Direct and "Schedd" in dir(package)
    with pytest.raises(AttributeError):
        package.NoSuchName  # noqa: B018


def test_sync_cli_never_imports_trio() -> None:
    code = "import sys, cedar.cli.actions, cedar.cli.main; print('trio' in sys.modules)"
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert found.stdout.strip() == "False"


@pytest.mark.skipif(not SCRIPT.exists(), reason="the cedar console script is not installed")
def test_ctrl_c_is_quiet_from_the_start() -> None:
    """SIGINT at many moments of start-up and import: never a traceback through cedar's code
    (the delays only spread the moments; no outcome depends on them).  An interrupt during
    Python's own start-up or the console-script wrapper's ``import re``, before the package's
    first statement, is the interpreter's to report."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    env = dict(os.environ, CONDOR_CONFIG="/dev/null")
    try:
        for delay in (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5):
            process = subprocess.Popen(
                [str(SCRIPT), "ping", "-address", f"127.0.0.1:{server.getsockname()[1]}"]
                + ["-timeout", "20"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                preexec_fn=default_sigint,
            )
            time.sleep(delay)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
            if "Traceback" in err:  # only from before the package's first statement
                assert f'File "{PACKAGE}' not in err, (delay, err)
            if "Fatal Python error" in err:  # the interpreter's own start-up was interrupted
                continue
            if "Exception ignored in" in err and "KeyboardInterrupt" in err:
                # the interrupt landed in a callback the interpreter runs and ignores the
                # exceptions of (CI saw importlib's module-lock weakref callback): Python
                # dropped it before any code of cedar's could see it, so it ran to its timeout
                assert process.returncode == 3, (delay, process.returncode, err)
                continue
            assert process.returncode in (130, -signal.SIGINT), (delay, process.returncode, err)
    finally:
        server.close()


def test_hold_subcode_in_the_request() -> None:
    from cedar.commands.schedd import act_request
    from cedar.errors import InvalidArgument
    from cedar.numbers import JobAction

    ad = act_request(JobAction.Hold, "1", "why", subcode=3)
    assert (ad["HoldReasonSubCode"], ad["HoldReason"]) == (3, "why")
    assert "HoldReasonSubCode" not in act_request(JobAction.Hold, "1", "why")
    with pytest.raises(InvalidArgument):
        act_request(JobAction.Release, "1", "why", subcode=3)


def test_hold_subcode_must_be_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["hold", "1", "-subcode", "x"])
    assert stopped.value.code == 2
    assert "Invalid -subcode x!" in capsys.readouterr().err


def test_token_create_token_name_goes_to_the_token_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "POOL"
    assert main(["token", "create-signing-key", str(key)]) == 0
    directory = tmp_path / "tokens.d"
    directory.mkdir(mode=0o700)
    monkeypatch.setenv("CONDOR_CONFIG", "/dev/null")
    monkeypatch.setenv("_condor_SEC_TOKEN_DIRECTORY", str(directory))
    monkeypatch.setenv("_condor_SEC_TOKEN_SYSTEM_DIRECTORY", str(directory))
    monkeypatch.setenv("_condor_TRUST_DOMAIN", "td.example")
    from cedar.config import set_default_config

    set_default_config(None)  # read again, from this environment
    capsys.readouterr()
    try:
        status = main(
            ["token", "create", "-identity", "bob@td", "-key-file", str(key), "-token", "bob"]
        )
        assert status == 0 and capsys.readouterr().out == ""  # written, not printed
        assert (directory / "bob").stat().st_mode & 0o777 == 0o600
        assert main(["token", "list"]) == 0
        assert '"iss":"td.example","jti":' in capsys.readouterr().out
    finally:
        set_default_config(None)


def test_ctrl_c_wrapped_by_python_is_still_quiet() -> None:
    """A KeyboardInterrupt raised while a class is made (a lazy import) reaches cedar as the
    RuntimeError Python wraps it in: it is still Ctrl-C (exit 130, nothing printed)."""
    from cedar.cli.common import EXIT_INTERRUPTED, guarded

    def interrupted_import() -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__ on 'cached_property'") from exc

    err = io.StringIO()
    assert guarded("cedar ping", False, interrupted_import, err) == EXIT_INTERRUPTED
    assert err.getvalue() == ""
