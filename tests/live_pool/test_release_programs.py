"""HTCondor's own Python programs, unchanged, with the release's bindings and with cedar.compat.

Each command line runs twice against the same real pool: once with the release's own bindings
(``lib/python3`` of the release tarball, with its C extension) and once under ``python -m
cedar.compat run --force`` (the release's ``htcondor_cli`` package is on the path, its bindings
are not).  Outputs (stdout, stderr, exit code; for condor_adstash the JSON documents written)
must be identical after normalization:

* ``exact``: clock values (dates, times, durations, ``(last 89s)``, ``Uptime``) and the
  documented version string (``$CondorVersion ...$``, ``25.13.2`` vs cedar's version) only;
  traceback frames of the runner itself (``runpy``, ``cedar/compat/__main__.py``) are dropped;
* ``stats``: for live statistics displays (condor_top, condor_diagnostics) the values are
  sampled at different moments, so every number is replaced and the lines are compared as a
  set (the same statistics, in any order);
* ``json``: condor_adstash's documents, compared as sorted JSON with clock fields removed.

Command lines with a known difference are listed in ``KNOWN`` with the reason (and the
README's table); they are still run, and must still differ only in that documented way -- i.e.
they are reported, not silently skipped.  ``python tests/live_pool/test_release_programs.py``
prints the comparison of every case (for investigating).

The jobs the command lines look at are submitted by the ``pool_jobs`` fixture (as root with the
pool's IDTOKEN, which maps to ``testuser``): 3 finished jobs with file transfer and a user log
(batch ``relbatch``), 2 finished jobs whose input and output the ``file://`` plugin moved (batch
``urlbatch``, their own log: the transfer records condor_adstash's transfer source reads), 2
running ``sleep`` jobs (batch ``sleepers``), 1 held job, 2 idle ones.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support import per_checkout

REPO = Path(__file__).resolve().parents[2]
TARBALL = Path(
    os.environ.get(
        "CEDAR_RELEASE_TARBALL", "/work/shared/htcondor/htcondor-25.13.2-x86_64-debian12.tar.xz"
    )
)
CACHE = Path(os.environ.get("CEDAR_RELEASE_CACHE", "/var/tmp/cedar-release-programs"))
TIMEOUT = 300  # a program that never ends is killed: generous for a loaded machine


@dataclass(frozen=True)
class Case:
    """One command line: ``program`` (in the release's ``bin``), its arguments (with ``{done}``,
    ``{sleep}``, ``{held}``, ``{idle}`` cluster ids, ``{dir}`` the jobs directory, ``{log}``
    the user log, ``{pool}`` the collector, ``{out}`` a fresh output directory)."""

    name: str
    program: str
    args: tuple[str, ...]
    mode: str = "exact"
    env: tuple[tuple[str, str], ...] = ()
    signal_after: float | None = None  # interrupt (SIGINT) after this many seconds
    as_user: str | None = None


def _c(name: str, program: str, *args: str, **kw: object) -> Case:
    return Case(name, program, tuple(args), **kw)  # type: ignore[arg-type]


ADSTASH = (
    "--standalone",
    "--interface",
    "jsonfile",
    "--json_dir",
    "{out}",
    "--collectors",
    "{pool}",
    "--checkpoint_file",
    "{out}/checkpoint.json",
    "--log_file",
    "{out}/adstash.log",
    "--se_no_log_mappings",
)

# fmt: off
CASES: list[Case] = [
    # classad_eval: the ClassAd language, no pool
    _c("eval-assign", "classad_eval", "a = 1", "a + 1"),
    _c("eval-record", "classad_eval", "[x = 3; y = x * 2]", "y"),
    _c("eval-strcat", "classad_eval", 'strcat("a", "b", 3)'),
    _c("eval-quiet", "classad_eval", "a = 1", "-quiet", "a * 10"),
    _c("eval-list", "classad_eval", "x = {1, 2, 3}", "size(x)", "x[1]"),
    _c("eval-regexp", "classad_eval", 'regexp("a.c", "abc")', 'regexps("(a)(b)", "ab", "\\2\\1")'),
    _c("eval-undefined", "classad_eval", "undefined || true", "undefined && true", "x"),
    _c("eval-error", "classad_eval", "1/0", "error", 'int("x")'),
    _c("eval-file", "classad_eval", "-file", "{dir}/my.ad", "RequestMemory * 2", "Owner"),
    _c(
        "eval-target",
        "classad_eval",
        "-my-file",
        "{dir}/my.ad",
        "-target-file",
        "{dir}/target.ad",
        "TARGET.Memory >= MY.RequestMemory",
    ),
    _c("eval-split", "classad_eval", 'splitUserName("a@b")', 'join(",", {"a", "b"})'),
    _c("eval-syntax", "classad_eval", "a = ", "a"),
    _c("eval-real", "classad_eval", "1.5 * 2", "real(3)", "floor(2.7)", "3 / 2"),
    _c("eval-strings", "classad_eval", 'toUpper("abc")', 'substr("hello", 1, 3)', 'size("abc")'),
    _c("eval-help", "classad_eval", "-help"),
    # condor_watch_q (standard input is a terminal, as for a person)
    _c("watch-files", "condor_watch_q", "-files", "{log}", "-exit", "any,done"),
    _c("watch-pct", "condor_watch_q", "-files", "{log}", "-exit", "any,done",
       "-summary-type", "percentages"),
    _c("watch-bycluster", "condor_watch_q", "-files", "{log}", "-exit", "any,done",
       "-groupby", "cluster"),
    _c("watch-bylog", "condor_watch_q", "-files", "{log}", "-exit", "any,done",
       "-groupby", "log"),
    _c("watch-notable", "condor_watch_q", "-files", "{log}", "-exit", "any,done", "-no-table"),
    _c("watch-bare", "condor_watch_q", "-files", "{log}", "-exit", "any,done",
       "-no-progress", "-no-summary", "-no-updated-at"),
    _c("watch-color", "condor_watch_q", "-files", "{log}", "-exit", "any,done", "-color"),
    _c("watch-clusters", "condor_watch_q", "-clusters", "{sleep}", "{held}", "-exit", "any,idle"),
    _c("watch-users", "condor_watch_q", "-users", "testuser", "-exit", "any,idle"),
    _c("watch-batch", "condor_watch_q", "-batches", "sleepers", "-exit", "all,active"),
    _c("watch-larger", "condor_watch_q", "-larger-than", "{before}", "-exit", "any,idle",
       "-abbreviate"),
    _c("watch-idle", "condor_watch_q", "-clusters", "{idle}", "-exit", "all,idle",
       "-no-row-progress"),
    _c("watch-noexit", "condor_watch_q", "-files", "{log}", "-exit", "any,done",
       "-no-exit-on-key-press", "-display-exited"),
    # condor_top: live statistics
    _c("top-schedd", "condor_top", "-d", "1", mode="stats"),
    _c("top-collector", "condor_top", "--collector", "-d", "1", mode="stats"),
    _c("top-negotiator", "condor_top", "--negotiator", "-d", "1", mode="stats"),
    _c("top-history", "condor_top", "-H", mode="stats"),
    _c("top-columns", "condor_top", "-d", "1", "-c", "2", "-s", "name", mode="stats"),
    _c("top-history-collector", "condor_top", "-H", "--collector"),
    _c("top-startd-view", "condor_top", "--startd", "-d", "1", mode="stats"),
    _c("top-pool-view", "condor_top", "-p", "{pool}", "-d", "1", mode="stats"),
    # htcondor (htcondor_cli)
    _c("cli-version", "htcondor", "--version"),
    _c("cli-ap-status", "htcondor", "ap", "status", mode="stats"),
    _c("cli-cm-status", "htcondor", "cm", "status", mode="stats"),
    _c("cli-ep-status", "htcondor", "ep", "status"),
    _c("cli-job-status-done", "htcondor", "job", "status", "{done}.0"),
    _c("cli-job-status-held", "htcondor", "job", "status", "{held}.0"),
    _c("cli-job-status-idle", "htcondor", "job", "status", "{idle}.1"),
    _c("cli-job-status-missing", "htcondor", "job", "status", "99999.0"),
    _c("cli-job-out", "htcondor", "job", "out", "{done}.1"),
    _c("cli-job-log", "htcondor", "job", "log", "{done}.0"),
    _c("cli-job-resources", "htcondor", "job", "resources", "{sleep}.0"),
    _c("cli-jobset-list", "htcondor", "jobset", "list"),
    _c("cli-eventlog-read", "htcondor", "eventlog", "read", "{log}"),
    _c("cli-eventlog-histogram", "htcondor", "eventlog", "histogram", "{log}"),
    _c("cli-eventlog-read-groupby", "htcondor", "eventlog", "read", "{log}", "-groupby", "log"),
    _c("cli-credential-list", "htcondor", "credential", "list"),
    _c("cli-ap-claims", "htcondor", "ap", "claims"),
    # condor_adstash: the documents written
    _c("adstash-history", "condor_adstash", *ADSTASH, "--schedd_history", mode="json"),
    _c("adstash-epochs", "condor_adstash", *ADSTASH, "--schedd_job_epoch_history", mode="json"),
    _c(
        "adstash-transfer",
        "condor_adstash",
        *ADSTASH,
        "--schedd_transfer_epoch_history",
        mode="json",
    ),
    _c("adstash-startd", "condor_adstash", *ADSTASH, "--startd_history", mode="json"),
    _c(
        "adstash-all",
        "condor_adstash",
        *ADSTASH,
        "--schedd_history",
        "--startd_history",
        "--schedd_job_epoch_history",
        mode="json",
    ),
    # condor_diagnostics: live statistics, interrupted
    _c("diag-all", "condor_diagnostics", "-w", "1", mode="stats", signal_after=4.0),
    _c(
        "diag-commands", "condor_diagnostics", "-w", "1", "-c", "-t", mode="stats", signal_after=4.0
    ),
    _c(
        "diag-silent-prom",
        "condor_diagnostics",
        "-w",
        "1",
        "-s",
        "--prometheus",
        "{out}/prom.txt",
        mode="stats",
        signal_after=4.0,
    ),
    # condor_check_config
    _c("check-config", "condor_check_config"),
    _c(
        "check-config-open",
        "condor_check_config",
        env=(("_condor_ALLOW_WRITE", "*"), ("_condor_ALLOW_DAEMON", "*")),
    ),
    # condor_upgrade_check
    _c("upgrade-default", "condor_upgrade_check"),
    _c("upgrade-all", "condor_upgrade_check", "-a"),
    _c("upgrade-tags", "condor_upgrade_check", "-t"),
    _c("upgrade-dump", "condor_upgrade_check", "-d"),
    _c("upgrade-only-warnings", "condor_upgrade_check", "-o", "WARNINGS", "-v"),
    _c("upgrade-ignore", "condor_upgrade_check", "-a", "-i", "WARNINGS", "-w"),
    _c("upgrade-ce", "condor_upgrade_check", "-ce"),
    # condor_test_token (runs as user condor)
    _c(
        "test-token",
        "condor_test_token",
        "-i",
        "https://issuer.example",
        "-s",
        "alice",
        "-S",
        "condor:/READ",
        "-a",
        "ANY",
    ),
    _c("test-token-usage", "condor_test_token", "-s", "alice"),
]
# fmt: on

#: Command lines whose output differs for a documented reason (README, "Running existing
#: HTCondor programs"); name -> reason.
KNOWN: dict[str, str] = {}


# ---------------------------------------------------------------------------------- fixtures


def unpacked_release() -> Path:
    """The release tarball unpacked once into ``CACHE`` (kept across runs); its ``cli``
    directory (the ``htcondor_cli`` package alone, for cedar's side) is a sibling of the
    returned ``release``.

    A cache left by another user for another tarball cannot be replaced by this one (the
    sticky ``/var/tmp``: root's, seen from the as-testuser re-run), so this user unpacks
    into a cache of its own beside it."""
    if not TARBALL.exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and the release tarball {TARBALL} is missing")
        pytest.skip(f"the release tarball {TARBALL} is not here (CEDAR_RELEASE_TARBALL)")
    name = f".unpacked-{TARBALL.stat().st_size}-{int(TARBALL.stat().st_mtime)}"
    cache = CACHE
    if not (cache / name).exists() and cache.exists() and cache.stat().st_uid != os.getuid():
        cache = CACHE.with_name(f"{CACHE.name}-uid{os.getuid()}")
    # Two suites of this user at once (two checkouts) share the cache: one unpacks while the
    # other waits, instead of removing the first one's half-made tree.
    lock = os.open(cache.with_name(f".{cache.name}.lock"), os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (cache / name).exists():
            return cache / "release"
        shutil.rmtree(cache, ignore_errors=True)
        (cache / "cli").mkdir(parents=True)
        with tarfile.open(TARBALL) as archive:
            _extract(archive, cache / "release")
        os.symlink(
            cache / "release" / "lib" / "python3" / "htcondor_cli", cache / "cli" / "htcondor_cli"
        )
        cache.chmod(0o755)
        (cache / name).write_text("")
        return cache / "release"
    finally:
        os.close(lock)  # (releases the lock)


def _extract(archive: tarfile.TarFile, into: Path) -> None:
    """Unpack the release, refusing a member that would land outside ``into``: with the
    ``tar`` filter where this Python has it (3.11.4+, 3.12), else checked here (Debian 12's
    3.11.2 has no filters)."""
    if hasattr(tarfile, "tar_filter"):
        archive.extractall(into, filter="tar")
        return
    for member in archive.getmembers():
        target = os.path.normpath(member.name)
        if os.path.isabs(target) or target == ".." or target.startswith("../"):
            raise tarfile.TarError(f"the release has a member outside its tree: {member.name}")
        if member.issym() or member.islnk():
            link = os.path.normpath(os.path.join(os.path.dirname(target), member.linkname))
            if os.path.isabs(member.linkname) or link == ".." or link.startswith("../"):
                raise tarfile.TarError(f"the release links outside its tree: {member.name}")
    archive.extractall(into)  # noqa: S202 (every member checked above)


@dataclass
class Pool:
    """The jobs the command lines look at."""

    dir: Path
    ids: dict[str, int] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    before: int = 0

    def fill(self, text: str, out: Path) -> str:
        values = {k: str(v) for k, v in self.ids.items()}
        values.update(
            dir=str(self.dir),
            log=str(self.dir / "rel.log"),
            pool=self.env["CEDAR_LIVE_COLLECTOR"],
            out=str(out),
            before=str(self.before),
        )
        return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


SUBMITS = {
    "done": """executable = /bin/sh
arguments = "-c 'cat in.txt > out.$(Process).txt; echo done $(Process)'"
transfer_input_files = in.txt
should_transfer_files = YES
transfer_output_files = out.$(Process).txt
output = done.$(Process).out
error = done.$(Process).err
log = rel.log
batch_name = relbatch
request_memory = 16
queue 3
""",
    # Input and output moved by the file:// plugin: the schedd keeps INPUT and OUTPUT transfer
    # records for these (not for plain file transfer), so condor_adstash's transfer source has
    # documents to write.  Its own log, so the user-log command lines do not change.
    "url": """executable = /bin/sh
arguments = "-c 'cat in.txt > url.$(Process).txt'"
transfer_input_files = file://{dir}/in.txt
should_transfer_files = YES
transfer_output_files = url.$(Process).txt
transfer_output_remaps = "url.$(Process).txt = file://{dir}/url.$(Cluster).$(Process).txt"
log = url.log
batch_name = urlbatch
request_memory = 16
queue 2
""",
    "sleep": "executable = /bin/sleep\narguments = 6000\nlog = rel.log\nbatch_name = sleepers\n"
    "request_memory = 16\nqueue 2\n",
    "held": "executable = /bin/true\nlog = rel.log\nhold = true\nqueue 1\n",
    "idle": "executable = /bin/true\nlog = rel.log\nrequirements = false\nqueue 2\n",
}

MY_AD = 'RequestMemory = 128\nOwner = "alice"\n'
TARGET_AD = "Memory = 2048\n"


def _pool_env() -> dict[str, str]:
    for name in ("CEDAR_LIVE_CONDOR_CONFIG", "CEDAR_LIVE_TOKEN_DIR", "CEDAR_LIVE_IWD"):
        if not os.environ.get(name):
            pytest.skip(f"{name} is not set (start a pool with minicondor.sh)")
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("_condor_")}
    env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    env.pop("PYTHONPATH", None)
    env.pop("CEDAR_COMPAT", None)
    env["TERM"] = "dumb"
    return env


def _submit(tools: Path, env: dict[str, str], directory: Path, name: str) -> int:
    path = directory / f"{name}.sub"
    path.write_text(SUBMITS[name].replace("{dir}", str(directory)))
    submit_env = dict(env)
    submit_env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    submit_env["_condor_SEC_TOKEN_DIRECTORY"] = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    result = subprocess.run(
        [str(tools / "condor_submit"), "-terse", str(path)],
        cwd=directory,
        env=submit_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(result.stdout.split(".", 1)[0])


def _job_statuses(
    tools: Path, env: dict[str, str], cluster: int
) -> subprocess.CompletedProcess[str]:
    """condor_q's ``JobStatus`` of each job of ``cluster`` still queued, a line each."""
    return subprocess.run(
        [str(tools / "condor_q"), str(cluster), "-af", "JobStatus"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _wait_done(tools: Path, env: dict[str, str], cluster: int) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        result = _job_statuses(tools, env, cluster)
        if result.returncode == 0 and not result.stdout.strip():
            return
        time.sleep(2)
    pytest.fail(f"cluster {cluster} did not finish in 300 s")


def _wait_running(tools: Path, env: dict[str, str], cluster: int, log: Path) -> None:
    """Until both sleepers run and the user log has their execute events (a fixed pause was
    too short on a loaded machine: the sleepers wait for the finished jobs' slots)."""
    deadline = time.monotonic() + 300
    events = [f"001 ({cluster:03d}.{proc:03d}.000)" for proc in (0, 1)]
    while time.monotonic() < deadline:
        result = _job_statuses(tools, env, cluster)
        text = log.read_text() if log.exists() else ""
        if result.stdout.split() == ["2", "2"] and all(event in text for event in events):
            return
        time.sleep(1)
    pytest.fail(f"the sleepers of cluster {cluster} did not start in 300 s")


def _tools() -> Path:
    """The pool's own tools (condor_submit, condor_q, condor_rm)."""
    if os.environ.get("CEDAR_LIVE_TOOLS"):
        return Path(os.environ["CEDAR_LIVE_TOOLS"])
    return Path(shutil.which("condor_q") or "/nonexistent/condor_q").parent


def prepare_pool() -> Pool:
    """Submit the jobs (once per session) and wait for the finished ones."""
    if os.geteuid() != 0:
        pytest.skip("submits as root with the pool's IDTOKEN (maps to testuser)")
    env = _pool_env()
    reuse = os.environ.get("CEDAR_RELEASE_REUSE")  # a directory an earlier run prepared
    if reuse and (Path(reuse) / "pool.json").exists():
        saved = json.loads((Path(reuse) / "pool.json").read_text())
        return Pool(Path(reuse), ids=saved["ids"], env=env, before=saved["before"])
    tools = _tools()
    if not tools.joinpath("condor_submit").exists():
        pytest.skip("the pool's condor_submit is not available (CEDAR_LIVE_TOOLS)")
    directory = Path(tempfile.mkdtemp(prefix="release-programs-", dir=os.environ["CEDAR_LIVE_IWD"]))
    directory.chmod(0o1777)
    (directory / "in.txt").write_text("input data\n")
    (directory / "in.txt").chmod(0o644)
    (directory / "my.ad").write_text(MY_AD)
    (directory / "target.ad").write_text(TARGET_AD)
    pool = Pool(directory, env=env)
    pool.before = _submit(tools, env, directory, "held") - 1
    pool.ids["held"] = pool.before + 1
    for name in ("done", "url", "sleep", "idle"):
        pool.ids[name] = _submit(tools, env, directory, name)
    _wait_done(tools, env, pool.ids["done"])
    _wait_done(tools, env, pool.ids["url"])
    _wait_running(tools, env, pool.ids["sleep"], directory / "rel.log")
    (directory / "pool.json").write_text(json.dumps({"ids": pool.ids, "before": pool.before}))
    return pool


@pytest.fixture(scope="module")
def release() -> Path:
    return unpacked_release()


@pytest.fixture(scope="module")
def pool_jobs(release: Path) -> Pool:
    pool = prepare_pool()
    yield pool
    tools = _tools()
    env = dict(pool.env)
    env["_condor_SEC_CLIENT_AUTHENTICATION_METHODS"] = "IDTOKENS"
    env["_condor_SEC_TOKEN_DIRECTORY"] = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    ids = [str(pool.ids[name]) for name in ("sleep", "held", "idle")]
    subprocess.run([str(tools / "condor_rm"), *ids], env=env, capture_output=True, check=False)


# ---------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    stdout: str
    stderr: str
    returncode: int
    documents: list[object]


def run_case(case: Case, side: str, release: Path, pool: Pool) -> Outcome:
    """Run ``case`` with the release's bindings (``side="reference"``) or on cedar.compat."""
    out = Path(tempfile.mkdtemp(prefix=f"{case.name}-{side}-"))
    out.chmod(0o755)
    args = [pool.fill(arg, out) for arg in case.args]
    program = str(release / "bin" / case.program)
    env = dict(pool.env)
    env.update(dict(case.env))
    if side == "reference":
        env["PYTHONPATH"] = str(release / "lib" / "python3")
        command = [sys.executable, program, *args]
    else:
        env["PYTHONPATH"] = os.pathsep.join([str(release.parent / "cli"), str(REPO)])
        command = [sys.executable, "-m", "cedar.compat", "run", "--force", program, *args]
    if case.program == "condor_test_token":
        # It switches to user condor, who cannot read this interpreter's home: use the
        # system's Python with this environment's packages.
        site = next(p for p in sys.path if p.endswith("site-packages"))
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], site])
        command[0] = "/usr/bin/python3"
    # Standard input is a terminal (condor_watch_q and condor_top set it up); output is not.
    terminal, terminal_peer = pty.openpty()
    # condor_adstash's jsonfile interface writes its documents into the working directory
    # (observed: --json_dir does not move them), so it runs in the output directory.
    process = subprocess.Popen(
        command,
        cwd=out if case.program == "condor_adstash" else pool.dir,
        env=env,
        stdin=terminal_peer,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=case.signal_after or TIMEOUT)
    except subprocess.TimeoutExpired:
        if case.signal_after is None:
            process.kill()
        else:
            process.send_signal(2)
        try:
            stdout, stderr = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
    os.close(terminal)
    os.close(terminal_peer)
    documents: list[object] = []
    for path in sorted(out.glob("*.json")):
        if path.name == "checkpoint.json":
            continue
        documents.extend(_documents(path))
    shutil.rmtree(out, ignore_errors=True)
    # The output directory is a fresh temporary one per side: name it the same.
    stdout, stderr = stdout.replace(str(out), "{out}"), stderr.replace(str(out), "{out}")
    return Outcome(stdout, stderr, process.returncode, documents)


def _documents(path: Path) -> list[object]:
    """The JSON documents of one file (condor_adstash writes them one after the other)."""
    text = path.read_text()
    decoder = json.JSONDecoder()
    documents: list[object] = []
    position = 0
    while position < len(text):
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            break
        try:
            document, position = decoder.raw_decode(text, position)
        except ValueError:
            return [*documents, text[position:]]
        documents.append(document)
    return documents


# ----------------------------------------------------------------------------- normalization

_VERSION = re.compile(r"\$Condor(Version|Platform):[^$]*\$|\b25\.1[0-9]\.[0-9]+\b")
_CLOCKS = [
    re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?(\.\d+)?([+-]\d{2}:?\d{2}|Z)?"),
    re.compile(r"\b\d{1,2}/\d{1,2}(/\d{2,4})?\s+\d{1,2}:\d{2}(:\d{2})?\b"),
    re.compile(r"\b\d+\+\d{2}:\d{2}:\d{2}\b"),
    re.compile(r"\b\d{1,3}:\d{2}:\d{2}\b"),
    re.compile(r"\b\d{1,2}/\d{1,2}\b"),
    re.compile(r"\(last \d+s\)"),
    re.compile(r"\b1[0-9]{9}(\.\d+)?\b"),  # Unix time stamps
    re.compile(r"\b\d+(\.\d+)? (seconds|minutes|hours|days|s|m|h|d) ago\b"),
    re.compile(r"(?<=for )\d+(\.\d+)?(?= seconds)"),  # "It has been held for 40.4 seconds"
]
#: Traceback frames of the runner (cedar.compat's ``run``), not of the program.
_RUNNER_FRAME = re.compile(
    r'^  File "(<frozen runpy>|[^"]*cedar/compat/__main__\.py|[^"]*/runpy\.py)".*\n(    .*\n)*',
    re.MULTILINE,
)
#: A statistic's row (its name and values change from sample to sample): a table row of
#: numbers, a ``* name: N%`` / ``- name: N%`` line, a category total, or a warning about the
#: sampled values.
_STAT_ROW = re.compile(
    r"^(N\b|[*-] |(Commands|Timers|Reapers|Fsync|Other)\b"
    # condor_diagnostics' warning when a sample's sums exceed its CPU time (values, again)
    r"|WARNING: Summed statistics|This typically happends)"
)
_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?")


def normalize(text: str, mode: str) -> str:
    text = _RUNNER_FRAME.sub("", text)
    text = _VERSION.sub("<VERSION>", text)
    for clock in _CLOCKS:
        text = clock.sub("<CLOCK>", text)
    if mode == "stats":
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
        text = _NUMBER.sub("N", text).replace("n/a", "N")
        lines = {" ".join(line.split()) for line in re.split(r"[\r\n]+", text)}
        return "\n".join(sorted(line for line in lines if line and not _STAT_ROW.match(line)))
    return text


_DOC_CLOCKS = {
    "RecordTime",
    "ScheddHistoryTime",
    "StartdHistoryTime",
    "EpochTime",
    "Timestamp",
    "@timestamp",
}


def normalize_documents(documents: list[object]) -> list[str]:
    """Each document as sorted JSON, with clock fields dropped (also in its ``metadata``) and
    the version strings replaced (the metadata names the bindings' platform and version)."""
    result = []
    for doc in documents:
        if isinstance(doc, dict):
            doc = {k: v for k, v in doc.items() if k not in _DOC_CLOCKS}
            if isinstance(doc.get("metadata"), dict):
                meta = doc["metadata"]
                doc["metadata"] = {k: v for k, v in meta.items() if "time" not in k.lower()}
        text = json.dumps(doc, sort_keys=True)
        result.append(_VERSION.sub("<VERSION>", text))
    return sorted(result)


def compare(case: Case, reference: Outcome, ours: Outcome) -> list[str]:
    """What differs (empty: identical after normalization)."""
    problems = []
    if reference.returncode != ours.returncode:
        problems.append(f"exit code {reference.returncode} != {ours.returncode}")
    for what in ("stdout", "stderr"):
        mode = case.mode if case.mode != "json" else "exact"
        ref = normalize(getattr(reference, what), mode)
        mine = normalize(getattr(ours, what), mode)
        if case.mode == "json" and what == "stderr":
            ref, mine = _log_lines(ref), _log_lines(mine)
        if ref != mine:
            problems.append(
                f"{what} differs:\n--- reference\n{ref[-3000:]}\n--- cedar\n{mine[-3000:]}"
            )
    if case.mode == "json":
        ref_docs = normalize_documents(reference.documents)
        our_docs = normalize_documents(ours.documents)
        if ref_docs != our_docs:
            problems.append(
                f"documents differ: {len(ref_docs)} vs {len(our_docs)}\n"
                + "\n".join(_doc_diff(ref_docs, our_docs))
            )
    return problems


def _log_lines(text: str) -> str:
    return "\n".join(sorted(line for line in text.splitlines() if "upload time" not in line))


def _doc_diff(ref: list[str], ours: list[str]) -> list[str]:
    lines = []
    for a, b in zip(ref, ours, strict=False):
        if a != b:
            da, db = json.loads(a), json.loads(b)
            if isinstance(da, dict) and isinstance(db, dict):
                for key in sorted(set(da) | set(db)):
                    if da.get(key, "<absent>") != db.get(key, "<absent>"):
                        lines.append(
                            f"  {key}: {da.get(key, '<absent>')!r} != {db.get(key, '<absent>')!r}"
                        )
            break
    return lines[:40]


# ------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_release_program(case: Case, release: Path, pool_jobs: Pool) -> None:
    reference = run_case(case, "reference", release, pool_jobs)
    ours = run_case(case, "cedar", release, pool_jobs)
    problems = compare(case, reference, ours)
    for _ in range(2):
        # The pool moves between the runs (a running sleeper's usage and lease renewal, a
        # daemon re-advertising): a correct run equals a reference run right next to it, so
        # bracket ours with another reference run, then run both again. A real difference
        # (and a KNOWN one) stays on every attempt.
        if not problems:
            break
        reference = run_case(case, "reference", release, pool_jobs)
        problems = compare(case, reference, ours)
        if not problems:
            break
        ours = run_case(case, "cedar", release, pool_jobs)
        problems = compare(case, reference, ours)
    if case.name in ("adstash-history", "adstash-epochs", "adstash-transfer", "adstash-startd"):
        assert reference.documents, "the reference wrote no documents: nothing was compared"
    if case.name in KNOWN:
        assert problems, f"{case.name} is listed as a known difference but is now identical"
        pytest.xfail(KNOWN[case.name])
    assert not problems, "\n".join(problems)


def test_enough_command_lines() -> None:
    programs = {case.program for case in CASES}
    assert programs == {
        "classad_eval",
        "condor_watch_q",
        "condor_top",
        "htcondor",
        "condor_adstash",
        "condor_diagnostics",
        "condor_check_config",
        "condor_upgrade_check",
        "condor_test_token",
    }
    assert len(CASES) >= 60
    assert len(CASES) - len(KNOWN) >= 55


# ----------------------------------------------------------------------- runtime statistics

STATISTICS_PROBE = """
import json, htcondor2
collector = htcondor2.Collector()
direct = collector.directQuery(htcondor2.DaemonType.Schedd, statistics="All:2")
listed = collector.query(htcondor2.AdType.Schedd, statistics="All:2")
plain = collector.directQuery(htcondor2.DaemonType.Schedd)
print(json.dumps([sorted(direct.keys()), sorted(listed[0].keys()), sorted(plain.keys())]))
"""


def test_runtime_statistics_same_attributes(release: Path, pool_jobs: Pool) -> None:
    """``statistics="All:2"`` on ``directQuery`` and ``query`` brings the schedd's runtime
    statistics (what condor_top and condor_diagnostics read) as with the reference: every
    attribute two reference runs agree on is in cedar's answer."""

    def names(side: str) -> list[list[str]]:
        env = dict(pool_jobs.env)
        if side == "reference":
            env["PYTHONPATH"] = str(release / "lib" / "python3")
            command = [sys.executable, "-c", STATISTICS_PROBE]
        else:
            env["PYTHONPATH"] = str(REPO)
            probe = Path(tempfile.mkdtemp()) / "probe.py"
            probe.write_text(STATISTICS_PROBE)
            command = [sys.executable, "-m", "cedar.compat", "run", "--force", str(probe)]
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]
        return list(json.loads(result.stdout.strip().splitlines()[-1]))

    first, ours, second = names("reference"), names("cedar"), names("reference")
    for index in range(3):
        stable = set(first[index]) & set(second[index])
        assert stable <= set(ours[index]), sorted(stable - set(ours[index]))[:20]
    assert any(name.startswith("RecentDaemonCoreDutyCycle") for name in ours[0])
    assert len(ours[0]) > len(ours[2]) + 50  # the statistics really came


