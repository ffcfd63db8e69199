"""Peek and follow in both roles: cedar's client against the mock schedd + mock starter."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import trio

import cedar
from cedar.auth.client_config import SecurityConfig
from cedar.classad_wire import ClassAd
from cedar.commands import AsyncSchedd, Schedd
from cedar.commands.peek import JobNotRunning, PeekFileError, PeekRefused
from cedar.daemons.pool import MockPool
from cedar.daemons.starter import simulated_stdout

SUBMIT = """
executable = /bin/echo
arguments = hello world
transfer_output_files = a.txt, b.txt
queue
"""


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    running = MockPool(simulate=True, run_time=3600.0, tick=0.1)
    with running.run_in_thread():
        yield running


@pytest.fixture
def job(pool: MockPool) -> Iterator[str]:
    schedd = Schedd(pool.schedd_address)
    cluster = schedd.submit(cedar.Submit(SUBMIT)).cluster
    job_id = f"{cluster}.0"
    deadline = time.monotonic() + 120  # generous: a loaded CI machine
    while schedd.query(f"ClusterId == {cluster}", ["JobStatus"])[0]["JobStatus"] != 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    yield job_id
    schedd.remove(job_id)


def _expected(pool: MockPool, job_id: str) -> bytes:
    cluster, proc = (int(x) for x in job_id.split("."))
    ad = pool.schedd.queue.merged(cluster, proc)
    assert ad is not None
    started = pool.schedd.queue.started[(cluster, proc)]
    return simulated_stdout(ad, time.time() - started)


def test_peek_reads_the_end_of_stdout(pool: MockPool, job: str) -> None:
    schedd = Schedd(pool.schedd_address)
    result = schedd.peek(job, max_bytes=20)
    (stdout,) = result.files
    whole = _expected(pool, job)
    assert stdout.name == "stdout" and len(stdout.data) == 20
    assert whole[stdout.offset : stdout.offset + 20] == stdout.data
    again = schedd.peek(job, offsets={"stdout": 0}, max_bytes=10_000)
    assert again["stdout"].offset == 0 and again["stdout"].data.startswith(b"/bin/echo hello world")


def test_files_share_the_budget_and_a_used_up_budget_sends_them_empty(
    pool: MockPool, job: str
) -> None:
    schedd = Schedd(pool.schedd_address)
    result = schedd.peek(job, stdout=True, stderr=True, files=["a.txt", "b.txt"], max_bytes=10)
    assert [(f.name, len(f.data)) for f in result.files] == [
        ("stdout", 10),
        ("stderr", 0),
        ("a.txt", 0),  # sent empty (their 666s share messages), and still counted
        ("b.txt", 0),
    ]
    full = schedd.peek(job, stdout=False, files=["a.txt", "b.txt"], offsets={"b.txt": 7})
    assert full["a.txt"].data == f"output a.txt of job {job}\n".encode()
    assert full["b.txt"].offset == 7
    assert full["b.txt"].data == f"output b.txt of job {job}\n".encode()[7:]


def test_refusals(pool: MockPool, job: str) -> None:
    schedd = Schedd(pool.schedd_address)
    with pytest.raises(PeekFileError, match="not authorized to be sent") as bad:
        schedd.peek(job, files=["secret.key"])
    assert bad.value.name == "secret.key"
    with pytest.raises(JobNotRunning, match="No such job: 9999.0") as gone:
        schedd.peek("9999.0")
    assert gone.value.finished
    held = schedd.submit(cedar.Submit("executable = /bin/true\nhold = true\nqueue")).cluster
    with pytest.raises(JobNotRunning, match=f"Job {held}.0 is not running") as waiting:
        schedd.peek(f"{held}.0")
    assert waiting.value.retry and waiting.value.job_status == 5 and not waiting.value.finished
    assert waiting.value.hold_reason
    schedd.remove(held)
    other = Schedd(
        pool.schedd_address,
        security=SecurityConfig(methods=["CLAIMTOBE"], options={"SEC_CLAIMTOBE_USER": "mallory"}),
    )
    with pytest.raises(PeekRefused, match="not authorized for access to the starter"):
        other.peek(job)


def test_the_claim_session_is_the_only_way_in(pool: MockPool, job: str) -> None:
    """A fresh handshake with the starter (no claim) gets nothing: the handler wants a claim."""
    from cedar.commands import run_command
    from cedar.commands.peek import PeekTarget, peek_body
    from cedar.errors import CedarError
    from cedar.numbers import Command

    with pytest.raises(CedarError):
        run_command(pool.starter.address, Command.STARTER_PEEK, peek_body(PeekTarget(), 100))


def test_follow_shows_each_line_once_until_the_job_ends(pool: MockPool, job: str) -> None:
    schedd = Schedd(pool.schedd_address)
    seen = b""
    finish_after = time.monotonic() + 3.5
    ended = False
    for piece in schedd.follow(job, max_bytes=64, interval=0.2):
        assert piece.offset == len(seen)  # contiguous: nothing skipped, nothing twice
        seen += piece.data
        if time.monotonic() > finish_after and not ended:
            cluster, proc = (int(x) for x in job.split("."))
            pool.schedd.queue.started[(cluster, proc)] -= 3600  # the run is over now
            ended = True
    lines = seen.decode().splitlines()
    assert len(lines) >= 3
    numbers = [int(line.rsplit(" ", 1)[1]) for line in lines]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def test_async_peek(pool: MockPool, job: str) -> None:
    async def main() -> tuple[bytes, list[bytes]]:
        schedd = AsyncSchedd(pool.schedd_address)
        result = await schedd.peek(job, max_bytes=20)
        pieces = []
        async for piece in schedd.follow(job, max_bytes=50, interval=0.1):
            pieces.append(piece.data)
            if len(pieces) == 2:
                break
        return result["stdout"].data, pieces

    data, pieces = trio.run(main)
    assert len(data) == 20 and len(pieces) == 2


def test_simulated_stdout_is_bounded() -> None:
    assert simulated_stdout(ClassAd({"Cmd": "x"}), 1) == b"x: output line 1\nx: output line 2\n"
    assert len(simulated_stdout(ClassAd({"Cmd": "x"}), 10**9)) <= 1 << 20
