"""The reference client (htcondor2) against our mock schedd: submit, query, act, edit, history."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cedar.daemons.pool import MockPool
from tests.schedd.conftest import REFERENCE_TIMEOUT, reference_env

SCRIPT = Path(__file__).with_name("reference_script.py")


@pytest.mark.reference
def test_reference_client_lifecycle(
    pool: MockPool, reference_available: None, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), pool.schedd_address],
        env=reference_env(tmp_path / "tool.log"),
        capture_output=True,
        text=True,
        timeout=REFERENCE_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    cluster = out["cluster"]
    assert out["num"] == 3
    assert [q["Args"] for q in out["query"]] == ["hi 0", "hi 1", "hi 2"]
    assert {q["JobStatus"] for q in out["query"]} == {1}
    assert out["hold"]["TotalSuccess"] == 3 and out["hold"]["TotalChangedAds"] == 1
    assert out["edited"] == ["bar", None, None]
    assert out["release"]["TotalSuccess"] == 1
    assert out["remove"]["TotalSuccess"] == 1
    assert out["after"] == [[0, 5], [1, 1]]
    assert out["history"] == [[2, 3]]
    # What the reference client did is visible in our queue.
    jobs = {ad["ProcId"]: ad for ad in pool.schedd.queue.all_jobs()}
    assert jobs[0]["ClusterId"] == cluster
    assert jobs[0]["HoldReason"] == "ref hold (by user " + jobs[0]["Owner"] + ")"
    assert jobs[0]["HoldReasonSubCode"] == 3
    assert jobs[0]["Cmd"] == "/bin/echo"
    assert "Requirements" in jobs[0]