# ------------------------------------------------------------------------------------ htmap

HTMAP_PROGRAM = Path(__file__).with_name("compat_programs") / "htmap_double.py"
HTMAP_DEPS = ["click", "click-didyoumean", "cloudpickle", "halo", "toml", "tqdm"]
CEDAR_DEPS = ["cryptography", "pyjwt", "scitokens", "construct", "trio"]


def _venv(path: Path, installs: list[list[str]], check: str) -> Path:
    """A venv of the system's Python (the job's user must be able to run it), built once."""
    python = path / "bin" / "python"
    ready = python.exists() and (
        subprocess.run([str(python), "-c", check], capture_output=True, check=False).returncode == 0
    )
    if ready:
        return python
    shutil.rmtree(path, ignore_errors=True)
    try:
        subprocess.run(["/usr/bin/python3", "-m", "venv", str(path)], check=True, timeout=120)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        for args in installs:
            subprocess.run([*pip, *args], check=True, timeout=600)
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and the htmap venv cannot be built: {exc}")
        pytest.skip(f"cannot build the htmap venv {path} from PyPI: {exc}")
    path.chmod(0o755)
    return python


def _run_htmap(python: Path, job_dir: Path, compat: bool) -> subprocess.CompletedProcess[str]:
    htmap_dir = job_dir / ("cedar" if compat else "reference")
    command = [str(python), *(["-m", "cedar.compat", "run"] if compat else [])]
    command += [str(HTMAP_PROGRAM), str(htmap_dir)]
    env = {
        "HOME": str(job_dir),
        "PATH": f"{python.parent}:/usr/bin:/bin",
        "CONDOR_CONFIG": os.environ["CEDAR_LIVE_CONDOR_CONFIG"],
    }
    shell = f"cd {job_dir} && env -i " + " ".join(f"{k}={v}" for k, v in env.items())
    return subprocess.run(
        ["su", "testuser", "-s", "/bin/sh", "-c", shell + " " + " ".join(command)],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )


