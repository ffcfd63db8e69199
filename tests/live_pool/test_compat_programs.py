"""Programs nobody here wrote, unchanged from PyPI, run on cedar.compat against the real pool.

Toil's ``HTCondorBatchSystem`` (the old ``htcondor`` API) and the snakemake HTCondor executor
(``htcondor2`` incl. ``JobEventLog``) run in a venv that has **no** htcondor wheel: the test
builds it once into a cache directory (``CEDAR_COMPAT_VENV``, default
``/var/tmp/cedar-compat-venv-<hash of the checkout's path>``: one per checkout, so two checkouts'
suites never use or re-point each other's; world-readable, because the pool runs the jobs as the
submitting user, ``testuser``, and snakemake's jobs run the venv's Python).  Jobs are submitted
as root with the pool's IDTOKEN, which maps to ``testuser``.  Under CI (``CI`` set) a venv that
PyPI cannot provide fails the test instead of skipping it; a cached venv that already follows
this checkout is used as it is (no download on the second run).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support import per_checkout, unavailable, world_usable

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).with_name("compat_programs")
VENV = Path(os.environ.get("CEDAR_COMPAT_VENV") or per_checkout(Path("/var/tmp/cedar-compat-venv")))
PACKAGES = ["toil", "snakemake"]
NO_DEPS = ["snakemake-executor-plugin-htcondor"]  # it pins the htcondor wheel we do without
VENV_BUILD_TIMEOUT = 600


def _live_env() -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOKEN_DIR", "CEDAR_LIVE_IWD"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set (start a pool with minicondor.sh, see the README)")
    if not _tokens_readable():
        pytest.skip("the pool's IDTOKEN is not readable by this user (root's, 0600)")
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    env.pop("PYTHONPATH", None)
    return env


def _base_python() -> str:
    """An interpreter (>= 3.11, as snakemake needs) that the pool's job user can run too."""
    candidates = [os.environ.get("CEDAR_COMPAT_PYTHON"), sys.executable, "/usr/bin/python3"]
    for candidate in candidates:
        if not candidate or not os.path.exists(candidate) or not world_usable(candidate):
            continue
        version = subprocess.run(
            [candidate, "-c", "import sys, venv; print(sys.version_info >= (3, 11))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if version.stdout.strip() == "True":
            return candidate
    unavailable("no Python >= 3.11 that the pool's job user can run (set CEDAR_COMPAT_PYTHON)")
    raise AssertionError("unreachable")


def _compat_run() -> list[str]:
    return [str(_python()), "-m", "cedar.compat", "run"]


def _python() -> Path:
    return VENV / "bin" / "python"


def _venv_ready() -> bool:
    check = "import toil, snakemake, snakemake_executor_plugin_htcondor, htcondor, cedar.compat"
    probe = subprocess.run(
        [str(_python()), "-c", check], capture_output=True, timeout=120, check=False, cwd=VENV
    )
    return probe.returncode == 0


def _follows_this_checkout() -> bool:
    probe = subprocess.run(
        [str(_python()), "-c", "import cedar, os; print(os.path.realpath(cedar.__file__))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=VENV,
    )
    return probe.stdout.strip() == os.path.realpath(REPO / "cedar" / "__init__.py")


def _follow_this_checkout() -> None:
    """Point the (cached) venv at this checkout of cedar and (re)write its import hook; a venv
    that already follows it is left alone, so a second run downloads nothing (an editable
    install would fetch the build backend again)."""
    if not _follows_this_checkout():
        pip = [str(_python()), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, "--no-deps", "-e", str(REPO)], check=True, timeout=300, cwd=VENV)
    subprocess.run(
        [str(_python()), "-m", "cedar.compat", "install-hook"], check=True, timeout=60, cwd=VENV
    )


@pytest.fixture(scope="module")
def programs_venv() -> Path:
    """The venv with Toil, snakemake and its HTCondor executor, cedar, and no htcondor wheel."""
    if os.geteuid() != 0:
        pytest.skip("runs as root: submits with the pool's IDTOKEN, runs snakemake as testuser")
    _live_env()
    if _python().exists() and world_usable(str(_python())):
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            _follow_this_checkout()
    if not (_python().exists() and world_usable(str(_python())) and _venv_ready()):
        if os.environ.get("CEDAR_COMPAT_NO_INSTALL"):
            unavailable("CEDAR_COMPAT_NO_INSTALL is set and the programs venv is not ready")
        shutil.rmtree(VENV, ignore_errors=True)
        try:
            subprocess.run([_base_python(), "-m", "venv", str(VENV)], check=True, timeout=120)
            pip = [str(_python()), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            subprocess.run([*pip, *PACKAGES], check=True, timeout=VENV_BUILD_TIMEOUT)
            subprocess.run([*pip, "--no-deps", *NO_DEPS], check=True, timeout=300)
            subprocess.run([*pip, "-e", str(REPO)], check=True, timeout=300)
            _follow_this_checkout()
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            unavailable(f"cannot build the programs venv from PyPI ({exc}); is PyPI reachable?")
        if not _venv_ready():
            unavailable("the programs venv was built but its packages do not import")
    wheel = subprocess.run(
        [str(_python()), "-c", "import htcondor; print(htcondor.__cedar_compat__)"],
        capture_output=True,
        text=True,
        check=False,
        cwd=VENV,
    )
    assert wheel.stdout.strip() == "True", "the programs venv must not have the htcondor wheel"
    os.chmod(VENV, 0o755)
    return VENV


@pytest.fixture
def job_dir() -> Path:
    """A directory the job user can write (the pool's jobs directory, mode 1777)."""
    base = os.environ.get("CEDAR_LIVE_IWD")
    if not base:
        pytest.skip("CEDAR_LIVE_IWD is not set")
    if not world_usable(os.path.join(base, ".")):
        pytest.skip(f"the pool's job user cannot reach {base} (a parent directory is private)")
    path = Path(tempfile.mkdtemp(prefix="compat-", dir=base))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_toil_htcondor_batch_system(programs_venv: Path, job_dir: Path) -> None:
    """Issue three jobs, poll them, kill the sleeping one, collect exit codes 0 and 3."""
    run = subprocess.run(
        [
            str(_python()),
            "-m",
            "cedar.compat",
            "run",
            str(PROGRAMS / "toil_batch.py"),
            str(job_dir),
        ],
        cwd=job_dir,
        env=_live_env(),
        capture_output=True,
        text=True,
        timeout=900,  # the program waits up to 600 s for its jobs
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    ids = seen["ids"]
    assert seen["issued"] == sorted(ids.values())
    assert seen["exit"] == {"ok": 0, "fail": 3}
    assert ids["slow"] in seen["running_before_kill"]
    assert ids["slow"] not in seen["running_after_kill"]


SNAKEFILE = """\
rule all:
    input: "result.txt"

rule make_numbers:
    output: "numbers.txt"
    shell: "seq 1 5 > {output}"

rule total:
    input: "numbers.txt"
    output: "result.txt"
    shell: "awk '{{s += $1}} END {{print s}}' {input} > {output}"
"""


def test_snakemake_htcondor_executor(programs_venv: Path, job_dir: Path) -> None:
    """A two-rule workflow, each rule an HTCondor job; the result is the sum 1..5.

    Snakemake runs as the pool's job user (``testuser``, FS authentication): its jobs run
    ``python -m snakemake`` again on the execute side, and read what the submit side wrote
    (its source cache is private to the user that made it).  The import hook reaches that
    second Python too.
    """
    if os.geteuid() != 0 or shutil.which("su") is None:
        pytest.skip("needs root to run snakemake as the pool's testuser")
    try:
        pwd.getpwnam("testuser")
    except KeyError:
        pytest.skip("the pool's testuser account does not exist")
    (job_dir / "Snakefile").write_text(SNAKEFILE)
    env = _live_env()
    settings = {
        "CONDOR_CONFIG": env["CONDOR_CONFIG"],
        "HOME": str(job_dir),
        "XDG_CACHE_HOME": str(job_dir / "cache"),
        "PATH": "/usr/bin:/bin",
    }
    snakemake = [
        str(_python()),
        "-m",
        "snakemake",
        "--executor",
        "htcondor",
        "--jobs",
        "2",
        "--latency-wait",
        "10",
        "--default-resources",
        "getenv=True",
        "--htcondor-jobdir",
        str(job_dir / "htcondor"),
    ]
    command = " ".join(f"{k}={shlex.quote(v)}" for k, v in settings.items())
    command = f"cd {shlex.quote(str(job_dir))} && env -i {command} " + shlex.join(snakemake)
    run = subprocess.run(
        ["su", "testuser", "-s", "/bin/sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=900,  # two jobs in turn, each a Python start on both sides: slow under load
        check=False,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    assert (job_dir / "result.txt").read_text().strip() == "15"
    log = job_dir / "htcondor" / "snakemake-rules.log"
    assert "Job terminated" in log.read_text()


def _tokens_readable() -> bool:
    """Whether this user can read the pool's IDTOKEN (root's, mode 0600)."""
    directory = Path(os.environ["CEDAR_LIVE_TOKEN_DIR"])
    try:
        files = [path for path in directory.iterdir() if path.is_file()]
    except OSError:
        return False
    return bool(files) and all(os.access(path, os.R_OK) for path in files)
