"""Workflow systems nobody here wrote, unchanged from PyPI, on cedar's ``condor_*`` names.

Parsl (HighThroughputExecutor + CondorProvider), dask-jobqueue (HTCondorCluster), batchspawner
(CondorSpawner start/poll/stop) and condorpy (a Job of three tasks) each run their work to
completion against the real pool, set up as a new user would on a machine without HTCondor: a
virtualenv with cedar and the program, the one documented step (``cedar condor-commands DIR``,
docs/condor-commands.md), DIR on PATH, and a small ``CONDOR_CONFIG`` naming the pool.  No
HTCondor tool is on that PATH (asserted), and nothing wraps the programs.

They run as the pool's job user (``testuser``, FS authentication, ``su`` from root): Parsl's and
dask's workers are jobs that import the program, so the venv is built from the system Python in
a world-readable place (``CEDAR_PROGRAMS_VENV``, default
``/var/tmp/cedar-programs-venv-<hash of the checkout's path>``), with cedar installed from the
checkout as a copy (not editable: the checkout may sit where the job user cannot read).  The venv
is kept between runs, keyed by the pinned requirements; cedar is reinstalled only when its
sources changed.  Under CI (``CI`` set) a venv that cannot be built fails the tests.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import per_checkout, unavailable, world_usable

pytestmark = pytest.mark.live

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).with_name("workflow_programs")
VENV = Path(
    os.environ.get("CEDAR_PROGRAMS_VENV") or per_checkout(Path("/var/tmp/cedar-programs-venv"))
)
#: The versions proven here (docs/workflow-programs.md); the venv is rebuilt when this changes.
REQUIREMENTS = [
    "parsl==2026.10.26",
    "dask==2026.11.0",
    "distributed==2026.11.0",
    "dask-jobqueue==0.9.0",
    "batchspawner==1.3.0",
    "jupyterhub==6.1.1",
    "condorpy==0.7.0",
]
IMPORTS = "import parsl, dask_jobqueue, distributed, batchspawner, jupyterhub, condorpy, cedar"
JOB_USER = os.environ.get("CEDAR_LIVE_TEST_USER", "testuser")
BUILD_TIMEOUT = 1200  # first build only: ~5 minutes from PyPI here
PROGRAM_TIMEOUT = 600
HISTORY_POLLS = 120  # seconds, at most, for a finished job to reach the history


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _cedar_sources() -> str:
    """What the venv's copy of cedar was built from: every file of the package and pyproject."""
    files = sorted(
        p for p in (REPO / "cedar").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    return _digest([REPO / "pyproject.toml", *files])


def _run(args: list[str], timeout: float) -> None:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(args)} failed:\n{(done.stdout + done.stderr)[-3000:]}")


def _build_venv() -> None:
    python = VENV / "bin" / "python"
    stamp = VENV / "cedar-programs-requirements.txt"
    wanted = "\n".join(REQUIREMENTS) + "\n"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if not (python.exists() and stamp.exists() and stamp.read_text() == wanted):
        shutil.rmtree(VENV, ignore_errors=True)
        # The system Python: the job user must be able to run it (not a pyenv under /root).
        _run(["/usr/bin/python3", "-m", "venv", str(VENV)], 300)
        _run([*pip, *REQUIREMENTS], BUILD_TIMEOUT)
        stamp.write_text(wanted)
    cedar_stamp = VENV / "cedar-programs-cedar.txt"
    sources = _cedar_sources()
    if not (cedar_stamp.exists() and cedar_stamp.read_text() == sources):
        _run([*pip, "--no-deps", "--force-reinstall", str(REPO)], 600)
        cedar_stamp.write_text(sources)
    _run([str(python), "-c", IMPORTS], 120)


