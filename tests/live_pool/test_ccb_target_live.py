"""CCB's target role against the real 25.13.2 pool: a cedar daemon registers with the real
collector's broker, and the real tools reach it only through that broker.

The daemon listens on 127.0.0.6; the address the tools are given has its port replaced by 1
(nothing listens there), so ``condor_ping`` and ``condor_status -direct`` succeed only through
``CCB_REQUEST`` and the reversed connection the cedar daemon makes (spec 09 §4).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from cedar.auth.server_policy import open_policy
from cedar.commands import ping
from cedar.numbers import Command
from cedar.server.ccb_target import CcbTarget
from cedar.server.daemon import Daemon, serve_in_thread
from cedar.server.testing import RecordingQueryHandler, slot_ad


@pytest.fixture(scope="module")
def registered() -> Iterator[str]:
    """The cedar daemon, registered; yields its address with its own port closed."""
    if os.geteuid() != 0:
        pytest.skip("registering with the broker needs the pool's DAEMON level (root's FS)")
    daemon = Daemon("cedar-target", "STARTD", policy=open_policy(), host="127.0.0.6")
    daemon.register(Command.QUERY_STARTD_ADS, RecordingQueryHandler([slot_ad("slot1@cedar")]))
    target = CcbTarget(daemon, os.environ["CEDAR_LIVE_COLLECTOR"], heartbeat=30, reconnect=2)
    cancel = trio.CancelScope()
    tokens: list[trio.lowlevel.TrioToken] = []

    async def serve(*, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        tokens.append(trio.lowlevel.current_trio_token())
        with cancel:
            async with trio.open_nursery() as nursery:
                await nursery.start(daemon.serve)
                nursery.start_soon(target.run)
                with trio.fail_after(60):
                    await target.registered.wait()
                task_status.started()

    def stop() -> None:
        trio.from_thread.run_sync(cancel.cancel, trio_token=tokens[0])

    with serve_in_thread(serve, stop):
        assert target.contact is not None, "the cedar daemon never registered"
        address = daemon.address
        closed = re.sub(r"^<127\.0\.0\.6:\d+", "<127.0.0.6:1", address)
        yield re.sub(r"addrs=127\.0\.0\.6-\d+", "addrs=127.0.0.6-1", closed)


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
