"""``cedar rm|hold|release|edit``: acting on jobs, with condor_rm/condor_hold/condor_release/
condor_qedit's options and messages.

What to act on is any mix of job ids (``12.3``), clusters (``12``), user names and
``-constraint`` options (repeated ones are ANDed, by the one constraint rule), or ``-all``.
As the real tools do, the job ids go to the schedd in one request, each cluster, user and the
constraint in one request each; successes are reported on stdout, failures on stderr with the
schedd's reason (``not found``, ``not held to be released``, ``already held``...), and the exit
status follows condor's rules (job ids: 1 only when none succeeded; a cluster, user or
constraint: 1 when nothing matched, unless the schedd reports an empty queue).  The wordings of
result codes 0, 3 (but for release) and 5 were not seen on the real pool.  See the README
section ``cli-actions`` for the deviations.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from cedar.cli.common import (
    EXIT_REFUSED,
    UsageError,
    add_common_options,
    combined_constraint_tree,
    parsed_constraint,
)

if TYPE_CHECKING:
    from cedar.classad_wire.expr import Expr
    from cedar.commands import Schedd
    from cedar.commands.schedd import ActResult
    from cedar.jobid import JobId
    from cedar.stream.connection import CedarConnection

#: tool -> (JobAction name, verb for messages, reason attribute in condor_X -help, default).
ACTIONS = {
    "rm": ("Remove", "removed", "RemoveReason", "via cedar rm"),
    "hold": ("Hold", "held", "HoldReason", "via cedar hold"),
    "release": ("Release", "released", "ReleaseReason", "via cedar release"),
}
#: How condor's tools word a success ("All jobs ... have been <done>").
_DONE = {"rm": "marked for removal", "hold": "held", "release": "released"}
#: What condor_rm -forcex says a job (or all jobs) of the X state became (25.13.2).
_FORCED = "removed locally (remote state unknown)"
#: Per-job result codes (spec 05 §5.4) -> condor's words for a failed job id.
_FAILED_JOB = {
    0: "{id} could not be {done}",
    2: "{id} not found",
    3: "{id} {bad_status}",
    4: "{id} already {done}",
    5: "Permission denied to {verb} job {id}",
}
_BAD_STATUS = {
    "rm": "not removable",
    "hold": "not holdable",
    "release": "not held to be released",
}
#: condor_rm -forcex's words for a job not in the X state (25.13.2).
_FORCED_BAD_STATUS = "not in `X' state to be forcibly removed"
_USER = re.compile(r"^[\w.@+-]+$")
_INFINITIVE = {"rm": "remove", "hold": "hold", "release": "release"}
_RESULT_NAMES = ("Failed", "Succeeded", "Not Found", "Bad Status", "Already Done")


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``cedar rm``, ``hold``, ``release`` or ``edit``."""
    if name == "edit":
        return _edit_parser()
    action, done, reason_attr, _ = ACTIONS[name]
    parser = argparse.ArgumentParser(
        prog=f"cedar {name}",
        description=f"Jobs become {_DONE[name]} (like condor_{name}). Options may come before "
        "or after the jobs; single- or double-dash spellings.",
        epilog="exit codes: 0 done (also when no job matched a cluster, user or constraint, as "
        f"condor_{name}), 1 a job id failed or the schedd refused, 2 usage, 3 unreachable. "
        "condor options cedar lacks: " + ("-transfer, " if name == "rm" else "") + "-version.",
    )
    parser.add_argument(
        "ids",
        nargs="*",
        metavar="CLUSTER|CLUSTER.PROC|USER",
        help="jobs, clusters, or every job of a user",
    )
    parser.add_argument(
        "-c",
        "--constraint",
        action="append",
        metavar="EXPR",
        help="the jobs matching EXPR (repeated: all of them must match)",
    )
    parser.add_argument("-a", "--all", action="store_true", help="every job you may act on")
    parser.add_argument("-r", "--reason", help=f"the {reason_attr} recorded in the job")
    if name == "hold":
        parser.add_argument(
            "--subcode", type=_subcode, metavar="NUMBER", help="set HoldReasonSubCode"
        )
    if name == "rm":
        parser.add_argument(
            "--forcex",
            action="store_true",
            help="remove jobs already being removed (X state) at once",
        )
    parser.add_argument("--long", action="store_true", help="print the schedd's result ads")
    parser.add_argument(
        "--totals", action="store_true", help="print success/failure totals per request"
    )
    _add_schedd_options(parser)
    parser.set_defaults(tool=name)
    return parser


