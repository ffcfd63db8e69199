"""CCB against the real 25.13.2 pool, second run: the schedd reachable only through the broker.

The schedd is located through the collector (its ``MyAddress`` has ``CCBID``), so every
command below reaches it by ``CCB_REQUEST`` and a reversed connection: a submit, then the
queue as ``condor_q`` prints it, and ``cedar ping`` naming the route.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live_pool.ccbpool import CcbPool, ccb_pool

CEDAR = str(Path(sys.executable).parent / "cedar")


@pytest.fixture(scope="module")
def pool() -> Iterator[CcbPool]:
    with ccb_pool("SCHEDD") as started:
        started.env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"  # testuser's
        started.env["_condor_SEC_TOKEN_DIRECTORY"] = started.env["CEDAR_LIVE_TOKEN_DIR"]
        yield started


def test_submit_and_query_through_the_broker(pool: CcbPool) -> None:
    description = Path(pool.env["CEDAR_LIVE_IWD"]) / "ccb-sleep.sub"
    description.write_text("executable = /bin/sleep\narguments = 600\nhold = true\nqueue 2\n")
    submitted = pool.tool(CEDAR, "submit", str(description))
    assert submitted.returncode == 0, submitted.stderr
    assert "2 job(s) submitted to cluster 1." in submitted.stdout
    reference = pool.tool("condor_submit", str(description))
    assert "2 job(s) submitted to cluster 2." in reference.stdout
    for extra in (["-af", "ClusterId", "ProcId", "Owner", "JobStatus"], ["-af", "Cmd", "Args"]):
        ours = pool.tool(CEDAR, "q", *extra)
        theirs = pool.tool("condor_q", *extra)
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout == theirs.stdout
    assert pool.tool(CEDAR, "q", "-af", "ClusterId").stdout.split() == ["1", "1", "2", "2"]


def test_ping_names_the_route(pool: CcbPool) -> None:
    shown = pool.tool(CEDAR, "ping", "--type", "schedd", "--verbose", "READ", "WRITE")
    assert shown.returncode == 0, shown.stderr
    assert "WRITE: authorized as testuser@" in shown.stdout
    assert shown.stdout.count("reached by CCB reversed connection via 127.0.0.1:") == 2


def test_whoami_through_the_broker_is_condor_pings_identity(pool: CcbPool) -> None:
    """``cedar whoami`` reaches the CCB-only schedd through the broker and reports what
    ``condor_ping -verbose`` reports for the same token, plus the route."""
    from tests.live_pool.test_whoami_live import SHARED, fields

    ours = pool.tool(CEDAR, "whoami", "--type", "schedd")
    theirs = pool.tool("condor_ping", "-verbose", "-type", "schedd", "WRITE")
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    mine, reference = fields(ours.stdout), fields(theirs.stdout)
    assert {k: mine[k] for k in SHARED} == {k: reference[k] for k in SHARED}
    assert mine["Remote Mapping"] == "testuser@minicondor"
    assert mine["Route"].startswith("CCB reversed connection via 127.0.0.1:")
    assert "CCBID=" in mine["Destination"]
