"""Run submit files through the real ``condor_submit -dry-run`` and through cedar; compare.

Used by ``test_dry_run_corpus.py`` and runnable by hand for the agreement numbers::

    python -m tests.submit_language.dry_run [--spool] [--show N] [DIR]

The real ``condor_submit`` comes from ``CEDAR_LIVE_TOOLS`` (a directory holding it) or is
unpacked once from the HTCondor tarball in ``../shared/htcondor`` (``CEDAR_HTCONDOR_TARBALL``
overrides the path) into a cache directory.  It runs against a minimal configuration written
here, so no pool is needed and the result does not depend on the machine.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from cedar.config import Config
from cedar.errors import CedarError
from cedar.submit_language import Submit, SubmitError, SubmitSettings
from cedar.submit_language.factory import job_factory, max_materialize

REPO = Path(__file__).resolve().parents[2]
TARBALL_GLOB = "htcondor-*-x86_64-*.tar.xz"
FILESYSTEM_DOMAIN = "cedar.test"
CONFIG_TEXT = f"""FILESYSTEM_DOMAIN = {FILESYSTEM_DOMAIN}
UID_DOMAIN = {FILESYSTEM_DOMAIN}
CONDOR_HOST = 127.0.0.1
SCHEDD_INTERVAL = 120
"""

#: Deliberate deviations: attributes whose values depend on the moment, the host or the build,
#: not on the submit language.  Each is compared for presence only.
TIME_OR_BUILD = {
    "QDate": "the submission time",
    "EnteredCurrentStatus": "the submission time",
    "CondorVersion": "the version string names the build (cedar.version)",
    "SubmitVersion": "the version string names the build (cedar.version)",
    "CondorPlatform": "the platform string names the build",
}
#: Deliberate deviations in accept/reject: (text in condor_submit's stderr, text in cedar's
#: error, why).  A file matching one counts as agreeing.
DELIBERATE_REJECTIONS = [
    (
        "does not evaluate to an",
        "does not evaluate to a number",
        "$INT()/$REAL() of something that is not a number: condor_submit prints ERROR, drops "
        "the command that used it and still submits (exit 0); cedar refuses the description",
    ),
]


def condor_submit() -> tuple[Path | None, str]:
    """The real ``condor_submit`` and, when there is none, why."""
    tools = os.environ.get("CEDAR_LIVE_TOOLS")
    if tools and (Path(tools) / "condor_submit").exists():
        return Path(tools) / "condor_submit", ""
    tarball_env = os.environ.get("CEDAR_HTCONDOR_TARBALL")
    candidates = (
        [Path(tarball_env)]
        if tarball_env
        else sorted(
            Path(os.environ.get("CEDAR_HTCONDOR") or REPO.parent / "shared" / "htcondor").glob(
                TARBALL_GLOB
            )
        )
    )
    tarball = next((c for c in candidates if c.is_file()), None)
    if tarball is None:
        return None, (
            "the real condor_submit is not available: set CEDAR_LIVE_TOOLS to a directory "
            "holding it, or CEDAR_HTCONDOR_TARBALL to the HTCondor tarball "
            "(../shared/htcondor/htcondor-*.tar.xz)"
        )
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cedar-tests"
    target = cache / tarball.name.removesuffix(".tar.xz")
    binary = target / "bin" / "condor_submit"
    if not binary.exists():
        # Unpack beside the target under a per-process name, then rename: two test runs
        # unpacking at once never see each other's half-written tree.
        partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        with tarfile.open(tarball) as archive:
            members = [
                m
                for m in archive.getmembers()
                if m.name in ("./bin/condor_submit", "bin/condor_submit")
                or m.name.startswith(("./lib/", "lib/"))
            ]
            archive.extractall(partial, members=members, filter="tar")
        try:
            partial.rename(target)
        except OSError:  # another run finished first
            shutil.rmtree(partial, ignore_errors=True)
    return binary, ""


@dataclass
class Outcome:
    """One side's result for one file: the ads (per job: full ad) or the rejection."""

    accepted: bool
    jobs: list[dict[str, str]] = field(default_factory=list)
    cluster_only: dict[str, str] | None = None  # late materialization: the cluster ad alone
    message: str = ""
    #: late materialization: the factory digest (``-dry-run:digest``; items file shown as "<")
    digest: str | None = None