def _subcode(text: str) -> int:
    """condor_hold's -subcode: an integer (condor's words when it is not)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"Invalid -subcode {text}!") from None


def _add_schedd_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-p", "--pool", help="collector HOST[:PORT] (default: COLLECTOR_HOST)")
    parser.add_argument("-n", "--name", help="schedd name (default: the local schedd)")
    parser.add_argument("--addr", help="schedd address (sinful or host:port); skips lookup")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_common_options(parser)


def _edit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cedar edit",
        description="Set job attributes (like condor_qedit): cedar edit RESTRICTION... "
        "ATTR VALUE [ATTR VALUE | ATTR=VALUE]...; every edit in one transaction.",
        epilog="exit codes: 0 set, 1 refused (no such job, immutable attribute, illegal value), "
        "2 usage, 3 unreachable. condor options cedar lacks: -edits, -forward, -dry-run.",
    )
    parser.add_argument(
        "words",
        nargs="*",
        metavar="CLUSTER|CLUSTER.PROC|OWNER ... ATTR VALUE",
        help="restrictions (job ids, clusters, one owner), then the edits",
    )
    parser.add_argument(
        "-c", "--constraint", action="append", metavar="EXPR", help="edit the jobs matching EXPR"
    )
    parser.add_argument("--owner", help="edit the jobs of OWNER")
    parser.add_argument("--jobids", metavar="ID,ID...", help="edit these jobs")
    _add_schedd_options(parser)
    parser.set_defaults(tool="edit")
    return parser


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run a parsed ``rm``/``hold``/``release``/``edit`` command line."""
    out = out or sys.stdout
    err = err or sys.stderr
    if args.tool == "edit":
        return _run_edit(args, out, err)
    return _run_act(args, out, err)


# --------------------------------------------------------------------------- rm, hold, release


@dataclass
class _Request:
    """One ACT_ON_JOBS request: what it acts on, and how messages name it."""

    spec: Any
    label: str  # "in cluster 12", 'of user "alice"', "matching constraint (X)", ""
    job_ids: list[str] | None = None


def _requests(args: argparse.Namespace) -> list[_Request]:
    if args.all and (args.ids or args.constraint):
        raise UsageError("-all cannot be used with job ids, users or -constraint")
    if not args.all and not args.ids and not args.constraint:
        raise UsageError("you did not specify any jobs (ids, users, -constraint or -all)")
    from cedar.jobid import ids_constraint_text

    requests: list[_Request] = []
    jobs = {item: _job_id(item) for item in args.ids}
    job_ids = [str(job) for job in jobs.values() if job is not None and job.proc is not None]
    if job_ids:
        requests.append(_Request(job_ids, "", job_ids))
    for item, job in jobs.items():
        if job is not None and job.proc is not None:
            continue
        if job is not None:
            requests.append(_Request(ids_constraint_text([job]), f"in cluster {job.cluster}"))
        elif _USER.match(item):
            requests.append(_Request(_owner_constraint(item), f'of user "{item}"'))
        else:
            raise UsageError(f"{item!r} is neither a job id (CLUSTER or CLUSTER.PROC) nor a user")
    if args.constraint:
        text = combined_constraint_tree(args.constraint)  # parsed once, sent as a tree
        shown = (
            args.constraint[0]
            if len(args.constraint) == 1
            else " && ".join(f"({part})" for part in args.constraint)
        )
        requests.append(_Request(text, f"matching constraint ({shown})"))
    if args.all:
        requests.append(_Request("true", ""))
    return requests


def _job_id(item: str) -> JobId | None:
    """condor_rm's reading of a positional: a job id (strict grammar), else ``None`` (a user);
    a cluster 0 is refused as condor_rm refuses it."""
    from cedar.jobid import match_job_id

    job = match_job_id(item)
    if job is not None and job.cluster == 0:
        raise UsageError(f"Invalid cluster # from {item}.")
    return job


def _owner_constraint(user: str) -> str:
    from cedar.classad_wire.unparse import quote_string

    return f"Owner == {quote_string(user, True)}"


def _schedd(args: argparse.Namespace) -> Schedd:
    from cedar.commands import Schedd

    return Schedd(args.addr, name=args.name, pool=args.pool, timeout=args.timeout)


