"""The ``cedar`` command: schedd subcommands against a mock pool, and ``cedar demo``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.cli.history import main as history_main
from cedar.cli.main import main
from cedar.daemons.pool import MockPool


@pytest.fixture
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        yield running


def cedar(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = main(list(argv), out=out)
    return status, out.getvalue()


def test_demo_end_to_end() -> None:
    env = dict(os.environ, CONDOR_CONFIG="/dev/null")
    result = subprocess.run(
        [sys.executable, "-m", "cedar.cli.main", "demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for step in ("ping", "status", "submit 3 jobs", "== q", "hold", "release", "rm", "history"):
        assert step in result.stdout
    assert "demo succeeded" in result.stdout


def test_schedd_tools_lifecycle(pool: MockPool, tmp_path: Path) -> None:
    where = ["--pool", pool.host_port, "--name", pool.schedd.name]
    sub = tmp_path / "job.sub"
    sub.write_text("executable = /bin/echo\narguments = $(Process)\nqueue 2\n")
    status, text = cedar("submit", str(sub), *where)
    assert status == 0
    assert text == "Submitting job(s)..\n2 job(s) submitted to cluster 1.\n"

    status, text = cedar("q", *where, "--af", "ClusterId", "ProcId", "JobStatus")
    assert (status, text) == (0, "1 0 1\n1 1 1\n")
    status, text = cedar("q", *where)
    assert "Total for query: 2 jobs; 0 completed, 0 removed, 2 idle" in text

    assert cedar("hold", "1", *where) == (0, "All jobs in cluster 1 have been held\n")
    status, text = cedar("edit", "1", "Foo", '"bar"', *where)
    assert (status, text) == (0, 'Set attribute "Foo" for 2 matching jobs.\n')
    assert cedar("release", "1.0", *where) == (0, "Job 1.0 released\n")
    status, text = cedar("q", *where, "--json")
    jobs = json.loads(text)
    assert [(j["ProcId"], j["JobStatus"]) for j in jobs] == [(0, 1), (1, 5)]
    assert cedar("rm", "--constraint", "ProcId == 1", *where) == (
        0,
        "All jobs matching constraint (ProcId == 1) have been marked for removal\n",
    )
    out = io.StringIO()  # a mounted tool writes to sys.stdout: call its own main
    status = history_main([*where, "--af", "ProcId", "JobStatus", "Foo"], out=out)
    text = out.getvalue()
    assert (status, text) == (0, "1 3 bar\n")
    assert cedar("release", "7", *where)[0] == 1  # nothing to release


def test_errors_are_reported_not_raised(pool: MockPool, tmp_path: Path) -> None:
    sub = tmp_path / "bad.sub"
    sub.write_text("executable = /no/such\nqueue\n")
    status, _ = cedar("submit", str(sub), "--addr", pool.schedd_address)
    assert status == 1
    assert pool.schedd.queue.all_jobs() == []
    status, _ = cedar("q", "--addr", "127.0.0.1:1", "--timeout", "2")
    assert status == 3  # cannot reach the daemon


def test_pool_on_a_port_in_use_says_so() -> None:
    """`cedar pool --port N` where something already listens: one line naming the address and
    the reason, exit 1 — not an 'internal error' about a task group."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "cedar.cli.main", "pool", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert result.returncode == 1, result.stderr
    assert "internal error" not in result.stderr
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.stderr
