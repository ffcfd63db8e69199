"""The installed ``cedar`` command behaves as a condor_* user guesses (issue 16 §4).

Every test runs the console script in a subprocess against a mock pool: condor-style options,
``--version``/``--help``, ``cedar q`` views, one-line errors with documented exit codes,
Ctrl-C, a closed pipe, progress only on a terminal.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.cli.common import DEFAULT_TIMEOUT
from cedar.commands import Schedd
from cedar.daemons.pool import MockPool
from cedar.submit_language import Submit
from tests.loopback import serving, silent

SCRIPT_DIR = Path(sys.executable).parent
SUBCOMMANDS = ["ping", "query", "status", "token", "decode", "submit", "q", "hold", "release",
               "rm", "edit", "history", "demo", "pool", "conformance"]  # fmt: skip


def _script(name: str) -> str:
    path = SCRIPT_DIR / name
    if not path.exists():
        pytest.skip(f"the {name} console script is not installed (pip install -e .)")
    return str(path)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = "/dev/null"  # no machine configuration: only what we pass
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "FS"
    env.pop("CEDAR_PROGRESS_AFTER", None)
    return env


def run(*argv: str, timeout: float = 60, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_script("cedar"), *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=kwargs.pop("env", None) or _env(),  # type: ignore[arg-type]
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        schedd = Schedd(running.schedd_address)
        schedd.submit(
            Submit("executable = /bin/sleep\narguments = 60 extra\nqueue 2\n"), submit_dir="/tmp"
        )
        schedd.submit(
            Submit("executable = /bin/echo\narguments = hi\nbatch_name = mybatch\nqueue 1\n"),
            submit_dir="/tmp",
        )
        yield running


def addr(pool: MockPool) -> list[str]:
    return ["--addr", pool.schedd_address]


# ------------------------------------------------------------------ options and help


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("cedar ") and "Python" in result.stdout


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_help_names_its_subcommand(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0, result.stderr
    assert f"cedar {command}" in result.stdout.splitlines()[0]


@pytest.mark.parametrize("command", ["ping", "query", "q", "history", "rm", "submit", "edit"])
def test_one_documented_default_timeout(command: str) -> None:
    result = run(command, "--help")
    assert f"default {DEFAULT_TIMEOUT:g} s" in " ".join(result.stdout.split())


def test_condor_style_options_match_long_ones(pool: MockPool) -> None:
    long = run("q", "--all", "--af", "ClusterId", "ProcId", *addr(pool)).stdout
    assert long.split("\n")[0]  # three jobs
    assert run("q", "-all", "-af", "ClusterId", "ProcId", *addr(pool)).stdout == long
    assert run("q", "-all", "-autoformat", "ClusterId", "ProcId", "-addr", pool.schedd_address)
    one = run("q", "--all", "--limit", "1", "--af", "ProcId", *addr(pool)).stdout
    assert run("q", "-all", "-limit", "1", "-af", "ProcId", *addr(pool)).stdout == one
    assert len(one.splitlines()) == 1
    by_const = run("q", "-all", "-const", "ProcId == 1", "-af", "ProcId", *addr(pool)).stdout
    assert by_const == "1\n"
    assert run("q", "-constraint", "ProcId == 1", "-all", "-af", "ProcId", *addr(pool)).stdout == (
        by_const
    )
    assert _stable(run("q", "-l", "-all", *addr(pool)).stdout) == _stable(
        run("q", "-long", "-all", *addr(pool)).stdout
    )


def _stable(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("ServerTime")]


def test_options_after_positionals(pool: MockPool) -> None:
    first = run("q", "1", "-all", "-af", "ProcId", *addr(pool))
    assert first.returncode == 0 and first.stdout.split() == ["0", "1"]


def test_status_is_query_with_condor_status_tables(pool: MockPool) -> None:
    status = run("status", "schedd", "-pool", pool.host_port)
    query = run("query", "schedd", "--pool", pool.host_port)
    assert status.returncode == 0 and query.returncode == 0
    # the counts may change between the two runs (the mock schedd re-advertises)
    assert [line.split()[:2] for line in status.stdout.splitlines()] == [
        line.split()[:2] for line in query.stdout.splitlines()
    ]
    assert status.stdout.split()[:5] == ["Name", "Machine", "RunningJobs", "IdleJobs", "HeldJobs"]


# ------------------------------------------------------------------------- cedar q


def test_q_default_is_the_batch_view_with_totals(pool: MockPool) -> None:
    result = run("q", "-all", *addr(pool))
    lines = result.stdout.splitlines()
    # no job is held: condor_q then leaves out the HOLD column
    assert lines[3].split() == ["OWNER", "BATCH_NAME", "SUBMITTED", "DONE", "RUN", "IDLE",
                                "TOTAL", "JOB_IDS"]  # fmt: skip
    rows = [line for line in lines[4:] if line.strip() and not line.startswith("Total")]
    assert [row.split()[-1] for row in rows] == ["1.0-1", "2.0"]
    assert "mybatch" in rows[1]
    totals = [line for line in lines if line.startswith("Total for")]
    assert totals[0].startswith("Total for query: 3 jobs;")
    assert totals[-1].startswith("Total for all users: 3 jobs;")


def test_q_nobatch_shows_cmd_with_arguments(pool: MockPool) -> None:
    lines = run("q", "-nobatch", "-all", *addr(pool)).stdout.splitlines()
    assert lines[3].split()[-1] == "CMD"
    assert lines[4].startswith("   1.0 ") and lines[4].endswith(" sleep 60 extra")
    assert lines[6].endswith(" echo hi")


def test_q_owner_and_job_id_arguments(pool: MockPool) -> None:
    assert run("q", "2", "-af", "ClusterId", *addr(pool)).stdout == "2\n"
    assert run("q", "1.1", "-af", "ProcId", *addr(pool)).stdout == "1\n"
    assert run("q", "nosuchuser", "-af", "ClusterId", *addr(pool)).stdout == ""


def test_q_long_is_sorted_and_json_has_whole_ads(pool: MockPool) -> None:
    text = run("q", "-long", "-all", *addr(pool)).stdout
    first = text.split("\n\n")[0].splitlines()
    names = [line.split(" = ")[0] for line in first]
    assert names == sorted(names, key=str.lower) and "Cmd" in names
    ads = json.loads(run("q", "-json", "-all", *addr(pool)).stdout)
    assert [(ad["ClusterId"], ad["ProcId"]) for ad in ads] == [(1, 0), (1, 1), (2, 0)]
    assert len(ads[0]) == len(names)
    assert list(ads[0]) == sorted(ads[0], key=str.lower)


# --------------------------------------------------------------- errors and signals


def test_malformed_constraint_same_message_everywhere(pool: MockPool) -> None:
    messages = set()
    for argv in (
        ["q", "-const", "JobStatus ==", *addr(pool)],
        ["history", "-const", "JobStatus ==", *addr(pool)],
        ["rm", "-const", "JobStatus ==", *addr(pool)],
        ["hold", "-const", "JobStatus ==", *addr(pool)],
        ["status", "slots", "-const", "JobStatus ==", "-pool", pool.host_port],
    ):
        result = run(*argv)
        assert result.returncode == 2, argv
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
        messages.add(result.stderr.split(": ", 1)[1])
    assert len(messages) == 1 and "invalid constraint 'JobStatus =='" in messages.pop()


def test_unreachable_daemon_exit_3_one_line(pool: MockPool) -> None:
    result = run("q", "--addr", "127.0.0.1:1", "--timeout", "3")
    assert result.returncode == 3
    assert len(result.stderr.splitlines()) == 1 and "Connection refused" in result.stderr
    ping = run("ping", "--address", "<127.0.0.1:1>", "READ", "--timeout", "3")
    assert ping.returncode == 3
    assert "connection refused" in ping.stdout and "NOT authorized" not in ping.stdout


def test_usage_errors_exit_2_without_traceback(pool: MockPool, tmp_path: Path) -> None:
    result = run("rm", *addr(pool))
    assert result.returncode == 2 and "did not specify any jobs" in result.stderr
    result = run("submit", str(tmp_path / "missing.sub"), *addr(pool))
    assert result.returncode in (1, 2) and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_debug_shows_the_traceback() -> None:
    result = run("q", "--addr", "127.0.0.1:1", "--timeout", "3", "--debug")
    assert result.returncode == 3 and "Traceback" in result.stderr


def test_ctrl_c_exits_130_quietly() -> None:
    connected = threading.Event()
    with serving(silent(connected)) as hung:
        process = subprocess.Popen(
            [_script("cedar"), "q", "--addr", hung, "--timeout", "30"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            # SIGINT as a terminal gives it, even when this run was started in the background
            # of a script (which leaves SIGINT ignored for the children)
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        # once it has connected it waits for the answer: interrupt it there (a fixed pause
        # could end while a slow machine was still importing, before cedar's handler)
        assert connected.wait(120), "cedar q never connected"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert err == "" and out == ""


def test_closed_pipe_is_quiet(pool: MockPool) -> None:
    process = subprocess.Popen(
        [_script("cedar"), "q", "-long", "-all", *addr(pool)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**_env(), "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # as `| head -1` does
    err = process.stderr.read().decode()
    process.wait(timeout=30)
    assert err == ""
    assert process.returncode in (0, 141)


def _stderr_on_a_terminal(
    args: list[str], env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run ``cedar ARGS`` with stderr on a pseudo-terminal; its result and what stderr showed."""
    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [_script("cedar"), *args],
            stdout=subprocess.PIPE,
            stderr=follower,
            env=env,
            timeout=60,
            check=False,
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    return result, shown


def test_progress_only_on_a_terminal(pool: MockPool) -> None:
    env = {**_env(), "CEDAR_PROGRESS_AFTER": "0"}
    piped = run("q", "-all", "-af", "ProcId", *addr(pool), env=env)
    assert piped.stderr == ""
    result, shown = _stderr_on_a_terminal(["q", "-all", "-af", "ProcId", *addr(pool)], env)
    assert result.returncode == 0 and result.stdout.split() == [b"0", b"1", b"0"]
    assert b"jobs received" in shown


def test_submit_shows_progress_only_on_a_terminal(pool: MockPool, tmp_path: Path) -> None:
    description = tmp_path / "job.sub"
    description.write_text("executable = /bin/true\nqueue 3\n")
    env = {**_env(), "CEDAR_PROGRESS_AFTER": "0"}
    piped = run("submit", str(description), *addr(pool), env=env)
    assert piped.returncode == 0 and piped.stderr == ""
    result, shown = _stderr_on_a_terminal(["submit", str(description), *addr(pool)], env)
    assert result.returncode == 0 and b"3 job(s) submitted" in result.stdout
    assert b"submitting..." in shown
