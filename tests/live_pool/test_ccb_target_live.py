"""CCB's target role against the real 25.13.2 pool: a cedar daemon registers with the real
collector's broker, and the real tools reach it only through that broker.

The daemon listens on 127.0.0.6; the address the tools are given has its port replaced by 1
(nothing listens there), so ``condor_ping`` and ``condor_status -direct`` succeed only through
``CCB_REQUEST`` and the reversed connection the cedar daemon makes (spec 09 §4).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from cedar.commands import ping
from tests.live_pool.ccbpool import cedar_target


@pytest.fixture(scope="module")
def registered() -> Iterator[str]:
    """The cedar daemon, registered; yields its address with its own port closed."""
    with cedar_target(os.environ["CEDAR_LIVE_COLLECTOR"]) as (_target, address):
        yield address


def _tool(*argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CONDOR_CONFIG=os.environ["CEDAR_LIVE_CONDOR_CONFIG"])
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_the_real_tools_reach_the_cedar_daemon_through_the_broker(registered: str) -> None:
    assert "CCBID=" in registered
    pinged = _tool("condor_ping", "-addr", registered, "READ")
    assert pinged.returncode == 0, pinged.stderr
    assert "READ command using" in pinged.stdout and "succeeded" in pinged.stdout
    listed = _tool("condor_status", "-direct", registered, "-af", "Name")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout == "slot1@cedar\n"


def test_cedar_reaches_the_cedar_daemon_through_the_broker(registered: str) -> None:
    result = ping(registered, "READ", timeout=20)
    assert result.authorized
    assert result.route is not None and result.route.startswith("CCB reversed connection via")
