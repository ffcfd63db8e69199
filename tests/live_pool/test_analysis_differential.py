"""``cedar q -better-analyze`` next to the real ``condor_q -better-analyze`` on the same pool:
the same text for a job that matches (and runs), one asking for too much memory, an impossible
clause, a held job, a local-universe job, ``:reverse``, ``:summary`` and plain ``-analyze``.
Only the clock (match times) and the schedd's address in the banner may differ.

Jobs are submitted as testuser (the pool's IDTOKEN); at most one slot is kept busy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CEDAR = Path(sys.executable).parent / "cedar"
_CTIME = re.compile(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}")

SUBMITS = {
    "match": "executable = /bin/sleep\narguments = 900\nshould_transfer_files = NO\nqueue\n",
    "memory": "executable = /bin/sleep\narguments = 60\nrequest_memory = 10240\n"
    "should_transfer_files = NO\nqueue\n",
    "impossible": "executable = /bin/sleep\narguments = 60\n"
    'requirements = (TARGET.Machine == "nosuchhost.example.org")\n'
    "should_transfer_files = NO\nqueue\n",
    "held": "executable = /bin/sleep\narguments = 60\nhold = true\nshould_transfer_files = NO\n"
    "queue\n",
    "local": "universe = local\nexecutable = /bin/sleep\narguments = 900\nqueue\n",
    "negation": "executable = /bin/sleep\narguments = 60\nhold = true\n"
    "requirements = !(TARGET.Memory > 100000) && (TARGET.Memory > 10 ? true : false) && "
    "!(TARGET.Cpus > 8 || TARGET.Disk < 0) && (RequestMemory * 2 < TARGET.Memory)\n"
    "should_transfer_files = NO\nqueue\n",
    "operators": "executable = /bin/sleep\narguments = 60\nhold = true\n"
    "requirements = ((TARGET.Memory ?: 0) > 10) && ((TARGET.Cpus > 0) ?: false) && "
    '(split(TARGET.Name, "@")[1] == "vm") && (TARGET.Memory > 1 =?= true) && -TARGET.Cpus < 0\n'
    "should_transfer_files = NO\nqueue\n",
}


def _env() -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOOLS", "CEDAR_LIVE_TOKEN_DIR"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set")
    if not CEDAR.exists():
        pytest.skip("the cedar console script is not installed")
    token_dir = Path(os.environ["CEDAR_LIVE_TOKEN_DIR"])
    if not all(os.access(p, os.R_OK) for p in [token_dir, *token_dir.iterdir()]):
        pytest.skip("the pool's IDTOKEN is not readable by this user (root's, 0600)")
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    env["TZ"] = "UTC"
    return env


def _run(argv: list[str], env: dict[str, str]) -> str:
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _as_testuser(*argv: str) -> str:
    env = _env()
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = env["CEDAR_LIVE_TOKEN_DIR"]
    return _run([str(CEDAR), *argv], env)


def _job(job_id: str) -> dict[str, object]:
    ads = json.loads(_run([str(CEDAR), "q", job_id, "--json"], _env()))
    return ads[0] if ads else {}


def _wait(job_id: str, ready: str, seconds: float = 300) -> None:
    """Until the job is running (``ready="running"``) or has met the negotiator once."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ad = _job(job_id)
        if ready == "running" and ad.get("JobStatus") == 2:
            return
        if ready == "negotiated" and ad.get("LastRejMatchTime"):
            return
        time.sleep(2)
    pytest.fail(f"job {job_id} did not become {ready} in {seconds:.0f} s (busy pool?)")


@pytest.fixture(scope="module")
def jobs() -> Iterator[dict[str, str]]:
    _env()
    # the jobs' iwd must be reachable by testuser: under the pool's job directory (mode 1777)
    base = os.environ.get("CEDAR_LIVE_IWD") or "/tmp"
    directory = Path(tempfile.mkdtemp(prefix="analyze-", dir=base))
    directory.chmod(0o1777)
    ids: dict[str, str] = {}
    for name, text in SUBMITS.items():
        path = directory / f"{name}.sub"
        path.write_text(f"initialdir = {directory}\n{text}")
        cluster = json.loads(_as_testuser("submit", str(path), "--json"))["cluster"]
        ids[name] = f"{cluster}.0"
    try:
        _wait(ids["match"], "running")
        _wait(ids["local"], "running")
        _wait(ids["memory"], "negotiated")
        _wait(ids["impossible"], "negotiated")
        yield ids
    finally:
        _as_testuser("rm", *(i.split(".")[0] for i in ids.values()))