def parse_dry_run(text: str) -> tuple[list[dict[str, str]], dict[str, str] | None]:
    """Full job ads from ``-dry-run`` output (cluster ad + each proc's changes), or the lone
    cluster ad of a late-materialization submit (no proc ad is printed)."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    started = in_digest = False
    for line in text.split("\n"):
        if line == "Dry-Run job(s)":
            started = True
            continue
        if not started:
            continue
        if line in (DIGEST_START, DIGEST_END):  # the digest block of -dry-run:digest
            in_digest = line == DIGEST_START
            continue
        if in_digest:
            continue
        if line == ".":
            blocks.append(current)
            current = {}
        elif line[:1].isspace() or line.startswith("::"):
            continue  # debug lines (e.g. "::send_Jobset(...)" and its indented ad)
        elif "=" in line and not line.endswith(" dry-run to cluster 1."):
            name, _, value = line.partition("=")
            current[name] = value
    if current:
        blocks.append(current)
    if not blocks:
        return [], None
    if "ProcId" not in blocks[0]:
        return [], blocks[0]
    jobs = [dict(blocks[0])]
    for changes in blocks[1:]:
        jobs.append({**blocks[0], **changes})
    return jobs, None


DIGEST_START, DIGEST_END = "----- submit digest -----", "-----"
#: A submit file that may ask for late materialization (then the digest is compared too).
LATE_KNOBS = re.compile(r"^\s*(max_idle|materialize_max_idle|max_materialize|materialize_max)\b",
                        re.IGNORECASE | re.MULTILINE)  # fmt: skip


def parse_digest(text: str) -> str | None:
    """The digest ``-dry-run:digest -`` prints between its marker lines (None: none)."""
    if DIGEST_START not in text:
        return None
    body = text.split(DIGEST_START + "\n", 1)[1]
    return body.split("\n" + DIGEST_END + "\n", 1)[0] + "\n"


def run_reference(binary: Path, sub: Path, config: Path, *, spool: bool) -> Outcome:
    late = bool(LATE_KNOBS.search(sub.read_text(errors="replace")))
    dry_run = "-dry-run:digest" if late else "-dry-run"
    args = [str(binary), *(["-spool"] if spool else []), dry_run, "-", sub.name]
    env = _environment(config, sub)
    proc = subprocess.run(
        args, cwd=sub.parent, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    jobs, cluster_only = parse_dry_run(proc.stdout)
    # With -spool the dry run fails only at the transfer step, after printing the ads.
    accepted = proc.returncode == 0 or (spool and bool(jobs or cluster_only))
    return Outcome(accepted, jobs, cluster_only, proc.stderr.strip(), parse_digest(proc.stdout))


def _environment(config: Path, sub: Path) -> dict[str, str]:
    """The environment both sides run in (``getenv`` copies it into the ad)."""
    return {"PATH": "/usr/bin:/bin", "CONDOR_CONFIG": str(config), "HOME": str(sub.parent)}


def run_cedar(sub: Path, config: Path, *, spool: bool, now: int) -> Outcome:
    settings = SubmitSettings(
        filesystem_domain=FILESYSTEM_DOMAIN,
        arch="X86_64",
        opsys="LINUX",
        submit_method=0,
        user=pwd.getpwuid(os.getuid()).pw_name,
    )
    cwd = os.getcwd()
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(_environment(config, sub))
    os.chdir(sub.parent)  # relative include/queue-from paths follow the current directory
    try:
        # The one knob of the configuration file that reaches the ads (ScheddInterval).
        knobs = Config.load(condor_config=str(config), subsystem="SUBMIT")
        settings.schedd_interval = SubmitSettings.from_config(knobs).schedd_interval
        submit = Submit.from_file(sub.name)
        ads = submit.build(1, settings=settings, submit_dir=str(sub.parent), now=now, spool=spool)
        digest = None
        if ads.late_materialization and ads.proc_ads:
            factory = job_factory(
                submit, ads, max_materialize=max_materialize(submit), submit_dir=str(sub.parent)
            )
            # the dry run sends no items: it names a queue's item file, or "<" for inline items
            # ("queue ... in/matching": no "from" at all; on the wire all send items)
            specs = submit.queue_specs()
            mode = specs[0].mode if specs else ""
            if mode in ("in", "matching"):
                names = ",".join(factory.variables)
                digest = f"{factory.digest_head}Queue {factory.count} {names} \n"
            else:
                source = specs[0].source if mode == "from" else ""
                digest = factory.digest(source or "<")
    except (SubmitError, CedarError) as exc:
        return Outcome(False, message=str(exc))
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)
    if ads.late_materialization:
        return Outcome(True, cluster_only=dict(ads.cluster_ad), digest=digest)
    return Outcome(True, [ads.job_ad(i) for i in range(ads.num_procs)])


def _random_ok(spec: str, value: str) -> bool:
    """``#RANDOM#choice_a_b`` / ``#RANDOM#int_lo_hi``: the value is one of the choices or an
    integer in range (values drawn at random are compared by type and range only)."""
    kind, *parts = spec.split("_")
    value = value.strip('"')
    if kind == "choice":
        return value in parts
    try:
        return int(parts[0]) <= int(value) <= int(parts[1])
    except ValueError:
        return False


def compare_ads(ours: dict[str, str], theirs: dict[str, str]) -> list[str]:
    """The differences between two full job ads (deliberate deviations excepted)."""
    problems = []
    for name in sorted(set(ours) | set(theirs), key=str.lower):
        mine, real = ours.get(name), theirs.get(name)
        if mine == real:
            continue
        if mine is not None and real is not None and name in TIME_OR_BUILD:
            continue
        if mine is not None and real is not None and _random_attribute(name, mine, real, ours):
            continue
        problems.append(f"{name}: cedar={_short(mine)} condor_submit={_short(real)}")
    return problems


def _short(value: str | None) -> str | None:
    return value if value is None or len(value) < 160 else value[:150] + "..."


def _random_attribute(name: str, mine: str, real: str, ad: dict[str, str]) -> bool:
    spec = ad.get("CorpusRandom_" + name)
    return (
        spec is not None and _random_ok(spec.strip('"'), mine) and _random_ok(spec.strip('"'), real)
    )


@dataclass
class Comparison:
    file: str
    problems: list[str]
    values: int = 0
    agreeing: int = 0
    deviation: bool = False  # differs in a deliberate, documented way


def _deliberate(reference_error: str, cedar_error: str) -> bool:
    return any(
        theirs in reference_error and mine in cedar_error
        for theirs, mine, _why in DELIBERATE_REJECTIONS
    )


def compare(sub: Path, binary: Path, config: Path, *, spool: bool = False) -> Comparison:
    real = run_reference(binary, sub, config, spool=spool)
    now = int(real.jobs[0]["QDate"]) if real.jobs and "QDate" in real.jobs[0] else 0
    ours = run_cedar(sub, config, spool=spool, now=now)
    result = Comparison(sub.name, [])
    if real.accepted and not ours.accepted and _deliberate(real.message, ours.message):
        result.deviation = True
        return result
    if real.accepted != ours.accepted:
        side = "cedar" if ours.accepted else "condor_submit"
        reason = real.message if ours.accepted else ours.message
        result.problems.append(f"only {side} accepts ({reason.splitlines()[-1:] or ''})")
        return result
    if not real.accepted:
        return result
    if (real.cluster_only is None) != (ours.cluster_only is None):
        result.problems.append("late materialization differs (cluster ad only vs proc ads)")
        return result
    if real.digest != ours.digest:
        result.problems.append(f"digest: cedar={ours.digest!r} condor_submit={real.digest!r}")
    pairs = (
        [(ours.cluster_only or {}, real.cluster_only or {})]
        if real.cluster_only is not None
        else list(zip(ours.jobs, real.jobs, strict=False))
    )
    if len(ours.jobs) != len(real.jobs):
        result.problems.append(f"jobs: cedar={len(ours.jobs)} condor_submit={len(real.jobs)}")
    for index, (mine, theirs) in enumerate(pairs):
        diffs = compare_ads(mine, theirs)
        result.values += len(set(mine) | set(theirs))
        result.agreeing += len(set(mine) | set(theirs)) - len(diffs)
        result.problems.extend(f"job {index}: {d}" for d in diffs)
    return result


def write_config(directory: Path) -> Path:
    path = directory / "condor_config"
    path.write_text(CONFIG_TEXT)
    return path


def main(argv: list[str]) -> int:
    from tests.submit_language.corpus import generate

    spool = "--spool" in argv
    show = int(argv[argv.index("--show") + 1]) if "--show" in argv else 5
    rest = [a for a in argv if not a.startswith("--") and not a.isdigit()]
    binary, why = condor_submit()
    if binary is None:
        print(why)
        return 2
    directory = Path(rest[0]) if rest else Path("/tmp/cedar-submit-corpus")
    files = generate(directory)
    config = write_config(directory)
    results = [compare(f, binary, config, spool=spool) for f in files]
    same = [r for r in results if not r.problems and not r.deviation]
    deliberate = [r for r in results if r.deviation]
    values = sum(r.values for r in results)
    agreeing = sum(r.agreeing for r in results)
    for r in results:
        if r.problems:
            print(f"{r.file}:")
            for p in r.problems[:show]:
                print(f"    {p}")
    print(
        f"{len(same)}/{len(results)} files identical, {len(deliberate)} deliberate deviations; "
        f"attribute values agree {agreeing}/{values} ({100 * agreeing / max(values, 1):.2f}%)"
    )
    return 0 if len(same) + len(deliberate) == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
