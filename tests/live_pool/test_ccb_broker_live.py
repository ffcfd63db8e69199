"""CCB's broker role against the real 25.13.2 tools: ``cedar pool --ccb`` brokers, the real
``condor_ping``, ``condor_status -direct`` and ``condor_q`` reach a cedar daemon that listens
nowhere, through **cedar's** broker (spec 09 §5-§7).

The tools run with ``USE_SHARED_PORT = false`` (they listen on a TCP port of their own, as in
``ccb-ping-startd-nosp-plain``) and, for the relay, ``TOOLS_ASSUME_FIREWALLS = true`` (as in
``ccb-proxy-ping-startd-plain``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.commands import ping
from cedar.daemons.pool import MockPool, host_name
from cedar.daemons.testing import wait_for

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


#: A real condor_startd of the release, registered with cedar's broker (spec 09 §4.1).
STARTD_CONFIG = """\
RELEASE_DIR = {release}
LOCAL_DIR = {local}
LOG = $(LOCAL_DIR)/log
SPOOL = $(LOCAL_DIR)/spool
EXECUTE = $(LOCAL_DIR)/execute
LOCK = $(LOCAL_DIR)/lock
RUN = $(LOCAL_DIR)/run
SBIN = $(RELEASE_DIR)/sbin
LIBEXEC = $(RELEASE_DIR)/libexec
BIN = $(RELEASE_DIR)/bin
COLLECTOR_HOST = {collector}
CONDOR_HOST = 127.0.0.1
NETWORK_INTERFACE = 127.0.0.1
USE_SHARED_PORT = False
CCB_ADDRESS = $(COLLECTOR_HOST)
PRIVATE_NETWORK_NAME = cedar-ccb-test
SEC_CLIENT_AUTHENTICATION_METHODS = FS
ALLOW_READ = *
NUM_CPUS = 1
START = False
STARTD_CRON_JOBLIST =
SEC_USE_FAMILY_SESSION = False
"""


def _slots(pool: MockPool) -> list[str]:
    """The addresses of the slots the collector holds (a real startd's, here)."""
    return [str(s.ad["MyAddress"]) for s in pool.collector.store.ads("Machine")]


def _name(pool: MockPool) -> str:
    (slot,) = pool.collector.store.ads("Machine")
    return str(slot.ad["Name"]).partition("@")[2]


@pytest.fixture
def startd_dir() -> Iterator[Path]:
    """A directory the startd (which runs as ``condor``) can enter: pytest's are root's."""
    directory = Path(tempfile.mkdtemp(prefix="cedar-ccb-startd."))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_a_real_startd_registers_with_our_broker_and_the_tools_reach_it(
    startd_dir: Path,
) -> None:
    """The real ``condor_startd`` with ``CCB_ADDRESS`` = cedar's collector registers (FS, as
    root), advertises its slot with the ``CCBID`` address, and the real ``condor_ping``,
    ``condor_status -direct`` and cedar reach it through cedar's broker (another private
    network name: its own address is never dialled).  ``SEC_USE_FAMILY_SESSION = False``: a
    startd started without a master otherwise resumes a "family" session for its updates,
    which only daemons of one master share (observed: ``SID_NOT_FOUND``)."""
    if os.geteuid() != 0:
        pytest.skip("a real startd run as condor needs root: the run as root has this test")
    release = Path(os.environ["CEDAR_LIVE_TOOLS"]).parent
    pool = MockPool.for_setup("fs", schedd_name=host_name())
    with pool.run_in_thread():
        for name in ("log", "spool", "execute", "lock", "run"):
            (startd_dir / name).mkdir()
            shutil.chown(startd_dir / name, "condor", "condor")
        config = startd_dir / "condor_config"
        config.write_text(STARTD_CONFIG.format(release=release, local=startd_dir,
                                               collector=pool.host_port))  # fmt: skip
        log = (startd_dir / "startd.out").open("w")
        startd = subprocess.Popen(  # noqa: S603 - the release's own daemon
            [str(release / "sbin" / "condor_startd"), "-f", "-t"],
            env=dict(os.environ, CONDOR_CONFIG=str(config)),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            assert wait_for(lambda: "as ccbid" in (startd_dir / "startd.out").read_text(), 60)
            # the slot it advertises carries the CCB address (its own port is never dialled)
            assert wait_for(lambda: bool(_slots(pool)), 60)
            (address,) = _slots(pool)
            assert "CCBID=" in address and "PrivNet=cedar-ccb-test" in address
            listed_all = _tool(pool, "condor_status", "-af", "Name")
            assert listed_all.stdout.splitlines() == ["slot1@" + _name(pool)]
            pinged = _tool(pool, "condor_ping", "-addr", address, "-verbose", "READ")
            assert pinged.returncode == 0, pinged.stderr
            assert "Authorized:                  TRUE" in pinged.stdout
            listed = _tool(pool, "condor_status", "-direct", address, "-af", "State")
            assert listed.returncode == 0, listed.stderr
            assert listed.stdout == "Unclaimed\n"
            result = ping(address, "READ", timeout=30)
            assert result.route is not None and result.route.startswith("CCB reversed")
        finally:
            startd.terminate()
            startd.wait(60)
            log.close()
