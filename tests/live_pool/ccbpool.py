"""A second real pool in which one daemon is reachable only through the collector's CCB broker.

As ``../shared/htcondor/README.md`` describes (and the ``ccb-*`` captures were recorded): the
daemon gets its own port on 127.0.0.5, a private network name no client shares, and registers
with the collector's broker, so it publishes ``<127.0.0.5:PORT?CCBID=<collector>#N&...>``.
Started per test module (a few seconds), on a port the kernel picked and checked to be this
pool's (:mod:`tests.pools`), and stopped after.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio

from cedar.auth.server_policy import open_policy
from cedar.daemons.ccb_target import CcbTarget
from cedar.daemons.daemon import Daemon, serve_in_thread
from cedar.daemons.testing import RecordingQueryHandler, slot_ad
from cedar.numbers import Command
from tests.pools import start_minicondor, stop_minicondor

REPO = Path(__file__).resolve().parents[2]

CONFIG = """\
{d}.USE_SHARED_PORT        = False
{d}.NETWORK_INTERFACE      = 127.0.0.5
{d}.CCB_ADDRESS            = $(COLLECTOR_HOST)
{d}.PRIVATE_NETWORK_NAME   = ccb-target-net
{d}.CCB_HEARTBEAT_INTERVAL = 30
"""

# What a startd behind a broker needs for jobs to run there and be peeked at (found by experiment
# on 25.13.2, docs/ccb.md "Jobs on a CCB-only startd"): the starter, as the startd, reachable
# only through the broker (else the schedd's 509 answer names the starter's shared-port address
# and condor_tail never meets CCB); and the shadow letting the starter's FILETRANS_UPLOAD in: it
# comes on the claim's match session as ``execute-side@matchsession``, which the pool's
# ALLOW_WRITE (users and admins) lacks, so every job was evicted ("PERMISSION DENIED to
# execute-side@matchsession ... FILETRANS_UPLOAD") before it ran.
STARTER_CONFIG = """\
STARTER.USE_SHARED_PORT        = False
STARTER.NETWORK_INTERFACE      = 127.0.0.5
STARTER.CCB_ADDRESS            = $(COLLECTOR_HOST)
STARTER.PRIVATE_NETWORK_NAME   = ccb-target-net
SHADOW.ALLOW_WRITE             = $(ALLOW_WRITE) execute-side@matchsession
"""


@dataclass
class CcbPool:
    """The running pool: its environment for the real tools and the CCB-only daemon's sinful."""

    directory: Path
    env: dict[str, str]
    collector: str
    address: str
    daemon: str = "STARTD"

    def advertised_address(self) -> str:
        """The daemon's address once the collector lists it with its ``CCBID`` (after a start,
        or after ``condor_restart -collector``: registration, then the ad published again)."""
        kind = "-startd" if self.daemon == "STARTD" else "-schedd"
        for _ in range(240):
            shown = self.tool("condor_status", kind, "-af", "MyAddress")
            if "CCBID=" in shown.stdout:
                return shown.stdout.split()[0]
            time.sleep(0.5)
        raise RuntimeError(f"the {self.daemon} never advertised a CCB address")

    def await_reachable(self) -> str:
        """:meth:`advertised_address`, once the daemon answers through the broker (after a
        collector restart it registers again only some time later)."""
        for _ in range(360):
            address = self.advertised_address()
            if self.tool("condor_ping", "-addr", address, "READ").returncode == 0:
                return address
            time.sleep(0.5)
        raise RuntimeError(f"the {self.daemon} is not reachable through the broker")

    @property
    def unreachable_address(self) -> str:
        """The daemon's sinful with its own port replaced by 1 (nothing listens there): only a
        client that goes through the broker, as it must (spec 09 §3), still reaches it."""
        text = re.sub(r"^<127\.0\.0\.5:\d+", "<127.0.0.5:1", self.address)
        return re.sub(r"addrs=127\.0\.0\.5-\d+", "addrs=127.0.0.5-1", text)

    def tool(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run a program with the pool's environment."""
        return subprocess.run(
            list(argv), env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )

    @property
    def testuser_env(self) -> dict[str, str]:
        """The pool's environment with testuser's IDTOKEN as the one client method (jobs are
        testuser's: root's FS identity may not own jobs)."""
        env = dict(self.env, _condor_SEC_CLIENT_AUTHENTICATION_METHODS="IDTOKENS")
        env["_condor_SEC_TOKEN_DIRECTORY"] = self.env["CEDAR_LIVE_TOKEN_DIR"]
        return env


def _environment(printed: str) -> dict[str, str]:
    shown = subprocess.run(
        ["bash", "-c", 'eval "$1" && env -0', "ccb-pool-env", printed],
        capture_output=True,
        check=True,
    ).stdout
    env = {}
    for entry in shown.split(b"\0"):
        name, _, value = entry.decode().partition("=")
        if name:
            env[name] = value
    return env


@contextmanager
def ccb_pool(daemon: str) -> Iterator[CcbPool]:
    """A pool whose ``daemon`` (``STARTD`` or ``SCHEDD``) is reachable only through CCB."""
    release = Path(os.environ.get("CEDAR_HTCONDOR") or REPO.parent / "shared" / "htcondor")
    script = release / "minicondor.sh"
    if not script.exists():
        pytest.skip(f"no HTCondor release at {release}")
    if os.geteuid() != 0:
        pytest.skip("starting a pool needs root")
    directory = Path(tempfile.mkdtemp(prefix="cedar-ccb-pool."))
    (directory / "etc" / "config.d").mkdir(parents=True)
    config = CONFIG.format(d=daemon) + (STARTER_CONFIG if daemon == "STARTD" else "")
    (directory / "etc" / "config.d" / "70-ccb").write_text(config)
    env = dict(os.environ)
    for name in list(env):
        if name.startswith(("CEDAR_LIVE_", "_condor_")) or name == "CONDOR_CONFIG":
            del env[name]
    try:
        started, _port = start_minicondor([str(script)], directory, env, timeout=300)
        if started.returncode != 0:
            raise RuntimeError(f"the CCB pool did not start:\n{started.stderr[-2000:]}")
        env.update(_environment(started.stdout))
        pool = CcbPool(directory, env, env["CEDAR_LIVE_COLLECTOR"], "", daemon)
        pool.address = pool.advertised_address()
        yield pool
    finally:
        stop_minicondor([str(script)], directory, env)
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def cedar_target(broker: str) -> Iterator[tuple[CcbTarget, str]]:
    """A cedar daemon on 127.0.0.6 registered with ``broker`` (root's FS gives the DAEMON level
    the broker asks for); yields it and its address with its own port closed (so only the
    broker reaches it).  Its one command: a slot query answered with ``slot1@cedar``."""
    if os.geteuid() != 0:
        pytest.skip("registering with the broker needs the pool's DAEMON level (root's FS)")
    daemon = Daemon("cedar-target", "STARTD", policy=open_policy(), host="127.0.0.6")
    daemon.register(Command.QUERY_STARTD_ADS, RecordingQueryHandler([slot_ad("slot1@cedar")]))
    target = CcbTarget(daemon, broker, heartbeat=30, reconnect=2)
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
        with suppress(trio.RunFinishedError):
            trio.from_thread.run_sync(cancel.cancel, trio_token=tokens[0])

    with serve_in_thread(serve, stop):
        closed = re.sub(r"^<127\.0\.0\.6:\d+", "<127.0.0.6:1", daemon.address)
        yield target, re.sub(r"addrs=127\.0\.0\.6-\d+", "addrs=127.0.0.6-1", closed)
