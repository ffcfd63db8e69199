"""The one job-id grammar (cedar/jobid.py) against the real tools on the same pool.

- condor_rm is the oracle of the strict reading: its message says whether it took a word as a
  job (``Job C.P not found``), a cluster (``... jobs in cluster C``), or a user name (``... jobs
  of user "W"``), or refused it (``Invalid cluster #``).  Clusters that do not exist are used,
  so nothing is removed.
- condor_q is the oracle of the lenient reading: ``condor_q WORD`` and ``cedar q WORD`` list the
  same jobs of a fresh cluster, for every spelling of its id.

Every command runs as testuser (the pool's IDTOKEN), as the differential action tests do.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.errors import InvalidArgument
from cedar.jobid import JobId, match_job_id

CEDAR = Path(sys.executable).parent / "cedar"
SUBMIT = "executable = /bin/sleep\narguments = 600\nhold = true\nqueue 3\n"
ABSENT = 987654  # a cluster no test pool reaches


def _need(condition: bool, why: str) -> None:
    """Skip without what the test needs (under CI, as root, tests/conftest.py fails it)."""
    if not condition:
        pytest.skip(why)


def _env() -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOOLS", "CEDAR_LIVE_TOKEN_DIR"):
        _need(bool(os.environ.get(name)), f"{name} is not set")
    _need(CEDAR.exists(), "the cedar console script is not installed")
    token_dir = Path(os.environ["CEDAR_LIVE_TOKEN_DIR"])
    try:
        readable = all(os.access(p, os.R_OK) for p in token_dir.iterdir())
    except OSError:
        readable = False
    _need(readable, "the pool's IDTOKEN is not readable by this user")
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = str(token_dir)
    env.pop("CEDAR_PROGRESS_AFTER", None)
    return env


def _run(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=120, check=False, cwd="/tmp"
    )


def _said(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return _env()


@pytest.fixture(scope="module")
def cluster(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A fresh held cluster of three jobs (0, 1, 2), removed at the end."""
    description = tmp_path_factory.mktemp("jobid") / "job.sub"
    description.write_text(SUBMIT)
    submitted = _run(env, "condor_submit", "-terse", str(description))
    assert submitted.returncode == 0, submitted.stderr
    number = int(submitted.stdout.split(".")[0])
    # the schedd counts a new job for ACT_ON_JOBS a moment later (observed: ~1 s); until then
    # condor_rm only says "There are no jobs in the queue"
    deadline = time.monotonic() + 300  # generous: a loaded CI machine
    while "no jobs in the queue" in _said(_run(env, "condor_rm", str(ABSENT))):
        assert time.monotonic() < deadline, "the schedd still counts no job after 300 s"
        time.sleep(0.5)
    yield number
    _run(env, "condor_rm", str(number))


# (word with {c} for the absent cluster) -> what condor_rm 25.13.2 said (observed)
RM_WORDS = [
    "{c}",
    "{c}.1",
    "0{c}.2",
    "{c}.01",
    "{c}.",
    "{c}.-1",
    "+{c}",
    " {c}.2",
    "{c}.2 ",
    "{c}.+1",
    "{c}.2.3",
    "{c}.2x",
    "0x1",
    "a1",
    "1,2",
    "0",
    "0.0",
]


def _condor_rm_reading(stdout: str, stderr: str) -> str:
    text = stdout + stderr
    if "Invalid cluster #" in text:
        return "refused"
    if (job := re.search(r"Job (\d+)\.(\d+) not found", text)) is not None:
        return f"job {job.group(1)}.{job.group(2)}"
    if (whole := re.search(r"jobs in cluster (\d+)", text)) is not None:
        return f"cluster {whole.group(1)}"
    if re.search(r'jobs of user "', text):
        return "user"
    raise AssertionError(f"unexpected condor_rm answer: {text!r}")


def _grammar_reading(word: str) -> str:
    try:
        job = match_job_id(word)
    except InvalidArgument:
        return "refused"
    if job is None:
        return "user"
    if job.cluster == 0:
        return "refused"  # condor_rm: "Invalid cluster # from 0." (cedar rm says the same)
    return f"job {job}" if job.proc is not None else f"cluster {job.cluster}"


@pytest.mark.parametrize("word", RM_WORDS)
def test_the_strict_grammar_reads_as_condor_rm(
    env: dict[str, str], cluster: int, word: str
) -> None:
    # a queue with jobs (``cluster``): on an empty one condor_rm only says "no jobs in the queue"
    assert cluster != ABSENT
    text = word.format(c=ABSENT)
    real = _run(env, "condor_rm", text)
    assert _condor_rm_reading(real.stdout, real.stderr) == _grammar_reading(text)


Q_WORDS = ["{c}", "{c}.1", "0{c}.2", "{c}.", "{c}.-1", "+{c}", " {c}.1", "{c}.1x", "{c}.1.2"]


def _listed(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    return sorted(line.strip() for line in result.stdout.splitlines() if line.strip())


@pytest.mark.parametrize("word", Q_WORDS)
def test_cedar_q_lists_what_condor_q_lists(env: dict[str, str], cluster: int, word: str) -> None:
    text = word.format(c=cluster)
    real = _listed(_run(env, "condor_q", text, "-af", "ClusterId", "ProcId"))
    ours = _listed(_run(env, str(CEDAR), "q", text, "-af", "ClusterId", "ProcId"))
    assert ours == real
    job = match_job_id(text, lenient=True)
    expected = [] if job is None else [f"{cluster} {p}" for p in range(3)]
    if job is not None and job.proc is not None:
        expected = [f"{cluster} {job.proc}"] if job.proc < 3 else []
    assert real == expected, "condor_q itself no longer reads the word as the grammar says"
    assert job is None or job == JobId(cluster, job.proc)
