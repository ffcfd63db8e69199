"""The schedd subcommands of ``cedar``: submit, q, history (rm/hold/release/edit: actions.py).

Each follows the matching condor_* tool's output (see the captures' ``.out`` files) and has
``--json``.  ``--pool HOST[:PORT]`` and ``--name NAME`` locate the schedd as the tools do;
without them the HTCondor configuration decides.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Sequence
from typing import TextIO

from cedar.classad_wire import ClassAd
from cedar.classad_wire.expr import fold
from cedar.cli.common import Progress, UsageError, add_common_options, combined_constraint
from cedar.commands import Schedd
from cedar.commands.submit import Submit
from cedar.errors import CedarError
from cedar.numbers import JobStatus

STATUS_LETTER = {status.value: status.letter for status in JobStatus}


def _letter(ad: ClassAd) -> str:
    status = ad.get("JobStatus")
    return STATUS_LETTER.get(status, "?") if isinstance(status, int) else "?"


def add_common(parser: argparse.ArgumentParser) -> None:
    """``--pool``, ``--name``, ``--addr``, ``--json``, ``--timeout``, ``--debug``."""
    parser.add_argument("--pool", help="collector HOST[:PORT] (default: COLLECTOR_HOST)")
    parser.add_argument("--name", help="schedd name (default: the local schedd)")
    parser.add_argument("--addr", help="schedd address (sinful or host:port); skips lookup")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_common_options(parser)


def schedd_from(args: argparse.Namespace) -> Schedd:
    """The schedd the arguments name."""
    return Schedd(args.addr, name=args.name, pool=args.pool, timeout=args.timeout)


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``cedar submit`` or ``q``."""
    if name == "submit":
        p = argparse.ArgumentParser(
            prog="cedar submit", description="submit jobs from a submit description file"
        )
        p.add_argument("file", help="submit description file ('-' for standard input)")
        p.add_argument(
            "--spool",
            action="store_true",
            help="send the input files to the schedd (remote submit)",
        )
        add_common(p)
        p.set_defaults(handler=run_submit)
        return p
    if name == "q":
        p = argparse.ArgumentParser(
            prog="cedar q",
            description="Show jobs as condor_q does: your own jobs, one line per batch.",
        )
        p.add_argument(
            "ids",
            nargs="*",
            metavar="OWNER|CLUSTER|CLUSTER.PROC",
            help="only these owners or jobs",
        )
        p.add_argument("--all", action="store_true", help="the jobs of every user")
        p.add_argument("--nobatch", action="store_true", help="one line per job (with CMD)")
        p.add_argument(
            "--constraint", action="append", help="ClassAd constraint (repeated: all of them)"
        )
        p.add_argument("--af", nargs="+", metavar="ATTR", help="print these attributes only")
        p.add_argument("--long", action="store_true", help="print whole job ads")
        p.add_argument("--limit", type=int, default=-1)
        add_common(p)
        p.set_defaults(handler=run_q)
        return p
    raise ValueError(f"no subcommand {name!r} here")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run a parsed ``submit``/``q`` command line."""
    return int(args.handler(args, out))


def run_submit(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar submit FILE``: prints the cluster id it created."""
    if getattr(args, "spool", False):
        from cedar.cli.spool_tools import run_spooled_submit

        return run_spooled_submit(args, out)
    if args.file == "-":
        description = Submit(sys.stdin.read())
    else:
        try:  # read here: an unreadable file is a usage error (exit 2), as the README says
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise UsageError(f"cannot read submit file {args.file}: {exc.strerror}") from None
        description = Submit(text, submit_file=args.file)
    schedd = schedd_from(args)
    with Progress("submitting").working():
        result = schedd.submit(description)
    if args.json:
        out.write(json.dumps({"cluster": result.cluster, "procs": result.num_procs}) + "\n")
        warn_unused(description)
        return 0
    out.write("Submitting job(s)" + "." * result.num_procs + "\n")
    out.write(f"{result.num_procs} job(s) submitted to cluster {result.cluster}.\n")
    warn_unused(description)
    return 0


def warn_unused(description: Submit, err: TextIO | None = None) -> None:
    """condor_submit's warning for each line nothing used (a typo, usually), on stderr."""
    err = err or sys.stderr
    for line in description.unused:
        err.write(f"WARNING: the line '{line}' was unused by cedar submit. Is it a typo?\n")


_JOB_ID = re.compile(r"^(\d+)(?:\.(\d+))?$")
_USER = re.compile(r"^[\w.@-]+$")


