"""Late materialization against a real schedd: a cedar submission with ``max_idle`` is a job
factory the schedd materializes up to ``max_idle``, and ``condor_q -factory`` shows it as it
shows condor_submit's own submission of the same description.

Needs an identity that may own jobs (the pool's IDTOKEN, readable by root) and the pool's
tools (``CEDAR_LIVE_TOOLS``, ``CEDAR_LIVE_CONDOR_CONFIG``); skipped otherwise.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.commands import Schedd
from cedar.submit_language import Submit

pytestmark = pytest.mark.live

POOL = os.environ.get("CEDAR_LIVE_POOL") or os.environ.get("CEDAR_LIVE_COLLECTOR")
IWD = os.environ.get("CEDAR_LIVE_IWD") or tempfile.gettempdir()
#: Never matches a slot, so materialized procs stay idle and the count is steady.
DESCRIPTION = (
    "executable = /bin/sleep\narguments = 300\nshould_transfer_files = NO\n"
    'requirements = (TARGET.Machine == "nowhere")\nmax_idle = 2\nqueue 6\n'
)
FACTORY_COLUMNS = ["JobMaterializeLimit", "JobsPresent", "JobsIdle", "JobMaterializeNextProcId",
                   "JobMaterializeMaxIdle", "TotalSubmitProcs", "JobFactoryTotalProcs"]  # fmt: skip


@pytest.fixture(scope="module")
def tools(live_token_dir: str | None) -> dict[str, str]:
    tools = os.environ.get("CEDAR_LIVE_TOOLS")
    config = os.environ.get("CEDAR_LIVE_CONDOR_CONFIG")
    if not (tools and config and live_token_dir and POOL):
        pytest.skip("needs CEDAR_LIVE_TOOLS, CEDAR_LIVE_CONDOR_CONFIG and a readable token dir")
    env = dict(
        os.environ,
        CONDOR_CONFIG=config,
        _condor_SEC_CLIENT_AUTHENTICATION_METHODS="IDTOKENS",
        _condor_SEC_TOKEN_DIRECTORY=live_token_dir,
    )
    return env


@pytest.fixture(scope="module")
def schedd(tools: dict[str, str]) -> Schedd:
    options = {"SEC_TOKEN_DIRECTORY": tools["_condor_SEC_TOKEN_DIRECTORY"]}
    security = ClientSecurity(SecurityConfig(methods=["TOKEN"], options=options))
    return Schedd(pool=POOL, security=security)


def _run(env: dict[str, str], tool: str, *args: str) -> str:
    path = str(Path(os.environ["CEDAR_LIVE_TOOLS"]) / tool)
    done = subprocess.run([path, *args], env=env, capture_output=True, text=True, timeout=120,
                          cwd=IWD, check=True)  # fmt: skip
    return done.stdout


def _factory_row(env: dict[str, str], cluster: int) -> list[str]:
    out = _run(env, "condor_q", "-factory", str(cluster), "-af", *FACTORY_COLUMNS)
    return out.split()


def _batch_row(env: dict[str, str], cluster: int) -> dict[str, str]:
    """condor_q's default (batch) row of one cluster, by column, without the cluster id."""
    out = _run(env, "condor_q", "-allusers", "-constraint", f"ClusterId == {cluster}")
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("OWNER")).split()
    (row,) = [line.split() for line in lines if "ID:" in line]
    # OWNER, BATCH_NAME "ID: n" (2 words), SUBMITTED "date time" (2 words), then one word each
    values = dict(zip(header[3:], row[5:], strict=True))
    values["JOB_IDS"] = values["JOB_IDS"].split(".", 1)[1]
    return values


def _steady(schedd: Schedd, cluster: int, procs: list[int]) -> None:
    """Until the cluster holds exactly these procs (the factory works between schedd cycles;
    the assertions after this say what is wrong when it never gets there)."""
    deadline = time.monotonic() + 300  # generous: a loaded CI machine
    while time.monotonic() < deadline:
        found = schedd.query(f"ClusterId == {cluster}", ["ProcId"])
        if sorted(ad["ProcId"] for ad in found) == procs:
            return
        time.sleep(0.5)


