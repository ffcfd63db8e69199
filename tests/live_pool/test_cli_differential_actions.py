"""``cedar rm|hold|release|edit|token`` next to the real condor_rm/condor_hold/condor_release/
condor_qedit/condor_token_* 25 on the same pool: each command line runs through both, each time
from the same queue (fresh held clusters), and stdout, stderr, the exit status and the queue
afterwards must agree.

Normalized only where the README section ``cli-actions`` documents a deviation: the tool's name
in messages, the cluster ids (each run gets fresh clusters), and usage errors (condor prints its
own help and exits 1; cedar prints argparse's usage and exits 2: both must refuse, print nothing
on stdout and leave the queue alone).  Every command runs as testuser (the pool's IDTOKEN).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CEDAR = Path(sys.executable).parent / "cedar"
# idle jobs never match (requirements = false), so the queue holds still between the two runs
#: Seconds to wait for leaving jobs: generous, a false failure costs a whole CI run.
SETTLE = 300.0
SUBMIT = "executable = /bin/sleep\narguments = 600\nhold = {hold}\nrequirements = false\nqueue 3\n"


def _env() -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOOLS", "CEDAR_LIVE_TOKEN_DIR"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set")
    if not CEDAR.exists():
        pytest.skip("the cedar console script is not installed")
    token_dir = Path(os.environ["CEDAR_LIVE_TOKEN_DIR"])
    try:
        if not all(os.access(p, os.R_OK) for p in token_dir.iterdir()):
            pytest.skip("the pool's IDTOKEN is not readable by this user")
    except OSError:
        pytest.skip("the pool's token directory is not readable by this user")
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env["PATH"] = os.environ["CEDAR_LIVE_TOOLS"] + os.pathsep + env.get("PATH", "")
    env["TZ"] = "UTC"
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = str(token_dir)
    env.pop("CEDAR_PROGRESS_AFTER", None)
    return env


@dataclass
class Outcome:
    status: int
    out: str
    err: str
    queue: list[tuple[int, int, int]]  # (which cluster 0/1, proc, JobStatus)


class Pool:
    """Runs command lines from a fresh queue: two clusters of three jobs each (c0 held,
    c1 held unless a case wants it idle)."""

    def __init__(self, env: dict[str, str], directory: Path) -> None:
        self.env = env
        self.directory = directory

    def run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=self.directory,
        )

    def reset(self, idle_second: bool, counted: bool = False) -> tuple[int, int]:
        """Two fresh clusters; with ``counted``, also wait until the schedd's own count of
        its jobs (``TotalJobAds``) includes them."""
        self.run(["condor_rm", "-all"])  # held and idle jobs leave the queue at once
        self._settle()
        clusters = []
        for hold in ("true", "false" if idle_second else "true"):
            path = self.directory / "job.sub"
            path.write_text(SUBMIT.format(hold=hold))
            done = self.run(["condor_submit", "-terse", str(path)])
            assert done.returncode == 0, done.stderr
            clusters.append(int(done.stdout.split(".")[0]))
        if counted:
            self._await_count()
        return clusters[0], clusters[1]

    def _await_count(self) -> None:
        """The schedd recounts its jobs on a timer (seen 0 for 2-3 s after a submit to an
        emptied queue), and condor_X reads that count when nothing matched: "There are no jobs
        in the queue" (exit 0) instead of "Couldn't find" (exit 1).  Its reply to an action on
        no job (``-constraint false -long``) shows the count."""
        deadline = time.monotonic() + SETTLE
        while time.monotonic() < deadline:
            jobs = len(self.run(["condor_q", "-allusers", "-af", "ProcId"]).stdout.split())
            reply = self.run(["condor_hold", "-constraint", "false", "-long"]).stdout
            if f"TotalJobAds = {jobs}\n" in reply:
                return
            time.sleep(0.5)
        raise AssertionError(f"the schedd's TotalJobAds still stale after {SETTLE:.0f} s")

    def _settle(self) -> None:
        """Wait until no job of any user is on its way out (removed or completed), so that the
        schedd's ``TotalJobAds`` (in ``-long`` replies) is the same for both runs of a case.
        A removed running job leaves once its shadow is gone: slow on a loaded machine."""
        deadline = time.monotonic() + SETTLE
        while time.monotonic() < deadline:
            done = self.run(["condor_q", "-allusers", "-af", "JobStatus"])
            if not set(done.stdout.split()) & {"3", "4"}:
                return
            time.sleep(0.2)
        raise AssertionError(f"jobs still leaving the queue after {SETTLE:.0f} s")

    def queue(self, clusters: tuple[int, int]) -> list[tuple[int, int, int]]:
        done = self.run(["condor_q", "-all", "-af", "ClusterId", "ProcId", "JobStatus"])
        rows = []
        for line in done.stdout.splitlines():
            cluster, proc, status = (int(x) for x in line.split())
            if cluster in clusters:
                rows.append((clusters.index(cluster), proc, status))
        return sorted(rows)

    def outcome(
        self, tool: list[str], template: str, idle_second: bool, counted: bool = False
    ) -> Outcome:
        clusters = self.reset(idle_second, counted)
        words = shlex.split(template.format(c0=clusters[0], c1=clusters[1]))
        done = self.run([*tool, *words])

        def normal(text: str) -> str:
            for index, cluster in enumerate(clusters):
                text = re.sub(rf"\b{cluster}\b", f"C{index}", text)
                text = text.replace(f"job_{cluster}_", f"job_C{index}_")
            return text

        return Outcome(
            done.returncode, normal(done.stdout), normal(done.stderr), self.queue(clusters)
        )


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pool]:
    env = _env()
    directory = tmp_path_factory.mktemp("actions")
    directory.chmod(0o755)
    pool = Pool(env, directory)
    yield pool
    pool.run(["condor_rm", "-all"])


# (command line, how to compare): "same" = stdout, stderr, status and queue equal;
# "usage" = a usage error (condor 1 + its help, cedar 2 + its usage), queue untouched.
ACT_CASES = [
    ("{tool} {c0}.0", "same"),
    ("{tool} {c0}.0 {c0}.2", "same"),
    ("{tool} {c0}", "same"),
    ("{tool} {c1}", "same"),
    ("{tool} 999999.0", "same"),
    ("{tool} {c0}.0 999999.0", "same"),
    ("{tool} -constraint 'ProcId == 1'", "same"),
    ("{tool} -constraint 'ProcId == 1' -constraint 'ClusterId == {c1}'", "same"),
    ("{tool} -const 'ProcId >= 1' -const 'ProcId < 2' -const 'ClusterId == {c0}'", "same"),
    ("{tool} -constraint false", "same"),
    ("{tool} -constraint 'ClusterId == {c0}' {c1}.1", "same"),
    ("{tool} testuser", "same"),
    ("{tool} -all", "same"),
    ("{tool} {c0} -reason 'from the differential test'", "same"),
    ("{tool} -reason because {c0}.1", "same"),
    ("{tool} {c0} -totals", "same"),
    ("{tool} -totals {c0}.0 {c0}.1", "same"),
    ("{tool} -long {c0}.0", "same"),
    ("{tool} -addr '$ADDR' {c0}.0", "same"),
    ("{tool} -pool $POOL {c0}.1", "same"),
    ("{tool} -all {c0}", "usage"),
    ("{tool} -bogus {c0}", "usage"),
    ("{tool}", "usage"),
]
TOOLS = ["rm", "hold", "release"]
EDIT_CASES = [
    ("{c0}.0 Foo 1", "same"),
    ("{c0} Foo '\"bar\"'", "same"),
    ("{c0}.0 Foo=2 Bar=3", "same"),
    ("testuser Foo 8", "same"),
    ("-constraint 'ProcId == 0' -constraint 'ClusterId == {c1}' Foo 7", "same"),
    ("-const 'ClusterId ==' Foo 1", "same"),
    ("{c0}.1 Foo 'Bar + 1' Bar 4", "same"),
    ("{c0} -bogus Foo 8", "usage"),
    ("{c0} Foo", "usage"),
]


def _expand(pool: Pool, template: str) -> str:
    address = pool.run(["condor_status", "-schedd", "-af", "MyAddress"]).stdout.strip()
    return template.replace("$ADDR", address).replace("$POOL", pool.env["CEDAR_LIVE_COLLECTOR"])


def _compare(condor: Outcome, ours: Outcome, kind: str, tool: str) -> None:
    if kind == "usage":
        assert (condor.status, ours.status) == (1, 2), (condor, ours)
        assert condor.out == ours.out == "", (condor, ours)
        assert condor.err and ours.err.startswith(("usage: cedar ", f"cedar {tool}: "))
    else:
        assert ours.status == condor.status, (condor, ours)
        assert ours.out == condor.out, (condor, ours)
        assert ours.err == condor.err.replace(f"condor_{tool}: ", f"cedar {tool}: "), (
            condor,
            ours,
        )
    assert ours.queue == condor.queue, (condor, ours)


@pytest.mark.parametrize(("tool", "case"), [(t, c) for t in TOOLS for c in ACT_CASES])
def test_act_like_condor(pool: Pool, tool: str, case: tuple[str, str]) -> None:
    template, kind = case
    template = _expand(pool, template.replace("{tool} ", "").replace("{tool}", ""))
    idle = tool == "hold"  # something to hold in the second cluster
    counted = False
    for _ in range(2):
        condor = pool.outcome([f"condor_{tool}"], template, idle, counted)
        ours = pool.outcome([str(CEDAR), tool], template, idle, counted)
        if not _schedd_count_differs(condor, ours):
            break
        counted = True  # once more, each run after the schedd has counted its jobs
    _compare(condor, ours, kind, tool)


def _schedd_count_differs(condor: Outcome, ours: Outcome) -> bool:
    """Whether the two runs differ only by the schedd's ``TotalJobAds``, its own count of its
    jobs, which lags a submit by seconds (``Pool._await_count``): in a ``-long`` reply, or as
    condor_X's "There are no jobs in the queue" when nothing matched.  The two runs are then
    repeated, each after the count has caught up, to compare what cedar is responsible for."""
    no_jobs = "There are no jobs in the queue"
    if (no_jobs in condor.err) != (no_jobs in ours.err):
        return True
    if condor.out == ours.out:
        return False
    strip = [
        [line for line in out.splitlines() if not line.startswith("TotalJobAds = ")]
        for out in (condor.out, ours.out)
    ]
    return strip[0] == strip[1]


@pytest.mark.parametrize(
    "template", ["-subcode 7 -reason sub {c1}.0", "{c1} -subcode 3", "-subcode 2 -all"]
)
def test_hold_subcode_like_condor_hold(pool: Pool, template: str) -> None:
    check = ["-af", "ProcId", "HoldReasonSubCode", "HoldReason"]
    condor = pool.outcome(["condor_hold"], template, True)
    condor_attrs = pool.run(["condor_q", "-all", *check]).stdout
    ours = pool.outcome([str(CEDAR), "hold"], template, True)
    our_attrs = pool.run(["condor_q", "-all", *check]).stdout
    _compare(condor, ours, "same", "hold")
    # the default reason names the tool (documented): "via condor_hold" / "via cedar hold"
    assert our_attrs == condor_attrs.replace("via condor_hold", "via cedar hold")
    if "-subcode 7" in template:
        assert "0 7 sub" in our_attrs


@pytest.mark.parametrize("case", EDIT_CASES)
def test_edit_like_condor_qedit(pool: Pool, case: tuple[str, str]) -> None:
    template, kind = case
    check = ["-af", "Foo", "Bar"]
    condor = pool.outcome(["condor_qedit"], template, False)
    condor_attrs = pool.run(["condor_q", "-all", *check]).stdout
    ours = pool.outcome([str(CEDAR), "edit"], template, False)
    our_attrs = pool.run(["condor_q", "-all", *check]).stdout
    if kind == "usage":
        assert (condor.status, ours.status) == (1, 2)
        assert condor.out == ours.out == ""
    else:
        assert ours.status == condor.status, (condor, ours)
        assert ours.out == condor.out, (condor, ours)
        if condor.status == 0:
            assert ours.err == condor.err == ""
        else:  # the first line is condor's; cedar adds the schedd's reason
            assert (
                ours.err.replace("cedar edit", "condor_qedit").splitlines()[0]
                == (condor.err.splitlines()[0])
            )
    assert our_attrs == condor_attrs


def test_two_constraints_act_on_the_intersection(pool: Pool) -> None:
    """The issue's case: ``hold -constraint A -constraint B`` held the whole cluster."""
    clusters = pool.reset(idle_second=True)
    done = pool.run(
        [
            str(CEDAR),
            "hold",
            "-constraint",
            "ProcId == 0",
            "-constraint",
            f"ClusterId == {clusters[1]}",
        ]  # fmt: skip
    )
    assert done.returncode == 0, done.stderr
    assert pool.queue(clusters) == [
        (0, 0, 5), (0, 1, 5), (0, 2, 5), (1, 0, 5), (1, 1, 1), (1, 2, 1)
    ]  # fmt: skip
    done = pool.run(
        [str(CEDAR), "rm", "-const", "JobStatus == 5", "-const", f"ClusterId == {clusters[1]}"]
    )
    assert done.returncode == 0, done.stderr
    assert pool.queue(clusters) == [(0, 0, 5), (0, 1, 5), (0, 2, 5), (1, 1, 1), (1, 2, 1)]