def _stable(text: str) -> list[str]:
    """Without the clock and the banner's address (root's condor_q uses the schedd's direct
    address from its address file, cedar the shared-port one: the same schedd)."""
    lines = []
    for line in text.splitlines():
        if line.startswith("-- Schedd:"):
            line = line.split(" : <", 1)[0]
        lines.append(_CTIME.sub("<time>", line))
    return lines


def _both(*argv: str) -> tuple[list[str], list[str]]:
    env = _env()
    tool = shutil.which("condor_q", path=env["PATH"])
    if tool is None:
        pytest.skip("condor_q is not in CEDAR_LIVE_TOOLS")
    for _ in range(3):  # a negotiation cycle between the two runs can move a counter: retry
        theirs = _stable(_run([tool, *argv], env))
        ours = _stable(_run([str(CEDAR), "q", *argv], env))
        if ours == theirs:
            break
    return ours, theirs


@pytest.mark.parametrize(
    "case", ["match", "memory", "impossible", "held", "local", "negation", "operators"]
)
def test_better_analyze_prints_what_condor_q_prints(jobs: dict[str, str], case: str) -> None:
    ours, theirs = _both("-better-analyze", jobs[case])
    assert ours == theirs
    assert any("Run analysis summary" in line for line in ours)


def test_reverse_prints_what_condor_q_prints(jobs: dict[str, str]) -> None:
    env = _env()
    status = shutil.which("condor_status", path=env["PATH"]) or "condor_status"
    slot = sorted(_run([status, "-af", "Name"], env).split())[0]
    ours, theirs = _both("-better-analyze:reverse", "-machine", slot, jobs["memory"])
    assert ours == theirs
    assert any(line.startswith("-- Slot: ") for line in ours)


def test_plain_analyze_prints_what_condor_q_prints(jobs: dict[str, str]) -> None:
    for case in ("match", "memory"):
        ours, theirs = _both("-analyze", jobs[case])
        assert ours == theirs


def test_summary_prints_what_condor_q_prints(jobs: dict[str, str]) -> None:
    ours, theirs = _both("-better-analyze:summary", "-allusers")
    assert ours == theirs


def test_json_explains_the_memory_job(jobs: dict[str, str]) -> None:
    result = json.loads(
        _run([str(CEDAR), "q", "-better-analyze", jobs["memory"], "--json"], _env())
    )
    (memory,) = result
    assert memory["counts"]["rejected_by_job"] == memory["counts"]["slots"] > 0
    assert "less memory than the 10 GB you asked for" in memory["explanation"]
    (clause,) = [c for c in memory["clauses"] if c["text"] == "TARGET.Memory >= RequestMemory"]
    assert clause["matched"] == 0 and clause["suggestions"]


def test_priority_prints_what_condor_q_prints(jobs: dict[str, str]) -> None:
    """``:priority`` asks the negotiator for the priority table (GET_PRIORITY)."""
    ours, theirs = _both("-better-analyze:priority", jobs["match"])
    assert ours == theirs
    assert any(line.startswith("Submittor testuser@") for line in ours)


def test_analyze_async_for_services(jobs: dict[str, str]) -> None:
    """The one call cedar serve / the MCP server make, in process."""
    import trio

    from cedar.analysis import JobAnalysis
    from cedar.analysis.fetch import analyze_async
    from cedar.commands import AsyncCollector, AsyncSchedd

    pool = os.environ["CEDAR_LIVE_COLLECTOR"]
    cluster, proc = jobs["memory"].split(".")

    async def run() -> list[JobAnalysis]:
        return await analyze_async(
            AsyncSchedd(pool=pool),
            AsyncCollector(pool),
            f"ClusterId == {cluster} && ProcId == {proc}",
        )

    (result,) = trio.run(run)
    assert result.job_id == jobs["memory"]
    assert result.counts.rejected_by_job == result.counts.slots > 0