def _constraint(ids: Sequence[str], constraints: Sequence[str] | None) -> str | None:
    """One constraint for job ids (``12``, ``12.3``), owner names and every ``--constraint``."""
    constraint = combined_constraint(constraints)
    parts = []
    for item in ids:
        match = _JOB_ID.match(item)
        if match and match.group(2) is not None:
            parts.append(f"(ClusterId == {match.group(1)} && ProcId == {match.group(2)})")
        elif match:
            parts.append(f"(ClusterId == {match.group(1)})")
        elif _USER.match(item):
            parts.append(f'(Owner == "{item}")')
        else:
            raise UsageError(
                f"{item!r} is neither a job id (CLUSTER or CLUSTER.PROC) nor a user name"
            )
    selected = " || ".join(parts)
    if constraint:
        return f"({selected}) && ({constraint})" if selected else constraint
    return selected or None


def _summary_line(label: str, counts: dict[str, int]) -> str:
    return (
        f"Total for {label}: {counts.get('Jobs', 0)} jobs; {counts.get('Completed', 0)} "
        f"completed, {counts.get('Removed', 0)} removed, {counts.get('Idle', 0)} idle, "
        f"{counts.get('Running', 0)} running, {counts.get('Held', 0)} held, "
        f"{counts.get('Suspended', 0)} suspended"
    )


def _fmt_value(ad: ClassAd, name: str) -> str:
    try:
        value = ad.get(name)
    except CedarError:
        value = None
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _write_json_or_af(args: argparse.Namespace, ads: list[ClassAd], out: TextIO) -> bool:
    """Write ``ads`` as ``--json`` or ``--af`` asked; False when neither was (a table follows)."""
    if args.json:
        json_ads(ads, out)
        return True
    if args.af:
        for ad in ads:
            out.write(" ".join(_fmt_value(ad, n) for n in args.af) + "\n")
        return True
    return False


def _command_line(ad: ClassAd) -> str:
    """condor_q's CMD: the executable's base name and the arguments."""
    cmd = ad.get("Cmd")
    args = ad.get("Args")
    if not isinstance(args, str):
        args = ad.get("Arguments")
    name = os.path.basename(cmd) if isinstance(cmd, str) else ""
    return f"{name} {args}".strip() if isinstance(args, str) and args else name


Q_PROJECTION = [
    "Args",
    "Arguments",
    "ClusterId",
    "Cmd",
    "ImageSize",
    "JobBatchName",
    "JobCurrentStartDate",
    "JobPrio",
    "JobStatus",
    "Owner",
    "ProcId",
    "QDate",
    "RemoteWallClockTime",
    "ServerTime",
    "TotalSubmitProcs",
]
_BATCH_HEADER = "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
_NOBATCH_HEADER = " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"


def _int(ad: ClassAd, name: str) -> int:
    try:
        value = ad.get(name)
    except CedarError:
        return 0
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _when(stamp: int) -> str:
    return time.strftime("%m/%d %H:%M", time.localtime(stamp)) if stamp else "?"


def _run_time(ad: ClassAd, now: int) -> str:
    wall = _int(ad, "RemoteWallClockTime")
    started = _int(ad, "JobCurrentStartDate")
    if _int(ad, "JobStatus") == 2 and started:
        wall += max(0, now - started)
    return f"{wall // 86400}+{wall % 86400 // 3600:02d}:{wall % 3600 // 60:02d}:{wall % 60:02d}"


def _nobatch_rows(ads: Iterable[ClassAd], now: int) -> list[str]:
    rows = []
    for ad in ads:
        job_id = f"{_int(ad, 'ClusterId'):>4}.{_int(ad, 'ProcId'):<3}"
        rows.append(
            f"{job_id} {str(ad.get('Owner') or ''):<14} {_when(_int(ad, 'QDate')):>11} "
            f"{_run_time(ad, now):>12} {_letter(ad)}  {_int(ad, 'JobPrio'):<3} "
            f"{_int(ad, 'ImageSize') / 1024:>4.1f} {_command_line(ad)}"
        )
    return rows