# ------------------------------------------------------------------ tokens


def _token_lines(text: str) -> list[str]:
    """condor_token_list lines without what differs per mint (jti, iat, exp)."""
    text = re.sub(r'"(jti|iat|exp)":("[^"]*"|\d+),?', "", text)
    return sorted(text.replace(",}", "}").splitlines())


@pytest.fixture(scope="module")
def signing_env(pool: Pool) -> dict[str, str]:
    key = os.environ.get("CEDAR_LIVE_SIGNING_KEY")
    if not key or not os.access(key, os.R_OK):
        pytest.skip("the pool's signing key is not readable by this user")
    return pool.env


TOKEN_CASES = [
    "-identity alice@minicondor",
    "-identity alice@minicondor -lifetime 3600",
    "-identity alice@minicondor -authz READ",
    "-identity alice@minicondor -authz READ -authz WRITE -lifetime 60",
    "-identity bob@minicondor -key POOL",
    "--identity bob@minicondor --authz ADVERTISE_STARTD",
    "-lifetime 100 -identity carol@minicondor",
]


@pytest.mark.parametrize("case", TOKEN_CASES)
def test_token_create_and_list_like_condor(
    pool: Pool, signing_env: dict[str, str], case: str, tmp_path: Path
) -> None:
    words = shlex.split(case)
    condor_file, our_file = tmp_path / "condor.tok", tmp_path / "cedar.tok"
    condor = pool.run(["condor_token_create", *words, "-file", str(condor_file)])
    ours = pool.run([str(CEDAR), "token", "create", *words, "-file", str(our_file)])
    assert (ours.returncode, ours.stdout) == (condor.returncode, condor.stdout), (condor, ours)
    assert our_file.stat().st_mode & 0o777 == condor_file.stat().st_mode & 0o777
    for path in (condor_file, our_file):  # each tool lists the other's token as its own
        condor_list = pool.run(["condor_token_list", "-file", str(path)])
        our_list = pool.run([str(CEDAR), "token", "list", "-file", str(path)])
        assert our_list.returncode == condor_list.returncode == 0
        assert our_list.stdout == condor_list.stdout
    listed = [
        pool.run(["condor_token_list", "-file", str(p)]).stdout.replace(str(p), "F")
        for p in (condor_file, our_file)
    ]
    assert _token_lines(listed[0]) == _token_lines(listed[1])


