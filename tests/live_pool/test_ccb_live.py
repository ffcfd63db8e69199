"""CCB against the real 25.13.2 pool: a startd reachable only through the collector's broker.

Every command here reaches the startd through ``CCB_REQUEST`` and a reversed connection (or the
broker's relay), never directly: the address given has its own port replaced by one nothing
listens on, which the reference tools and cedar ignore because the sinful has ``CCBID``
(spec 09 §3).  Outputs are compared with the real tools' on the same pool.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from cedar.auth.client_config import ClientSecurity, SecurityConfig
from tests.live_pool.ccbpool import CcbPool, ccb_pool, cedar_target
from tests.live_pool.steady import agree
from tests.live_pool.test_tail import JOB_SCRIPT

CEDAR = str(Path(sys.executable).parent / "cedar")


@pytest.fixture(scope="module")
def pool() -> Iterator[CcbPool]:
    with ccb_pool("STARTD") as started:
        yield started


def test_ping_goes_through_the_broker(pool: CcbPool) -> None:
    ours = pool.tool(CEDAR, "ping", "--address", pool.unreachable_address, "--verbose", "READ")
    assert ours.returncode == 0, ours.stderr
    assert "READ: authorized as condor@" in ours.stdout
    assert "reached by CCB reversed connection via 127.0.0.1:" in ours.stdout
    theirs = pool.tool("condor_ping", "-addr", pool.unreachable_address, "READ")
    assert theirs.returncode == 0  # the reference reaches it the same way


@pytest.mark.parametrize("extra", [[], ["-af", "Name", "State", "Activity", "Cpus"]])
def test_status_direct_is_condor_status_direct(pool: CcbPool, extra: list[str]) -> None:
    address = pool.unreachable_address
    ours, theirs = agree(
        lambda: pool.tool(CEDAR, "status", "-direct", address, *extra).stdout,
        lambda: pool.tool("condor_status", "-direct", address, *extra).stdout,
    )
    assert ours == theirs
    assert "slot1@" in ours


def test_streaming_mode_for_a_client_that_cannot_listen(pool: CcbPool) -> None:
    env = {"_condor_TOOLS_ASSUME_FIREWALLS": "true"}
    pool.env.update(env)
    try:
        ours = pool.tool(CEDAR, "ping", "--address", pool.unreachable_address, "--verbose", "READ")
        listing = pool.tool(CEDAR, "status", "-direct", pool.unreachable_address, "-af", "Name")
        theirs = pool.tool("condor_status", "-direct", pool.unreachable_address, "-af", "Name")
    finally:
        for name in env:
            del pool.env[name]
    assert ours.returncode == 0, ours.stderr
    assert "reached by CCB relayed via 127.0.0.1:" in ours.stdout
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout == theirs.stdout
    assert listing.stdout.count("slot") == 4


def test_unknown_ccbid_is_the_brokers_refusal(pool: CcbPool) -> None:
    unknown = re.sub(r"#\d+", "#999", pool.unreachable_address)
    ours = pool.tool(CEDAR, "status", "-direct", unknown, "-af", "Name", timeout=30)
    theirs = pool.tool("condor_status", "-direct", unknown, "-af", "Name", timeout=30)
    assert theirs.returncode != 0 and ours.returncode != 0
    reason = "CCB server rejecting request for ccbid 999 because no daemon is currently registered"
    assert reason in theirs.stderr + theirs.stdout
    assert reason in ours.stderr
    assert ours.stdout == ""


def test_async_client_through_the_broker(pool: CcbPool) -> None:
    import trio

    from cedar.commands._async.collector import AsyncCollector
    from cedar.commands._sync.collector import Collector
    from cedar.numbers import AdType

    security = SecurityConfig(methods=["CLAIMTOBE"])

    async def names() -> list[str]:
        collector = AsyncCollector(pool.unreachable_address, security=security, timeout=20)
        ads = await collector.query(AdType.SLOT, projection=["Name"])
        return sorted(str(ad["Name"]) for ad in ads)

    found = trio.run(names)
    assert found == [f"slot{n}@vm" for n in range(1, 5)] or len(found) == 4
    blocking = Collector(pool.unreachable_address, security=security, timeout=20)
    assert sorted(str(ad["Name"]) for ad in blocking.query(AdType.SLOT, projection=["Name"])) == (
        found
    )


def test_conformance_ccb_checks_pass_on_the_ccb_pool(pool: CcbPool) -> None:
    """``cedar conformance``'s CCB checks against a pool with a daemon behind its broker (on the
    plain live pool the first two have nothing to look at: tests/live_pool/test_conformance.py
    leaves them to this test)."""
    from cedar.conformance import Target
    from cedar.conformance.checks import run_checks

    pool.await_reachable()  # were the collector just restarted, the startd must register again
    target = Target(pool.collector, token_dir=pool.env["CEDAR_LIVE_TOKEN_DIR"], timeout=30)
    outcomes = {o.name: (o.status, o.detail) for o in run_checks(target, ["ccb."])}
    assert set(outcomes) == {"ccb.unknown_ccbid", "ccb.direct_ad", "ccb.relay"}
    assert all(status == "pass" for status, _ in outcomes.values()), outcomes
    assert "4 slot ads, CCB reversed connection via 127.0.0.1:" in outcomes["ccb.direct_ad"][1]
    assert "4 slot ads, CCB relayed via 127.0.0.1:" in outcomes["ccb.relay"][1]


def test_cedar_target_registers_again_after_the_broker_restarts(pool: CcbPool) -> None:
    """A cedar daemon behind this pool's broker: after ``condor_restart -collector`` it
    re-registers with its id and cookie (the broker's reconnect file keeps them, spec 09 §4.1,
    §6.3) and is reachable through the broker again at the same address."""
    import time

    from cedar.commands import ping

    with cedar_target(pool.collector) as (target, address):
        contact = target.contact
        assert ping(address, "READ", timeout=20).authorized
        restarted = pool.tool("condor_restart", "-collector")
        assert restarted.returncode == 0, restarted.stderr
        for _ in range(240):  # the collector comes back, then the next try (reconnect = 2 s)
            if target.registrations >= 2:
                break
            time.sleep(0.25)
        assert target.registrations >= 2, "the cedar daemon never registered again"
        assert target.contact == contact
        assert ping(address, "READ", timeout=20).authorized


@pytest.fixture(scope="module")
def tail_job(pool: CcbPool) -> Iterator[tuple[str, Path]]:
    """testuser's job on the CCB-only startd (the script of test_tail.py: 50 lines, then it
    waits for its "go" file); yields its id and the "go" file."""
    pool.await_reachable()  # after the collector's restart above, the startd registers again
    directory = Path(pool.env["CEDAR_LIVE_IWD"]) / "ccb-tail"
    directory.mkdir(mode=0o777)
    directory.chmod(0o777)
    script = directory / "tailjob.sh"
    script.write_text(JOB_SCRIPT)
    script.chmod(0o755)
    (directory / "job.sub").write_text(
        f"executable = {script}\narguments = {directory / 'go'}\noutput = out.txt\n"
        f"error = err.txt\nshould_transfer_files = YES\ntransfer_output_files = progress.txt\n"
        f"initialdir = {directory}\nqueue\n"
    )
    submitted = _as_testuser(pool, "condor_submit", "-terse", str(directory / "job.sub"))
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.decode().split(" - ")[0].strip()
    deadline = time.monotonic() + 180
    while True:  # matched, the starter registered with the broker, progress.txt written
        probe = _as_testuser(pool, CEDAR, "tail", "-no-stdout", job, "progress.txt")
        if probe.returncode == 0 and probe.stdout:
            break
        assert time.monotonic() < deadline, f"job {job} never ran: {probe.stderr.decode()}"
        time.sleep(1)
    yield job, directory / "go"
    _as_testuser(pool, "condor_rm", job)


def _as_testuser(pool: CcbPool, *argv: str, timeout: float = 120) -> CompletedProcess[bytes]:
    return subprocess.run(
        argv, env=pool.testuser_env, capture_output=True, timeout=timeout, check=False
    )


def test_the_starter_is_reached_through_the_broker(
    pool: CcbPool, tail_job: tuple[str, Path]
) -> None:
    """What makes the tail tests below CCB tests: the schedd names the job's starter by an
    address with ``CCBID`` (never dialled: spec 09 §3)."""
    from cedar.commands._sync.peek import connect_info
    from cedar.config import Config
    from cedar.jobid import parse_job_id

    job = parse_job_id(tail_job[0])
    security = ClientSecurity(SecurityConfig.from_config(Config.load(environ=pool.testuser_env)))
    schedd = pool.tool("condor_status", "-schedd", "-af", "MyAddress").stdout.strip()
    info = connect_info(schedd, (job.cluster, job.proc or 0), security=security, timeout=30)
    assert "CCBID=" in info.starter_address and "127.0.0.5" in info.starter_address


@pytest.mark.parametrize(
    "options",
    [[], ["-maxbytes", "100"], ["-stderr", "-maxbytes", "100"], ["-no-stdout", "progress.txt"]],
)
def test_tail_through_the_broker_is_condor_tails(
    pool: CcbPool, tail_job: tuple[str, Path], options: list[str]
) -> None:
    job = tail_job[0]
    files = [o for o in options if o == "progress.txt"]
    flags = [o for o in options if o != "progress.txt"]
    theirs = _as_testuser(pool, "condor_tail", *flags, job, *files)
    ours = _as_testuser(pool, CEDAR, "tail", *flags, job, *files)
    assert theirs.returncode == 0, theirs.stderr
    assert (ours.returncode, ours.stdout) == (0, theirs.stdout), ours.stderr
    assert ours.stdout


def test_tail_follow_through_the_broker(pool: CcbPool, tail_job: tuple[str, Path]) -> None:
    """``-f`` next to ``condor_tail -f`` on the same job: the first peek is the same bytes;
    after it cedar prints each new line once until the job ends, where 25.13.2's condor_tail
    prints the start of the file again (docs/tail.md, quirk 5; it is not asserted)."""
    job, go = tail_job
    followers = [
        subprocess.Popen(
            [*argv, "-f", "-maxbytes", "45", job],
            env=pool.testuser_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for argv in ([CEDAR, "tail"], ["condor_tail"])
    ]
    watchdogs = [threading.Timer(300, f.kill) for f in followers]  # a hang fails, never stalls
    for watchdog in watchdogs:
        watchdog.start()
    try:
        firsts = []
        for follower in followers:
            assert follower.stdout is not None
            firsts.append(b"".join(follower.stdout.readline() for _ in range(3)))
        go.touch()
        ends = [follower.communicate() for follower in followers]
    finally:
        for watchdog in watchdogs:
            watchdog.cancel()
        for follower in followers:
            if follower.poll() is None:
                follower.kill()
    assert firsts[0] == firsts[1] == b"stdout line 48\nstdout line 49\nstdout line 50\n"
    assert followers[0].returncode == 0, ends[0][1]
    ours = (firsts[0] + ends[0][0]).decode()
    assert ours == "".join(f"stdout line {n}\n" for n in range(48, 61))
