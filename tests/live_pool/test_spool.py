"""Against a real HTCondor pool: spooling input sandboxes and fetching output (spec 07).

Needs ``CEDAR_LIVE_POOL`` and ``CEDAR_LIVE_TOKEN_DIR`` (cedar submits with the pool's IDTOKEN,
as root's FS identity may not own jobs), ``CEDAR_LIVE_IWD`` (a directory the jobs' user can
read), and for the cross-tool tests ``CEDAR_LIVE_TOOLS`` + ``CEDAR_LIVE_CONDOR_CONFIG`` (the
real ``condor_submit``/``condor_transfer_data``).  ``minicondor.sh start`` prints all of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import cedar
from cedar.commands.filetransfer import FileTransferError
from tests.spool.conftest import make_inputs

pytestmark = pytest.mark.live

POOL = os.environ.get("CEDAR_LIVE_POOL")
TOKENS = os.environ.get("CEDAR_LIVE_TOKEN_DIR")
IWD = os.environ.get("CEDAR_LIVE_IWD")
TOOLS = os.environ.get("CEDAR_LIVE_TOOLS")
CONFIG = os.environ.get("CEDAR_LIVE_CONDOR_CONFIG")
WAIT = float(os.environ.get("CEDAR_LIVE_WAIT", "300"))

if not (POOL and TOKENS and IWD):
    pytest.skip(
        "set CEDAR_LIVE_POOL, CEDAR_LIVE_TOKEN_DIR and CEDAR_LIVE_IWD to spool to a real pool",
        allow_module_level=True,
    )
if not os.access(TOKENS, os.R_OK) or not all(
    os.access(os.path.join(TOKENS, name), os.R_OK) for name in os.listdir(TOKENS)
):  # the suite's re-run as testuser: the pool's token directory is root's (0600)
    pytest.skip(
        "the pool's IDTOKEN directory is not readable by this user (spool tests submit with it)",
        allow_module_level=True,
    )

JOB = """\
#!/bin/sh
cat blob.bin > result.bin
ls sub > listing.txt
cat sub/data.txt
"""
SUBMIT = """\
executable = job.sh
transfer_input_files = sub, blob.bin
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
output = logs/out.txt
error = err.txt
log = job.log
transfer_output_files = result.bin, listing.txt
transfer_output_remaps = "listing.txt = renamed/listing.txt"
request_memory = 16
request_disk = 1024
queue
"""
#: The client environment of the real tools: the pool's config, the IDTOKEN.
TOOL_ENV = {
    "_condor_SEC_CLIENT_AUTHENTICATION_METHODS": "IDTOKENS",
    "_condor_SEC_TOKEN_DIRECTORY": TOKENS or "",
}


@pytest.fixture(scope="module")
def schedd() -> cedar.Schedd:
    security = cedar.ClientSecurity(
        cedar.SecurityConfig(methods=["TOKEN"], options={"SEC_TOKEN_DIRECTORY": TOKENS})
    )
    return cedar.Schedd(pool=POOL, security=security)


@pytest.fixture
def job_dir(request: pytest.FixtureRequest) -> Path:
    path = Path(IWD or "") / f"cedar-spool-{request.node.name}-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    make_inputs(path)
    (path / "job.sh").write_text(JOB)
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def wait_completed(schedd: cedar.Schedd, cluster: int) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ads = schedd.query(f"ClusterId == {cluster}", ["JobStatus", "HoldReason"])
        if ads and ads[0]["JobStatus"] == 4:
            return
        if (
            ads
            and ads[0]["JobStatus"] == 5
            and ads[0].get("HoldReason") != ("Spooling input data files")
        ):
            pytest.fail(f"job {cluster}.0 was held: {ads[0].get('HoldReason')}")
        time.sleep(1)
    pytest.fail(f"job {cluster}.0 did not complete within {WAIT} s")


def check_outputs(job_dir: Path) -> None:
    assert (job_dir / "result.bin").read_bytes() == bytes(range(256))
    assert (job_dir / "renamed" / "listing.txt").read_text() == "data.txt\nempty.dat\n"
    assert (job_dir / "logs" / "out.txt").read_text() == "line one\nline two\n"
    assert (job_dir / "err.txt").read_bytes() == b""
    assert "Job terminated" in (job_dir / "job.log").read_text()


def tool(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if not (TOOLS and CONFIG):
        pytest.skip("CEDAR_LIVE_TOOLS and CEDAR_LIVE_CONDOR_CONFIG name the real tools")
    env = dict(os.environ, CONDOR_CONFIG=CONFIG, **TOOL_ENV)
    return subprocess.run(
        [str(Path(TOOLS) / name), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cedar_spools_and_fetches_byte_identical(schedd: cedar.Schedd, job_dir: Path) -> None:
    result = schedd.submit(cedar.Submit(SUBMIT), spool=True, submit_dir=str(job_dir))
    ads = schedd.query(f"ClusterId == {result.cluster}", ["JobStatus", "HoldReasonCode", "Iwd"])
    assert ads[0]["JobStatus"] == 5 and ads[0]["HoldReasonCode"] == 16
    assert ads[0]["Iwd"] != str(job_dir)  # the schedd's rewrite: Iwd is its spool directory
    spooled = schedd.spool(result)
    assert spooled[0].report.files == ["sub/data.txt", "sub/empty.dat", "blob.bin", "job.sh"]
    wait_completed(schedd, result.cluster)
    fetched = schedd.retrieve(str(result.cluster))
    assert fetched[0].report.ok
    check_outputs(job_dir)


def test_condor_transfer_data_fetches_what_cedar_spooled(
    schedd: cedar.Schedd, job_dir: Path
) -> None:
    result = schedd.submit(cedar.Submit(SUBMIT), spool=True, submit_dir=str(job_dir))
    schedd.spool(result)
    wait_completed(schedd, result.cluster)
    done = tool("condor_transfer_data", str(result.cluster), cwd=job_dir)
    assert done.returncode == 0, done.stderr
    check_outputs(job_dir)


def test_cedar_fetches_what_condor_submit_spooled(schedd: cedar.Schedd, job_dir: Path) -> None:
    (job_dir / "job.sub").write_text(SUBMIT)
    done = tool("condor_submit", "-spool", "job.sub", cwd=job_dir)
    assert done.returncode == 0, done.stderr
    cluster = int(done.stdout.split("submitted to cluster")[1].split()[0].rstrip("."))
    wait_completed(schedd, cluster)
    fetched = schedd.retrieve([f"{cluster}.0"])
    assert fetched[0].report.ok
    check_outputs(job_dir)


def test_missing_input_fails_as_with_the_real_tools(schedd: cedar.Schedd, job_dir: Path) -> None:
    result = schedd.submit(cedar.Submit(SUBMIT), spool=True, submit_dir=str(job_dir))
    os.unlink(job_dir / "blob.bin")
    with pytest.raises(FileTransferError, match="No such file or directory") as info:
        schedd.spool(result)
    assert (info.value.code, info.value.subcode) == (13, 2)
    # the schedd removes the job, as after condor_submit -spool with a missing file (§9)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ads = schedd.query(f"ClusterId == {result.cluster}", ["JobStatus", "RemoveReason"])
        history = list(
            schedd.history(f"ClusterId == {result.cluster}", ["JobStatus", "RemoveReason"], 1)
        )
        record = (ads or history or [None])[0]
        if record is not None and record["JobStatus"] == 3:
            assert record["RemoveReason"] == "Staging of job files failed"
            return
        time.sleep(1)
    pytest.fail("the job with a missing input was not removed")


@pytest.mark.parametrize("setup", ["fs", "claimtobe-clear"])
def test_real_tools_spool_to_and_fetch_from_cedar_pool(job_dir: Path, setup: str) -> None:
    """condor_submit -spool and condor_transfer_data against the mock schedd (``cedar pool``),
    with AES-GCM (chunked bodies) and in clear (raw bodies)."""
    from cedar.daemons.pool import MockPool, host_name

    if not TOOLS:
        pytest.skip("CEDAR_LIVE_TOOLS names the real tools")
    (job_dir / "job.sub").write_text(SUBMIT)
    # A root tool without a configuration reads the inputs as an unprivileged user.
    for path in (job_dir / "blob.bin", job_dir / "sub" / "data.txt"):
        os.chmod(path, 0o644)
    os.chmod(job_dir / "sub", 0o755)
    os.chmod(job_dir, 0o777)  # ... and writes the outputs as that user
    # The tools find "the local schedd" in the collector by this host's name.
    pool = MockPool.for_setup(
        setup,
        schedd_name=host_name(),
        simulate=True,
        tick=0.1,
        run_time=0.2,
        spool_dir=str(job_dir / "spool"),
    )
    with pool.run_in_thread() as running:
        env = dict(os.environ, **running.client_environment())

        def run(*argv: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [str(Path(TOOLS or "") / argv[0]), *argv[1:]],
                cwd=job_dir,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )

        done = run("condor_submit", "-spool", "job.sub")
        assert done.returncode == 0, done.stdout + done.stderr
        cluster = int(done.stdout.split("submitted to cluster")[1].split()[0].rstrip("."))
        job = running.schedd.queue.spool.job_dir(cluster, 0)
        deadline = time.monotonic() + WAIT  # the mock's run_time is 0.2 s: generous for load
        while time.monotonic() < deadline:
            ads = running.schedd.queue.all_jobs()
            if ads and ads[0].get("JobStatus") == 4:
                break
            time.sleep(0.1)
        assert (job / "blob.bin").read_bytes() == bytes(range(256))  # what the tool spooled
        done = run("condor_transfer_data", str(cluster))
        assert done.returncode == 0, done.stdout + done.stderr
    manifest = (job_dir / "logs" / "out.txt").read_text()
    assert "sub/data.txt 18 " in manifest and "job.sh " in manifest
    assert (job_dir / "renamed" / "listing.txt").read_text().startswith("output listing.txt")


def _dry_run(job_dir: Path, *flags: str) -> dict[str, str]:
    done = tool("condor_submit", *flags, "-dry-run", "-", "job.sub", cwd=job_dir)
    # With -spool, -dry-run still sends 488 for the (never created) job, which the schedd
    # refuses: the exit status is 1, but the ads are printed first.
    assert "JobStatus=" in done.stdout, done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def test_spooling_hold_matches_condor_submit_spool_dry_run(job_dir: Path) -> None:
    """What ``-spool`` changes in the ads is what :func:`spooling_hold` changes (spec 07 §3.1)."""
    from cedar.commands.spool import spooling_hold

    (job_dir / "job.sub").write_text(SUBMIT.replace("queue", "queue 2"))
    plain, spooled = _dry_run(job_dir), _dry_run(job_dir, "-spool")
    # the two dry runs may fall either side of a second's edge: their clock stamps differ
    clock = {"QDate", "EnteredCurrentStatus"}
    theirs = {k: v for k, v in spooled.items() if plain.get(k) != v and k not in clock}
    ads = cedar.Submit(SUBMIT.replace("queue", "queue 2")).build(1, submit_dir=str(job_dir))
    cluster, procs = dict(ads.cluster_ad), [dict(p) for p in ads.proc_ads]
    before = {**cluster, **procs[0]}
    spooling_hold(cluster, procs)
    after = {**cluster, **procs[0]}
    ours = {k: v for k, v in after.items() if before.get(k) != v}
    assert {k: v.replace(" ", "") for k, v in ours.items()} == {
        k: v.replace(" ", "") for k, v in theirs.items()
    }