def _run_act(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from cedar.numbers import JobAction

    action_name, verb, _, default_reason = ACTIONS[args.tool]
    action = JobAction.RemoveX if getattr(args, "forcex", False) else JobAction[action_name]
    requests = _requests(args)
    schedd = _schedd(args)
    reason = args.reason if args.reason is not None else default_reason
    status = 0
    report: list[dict[str, Any]] = []
    if args.constraint and any(r.job_ids for r in requests) and not args.json:
        # condor_X's words; the constraint is still acted on, in its own request
        err.write("Warning, -constraint is ignored for fully qualified job ids\n")
    for request in requests:
        result = schedd.act(
            action,
            request.spec,
            reason,
            long=args.long or request.job_ids is not None,
            subcode=getattr(args, "subcode", None),
        )
        report.append(
            {
                "target": request.job_ids or request.label.strip() or "all",
                "totals": {str(k): v for k, v in sorted(result.totals.items())},
                "jobs": result.jobs,
            }
        )
        if args.json:
            status |= _failed(result, request)
            continue
        if args.long:
            out.write("".join(f"{k} = {result.ad.raw_text(k)}\n" for k in sorted(result.ad)))
            out.write("\n")
        if args.totals:
            out.write(_totals_line(result) + "\n")
        status |= _report(
            args.tool, verb, request, result, out, err, forced=action is JobAction.RemoveX
        )
    if args.json:
        out.write(json.dumps(report) + "\n")
    return EXIT_REFUSED if status else 0


def _failed(result: ActResult, request: _Request) -> int:
    if request.job_ids is not None:
        return int(not result.changed)
    return int(not result.changed and result.ad.get("TotalJobAds") != 0)


def _totals_line(result: ActResult) -> str:
    """condor_X -totals: the schedd's ``result_total_N`` (absent, so 0, in a reply per job)."""

    def total(code: int) -> int:
        value = result.ad.get(f"result_total_{code}")
        return value if isinstance(value, int) else 0

    counts = [f"{total(code)} {name}" for code, name in enumerate(_RESULT_NAMES)]
    order = [counts[1], counts[0], *counts[2:], f"{total(5)} Permission Denied"]
    return ", ".join(order)


def _report(
    tool: str,
    verb: str,
    request: _Request,
    result: ActResult,
    out: TextIO,
    err: TextIO,
    forced: bool = False,
) -> int:
    """condor's messages for one request; 1 when it failed (``forced``: ``rm -forcex``)."""
    done = _FORCED if forced else _DONE[tool]
    if request.job_ids is not None:
        # as condor_X: failures on stderr; a blank line first and exit 1 only when no job
        # of the request succeeded (the schedd's ActionResult)
        failures = []
        for job in request.job_ids:
            code = result.jobs.get(job, 2)
            if code == 1:
                out.write(f"Job {job} {done}\n")
                continue
            text = _FAILED_JOB.get(code, "{id} could not be {done}")
            bad_status = _FORCED_BAD_STATUS if forced else _BAD_STATUS[tool]
            message = text.format(id=job, done=done, verb=verb, bad_status=bad_status)
            failures.append(message if message.startswith("Perm") else "Job " + message)
        if failures and not result.changed:
            err.write("\n")
        err.write("".join(line + "\n" for line in failures))
        return 0 if result.changed else 1
    target = f" {request.label}" if request.label else ""
    if result.changed:
        out.write(f"All jobs{target} have been {done}\n")
        return 0
    if result.ad.get("TotalJobAds") == 0:  # condor_X says so and exits 0
        err.write(f"condor_{tool}:0:There are no jobs in the queue\n")
        return 0
    err.write(f"\nCouldn't find/{_INFINITIVE[tool]} all jobs{target}\n")
    return 1


# --------------------------------------------------------------------------- edit


def _split_edit_words(
    words: Sequence[str], restricted: bool
) -> tuple[list[str], list[tuple[str, str]]]:
    """condor_qedit's command line: restrictions (ids, clusters, or one owner when no
    ``-constraint``/``-owner``/``-jobids`` was given) first, then ``ATTR VALUE`` pairs or
    ``ATTR=VALUE`` words."""
    restrictions: list[str] = []
    index = 0
    while index < len(words) and _job_id(words[index]) is not None:
        restrictions.append(words[index])
        index += 1
    rest = list(words[index:])
    owner_first = (
        rest
        and not restrictions
        and not restricted
        and _USER.match(rest[0])
        and "=" not in rest[0]
        and _edit_list(rest) is None
        and _edit_list(rest[1:])
    )
    if owner_first:
        restrictions.append(rest.pop(0))
    edits = _edit_list(rest)
    if edits is None:
        last = rest[-1] if rest else ""
        raise UsageError(f"expression required after attribute {last}")
    return restrictions, edits


def _edit_list(words: Sequence[str]) -> list[tuple[str, str]] | None:
    edits: list[tuple[str, str]] = []
    index = 0
    while index < len(words):
        word = words[index]
        name, sep, value = word.partition("=")
        if sep and name.strip():
            edits.append((name.strip(), value.strip()))
            index += 1
        elif index + 1 < len(words):
            edits.append((word, words[index + 1]))
            index += 2
        else:
            return None
    return edits


def _run_edit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from cedar.jobid import ids_constraint

    restricted = bool(args.constraint or args.owner or args.jobids)
    restrictions, edits = _split_edit_words(args.words, restricted)
    if not edits:
        raise UsageError("at least one restriction and one edit must be given")
    parts: list[str | Expr | None] = []
    jobs = [job for job in map(_job_id, restrictions) if job is not None]
    owners = [r for r in restrictions if _job_id(r) is None]
    if args.owner:
        owners.append(args.owner)
    if args.jobids:
        for item in re.split(r"[,\s]+", args.jobids.strip()):
            job = _job_id(item)
            if job is None:
                raise UsageError(f"{item!r} is not a job id (CLUSTER or CLUSTER.PROC)")
            jobs.append(job)
    ids = [str(job) for job in jobs if job.proc is not None]
    constraints = []
    for text in args.constraint or ():
        try:
            constraints.append(parsed_constraint(text))  # the one parse of each
        except UsageError:
            err.write(f"cedar edit: invalid constraint: {text}\n")
            return EXIT_REFUSED
    if not (jobs or owners or args.constraint):
        raise UsageError("at least one restriction and one edit must be given")
    # whole clusters first, then single jobs
    id_part = ids_constraint(sorted(jobs, key=lambda job: job.proc is not None))
    parts = [id_part] if id_part else []
    parts += [_owner_constraint(owner) for owner in owners]
    parts += constraints
    only_ids = len(ids) == 1 == len(jobs) and not (owners or args.constraint)
    spec: Any = ids[0] if only_ids else combined_constraint_tree(parts)
    schedd = _schedd(args)
    try:
        counts = schedd.transaction(_edit_work(spec, edits))
    except Exception as exc:
        from cedar.errors import CedarConnectionError, CedarError

        if isinstance(exc, CedarConnectionError) or not isinstance(exc, CedarError):
            raise
        where = f"for job {spec}." if only_ids else f"by constraint: {spec}"
        err.write(f"Failed to set attribute {_names(edits)} {where}\n")
        err.write(f"cedar edit: {exc}\n")
        err.write("Queue transaction failed.  No attributes were set.\n")
        return EXIT_REFUSED
    if args.json:
        out.write(json.dumps({name: counts for name, _ in edits}) + "\n")
        return 0
    for name, _ in sorted(edits, key=lambda e: e[0].lower()):
        out.write(f'Set attribute "{name}" for {counts} matching jobs.\n')
    return 0


def _names(edits: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f'"{name}"' for name, _ in edits)


def _edit_work(spec: Any, edits: Sequence[tuple[str, str]]) -> Callable[[CedarConnection], Any]:
    """Every edit in one queue transaction (as condor_qedit); the number of jobs touched."""
    from cedar.commands import qmgmt
    from cedar.commands.constraint import constraint_text
    from cedar.commands.schedd import parse_job_spec

    ids, constraint = parse_job_spec(spec)

    def work(conn: CedarConnection) -> Any:
        count = 0
        for name, value in edits:
            if ids is not None:
                for cluster, proc in ids:
                    yield from qmgmt.set_attribute(conn, cluster, proc, name, value, 0)
                count = len(ids)
            else:
                count = yield from qmgmt.set_attribute_by_constraint(
                    conn, constraint_text(constraint or "false"), name, value, 0
                )
        yield from qmgmt.commit_transaction(conn)
        yield from qmgmt.close_socket(conn)
        return count

    return work