@pytest.fixture(scope="module")
def programs_venv() -> Path:
    """The venv with the four programs and a copy of this checkout's cedar."""
    if os.geteuid() != 0 or shutil.which("su") is None:
        pytest.skip("runs the programs as the pool's job user through su: needs root")
    for name in ("CEDAR_LIVE_COLLECTOR", "CEDAR_LIVE_IWD"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set (start a pool with minicondor.sh, see the README)")
    try:
        pwd.getpwnam(JOB_USER)
    except KeyError:
        pytest.skip(f"the pool's job user {JOB_USER} does not exist")
    if not Path("/usr/bin/python3").exists():
        unavailable("no system Python /usr/bin/python3 to build the programs' venv from")
    if os.environ.get("CEDAR_PROGRAMS_NO_INSTALL") and not (VENV / "bin" / "python").exists():
        unavailable("CEDAR_PROGRAMS_NO_INSTALL is set and the programs venv is not built")
    VENV.parent.mkdir(parents=True, exist_ok=True)
    try:
        _build_venv()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        unavailable(f"cannot build the programs venv at {VENV} (is PyPI reachable?): {exc}")
    os.chmod(VENV, 0o755)
    if not world_usable(VENV / "bin" / "python"):
        unavailable(f"{VENV} is not reachable by {JOB_USER} (a parent directory is private)")
    return VENV


@pytest.fixture
def user_dir(programs_venv: Path) -> Iterator[Path]:
    """A directory of the job user's, inside the pool's jobs directory (mode 1777), holding
    the user's ``condor_*`` launchers, config and the program's files."""
    base = Path(os.environ["CEDAR_LIVE_IWD"])
    if not world_usable(base / "."):
        pytest.skip(f"the pool's job user cannot reach {base} (a parent directory is private)")
    path = Path(tempfile.mkdtemp(prefix="workflow-", dir=base))
    user = pwd.getpwnam(JOB_USER)
    os.chown(path, user.pw_uid, user.pw_gid)
    path.chmod(0o755)
    yield path
    with contextlib.suppress(subprocess.SubprocessError, OSError):
        # Whatever a failed program left in the queue (the user's own jobs, by the user).
        _as_user(path, ["condor_rm", "-constraint", f'Iwd == "{path}"'], timeout=60)
    shutil.rmtree(path, ignore_errors=True)


def _user_env(path: Path) -> dict[str, str]:
    """What the user's shell has: the venv activated, the launchers' DIR on PATH, the config."""
    bin_dir = path / "condor-bin"
    return {
        "HOME": str(path),
        "USER": JOB_USER,
        "LOGNAME": JOB_USER,
        "PATH": f"{VENV / 'bin'}:{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "CONDOR_CONFIG": str(path / "condor_config"),
        "LANG": "C.UTF-8",
    }


def _as_user(
    path: Path, args: list[str], timeout: float = PROGRAM_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in ``path`` as the job user with only :func:`_user_env`."""
    settings = " ".join(f"{k}={shlex.quote(v)}" for k, v in _user_env(path).items())
    command = f"cd {shlex.quote(str(path))} && exec env -i {settings} {shlex.join(args)}"
    return subprocess.run(
        ["su", JOB_USER, "-s", "/bin/sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _set_up_like_a_user(path: Path) -> None:
    """The one documented step, the pool named in a small config, no HTCondor on PATH."""
    domain = os.environ.get("CEDAR_LIVE_UID_DOMAIN", "minicondor")
    (path / "condor_config").write_text(
        f"COLLECTOR_HOST = {os.environ['CEDAR_LIVE_COLLECTOR']}\n"
        # What the pool's machines say: a job's FileSystemDomain must match theirs to run there
        # without file transfer (condorpy's and batchspawner's jobs), as with the real tools.
        f"UID_DOMAIN = {domain}\nFILESYSTEM_DOMAIN = {domain}\n"
    )
    step = _as_user(path, ["cedar", "condor-commands", str(path / "condor-bin")], timeout=120)
    assert step.returncode == 0, step.stdout + step.stderr
    search = _user_env(path)["PATH"]
    for name in ("condor_submit", "condor_q", "condor_rm", "condor_history"):
        assert shutil.which(name, path=search) == str(path / "condor-bin" / name)
    assert shutil.which("condor_master", path=search) is None  # no HTCondor install on PATH


def _run_program(path: Path, script: str) -> dict[str, object]:
    """Run one program as the user; its last stdout line is its JSON result."""
    _set_up_like_a_user(path)
    shutil.copy(PROGRAMS / script, path / script)  # the checkout may be private to root
    run = _as_user(path, [str(VENV / "bin" / "python"), script, str(path)])
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    result: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def _history(
    path: Path,
    cluster: str | int,
    procs: int = 1,
    attributes: tuple[str, ...] = ("Owner", "JobStatus"),
) -> list[list[str]]:
    """``attributes`` of the cluster's jobs once all ``procs`` are in the history, read through
    the user's own launcher (a removed job leaves the queue when its shadow is done)."""
    rows: list[list[str]] = []
    for _ in range(HISTORY_POLLS):
        done = _as_user(path, ["condor_history", str(cluster), "-af", *attributes], 120)
        assert done.returncode == 0, done.stderr
        rows = [line.split() for line in done.stdout.splitlines() if line.strip()]
        if len(rows) >= procs:
            break
        time.sleep(1)
    return rows


def test_parsl_high_throughput_executor_on_condor_provider(user_dir: Path) -> None:
    """Four python_apps on one block (a worker-pool job): values, run as the job user inside
    an HTCondor job; Parsl removes the block at the end (condor_rm, then condor_rm -forcex)."""
    result = _run_program(user_dir, "parsl_squares.py")
    assert result["results"] == [[x * x, JOB_USER, True] for x in range(4)]
    jobs = result["jobs"]
    assert isinstance(jobs, list) and len(jobs) == 1
    cluster = str(jobs[0]).split(".")[0]
    assert _history(user_dir, cluster) == [[JOB_USER, "3"]]


def test_dask_jobqueue_htcondor_cluster(user_dir: Path) -> None:
    """Two worker jobs, four tasks.  The submit file names the workers' files and
    DaskWorkerName with ``$F(MY.JobId)``: worker-<cluster>.0.out, as condor_submit makes it."""
    result = _run_program(user_dir, "dask_squares.py")
    assert result["results"] == [[x * x, JOB_USER, True] for x in range(4)]
    assert sorted(result["workers"]) == ["HTCondorCluster-0", "HTCondorCluster-1"]  # type: ignore[call-overload]
    clusters = sorted(p.name[len("worker-") : -len(".log")] for p in user_dir.glob("worker-*.log"))
    assert len(clusters) == 2
    for cluster in clusters:
        assert (user_dir / f"worker-{cluster}.0.out").exists()
        names = _history(user_dir, cluster, attributes=("DaskWorkerName",))
        assert names == [[f"htcondor--{cluster}.0--"]]


def test_batchspawner_condor_spawner_start_poll_stop(user_dir: Path) -> None:
    """start() submits from stdin and polls ``condor_q ID -format ...`` until running, poll()
    sees it running, stop() removes it and poll() then reports it gone."""
    result = _run_program(user_dir, "batchspawner_cycle.py")
    job_id = str(result["job_id"])
    assert job_id.isdigit()
    assert str(result["status_running"]).startswith("2, slot")  # JobStatus, RemoteHost
    host = str(result["status_running"]).split("@", 1)[1]
    assert result["started_at"] == [host, 8888]
    assert result["poll_running"] is None
    assert result["singleuser_ran"] == f"{JOB_USER} {JOB_USER}"  # as the user, with the hub's env
    assert result["poll_stopped"] == 1
    assert _history(user_dir, job_id) == [[JOB_USER, "3"]]
    # Its description says ShouldTransferFiles = False: the job ran in place, no transfer.
    assert _history(user_dir, job_id, attributes=("ShouldTransferFiles",)) == [["NO"]]


def test_condorpy_job_of_three_tasks(user_dir: Path) -> None:
    """A Job of three tasks, its status read through condor_q/condor_history until Completed."""
    result = _run_program(user_dir, "condorpy_squares.py")
    cluster = result["cluster"]
    assert result["statuses"][-1] == "Completed"  # type: ignore[index]
    assert result["outputs"] == [f"task {proc} of {cluster}" for proc in range(3)]
    assert _history(user_dir, str(cluster), procs=3) == [[JOB_USER, "4"]] * 3