def test_cedar_factory_is_materialized_as_condor_submits(
    schedd: Schedd, tools: dict[str, str]
) -> None:
    ours = schedd.submit(Submit(DESCRIPTION), submit_dir=IWD).cluster
    with tempfile.NamedTemporaryFile("w", suffix=".sub", dir=IWD, delete=False) as sub:
        sub.write(DESCRIPTION)
    try:
        printed = _run(tools, "condor_submit", sub.name)
        theirs = int(re.search(r"submitted to cluster (\d+)", printed).group(1))  # type: ignore[union-attr]
        try:
            for cluster in (ours, theirs):
                _steady(schedd, cluster, [0, 1])
            procs = schedd.query(f"ClusterId == {ours}", ["ProcId", "JobStatus"])
            assert sorted(ad["ProcId"] for ad in procs) == [0, 1]  # max_idle = 2 of 6
            assert all(ad["JobStatus"] == 1 for ad in procs)
            row = _factory_row(tools, ours)
            assert row == ["6", "2", "2", "2", "2", "6", "6"]
            assert row == _factory_row(tools, theirs)
            (factory,) = schedd.query(
                f"ClusterId == {ours} && ProcId =?= undefined", include_cluster_ads=True
            )
            assert factory["JobMaterializeLimit"] == 6 and factory["JobsIdle"] == 2
            assert _batch_row(tools, ours) == _batch_row(tools, theirs)
            assert _batch_row(tools, ours)["TOTAL"] == "6"
            # a proc removed makes room: the schedd materializes the next one
            schedd.remove(f"{ours}.0", "cedar live")
            _steady(schedd, ours, [1, 2])  # not the count: 0 may not have left yet
            ids = sorted(ad["ProcId"] for ad in schedd.query(f"ClusterId == {ours}", ["ProcId"]))
            assert ids == [1, 2]
        finally:
            schedd.remove(f"ClusterId == {theirs}", "cedar live")
    finally:
        os.unlink(sub.name)
        schedd.remove(f"ClusterId == {ours}", "cedar live")


def _pause_state(schedd: Schedd, cluster: int) -> dict[str, object]:
    (ad,) = schedd.query(f"ClusterId == {cluster} && ProcId =?= undefined",
                         ["JobFactoryPaused", "JobMaterializePaused", "JobMaterializePauseReason",
                          "JobMaterializeNextProcId"], include_cluster_ads=True)  # fmt: skip
    return {name: ad.get(name) for name in ad if name not in ("ClusterId", "ProcId")}


def test_holding_the_cluster_pauses_the_factory(schedd: Schedd) -> None:
    """The values the mock copies (tests/schedd/test_late_materialization.py): running 0 and no
    JobMaterializePaused; held 1 and 1 with the reason, no proc made for one removed; released
    0 and 0, the reason gone, materializing again."""
    cluster = schedd.submit(Submit(DESCRIPTION), submit_dir=IWD).cluster
    try:
        _steady(schedd, cluster, [0, 1])
        running = _pause_state(schedd, cluster)
        assert running["JobFactoryPaused"] == 0 and running.get("JobMaterializePaused") is None
        schedd.hold(str(cluster), "stop it")
        held = _pause_state(schedd, cluster)
        assert held["JobFactoryPaused"] == held["JobMaterializePaused"] == 1
        assert str(held["JobMaterializePauseReason"]).startswith("stop it (by user ")
        schedd.remove(f"{cluster}.0", "cedar live")
        _steady(schedd, cluster, [1])
        assert _pause_state(schedd, cluster)["JobMaterializeNextProcId"] == 2
        schedd.release(str(cluster))
        _steady(schedd, cluster, [1, 2])
        released = _pause_state(schedd, cluster)
        assert released["JobFactoryPaused"] == released["JobMaterializePaused"] == 0
        assert released.get("JobMaterializePauseReason") is None
    finally:
        schedd.remove(f"ClusterId == {cluster}", "cedar live")
