"""History sources against the real pool: jobs that ran, were vacated or held and re-ran, and
moved files with the ``file://`` plugin; then ``cedar history`` next to ``condor_history`` 25
(the same command lines, outputs compared) and the library's records attribute by attribute.

The jobs are submitted with the real ``condor_submit`` as testuser (the pool's IDTOKEN); the
module waits until every one of them has left the queue (about a minute).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cedar.auth.client_config import SecurityConfig
from cedar.commands import HistoryError, Schedd, Startd

CEDAR = Path(sys.executable).parent / "cedar"
WAIT = 300.0


@dataclass(frozen=True)
class Jobs:
    """The clusters the fixture ran, and the pool they ran in."""

    pool: str
    echo: int  # 2 procs, one run each
    url_in: int  # a file:// input (INPUT transfer record)
    url_out: int  # file:// input and output remap (INPUT and OUTPUT records)
    vacated: int  # vacated while running, ran again
    held: int  # held while running, released, ran again

    @property
    def first(self) -> int:
        return self.echo


#: cedar as a module of this interpreter: also where no console script is installed (the suite
#: run again as the test user, with a system Python).
CEDAR_MODULE = (sys.executable, "-m", "cedar.cli.main")


def _env() -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOOLS", "CEDAR_LIVE_TOKEN_DIR"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set")
    if not CEDAR.exists():
        pytest.skip("the cedar console script is not installed")
    directory = Path(os.environ["CEDAR_LIVE_TOKEN_DIR"])
    try:
        tokens = [p for p in directory.iterdir() if p.is_file()]
    except OSError:
        tokens = []
    if not tokens or not all(os.access(p, os.R_OK) for p in tokens):
        pytest.skip("the pool's IDTOKEN is not readable by this user (root's, 0600)")
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    env["TZ"] = "UTC"
    return env


def _as_testuser(*argv: str) -> str:
    env = _env()
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = env["CEDAR_LIVE_TOKEN_DIR"]
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, (argv, result.stdout, result.stderr)
    return result.stdout


def _submit(directory: Path, name: str, text: str) -> int:
    path = directory / name
    path.write_text(text)
    path.chmod(0o644)
    out = _as_testuser("condor_submit", str(path))
    return int(out.rsplit("cluster", 1)[1].strip(" .\n"))


def _status(cluster: int) -> int | None:
    out = _as_testuser("condor_q", f"{cluster}.0", "-af", "JobStatus").strip()
    return int(out) if out else None


def _wait(what: str, done: object) -> None:
    deadline = time.monotonic() + WAIT
    while not done():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"the pool did not {what} within {WAIT:g} s")
        time.sleep(1)


@pytest.fixture(scope="module")
def jobs() -> Iterator[Jobs]:
    env = _env()
    iwd = Path(os.environ.get("CEDAR_LIVE_IWD") or "/tmp") / f"history-{os.getpid()}"
    iwd.mkdir(mode=0o777, exist_ok=True)
    iwd.chmod(0o777)
    (iwd / "in.txt").write_text("hello from a file:// URL\n")
    (iwd / "in.txt").chmod(0o644)
    script = iwd / "remap.sh"
    script.write_text("#!/bin/sh\ncat in.txt > result.txt\necho done\n")
    script.chmod(0o755)
    common = f"initialdir = {iwd}\nlog = {iwd}/jobs.log\n"
    url = f"file://{iwd}/in.txt"
    echo = _submit(iwd, "echo.sub", common + "executable = /bin/echo\narguments = hi\nqueue 2\n")
    url_in = _submit(
        iwd,
        "url_in.sub",
        common + "executable = /bin/cat\narguments = in.txt\n"
        f"transfer_input_files = {url}\nshould_transfer_files = YES\nqueue\n",
    )
    url_out = _submit(
        iwd,
        "url_out.sub",
        common + f"executable = {script}\ntransfer_input_files = {url}\n"
        "should_transfer_files = YES\ntransfer_output_files = result.txt\n"
        f'transfer_output_remaps = "result.txt = file://{iwd}/result.$(Cluster).txt"\nqueue\n',
    )
    sleeper = common + "executable = /bin/sleep\narguments = 20\nqueue\n"
    vacated = _submit(iwd, "vacated.sub", sleeper)
    held = _submit(iwd, "held.sub", sleeper)
    _wait("start the sleeping jobs", lambda: _status(vacated) == 2 and _status(held) == 2)
    # running for real (the execute events are in the log: the starter has the job), then a
    # moment of run time before each is interrupted
    log = iwd / "jobs.log"
    events = [f"001 ({cluster:03d}.000.000)" for cluster in (vacated, held)]
    _wait("execute the sleeping jobs", lambda: all(e in log.read_text() for e in events))
    time.sleep(3)
    _as_testuser("condor_vacate_job", f"{vacated}.0")
    _as_testuser("condor_hold", f"{held}.0")
    time.sleep(3)
    _as_testuser("condor_release", f"{held}.0")
    clusters = (echo, url_in, url_out, vacated, held)
    _wait("finish the jobs", lambda: all(_status(c) is None for c in clusters))
    del env
    yield Jobs(os.environ["CEDAR_LIVE_POOL"], echo, url_in, url_out, vacated, held)
    shutil.rmtree(iwd, ignore_errors=True)


def _run(tool: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool, *argv], env=_env(), capture_output=True, text=True, timeout=120, check=False
    )


def _both(jobs: Jobs, argv: list[str]) -> tuple[subprocess.CompletedProcess[str], ...]:
    env = _env()
    tool = shutil.which("condor_history", path=env["PATH"])
    if tool is None:
        pytest.skip("condor_history is not in CEDAR_LIVE_TOOLS")
    full = ["-pool", jobs.pool, *argv]
    for _ in range(3):  # a job elsewhere in the pool that ends between the two runs: retry
        ours, theirs = _run(str(CEDAR), ["history", *full]), _run(tool, full)
        if ours.stdout == theirs.stdout:
            break
    return ours, theirs


def _records(jobs: Jobs, *options: str) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    argv = [*options, "-constraint", f"ClusterId >= {jobs.first}", "-json"]
    ours, theirs = _both(jobs, argv)
    assert ours.returncode == 0 and theirs.returncode == 0, (ours.stderr, theirs.stderr)
    return json.loads(ours.stdout), json.loads(theirs.stdout)


# ----------------------------------------------------------- same records, attribute by attribute


def test_epoch_records_are_condor_historys(jobs: Jobs) -> None:
    ours, theirs = _records(jobs, "-epochs")
    assert ours == theirs
    vacated = [r for r in ours if r["ClusterId"] == jobs.vacated]
    assert [r["RunInstanceID"] for r in vacated] == [1, 0]  # two runs, newest first
    assert "VacateReason" in vacated[1] and "VacateReason" not in vacated[0]
    held = [r for r in ours if r["ClusterId"] == jobs.held]
    assert [r["RunInstanceID"] for r in held] == [1, 0]
    every, every_theirs = _records(jobs, "-epochs", "-type", "ALL")
    assert every == every_theirs
    kinds = {(r["ClusterId"], r["EpochAdType"]) for r in every}
    assert {(jobs.vacated, "SPAWN"), (jobs.url_in, "INPUT"), (jobs.url_out, "OUTPUT")} <= kinds


def test_transfer_records_are_condor_historys(jobs: Jobs) -> None:
    ours, theirs = _records(jobs, "-transfer-history")
    assert ours == theirs
    classes = sorted((r["ClusterId"], r["TransferClass"]) for r in ours)
    assert classes == [(jobs.url_in, "INPUT"), (jobs.url_out, "INPUT"), (jobs.url_out, "OUTPUT")]
    inputs, inputs_theirs = _records(jobs, "-transfer-history:I")
    assert inputs == inputs_theirs and len(inputs) == 2
    (result,) = inputs[-1]["InputPluginResultList"]  # type: ignore[misc]
    assert str(result["TransferUrl"]).startswith("file://")


def test_startd_records_are_condor_historys(jobs: Jobs) -> None:
    ours, theirs = _records(jobs, "-startd")
    assert ours == theirs
    runs = [r for r in ours if r["ClusterId"] == jobs.vacated]
    assert len(runs) == 2  # one record per run on a slot (spec 08 §5.3)


def test_library_sources_and_summaries(jobs: Jobs) -> None:
    schedd = Schedd(pool=jobs.pool)
    query = schedd.history(f"ClusterId == {jobs.vacated}", ["RunInstanceID"], source="epochs")
    assert [ad["RunInstanceID"] for ad in query] == [1, 0]
    assert query.summary is not None and query.summary["NumJobMatches"] == 2
    startd = Startd(pool=jobs.pool)
    runs = list(startd.history(f"ClusterId == {jobs.held}", ["ClusterId", "JobStatus"]))
    assert len(runs) == 2 and startd.address is not None
    with pytest.raises(HistoryError) as info:
        list(schedd.history(source="daemon", subsystem="NOSUCH"))
    assert info.value.code == 5 and "NOSUCH_DAEMON_HISTORY" in str(info.value)
    with pytest.raises(HistoryError) as info:
        list(schedd.history(source="epochs", from_dir=True))
    assert info.value.code == 5


def test_a_blowfish_session_is_named_as_the_cause(jobs: Jobs) -> None:
    """The real helper cannot write on a BLOWFISH session and closes (spec 08 §3.4)."""
    legacy = SecurityConfig(
        methods=["CLAIMTOBE"],
        crypto_methods=["BLOWFISH"],
        encryption="NEVER",
        integrity="NEVER",
        authentication="REQUIRED",
    )
    schedd = Schedd(pool=jobs.pool, security=legacy)
    with pytest.raises(HistoryError, match="cannot write on a BLOWFISH session") as info:
        list(schedd.history(source="epochs", match=1))
    assert info.value.code is None
    assert len(list(Schedd(pool=jobs.pool).history(source="epochs", match=1))) == 1


# ----------------------------------------------------------- cedar history vs condor_history

#: Command lines run through both tools (``{echo}`` etc. are the fixture's clusters); the
#: output and the exit status must be the same.
DIFFERENTIAL = [
    "-constraint 'ClusterId >= {first}'",
    "-epochs -constraint 'ClusterId >= {first}'",
    "-epochs {vacated}",
    "-epochs {vacated} -long",
    "-epochs {held} -json",
    "-epochs -constraint 'ClusterId >= {first}' -af ClusterId ProcId RunInstanceID EpochAdType",
    "-epochs -since {held}.0 -af ClusterId ProcId RunInstanceID",
    "-epochs -type SPAWN,EPOCH -constraint 'ClusterId >= {first}' -af ClusterId EpochAdType",
    "-epochs -type spawn {vacated} -af ClusterId RunInstanceID",
    "-epochs -forwards -constraint 'ClusterId >= {first}' -af ClusterId EpochAdType",
    "-transfer-history -long -constraint 'ClusterId >= {first}'",
    "-transfer-history:I -af ClusterId ProcId RunInstanceID TransferClass",
    "-transfer-history:O -json -constraint 'ClusterId >= {first}'",
    "-transfer-history:IO -af:h ClusterId TransferClass -constraint 'ClusterId >= {first}'",
    "-transfer-history",
    "-startd -constraint 'ClusterId >= {first}'",
    "-startd -limit 3",
    "-startd -af ClusterId ProcId JobStatus -constraint 'ClusterId >= {first}'",
    "-startd {vacated} -long",
    "-long {url_out}",
    "-json {echo}",
    "-jsonl {echo}.1",
    "-xml {url_in}",
    "-limit 3",
    "-match 2 -af ClusterId ProcId",
    "-forwards -limit 4 -constraint 'ClusterId >= {first}'",
    "-forwards -scanlimit 3 -af ClusterId ProcId JobStatus",
    "-scanlimit 2",
    "-since {url_in}",
    "-since {url_in}.0 -af ClusterId",
    "-since 'ClusterId == {url_out}' -af ClusterId ProcId",
    "-constraint 'ClusterId >= {first}' -constraint 'JobStatus == 4' -af ClusterId ProcId",
    "{echo} {vacated}",
    "{echo}.0 {held} -af ClusterId ProcId",
    "testuser -limit 2",
    "-limit 2 {echo}",
    "{echo} -af ClusterId 'RemoteWallClockTime >= 0' 'ClusterId * 10'",
    "-af:h ClusterId Owner {echo}",
    "-af:t ClusterId Owner {echo}",
    "-af:, ClusterId ProcId -limit 2",
    "-af ClusterId -af ProcId {echo}",
    "-format '%d.' ClusterId -format '%d\\n' ProcId -constraint 'ClusterId >= {first}'",
    "-format '%-10s|' Owner -format '%5.1f\\n' RemoteWallClockTime {echo}",
    "-attributes ClusterId,ProcId -long {echo}",
    "-attributes ClusterId,Owner -json {echo}",
    "-l {echo}.0",
    "-const 'ClusterId == {held}'",
    "-json -constraint false",
    "-xml -constraint false",
    "-completedsince 0 -af ClusterId -limit 2",
    "-daemon -limit 2",
    "-daemon:schedd -limit 1 -af Name TotalRunningJobs",
    "-daemon -forwards -limit 1 -long",
]


@pytest.mark.parametrize("line", DIFFERENTIAL)
def test_cedar_history_prints_what_condor_history_prints(jobs: Jobs, line: str) -> None:
    argv = shlex.split(line.format(**jobs.__dict__, first=jobs.first))
    ours, theirs = _both(jobs, argv)
    assert (ours.returncode != 0) == (theirs.returncode != 0), (ours.stderr, theirs.stderr)
    assert ours.stdout == theirs.stdout


def test_refusals_are_refused_by_both(jobs: Jobs) -> None:
    for argv in (
        ["-forwards", "-since", "3"],
        ["-bogus"],
        ["-constraint", "A =="],
        ["-daemon:startd"],  # no STARTD_DAEMON_HISTORY: the schedd's ErrorCode 5
    ):
        ours, theirs = _both(jobs, argv)
        assert ours.returncode != 0 and theirs.returncode != 0, argv
        assert "Traceback" not in ours.stderr


# ----------------------------------------------------------- the real tool against our mock


MOCK_LINES = [
    "-epochs -af ClusterId ProcId RunInstanceID EpochAdType",
    "-epochs -type ALL -af ClusterId ProcId EpochAdType",
    "-epochs",
    "-epochs -long",
    "-epochs -since {c}.1 -af ClusterId ProcId RunInstanceID",
    "-transfer-history -af ClusterId ProcId TransferClass",
    "-transfer-history:I -json",
    "-af ClusterId ProcId JobStatus",
]


def test_condor_history_reads_the_mock_schedds_epochs() -> None:
    """Our server role: the real condor_history asks the mock schedd for the epoch and
    transfer records of a vacated-then-completed run, and prints what cedar history prints."""
    from cedar.daemons.pool import MockPool, host_name

    tools = os.environ.get("CEDAR_LIVE_TOOLS")
    if not tools or not Path(tools, "condor_history").exists():
        pytest.skip("CEDAR_LIVE_TOOLS has no condor_history")
    mock = MockPool.for_setup("fs", simulate=False, schedd_name=host_name())
    with mock.run_in_thread() as pool:
        schedd = Schedd(pool.schedd_address)
        description = "executable = /bin/echo\ntransfer_input_files = file:///etc/hostname\n"
        cluster = schedd.submit(description + "queue 2\n").cluster
        queue = pool.schedd.queue
        queue.step(now=1000.0)
        schedd.act("vacate", f"{cluster}.0")
        queue.step(now=1001.0)
        queue.step(now=1001.0 + queue.run_time)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("_condor_", "CONDOR_"))}
        env.update(pool.client_environment(), TZ="UTC")
        for line in MOCK_LINES:
            argv = shlex.split(line.format(c=cluster))
            theirs = subprocess.run(
                [str(Path(tools, "condor_history")), *argv],
                env=env, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            ours = subprocess.run(
                [*CEDAR_MODULE, "history", *argv],
                env=env, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert theirs.returncode == 0 and ours.returncode == 0, (line, theirs.stderr)
            assert theirs.stdout == ours.stdout, line
            assert theirs.stdout.strip() or "since" in line, line
        kinds = subprocess.run(
            [*CEDAR_MODULE, "history", "-epochs", "-type", "ALL", "-af", "EpochAdType"],
            env=env, capture_output=True, text=True, timeout=60, check=True,
        ).stdout.split()  # fmt: skip
        assert sorted(set(kinds)) == ["EPOCH", "INPUT", "SPAWN"]