def test_token_list_directory_like_condor(
    pool: Pool, signing_env: dict[str, str], tmp_path: Path
) -> None:
    directory = tmp_path / "tokens.d"
    directory.mkdir(mode=0o700)
    for name in ("alice", "bob"):
        pool.run(
            [
                "condor_token_create",
                "-identity",
                f"{name}@minicondor",
                "-file",
                str(directory / name),
            ]  # fmt: skip
        )
    condor = pool.run(["condor_token_list", "-dir", str(directory)])
    ours = pool.run([str(CEDAR), "token", "list", "-dir", str(directory)])
    assert ours.returncode == condor.returncode == 0
    assert sorted(ours.stdout.splitlines()) == sorted(condor.stdout.splitlines())
    assert len(ours.stdout.splitlines()) == 2
    # and the printed fields are the token's, as JSON
    payload = json.loads(ours.stdout.split(" Payload: ")[1].split(" File: ")[0].replace("\\/", "/"))
    assert payload["iss"] and payload["sub"].endswith("@minicondor")


@pytest.mark.parametrize(
    "argv",
    [["create", "-identity", "x@y", "-bogus"], ["create"], ["list", "-bogus"]],
)
def test_token_usage_errors(pool: Pool, argv: list[str]) -> None:
    condor = pool.run([f"condor_token_{argv[0]}", *argv[1:]])
    ours = pool.run([str(CEDAR), "token", *argv])
    assert condor.returncode != 0 and ours.returncode == 2
    assert ours.stdout == "" and ours.stderr.startswith(f"usage: cedar token {argv[0]}")


