"""``cedar q -analyze | -better-analyze[:summary|:reverse|:priority] [ID...]``: why a job is
idle, as ``condor_q`` explains it (same text), or as JSON (``--json``), or with value histograms
and "ask for less" suggestions (``--verbose``).  ``cedar q`` hands over here when it sees an
analyze option; the analysis itself is :mod:`cedar.analysis` (pure) and its fetch helper.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from cedar.cli.common import (
    UsageError,
    add_common_options,
    check_constraint,
    condor_style,
    guarded,
    parsed_constraint,
)

#: The analyze options and the mode each selects.
_FLAGS = {
    "analyze": "analyze",
    "better-analyze": "better",
    "better-analyze:summary": "summary",
    "better-analyze:reverse": "reverse",
    "reverse-analyze": "reverse",
    "better-analyze:priority": "priority",
}


def _mode_of(arg: str) -> str | None:
    name = arg.lstrip("-") if arg.startswith("-") else None
    return _FLAGS.get(name.lower()) if name else None


def wants_analysis(argv: Sequence[str]) -> bool:
    """Whether ``cedar q``'s arguments ask for an analysis (the hook in ``cedar q`` uses it)."""
    for arg in argv:
        if arg == "--":
            return False
        if _mode_of(arg) is not None:
            return True
    return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cedar q",
        description="Explain why jobs do (not) match slots, as condor_q -better-analyze does.",
    )
    parser.add_argument("ids", nargs="*", metavar="OWNER|CLUSTER|CLUSTER.PROC")
    parser.add_argument("--mode", default="better", help=argparse.SUPPRESS)
    parser.add_argument("--constraint", help="only jobs matching this ClassAd constraint")
    parser.add_argument("--machine", help="analyse against this slot (or machine) only")
    parser.add_argument("--mconstraint", help="only slots matching this constraint")
    parser.add_argument("--allusers", "--all", action="store_true", help="every user's jobs")
    parser.add_argument("--pool", help="collector HOST[:PORT] (default: COLLECTOR_HOST)")
    parser.add_argument("--name", help="schedd name (default: the local schedd)")
    parser.add_argument("--addr", help="schedd address (sinful or host:port); skips lookup")
    parser.add_argument("--json", action="store_true", help="the structured result as JSON")
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="also value histograms and suggestions"
    )
    add_common_options(parser)
    return parser


def _split(argv: Sequence[str]) -> tuple[str, list[str]]:
    mode = "better"
    rest: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":
            rest.extend(argv[i:])
            break
        found = _mode_of(arg)
        if found is None:
            rest.append(arg)
        elif found != "analyze" or mode == "better":
            mode = found
    return mode, rest


def _job_constraint(ids: Sequence[str], constraint: str | None) -> str | None:
    from cedar.classad_wire.constraints import constraint_text
    from cedar.classad_wire.unparse import quote_string
    from cedar.jobid import ids_constraint_text, match_job_id

    alternatives = []
    for text in ids:
        job = match_job_id(text, lenient=True)  # condor_q's reading of its restriction list
        if job is not None:
            alternatives.append(f"({ids_constraint_text([job])})")
        elif text and not text.startswith("-"):
            alternatives.append(f"(Owner == {quote_string(text, old=True)})")
        else:
            raise UsageError(f"not a job id or owner: {text!r}")
    which = " || ".join(alternatives) if alternatives else None
    return constraint_text([which, parsed_constraint(constraint)])


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Fetch, analyse, print."""
    import trio

    from cedar.analysis.fetch import fetch_inputs
    from cedar.commands import AsyncCollector, AsyncSchedd

    out = out or sys.stdout
    constraint = _job_constraint(args.ids, args.constraint)
    my_jobs = None
    if not args.allusers and not args.ids:  # root too: the schedd decides (as cedar q)
        my_jobs = getpass.getuser()
    schedd = AsyncSchedd(args.addr, name=args.name, pool=args.pool, timeout=args.timeout)
    collector = AsyncCollector(args.pool, timeout=args.timeout)

    async def fetch() -> Any:
        return await fetch_inputs(
            schedd,
            collector,
            constraint,
            machine=args.machine,
            slot_filter=check_constraint(args.mconstraint),
            my_jobs=my_jobs,
            with_auth=my_jobs is not None,
            schedd_name=args.name,
            collector_schedd_ad=bool(args.name or args.pool),
            priorities=args.mode == "priority",
        )

    inputs = trio.run(fetch)
    return render(args, inputs, out)


def render(args: argparse.Namespace, inputs: Any, out: TextIO) -> int:
    """Print the analysis of fetched inputs (text, ``--json`` or ``--verbose``)."""
    from cedar.analysis import analyze_job
    from cedar.analysis.reverse import analyze_slot, slot_expressions, summarize
    from cedar.analysis.text import banner, render_job, render_reverse, render_summary

    mode = args.mode
    jobs = sorted(inputs.jobs, key=lambda j: (j.get("ClusterId", 0), j.get("ProcId", 0)))
    head = banner(inputs.schedd_name or "?", inputs.schedd_address or "?")
    if mode == "summary":
        rows = summarize(jobs, inputs.slots, inputs.analyze)
        if args.json:
            json.dump([r.to_json() for r in rows], out, indent=2)
            out.write("\n")
        else:
            out.write(head + render_summary(rows, len(inputs.slots)))
        return 0
    if mode == "reverse":
        results = [(slot, analyze_slot(slot, jobs)) for slot in inputs.slots]
        if args.json:
            json.dump([r.to_json() for _, r in results], out, indent=2)
            out.write("\n")
            return 0
        out.write(head)
        for slot, result in results:
            out.write(render_reverse(result, slot_expressions(slot)))
            if args.verbose:
                out.write(f"\n{result.explanation}\n")
        return 0
    analyses = [
        analyze_job(
            job,
            inputs.slots,
            analyze_summary=inputs.analyze,
            priorities=inputs.priorities,
            schedd_ad=inputs.schedd_ad,
            single_slot=True if args.machine else None,
            detail=bool(args.verbose or args.json),
        )
        for job in jobs
    ]
    if args.json:
        json.dump([a.to_json() for a in analyses], out, indent=2)
        out.write("\n")
        return 0
    out.write(head)
    for a in analyses:
        out.write(render_job(a, better=mode != "analyze", priority_mode=mode == "priority"))
        if args.verbose:
            out.write(verbose_text(a))
    return 0


def verbose_text(a: Any) -> str:
    """What ``--verbose`` adds: the explanation, value histograms and suggestions."""
    lines = [f"\nIn plain words: {a.explanation}\n"]
    for c in a.clauses:
        if not c.shown or (not c.histograms and not c.suggestions):
            continue
        lines.append(f"  [{c.step}] {c.label}\n")
        for h in c.histograms:
            bins = ", ".join(f"{json.dumps(b.value)}: {b.slots}" for b in h.bins)
            other = f", other: {h.other}" if h.other else ""
            lines.append(f"      {h.attribute} values (slots): {bins}{other}\n")
        for s in c.suggestions:
            lines.append(f"      suggestion: {s.text}\n")
    return "".join(lines)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """``cedar q`` with an analyze option (argv without the ``q``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    mode, rest = _split(argv)
    parser = build_parser()
    debug = any(a in ("--debug", "-debug") for a in rest)

    def action() -> int:
        args = parser.parse_args(condor_style(rest, parser))
        args.mode = mode
        return run(args, out)

    return guarded("cedar q", debug, action)


__all__ = ["build_parser", "main", "render", "run", "verbose_text", "wants_analysis"]
