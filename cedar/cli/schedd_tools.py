"""The schedd subcommands of ``cedar``: submit, hold, release, rm, edit, history (``q`` is
:mod:`cedar.cli.q`).

Each follows the matching condor_* tool's output (see the captures' ``.out`` files) and has
``--json``.  ``--pool HOST[:PORT]`` and ``--name NAME`` locate the schedd as the tools do;
without them the HTCondor configuration decides.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from cedar.classad_wire import ClassAd
from cedar.classad_wire.expr import fold
from cedar.cli.common import Progress, UsageError, add_common_options, check_constraint
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
    """``--pool``, ``--name``, ``--addr``, ``--json``, ``--timeout``, ``--debug``."""
    parser.add_argument("--pool", help="collector HOST[:PORT] (default: COLLECTOR_HOST)")
    parser.add_argument("--name", help="schedd name (default: the local schedd)")
    parser.add_argument("--addr", help="schedd address (sinful or host:port); skips lookup")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_common_options(parser)


def schedd_from(args: argparse.Namespace) -> Schedd:
    """The schedd the arguments name."""
    return Schedd(args.addr, name=args.name, pool=args.pool, timeout=args.timeout)


def build_parsers(sub: Any) -> None:
    """Add the schedd subcommands to an ``add_subparsers()`` object."""
    p = sub.add_parser("submit", help="submit jobs from a submit description file")
    p.add_argument("file", help="submit description file ('-' for standard input)")
    p.add_argument(
        "--spool", action="store_true", help="send the input files to the schedd (remote submit)"
    )
    add_common(p)
    p.set_defaults(handler=run_submit)

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
    p.add_argument("ids", nargs="*", metavar="CLUSTER|CLUSTER.PROC")
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
    schedd = schedd_from(args)
    with Progress("submitting").working():
        result = schedd.submit(description)
    if args.json:
        out.write(json.dumps({"cluster": result.cluster, "procs": result.num_procs}) + "\n")
        return 0
    out.write("Submitting job(s)" + "." * result.num_procs + "\n")
    out.write(f"{result.num_procs} job(s) submitted to cluster {result.cluster}.\n")
    return 0


_JOB_ID = re.compile(r"^(\d+)(?:\.(\d+))?$")
_USER = re.compile(r"^[\w.@-]+$")


def _constraint(ids: Sequence[str], constraint: str | None) -> str | None:
    """One constraint for job ids (``12``, ``12.3``), owner names and ``--constraint``."""
    check_constraint(constraint)
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
        raise UsageError("say which jobs: CLUSTER or CLUSTER.PROC ids, or --constraint EXPR")
    check_constraint(args.constraint)
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
    constraint = _constraint(args.ids, args.constraint)
    ads = list(Progress("jobs").track(schedd.history(constraint, projection, args.limit)))
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
