"""The reference client (htcondor2, in a subprocess) spools to and retrieves from cedar's pool."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cedar.daemons.pool import MockPool
from tests.schedd.conftest import REFERENCE_TIMEOUT, reference_available, reference_env

__all__ = ["reference_available"]

SCRIPT = Path(__file__).with_name("reference_spool.py")


@pytest.mark.reference
def test_reference_bindings_spool_and_retrieve(
    spool_pool: MockPool, reference_available: None, inputs: Path, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), spool_pool.schedd_address, str(inputs)],
        env=reference_env(tmp_path / "tool.log"),
        capture_output=True,
        text=True,
        timeout=REFERENCE_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["held"][0]["JobStatus"] == 5 and out["held"][0]["HoldReasonCode"] == 16
    assert out["held"][0]["SUBMIT_Iwd"] == str(inputs)
    assert out["status"] == 4
    # what the bindings sent arrived intact (the mock's stdout is a manifest of the sandbox)
    manifest = (inputs / "logs" / "out.txt").read_text()
    assert (
        "blob.bin 256 40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880" in manifest
    )
    assert "sub/empty.dat 0 " in manifest and "job.sh " in manifest
    assert (inputs / "results" / "renamed.txt").read_text().startswith("output result.txt")