def _batch_rows(ads: Iterable[ClassAd]) -> list[str]:
    """condor_q's default view: one line per (owner, batch name or cluster)."""
    batches: dict[tuple[str, str], list[ClassAd]] = {}
    for ad in ads:
        name = ad.get("JobBatchName")
        label = name if isinstance(name, str) and name else f"ID: {_int(ad, 'ClusterId')}"
        batches.setdefault((str(ad.get("Owner") or ""), label), []).append(ad)
    rows = []
    for (owner, label), jobs in batches.items():
        counts = {status: 0 for status in (2, 1, 5)}
        for job in jobs:
            status = _int(job, "JobStatus")
            if status in counts:
                counts[status] += 1
        clusters = {_int(job, "ClusterId") for job in jobs}
        total = sum(_int(job, "TotalSubmitProcs") or 0 for job in _one_per_cluster(jobs))
        total = max(total, len(jobs))
        done = total - len(jobs)
        ids = sorted((_int(job, "ClusterId"), _int(job, "ProcId")) for job in jobs)
        if len(clusters) > 1:
            job_ids = f"{ids[0][0]}.{ids[0][1]} ... {ids[-1][0]}.{ids[-1][1]}"
        elif len(ids) > 1:
            job_ids = f"{ids[0][0]}.{ids[0][1]}-{ids[-1][1]}"
        else:
            job_ids = f"{ids[0][0]}.{ids[0][1]}"

        def cell(value: int) -> str:
            return str(value) if value else "_"

        rows.append(
            f"{owner:<8} {label:<11} {_when(min(_int(j, 'QDate') for j in jobs)):>11} "
            f"{cell(done):>6} {cell(counts[2]):>6} {cell(counts[1]):>6} {cell(counts[5]):>6} "
            f"{total:>6} {job_ids}"
        )
    return rows


def _one_per_cluster(jobs: Iterable[ClassAd]) -> list[ClassAd]:
    seen: dict[int, ClassAd] = {}
    for job in jobs:
        seen.setdefault(_int(job, "ClusterId"), job)
    return list(seen.values())


def _short_address(address: str) -> str:
    """``<127.0.0.1:9618?...`` as condor_q prints the schedd's address (no closing ``>``)."""
    return address.split("?", 1)[0] + "?..." if "?" in address else address


def sorted_long(ad: ClassAd) -> str:
    """``condor_q -long``: ``Name = value`` lines sorted case-insensitively, then a blank line."""
    names = sorted(ad, key=fold)
    return "".join(f"{name} = {ad.raw_text(name)}\n" for name in names) + "\n"


def json_ads(ads: Iterable[ClassAd], out: TextIO) -> None:
    """``condor_q -json``: a list of whole ads, attributes sorted case-insensitively."""
    from cedar.classad_wire.jsonfmt import attribute_json

    out.write("[\n")
    first = True
    for ad in ads:
        if not first:
            out.write("\n,\n")
        first = False
        names = sorted(ad, key=fold)
        out.write("{\n" + ",\n".join(attribute_json(ad, name) for name in names) + "\n}")
    out.write("\n]\n" if not first else "]\n")


def run_q(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar q``: as ``condor_q`` 25 -- your jobs by default (every user's with ``--all``,
    and for root), one line per batch, or per job with ``--nobatch``; the totals lines."""
    schedd = schedd_from(args)
    constraint = _constraint(args.ids, args.constraint)
    my_jobs = None
    if not args.all and not args.ids and os.geteuid() != 0:
        my_jobs = getpass.getuser()
    projection = [] if args.long or args.json else (args.af or Q_PROJECTION)
    if args.af:  # the order of the output needs the ids
        projection = [*args.af, "ClusterId", "ProcId"]
    stream = schedd.query_iter(
        constraint, projection, args.limit, my_jobs=my_jobs, with_auth=my_jobs is not None
    )
    ads = list(Progress("jobs").track(stream))
    summary = stream.summary or ClassAd()
    ads.sort(key=lambda a: (_int(a, "ClusterId"), _int(a, "ProcId")))
    if args.json:
        json_ads(ads, out)
        return 0
    if args.af:
        for ad in ads:
            out.write(" ".join(_fmt_value(ad, n) for n in args.af) + "\n")
        return 0
    if args.long:
        for ad in ads:
            out.write(sorted_long(ad))
        return 0
    now = _int(summary, "ServerTime") or int(time.time())
    name = args.name or _local_name()
    out.write(
        f"\n\n-- Schedd: {name} : {_short_address(schedd.locate())} @ "
        f"{time.strftime('%m/%d/%y %H:%M:%S')}\n"
    )
    if args.nobatch:
        out.write(_NOBATCH_HEADER + "\n")
        rows = _nobatch_rows(ads, now)
    else:
        out.write(_BATCH_HEADER + "\n")
        rows = _batch_rows(ads)
    out.write("".join(row + "\n" for row in rows))
    counts = {k: v for k, v in summary.items() if isinstance(v, int)}
    out.write("\n" + _summary_line("query", counts) + " \n")
    me = summary.get("MyName")
    if isinstance(me, str) and me:
        mine = {k[2:]: v for k, v in counts.items() if k.startswith("My")}
        out.write(_summary_line(me, mine) + " \n")
    allusers = {k[len("Allusers") :]: v for k, v in counts.items() if k.startswith("Allusers")}
    out.write(_summary_line("all users", allusers) + "\n\n")
    return 0


def _local_name() -> str:
    import socket

    return socket.gethostname().split(".")[0]
