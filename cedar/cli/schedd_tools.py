"""The schedd subcommands of ``cedar``: submit, q, hold, release, rm, edit, history.

Each follows the matching condor_* tool's output (see the captures' ``.out`` files) and has
``--json``.  ``--pool HOST[:PORT]`` and ``--name NAME`` locate the schedd as the tools do;
without them the HTCondor configuration decides.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from cedar.classad_wire import ClassAd
from cedar.commands import Schedd
from cedar.commands.schedd import ActResult, parse_job_spec
from cedar.commands.submit import Submit
from cedar.errors import CedarError
from cedar.numbers import JobAction, JobStatus

STATUS_LETTER = {status.value: status.letter for status in JobStatus}
_ACTIONS = {
    "hold": (JobAction.Hold, "held", "via cedar hold"),
    "release": (JobAction.Release, "released", "via cedar release"),
    "rm": (JobAction.Remove, "marked for removal", "via cedar rm"),
}


def _letter(ad: ClassAd) -> str:
    status = ad.get("JobStatus")
    return STATUS_LETTER.get(status, "?") if isinstance(status, int) else "?"


def add_common(parser: argparse.ArgumentParser) -> None:
    """``--pool``, ``--name``, ``--json``, ``--timeout``."""
    parser.add_argument("--pool", help="collector HOST[:PORT] (default: COLLECTOR_HOST)")
    parser.add_argument("--name", help="schedd name (default: the local schedd)")
    parser.add_argument("--addr", help="schedd address (sinful or host:port); skips lookup")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--timeout", type=float, default=20.0, help="network timeout (s)")


def schedd_from(args: argparse.Namespace) -> Schedd:
    """The schedd the arguments name."""
    return Schedd(args.addr, name=args.name, pool=args.pool, timeout=args.timeout)


def _plain(ad: ClassAd) -> dict[str, Any]:
    return json.loads(ad.to_json()) if hasattr(ad, "to_json") else dict(ad)


def build_parsers(sub: Any) -> None:
    """Add the schedd subcommands to an ``add_subparsers()`` object."""
    p = sub.add_parser("submit", help="submit jobs from a submit description file")
    p.add_argument("file", help="submit description file ('-' for standard input)")
    p.add_argument(
        "--spool", action="store_true", help="send the input files to the schedd (remote submit)"
    )
    add_common(p)
    p.set_defaults(handler=run_submit)

    p = sub.add_parser("q", help="show the job queue (like condor_q)")
    p.add_argument("ids", nargs="*", help="cluster or cluster.proc ids")
    p.add_argument("--constraint", help="ClassAd constraint")
    p.add_argument("--af", nargs="+", metavar="ATTR", help="print these attributes only")
    p.add_argument("--long", action="store_true", help="print whole job ads")
    p.add_argument("--limit", type=int, default=-1)
    add_common(p)
    p.set_defaults(handler=run_q)

    for tool, (_, verb, _) in _ACTIONS.items():
        p = sub.add_parser(tool, help=f"jobs become {verb} (like condor_{tool})")
        p.add_argument("ids", nargs="*", help="cluster or cluster.proc ids")
        p.add_argument("--constraint", help="act on the jobs matching this constraint")
        p.add_argument("--reason", help="reason recorded in the job")
        add_common(p)
        p.set_defaults(handler=run_act, tool=tool)

    p = sub.add_parser("edit", help="set a job attribute (like condor_qedit)")
    p.add_argument("target", help="cluster, cluster.proc, or a constraint")
    p.add_argument("attr")
    p.add_argument("value", help="ClassAd expression (strings need quotes)")
    add_common(p)
    p.set_defaults(handler=run_edit)

    p = sub.add_parser("history", help="finished jobs (like condor_history)")
    p.add_argument("ids", nargs="*")
    p.add_argument("--constraint")
    p.add_argument("--af", nargs="+", metavar="ATTR")
    p.add_argument("--limit", type=int, default=-1)
    add_common(p)
    p.set_defaults(handler=run_history)


def run_submit(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar submit FILE``: prints the cluster id it created."""
    if getattr(args, "spool", False):
        from cedar.cli.spool_tools import run_spooled_submit

        return run_spooled_submit(args, out)
    description = Submit(sys.stdin.read()) if args.file == "-" else Submit.from_file(args.file)
    result = schedd_from(args).submit(description)
    if args.json:
        out.write(json.dumps({"cluster": result.cluster, "procs": result.num_procs}) + "\n")
        return 0
    out.write("Submitting job(s)" + "." * result.num_procs + "\n")
    out.write(f"{result.num_procs} job(s) submitted to cluster {result.cluster}.\n")
    return 0


def _constraint(ids: Sequence[str], constraint: str | None) -> str | None:
    parts = []
    for item in ids:
        job_ids, text = parse_job_spec(item)
        if job_ids is not None:
            c, p = job_ids[0]
            parts.append(f"(ClusterId == {c} && ProcId == {p})")
        else:
            parts.append(f"({text})")
    if constraint:
        parts.append(f"({constraint})")
    return " || ".join(parts) if parts else None


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
        out.write(json.dumps([_plain(ad) for ad in ads], indent=1) + "\n")
        return True
    if args.af:
        for ad in ads:
            out.write(" ".join(_fmt_value(ad, n) for n in args.af) + "\n")
        return True
    return False


