"""The same htcondor2 script, run with the real wheel and with ``cedar.compat`` (forced over the
wheel), against the same pool: the results must be equal.

The script (``compat_programs/htcondor2_tour.py``) exercises every call the compat layer
claims: Collector locate/locateAll/query/directQuery, param, Submit(dict), Schedd
submit/query/edit/act/history, JobEventLog over the job's user log, classad2 parsing and
printing, and the exceptions.  It submits as root with the pool's IDTOKEN (-> testuser).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOUR = Path(__file__).with_name("compat_programs") / "htcondor2_tour.py"


def _run(log: Path, *runner: str) -> dict[str, object]:
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    result = subprocess.run(
        [sys.executable, *runner, str(TOUR), str(log)],
        cwd=log.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,  # the script waits up to 600 s for its jobs, twice
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_htcondor2_script_same_with_wheel_and_compat(tmp_path: Path) -> None:
    pytest.importorskip("htcondor2", reason="the reference htcondor2 wheel is not installed")
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOKEN_DIR", "CEDAR_LIVE_IWD"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set")
    if not _tokens_readable():
        pytest.skip("the pool's IDTOKEN is not readable by this user (root's, 0600)")
    jobs = Path(os.environ["CEDAR_LIVE_IWD"])
    reference = _run(jobs / f"tour-ref-{os.getpid()}.log")
    compat = _run(jobs / f"tour-cedar-{os.getpid()}.log", "-m", "cedar.compat", "run", "--force")
    assert compat.keys() == reference.keys()
    for key in reference:
        assert compat[key] == reference[key], key
    # The comparison means something: the jobs ran, exited 5, and left both logs and history.
    assert reference["history"] and all(row[1] == 5 for row in reference["history"])  # type: ignore[index,union-attr]
    assert any(event[2] == 5 for event in reference["events"])  # type: ignore[index,union-attr]
    for log in jobs.glob(f"tour-*-{os.getpid()}.log"):
        log.unlink()


def _tokens_readable() -> bool:
    """Whether this user can read the pool's IDTOKEN (root's, mode 0600)."""
    directory = Path(os.environ["CEDAR_LIVE_TOKEN_DIR"])
    try:
        files = [path for path in directory.iterdir() if path.is_file()]
    except OSError:
        return False
    return bool(files) and all(os.access(path, os.R_OK) for path in files)


def test_spool_and_retrieve_through_compat(tmp_path: Path) -> None:
    """Input files go to the schedd with ``spool()``, output comes back with ``retrieve()``."""
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOKEN_DIR"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set")
    if not _tokens_readable():
        pytest.skip("the pool's IDTOKEN is not readable by this user (root's, 0600)")
    tmp_path.chmod(0o755)
    (tmp_path / "in.txt").write_text("hello input\n")
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    script = TOUR.with_name("htcondor2_spool.py")
    result = subprocess.run(
        [sys.executable, "-m", "cedar.compat", "run", "--force", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # the script waits up to 600 s for its job
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["[4]", "hello", "input"]
    assert (tmp_path / "out.txt").read_text() == "hello input\n"