def _htmap_outcome(run: subprocess.CompletedProcess[str]) -> tuple[int, str]:
    """Exit code and last output line, the map's random tag (its batch name) taken out."""
    last = (run.stdout + run.stderr).strip().splitlines()[-1:] or [""]
    tag = re.compile(r'JobBatchName = \\?"[^"\\]*\\?"')
    return run.returncode, tag.sub("JobBatchName = <tag>", last[0])


def test_htmap_map_double(pool_jobs: Pool) -> None:
    """htmap 0.6.1 from PyPI (old ``htcondor`` API) maps ``double`` over ``range(3)`` on
    cedar.compat and with the reference (the 24.x wheel, which still has the old API) against
    the same pool: both end the same way.

    Observed: both fail (exit 1).  htmap submits ``JobBatchName = <tag>`` and reads its
    component number from each submit event's notes; condor_submit takes ``JobBatchName`` as
    ``batch_name``, and the 25.13.2 schedd then writes the batch-name ad as the submit event's
    notes (``[ JobBatchName = "<tag>" ]``), which htmap cannot read as a number.  Not a
    bindings bug: condor_submit's jobs get the same notes (issue 39).
    """
    if shutil.which("su") is None:
        pytest.skip("needs su to run htmap as the pool's testuser")
    base = Path(os.environ.get("CEDAR_HTMAP_VENVS", "/var/tmp"))
    # one venv per checkout: two checkouts on one machine must not re-point each other's cedar
    ours = _venv(
        per_checkout(base / "cedar-htmap-venv"),
        [["--no-deps", "htmap==0.6.1"], HTMAP_DEPS, CEDAR_DEPS, ["--no-deps", "-e", str(REPO)]],
        "import cedar.compat; cedar.compat.install(); import htmap",
    )
    follows = subprocess.run(  # not from the checkout: `-c` would import cedar from the cwd
        [str(ours), "-c", "import cedar, os; print(os.path.realpath(cedar.__file__))"],
        capture_output=True,
        text=True,
        check=False,
        cwd=base,
    )
    if follows.stdout.strip() != os.path.realpath(REPO / "cedar" / "__init__.py"):
        pip = [str(ours), "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)]
        subprocess.run(pip, check=True, timeout=300)
    job_dir = Path(tempfile.mkdtemp(prefix="htmap-", dir=pool_jobs.dir))
    job_dir.chmod(0o1777)
    run = _run_htmap(ours, job_dir, compat=True)
    reference = _venv(
        base / "cedar-htmap-ref", [["htcondor>=24,<25", "htmap==0.6.1"]], "import htmap, htcondor"
    )
    ref_run = _run_htmap(reference, job_dir, compat=False)
    assert _htmap_outcome(run) == _htmap_outcome(ref_run), (run.stdout + run.stderr)[-3000:]
    assert ref_run.returncode == 1 and "JobBatchName = <tag>" in _htmap_outcome(ref_run)[1]


def main(argv: list[str]) -> int:
    """Compare the cases named in ``argv`` (all when none); print a summary."""
    release = unpacked_release()
    pool = prepare_pool()
    chosen = [case for case in CASES if not argv or case.name in argv or case.program in argv]
    same = 0
    for case in chosen:
        problems = compare(
            case, run_case(case, "reference", release, pool), run_case(case, "cedar", release, pool)
        )
        same += not problems
        print(f"{'SAME' if not problems else 'DIFF'} {case.name}", flush=True)
        for problem in problems:
            print("   " + problem.replace("\n", "\n   "))
    print(f"{same}/{len(chosen)} identical")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