def _command_line(ad: ClassAd) -> str:
    return " ".join(str(x) for x in (ad.get("Cmd") or "", ad.get("Args") or "")).strip()


def run_q(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar q``: one line per job, then the totals, as ``condor_q -nobatch``."""
    schedd = schedd_from(args)
    projection = args.af or (
        []
        if args.long
        else [
            "ClusterId",
            "ProcId",
            "Owner",
            "QDate",
            "JobStatus",
            "JobPrio",
            "ImageSize",
            "Cmd",
            "Args",
            "RemoteWallClockTime",
        ]
    )
    stream = schedd.query_iter(_constraint(args.ids, args.constraint), projection, args.limit)
    ads = list(stream)
    summary = stream.summary or ClassAd()
    if _write_json_or_af(args, ads, out):
        return 0
    if args.long:
        for ad in ads:
            out.write(ad.print_old() + "\n\n")
        return 0
    out.write(f"\n\n-- Schedd: {schedd.address} @ {time.strftime('%m/%d/%y %H:%M:%S')}\n")
    out.write(" ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD\n")
    for ad in ads:
        qdate = ad.get("QDate")
        submitted = (
            time.strftime("%m/%d %H:%M", time.localtime(qdate)) if isinstance(qdate, int) else "?"
        )
        wall = int(ad.get("RemoteWallClockTime") or 0)
        run_time = (
            f"{wall // 86400}+{wall % 86400 // 3600:02d}:{wall % 3600 // 60:02d}:{wall % 60:02d}"
        )
        cmd = _command_line(ad)
        out.write(
            f"{ad.get('ClusterId')}.{ad.get('ProcId'):<6} {str(ad.get('Owner')):<14} "
            f"{submitted:>12} {run_time:>12} {_letter(ad)}  "
            f"{ad.get('JobPrio') or 0:<3} {float(ad.get('ImageSize') or 0) / 1024:<4.1f} "
            f"{cmd}\n"
        )
    counts = {k: v for k, v in summary.items() if isinstance(v, int)}
    allusers = {k[len("Allusers") :]: v for k, v in counts.items() if k.startswith("Allusers")}
    out.write("\n" + _summary_line("query", counts) + " \n")
    out.write(_summary_line("all users", allusers) + "\n\n")
    return 0


def _describe(result: ActResult, target: str, verb: str) -> str:
    return (
        f"All jobs {target} have been {verb}"
        if result.succeeded
        else f"Could not find any job {target} to be {verb}"
    )


def run_act(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar hold|release|rm``: messages as condor_hold/condor_release/condor_rm."""
    action, verb, default_reason = _ACTIONS[args.tool]
    if not args.ids and not args.constraint:
        raise SystemExit(f"cedar {args.tool}: give cluster or cluster.proc ids or --constraint")
    schedd = schedd_from(args)
    reason = args.reason or default_reason
    results = []
    status = 0
    targets: list[tuple[str, Any]] = [(i, i) for i in args.ids]
    if args.constraint:
        targets.append((f"matching constraint ({args.constraint})", args.constraint))
    for label, spec in targets:
        result = schedd.act(action, spec, reason)
        results.append({"target": label, "totals": result.totals, "changed": result.changed})
        if not result.succeeded:
            status = 1
        if args.json:
            continue
        ids, _ = parse_job_spec(spec)
        if ids is not None and label == spec:
            out.write(f"Job {label} {verb}\n" if result.succeeded else f"Job {label} not {verb}\n")
        elif label == spec:
            out.write(_describe(result, f"in cluster {label}", verb) + "\n")
        else:
            out.write(_describe(result, label, verb) + "\n")
    if args.json:
        out.write(json.dumps(results) + "\n")
    return status


def run_edit(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar edit TARGET ATTR VALUE``: as condor_qedit."""
    count = schedd_from(args).edit(args.target, args.attr, args.value)
    if args.json:
        out.write(json.dumps({"attribute": args.attr, "jobs": count}) + "\n")
    else:
        out.write(f'Set attribute "{args.attr}" for {count} matching jobs.\n')
    return 0


def run_history(args: argparse.Namespace, out: TextIO) -> int:
    """``cedar history``: finished jobs, newest first."""
    schedd = schedd_from(args)
    projection = args.af or [
        "ClusterId",
        "ProcId",
        "Owner",
        "QDate",
        "RemoteWallClockTime",
        "JobStatus",
        "CompletionDate",
        "Cmd",
        "Args",
    ]
    ads = list(schedd.history(_constraint(args.ids, args.constraint), projection, args.limit))
    if _write_json_or_af(args, ads, out):
        return 0
    out.write(" ID     OWNER          ST COMPLETED   CMD\n")
    for ad in ads:
        done = ad.get("CompletionDate")
        when = (
            time.strftime("%m/%d %H:%M", time.localtime(done))
            if isinstance(done, int) and done
            else "???"
        )
        cmd = _command_line(ad)
        out.write(
            f"{ad.get('ClusterId')}.{ad.get('ProcId'):<5} {str(ad.get('Owner')):<14} "
            f"{_letter(ad)}  {when:<11} {cmd}\n"
        )
    return 0
