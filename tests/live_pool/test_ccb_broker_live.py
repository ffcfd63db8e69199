"""CCB's broker role against the real 25.13.2 tools: ``cedar pool --ccb`` brokers, the real
``condor_ping``, ``condor_status -direct`` and ``condor_q`` reach a cedar daemon that listens
nowhere, through **cedar's** broker (spec 09 §5-§7).

The tools run with ``USE_SHARED_PORT = false`` (they listen on a TCP port of their own, as in
``ccb-ping-startd-nosp-plain``) and, for the relay, ``TOOLS_ASSUME_FIREWALLS = true`` (as in
``ccb-proxy-ping-startd-plain``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from cedar.server.pool import MockPool, host_name

pytestmark = pytest.mark.live


@pytest.fixture(scope="module", params=["startd", "schedd"])
def pool(request: pytest.FixtureRequest) -> Iterator[MockPool]:
    """A mock pool whose startd (then schedd) is reachable only through its broker."""
    if not os.environ.get("CEDAR_LIVE_TOOLS"):
        pytest.fail("CEDAR_LIVE_TOOLS is not set: the real tools are needed")
    pool = MockPool.for_setup("fs", ccb=request.param, schedd_name=host_name())
    with pool.run_in_thread():
        yield pool


def _tool(pool: MockPool, *argv: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **pool.client_environment(), _condor_USE_SHARED_PORT="false")
    env.update(extra)
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)


def _address(pool: MockPool) -> str:
    assert pool.behind_broker is not None
    address = pool.behind_broker.address
    assert "CCBID=" in address
    return address


@pytest.mark.parametrize("relay", [False, True], ids=["reversed", "relayed"])
def test_condor_ping_reaches_the_daemon_through_our_broker(pool: MockPool, relay: bool) -> None:
    extra = {"_condor_TOOLS_ASSUME_FIREWALLS": "true"} if relay else {}
    pinged = _tool(pool, "condor_ping", "-addr", _address(pool), "-verbose", "READ", **extra)
    assert pinged.returncode == 0, pinged.stderr
    assert "Authorized:                  TRUE" in pinged.stdout
    assert pool.collector.ccb is not None
    stats = pool.collector.ccb.ad_attributes()
    assert stats["CCBEndpointsConnected"] == 1
    if relay:
        assert stats["CCBStreamingSessions"] >= 1


def test_the_real_tools_query_the_daemon_behind_the_broker(pool: MockPool) -> None:
    if pool.ccb == "startd":
        listed = _tool(pool, "condor_status", "-direct", _address(pool), "-af", "Name", "State")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout == f"slot1@{pool.machine} Unclaimed\n"
    else:
        queue = _tool(pool, "condor_q")  # the local schedd, located through the collector
        assert queue.returncode == 0, queue.stderr
        assert "Total for all users: 0 jobs" in queue.stdout
