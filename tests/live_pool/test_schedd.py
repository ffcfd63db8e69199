"""Against a real HTCondor pool: submit, run to completion, query, hold/release/remove, edit,
history.  Skipped unless CEDAR_LIVE_SCHEDD (or CEDAR_LIVE_POOL) is set; see README.md."""

from __future__ import annotations

import os
import tempfile
import time

import pytest

from cedar.commands.schedd import Schedd
from cedar.commands.submit import Submit

pytestmark = pytest.mark.live

ADDRESS = os.environ.get("CEDAR_LIVE_SCHEDD")
POOL = os.environ.get("CEDAR_LIVE_POOL")
NAME = os.environ.get("CEDAR_LIVE_SCHEDD_NAME")
IWD = os.environ.get("CEDAR_LIVE_IWD") or tempfile.gettempdir()
WAIT = float(os.environ.get("CEDAR_LIVE_WAIT", "300"))

if not (ADDRESS or POOL):
    pytest.skip(
        "set CEDAR_LIVE_SCHEDD or CEDAR_LIVE_POOL to run against a real pool",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def schedd() -> Schedd:
    return Schedd(ADDRESS, pool=POOL, name=NAME)


def _wait_gone(schedd: Schedd, cluster: int) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if not schedd.query(f"ClusterId == {cluster}", ["JobStatus"]):
            return
        time.sleep(2)
    pytest.fail(f"cluster {cluster} did not leave the queue within {WAIT} s")


def test_short_job_runs_to_completion(schedd: Schedd) -> None:
    text = (
        f"executable = /bin/echo\narguments = cedar live\niwd = {IWD}\n"
        "should_transfer_files = NO\nqueue\n"
    )
    result = schedd.submit(Submit(text), submit_dir=IWD)
    ads = schedd.query(f"ClusterId == {result.cluster}", ["ClusterId", "Cmd", "Owner"])
    assert ads and ads[0]["Cmd"] == "/bin/echo"
    _wait_gone(schedd, result.cluster)
    history = list(
        schedd.history(
            f"ClusterId == {result.cluster}", ["ClusterId", "JobStatus", "ExitCode"], match=5
        )
    )
    assert history and history[0]["JobStatus"] == 4 and history[0]["ExitCode"] == 0


def test_hold_edit_release_remove(schedd: Schedd) -> None:
    text = f"executable = /bin/sleep\narguments = 600\niwd = {IWD}\nhold = true\nqueue\n"
    result = schedd.submit(Submit(text), submit_dir=IWD)
    job = f"{result.cluster}.0"
    assert schedd.edit([job], "CedarLive", '"yes"') == 1
    assert schedd.query(f"ClusterId == {result.cluster}", ["CedarLive"])[0]["CedarLive"] == "yes"
    assert schedd.release(job).succeeded == 1
    assert schedd.hold(job, "cedar live hold").succeeded == 1
    ad = schedd.query(f"ClusterId == {result.cluster}", ["JobStatus", "HoldReason"])[0]
    assert ad["JobStatus"] == 5 and ad["HoldReason"].startswith("cedar live hold")
    assert schedd.remove(job, "cedar live remove").succeeded == 1
    _wait_gone(schedd, result.cluster)
    history = list(
        schedd.history(f"ClusterId == {result.cluster}", ["JobStatus", "CedarLive"], match=1)
    )
    assert history and history[0]["JobStatus"] == 3 and history[0]["CedarLive"] == "yes"
