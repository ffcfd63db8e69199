"""``cedar tail`` next to the real ``condor_tail`` 25 on the same running job (spec 08 §8).

The job (submitted as testuser with the pool's IDTOKEN, which both tools then use) writes 50
lines to stdout and stderr and a ``progress.txt``, then waits for a "go" file before writing 10
more lines, so the comparison sees still output and the follow sees new output arrive.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CEDAR = Path(sys.executable).parent / "cedar"
JOB_SCRIPT = """#!/bin/sh
i=1
while [ $i -le 50 ]; do echo "stdout line $i"; echo "stderr line $i" >&2; i=$((i+1)); done
echo "progress 50" > progress.txt
n=0
while [ ! -e "$1" ] && [ $n -lt 2400 ]; do sleep 0.5; n=$((n+1)); done
while [ $i -le 60 ]; do
  echo "stdout line $i"; echo "stderr line $i" >&2; i=$((i+1)); sleep 0.5
done
sleep 6
"""


def _env() -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOOLS", "CEDAR_LIVE_TOKEN_DIR"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set")
    token_dir = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    if not os.access(token_dir, os.R_OK) or not all(
        os.access(os.path.join(token_dir, n), os.R_OK) for n in os.listdir(token_dir)
    ):
        pytest.skip("the pool's IDTOKEN is not readable by this user (root's, 0600)")
    if not CEDAR.exists():
        pytest.skip("the cedar console script is not installed")
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = token_dir
    return env


def _run(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, env=_env(), capture_output=True, timeout=timeout, check=False)


def _both(*args: str) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    return _run(["condor_tail", *args]), _run([str(CEDAR), "tail", *args])


def _job_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory the job user may write (``CEDAR_LIVE_IWD`` when there is one)."""
    base = Path(os.environ.get("CEDAR_LIVE_IWD") or "/tmp")
    if base.is_dir() and os.access(base, os.W_OK):
        directory = base / f"tail-{os.getpid()}-{time.monotonic_ns()}"
        directory.mkdir()
    else:
        directory = Path(tmp_path_factory.mktemp("tail", numbered=True))
    directory.chmod(0o777)
    return directory


def _submit(directory: Path, description: str) -> str:
    (directory / "job.sub").write_text(description)
    submitted = subprocess.run(
        ["condor_submit", "-terse", str(directory / "job.sub")],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return submitted.stdout.strip().split(" - ")[0].strip()


def _remove(job: str) -> None:
    subprocess.run(["condor_rm", job], env=_env(), capture_output=True, timeout=60, check=False)


def _start(
    tmp_path_factory: pytest.TempPathFactory, outputs: str = "progress.txt"
) -> tuple[str, Path]:
    """Submit the job and wait until it runs and has written its progress.txt."""
    directory = _job_directory(tmp_path_factory)
    script = directory / "tailjob.sh"
    script.write_text(JOB_SCRIPT)
    script.chmod(0o755)
    go = directory / "go"
    job = _submit(
        directory,
        f"executable = {script}\narguments = {go}\noutput = out.txt\nerror = err.txt\n"
        f"should_transfer_files = YES\ntransfer_output_files = {outputs}\n"
        f"initialdir = {directory}\nqueue\n",
    )
    deadline = time.monotonic() + 180
    while True:
        probe = _run([str(CEDAR), "tail", "-no-stdout", job, "progress.txt"], timeout=60)
        if probe.returncode == 0 and probe.stdout:
            return job, go
        if time.monotonic() > deadline:
            _remove(job)
            pytest.fail(f"job {job} did not start: {probe.stderr.decode()}")
        time.sleep(1)


@pytest.fixture(scope="module")
def running_job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A job whose output stays still (it waits for its "go" file, which nobody creates); its
    missing.txt never exists (it is removed before it could fail on it)."""
    job, go = _start(tmp_path_factory, "progress.txt, missing.txt")
    yield job, go
    _remove(job)


@pytest.fixture
def moving_job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A job of its own for the follow test (which lets it finish)."""
    job, go = _start(tmp_path_factory)
    yield job, go
    _remove(job)


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["-maxbytes", "100"],
        ["-stderr", "-maxbytes", "100"],
        ["-stderr", "-no-stdout", "-maxbytes", "37"],
        ["-maxbytes", "0"],
        ["-no-stdout", "PROGRESS"],
        ["-maxbytes", "100", "PROGRESS"],  # the budget goes to stdout: progress.txt empty
    ],
)
def test_same_output_as_condor_tail(running_job: tuple[str, Path], options: list[str]) -> None:
    job, _ = running_job
    args = [job if o == "JOB" else "progress.txt" if o == "PROGRESS" else o for o in options]
    files = [a for a in args if a == "progress.txt"]
    args = [a for a in args if a != "progress.txt"]
    theirs, ours = _both(*args, job, *files)
    assert theirs.returncode == 0, theirs.stderr
    assert (ours.returncode, ours.stdout) == (0, theirs.stdout), ours.stderr
    assert theirs.stdout or "0" in options


