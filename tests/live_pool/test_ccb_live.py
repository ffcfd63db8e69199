"""CCB against the real 25.13.2 pool: a startd reachable only through the collector's broker.

Every command here reaches the startd through ``CCB_REQUEST`` and a reversed connection (or the
broker's relay), never directly: the address given has its own port replaced by one nothing
listens on, which the reference tools and cedar ignore because the sinful has ``CCBID``
(spec 09 §3).  Outputs are compared with the real tools' on the same pool.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.auth.client_config import SecurityConfig
from tests.live_pool.ccbpool import CcbPool, ccb_pool, cedar_target
from tests.live_pool.steady import agree

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