# ------------------------------------------------------------------ submit

SUBMIT_FILES = {
    "file.sub": "executable = /bin/echo\narguments = $(foo) $(bar)\nfoo = file\nqueue\n",
    "twoq.sub": "executable = /bin/echo\narguments = $(foo)\nfoo = file\nqueue\n"
    "foo = after\nqueue\n",
    "noq.sub": "executable = /bin/echo\narguments = $(x)\n",
    "ifd.sub": "executable = /bin/echo\nif defined foo\narguments = yes\nelse\narguments = no\n"
    "endif\nqueue\n",
    "two.sub": "executable = /bin/echo\narguments = $(Process)\nqueue 2\n",
    "late.sub": "executable = /bin/echo\nmax_idle = 2\nqueue 3\n",
    "held.sub": "executable = /bin/echo\narguments = $(foo) $(x)\nhold = true\nfoo = file\n",
}
#: What differs by design between two dry runs: the clock, the build, and the submit method
#: (condor_submit stamps 0; cedar submit sends none, as the README says).
_DRY_RUN_VOLATILE = re.compile(
    r"^(QDate|EnteredCurrentStatus|CondorVersion|CondorPlatform|SubmitVersion|JobSubmitMethod)="
)


def _dry_run_blocks(text: str) -> list[object]:
    """A dry run's output as its skeleton lines and each job's attribute lines as a set."""
    blocks: list[object] = []
    current: set[str] = set()
    for line in text.split("\n"):
        if "=" in line and not line.endswith("dry-run to cluster 1."):
            if not _DRY_RUN_VOLATILE.match(line):
                current.add(line)
            continue
        if current:
            blocks.append(current)
            current = set()
        blocks.append(line)
    return blocks