def test_both_files_within_the_budget(running_job: tuple[str, Path]) -> None:
    """stdout and progress.txt both fit: condor_tail 25.13.2 prints them, then fails with
    "Received 1 files, but remote side thought it sent 2 files" (its own count of the budget
    used up at the last byte); cedar prints the same bytes and succeeds."""
    job, _ = running_job
    theirs, ours = _both("-maxbytes", "100000", job, "progress.txt")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout
    assert ours.stdout.endswith(b"stdout line 50\nprogress 50\n")
    if theirs.returncode != 0:  # 25.13.2
        assert b"remote side thought it sent 2 files" in theirs.stderr


def test_same_errors_as_condor_tail(running_job: tuple[str, Path]) -> None:
    job, _ = running_job
    for args in (["-no-stdout", job, "tailjob.sh"], ["-no-stdout", job, "nosuch.txt"]):
        theirs, ours = _both(*args)
        assert theirs.returncode == ours.returncode == 1
        assert ours.stderr.decode().splitlines() == theirs.stderr.decode().splitlines()
    theirs, ours = _both("999999.0")
    assert theirs.returncode == ours.returncode == 1
    assert ours.stderr.decode().strip() == theirs.stderr.decode().strip() == "No such job: 999999.0"


def test_a_file_that_does_not_exist(running_job: tuple[str, Path]) -> None:
    """The starter answers "Unable to resolve file ..." with Retry; condor_tail then retries
    forever without a word, cedar says which file is missing (exit 1)."""
    job, _ = running_job
    ours = _run([str(CEDAR), "tail", "-no-stdout", job, "missing.txt"], timeout=60)
    assert ours.returncode == 1
    assert ours.stderr.decode().startswith(
        "Failed to peek at file from starter: missing.txt does not exist in the job's sandbox"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        _run(["condor_tail", "-no-stdout", job, "missing.txt"], timeout=8)


def test_not_running_is_an_error_not_a_wait(tmp_path_factory: pytest.TempPathFactory) -> None:
    directory = _job_directory(tmp_path_factory)
    job = _submit(directory, "executable = /bin/sleep\narguments = 60\nhold = true\nqueue\n")
    try:
        ours = _run([str(CEDAR), "tail", job], timeout=60)
        assert ours.returncode == 1
        assert ours.stderr.decode().startswith(f"Job {job} is not running.")
        assert "held" in ours.stderr.decode()
    finally:
        _remove(job)


def test_follow_shows_new_output_until_the_job_ends(moving_job: tuple[str, Path]) -> None:
    job, go = moving_job
    follow = subprocess.Popen(
        [str(CEDAR), "tail", "-f", "-maxbytes", "45", job],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    watchdog = threading.Timer(600, follow.kill)  # a hang fails the test, never the run
    watchdog.start()
    try:
        # the job writes its next lines only once "go" exists: create it after the follow has
        # printed the first 45 bytes (a fixed pause was too short when cedar starts slowly)
        assert follow.stdout is not None
        first = b"".join(follow.stdout.readline() for _ in range(3))
        go.touch()
        rest, err = follow.communicate()  # ends by itself once the job has ended
    finally:
        watchdog.cancel()
        if follow.poll() is None:
            follow.kill()
    assert follow.returncode == 0, err
    # the last 45 bytes (lines 48-50), then every new line once, in order, until the end
    assert (first + rest).decode() == "".join(f"stdout line {n}\n" for n in range(48, 61))
