"""The live suite again as an ordinary user (FS then maps to that user, who may own jobs).

Run as root, these tests switch to ``CEDAR_LIVE_TEST_USER`` (default ``testuser``, which
minicondor.sh creates) with ``su`` and run the same code there.  The repository and the venv's
site-packages must be readable by that user; when this interpreter is not (e.g. a pyenv under
``/root``), the system's ``python3.X`` of the same version runs with them on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import pwd
import shlex
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

USER = os.environ.get("CEDAR_LIVE_TEST_USER", "testuser")
REPO = Path(__file__).resolve().parents[2]


def _su(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["su", USER, "-s", "/bin/sh", "-c", shlex.join(argv)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def _interpreter() -> list[str]:
    """A command line running this interpreter's environment as the user."""
    if _su([sys.executable, "-c", "import cedar"], 60).returncode == 0:
        return [sys.executable]
    system = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}",
                          path="/usr/local/bin:/usr/bin:/bin")  # fmt: skip
    path = os.pathsep.join([str(REPO), *site.getsitepackages()])
    candidate = ["env", f"PYTHONPATH={path}", system] if system else []
    if candidate and _su([*candidate, "-c", "import cedar, pytest"], 60).returncode == 0:
        return candidate
    pytest.skip(f"{USER} can run neither {sys.executable} nor a system python with cedar")


def _as_user(*argv: str, timeout: float = 2400) -> subprocess.CompletedProcess[str]:
    """``argv`` run by this interpreter as the user (a live suite: generous when loaded)."""
    if os.geteuid() != 0:
        pytest.skip("already not root: the rest of this suite runs as this user")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        pytest.skip(f"no user {USER!r} (set CEDAR_LIVE_TEST_USER)")
    return _su([*_interpreter(), *argv], timeout)


def test_fs_maps_to_the_user_and_may_own_jobs(live_collector: str) -> None:
    iwd = os.environ.get("CEDAR_LIVE_IWD") or "/tmp"
    result = _as_user("-m", "cedar.cli.main", "conformance", "--pool", live_collector, "--json",
                      "--write-method", "FS", "--iwd", iwd, "--check", "auth.fs",
                      "--check", "session", "--check", "jobs")  # fmt: skip
    outcomes = {o["check"]: o for o in json.loads(result.stdout)}
    assert result.returncode == 0, outcomes
    domain = os.environ.get("CEDAR_LIVE_UID_DOMAIN", "")
    assert outcomes["auth.fs"]["detail"].startswith(f"as {USER}@{domain}")
    assert outcomes["jobs.lifecycle"]["status"] == "pass"


def test_live_suite_as_the_user() -> None:
    here = "tests/live_pool"
    result = _as_user("-m", "pytest", here, "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                      "--deselect", f"{here}/test_as_testuser.py")  # fmt: skip
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout, result.stdout[-4000:]
