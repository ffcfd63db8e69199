"""``cedar tail`` against the mock pool (the live comparison with condor_tail is in
tests/live_pool/test_tail.py)."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator

import pytest

import cedar
from cedar.cli import tail
from cedar.cli.main import main
from cedar.commands import Schedd
from cedar.daemons.pool import MockPool


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    with MockPool(simulate=True, run_time=3600.0, tick=0.1).run_in_thread() as running:
        yield running


def _running(pool: MockPool, description: str) -> str:
    schedd = Schedd(pool.schedd_address)
    cluster = schedd.submit(cedar.Submit(description)).cluster
    while schedd.query(f"ClusterId == {cluster}", ["JobStatus"])[0]["JobStatus"] != 2:
        time.sleep(0.05)
    return f"{cluster}.0"


def run(pool: MockPool, *argv: str) -> tuple[int, bytes]:
    parser = tail.build_parser()
    where = ["--pool", pool.host_port, "--name", pool.schedd.name]
    args = parser.parse_args(tail.condor_style([*where, *argv], parser))
    out = io.BytesIO()
    return tail.run(args, out=out), out.getvalue()


def test_stdout_stderr_and_files(pool: MockPool, capsys: pytest.CaptureFixture[str]) -> None:
    job = _running(pool, "executable = /bin/echo\ntransfer_output_files = a.txt\nqueue\n")
    status, out = run(pool, "-maxbytes", "20", job)
    assert status == 0 and len(out) == 20 and out.endswith(b"\n")
    assert run(pool, "-stderr", job) == (0, b"")  # the simulated job writes no stderr
    status, out = run(pool, "-no-stdout", job, "a.txt")
    assert (status, out) == (0, f"output a.txt of job {job}\n".encode())
    status, out = run(pool, "-no-stdout", "-auxfile", "a.txt", job)
    assert out == f"output a.txt of job {job}\n".encode()
    status, out = run(pool, "-no-stdout", job, "secret")
    assert status == 1 and out == b""
    assert capsys.readouterr().err == (
        "Failed to peek at file from starter: File secret requested but not authorized to be "
        "sent.\n"
    )


def test_follow_prints_new_lines_until_the_job_ends(pool: MockPool) -> None:
    job = _running(pool, "executable = /bin/echo\narguments = hi\nqueue\n")
    cluster = int(job.split(".")[0])
    pool.schedd.queue.started[(cluster, 0)] = time.time() - 2.5  # 3 lines so far, ends at 5
    pool.schedd.queue.run_time = 4.4
    try:
        status, out = run(pool, "-f", job)
    finally:
        pool.schedd.queue.run_time = 3600.0
    assert status == 0
    lines = out.decode().splitlines()
    assert lines[:3] == [f"/bin/echo hi: output line {n}" for n in (1, 2, 3)]
    assert lines == [f"/bin/echo hi: output line {n}" for n in range(1, len(lines) + 1)]


def test_errors(pool: MockPool, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(pool, "999.0") == (1, b"")
    assert capsys.readouterr().err == "No such job: 999.0\n"
    held = Schedd(pool.schedd_address).submit(cedar.Submit("executable=/bin/true\nhold=1\nqueue"))
    assert run(pool, f"{held.cluster}.0")[0] == 1
    assert capsys.readouterr().err.startswith(f"Job {held.cluster}.0 is not running. (held: ")
    assert main(["tail", "--pool", pool.host_port, "-maxbytes", "x", "1.0"]) == 2
    assert "maxbytes (x) is not valid" in capsys.readouterr().err
    assert main(["tail", "--pool", pool.host_port, "-no-stdout", "1.0"]) == 2
    assert "nothing to peek at" in capsys.readouterr().err