@pytest.mark.parametrize(
    "words",
    [
        "-dry-run - file.sub",
        "-dry-run - file.sub foo=cmd bar=cmdbar",
        "-dry-run - file.sub -a foo=app -append 'bar = app2'",
        "-dry-run - twoq.sub -a foo=app",
        "-dry-run - noq.sub -queue 'x in (p q)'",
        "-dry-run - noq.sub -queue x in p q",
        "-dry-run - noq.sub -a 'x = a' -a 'queue 2'",
        "-dry-run - ifd.sub foo=1",
        "-dry-run - ifd.sub -a foo=1",
        "-dry-run - file.sub -batch-name 'two words'",
        "-dry-run - two.sub",
        "-dry-run - late.sub",
        "-dry-run ads.out two.sub",
    ],
)
def test_submit_dry_run_like_condor_submit(pool: Pool, words: str) -> None:
    """condor_submit's command line (macros, -append, -queue, -batch-name, -dry-run) through
    both tools: the same jobs, the same layout; the ads written to a file alike."""
    for name, text in SUBMIT_FILES.items():
        (pool.directory / name).write_text(text)
    runs = []
    for tool in (["condor_submit"], [str(CEDAR), "submit"]):
        done = pool.run([*tool, *shlex.split(words)])
        written = pool.directory / "ads.out"
        ads = written.read_text() if written.exists() else ""
        written.unlink(missing_ok=True)
        runs.append((done.returncode, _dry_run_blocks(done.stdout), _dry_run_blocks(ads)))
    assert runs[0][0] == 0, runs[0]
    assert runs[1] == runs[0]


def test_submit_refuses_a_second_queue_like_condor_submit(pool: Pool) -> None:
    (pool.directory / "file.sub").write_text(SUBMIT_FILES["file.sub"])
    condor = pool.run(["condor_submit", "-dry-run", "-", "file.sub", "-queue", "2"])
    ours = pool.run([str(CEDAR), "submit", "-dry-run", "-", "file.sub", "-queue", "2"])
    assert condor.returncode == ours.returncode == 1, (condor, ours)
    phrase = "-queue argument conflicts with queue statement in submit file"
    assert phrase in condor.stdout + condor.stderr and phrase in ours.stderr


def test_submit_terse_like_condor_submit(pool: Pool) -> None:
    """A real submission with -terse, -batch-name, -append, a macro and -queue: the same
    output (the cluster aside) and the same jobs in the queue."""
    (pool.directory / "held.sub").write_text(SUBMIT_FILES["held.sub"])
    words = ["-terse", "held.sub", "-batch-name", "bn x", "-a", "foo=app", "x=mac"]
    words += ["-queue", "x in (p q)"]
    outcomes = []
    for tool in (["condor_submit"], [str(CEDAR), "submit"]):
        done = pool.run([*tool, *words])
        assert done.returncode == 0, done
        cluster = int(done.stdout.split(".")[0])
        jobs = pool.run(["condor_q", str(cluster), "-af", "ProcId", "JobBatchName", "Args"])
        outcomes.append((done.stdout.replace(str(cluster), "C"), done.stderr, jobs.stdout))
        pool.run(["condor_rm", str(cluster)])
    assert outcomes[0][0] == "C.0 - C.1\n"
    assert outcomes[1] == outcomes[0]
