"""``cedar conformance``: run the protocol conformance battery against a pool and print a table."""

from __future__ import annotations

import argparse
import json
import sys

from cedar.cli.common import DEFAULT_TIMEOUT
from cedar.conformance import CHECKS, Outcome, Target, run_checks


def build_parser() -> argparse.ArgumentParser:
    """The ``cedar conformance`` options."""
    parser = argparse.ArgumentParser(
        prog="cedar conformance",
        description="Run the CEDAR conformance battery against a pool; exit 0 only if no check "
        "failed.  Checks: " + ", ".join(c.name for c in CHECKS),
    )
    parser.add_argument("--pool", required=True, help="the collector, HOST[:PORT] or a sinful")
    parser.add_argument("--token-dir", help="an IDTOKENS directory the pool accepts")
    parser.add_argument("--scitoken", help="a SciToken file the pool accepts (SCITOKENS)")
    parser.add_argument("--ca-file", help="CA file for the daemons' TLS certificate (SCITOKENS)")
    parser.add_argument(
        "--write-method",
        help="method whose identity may own jobs (default: TOKEN with --token-dir, else "
        "SCITOKENS with --scitoken; without either the job lifecycle check is skipped)",
    )
    parser.add_argument(
        "--no-fs",
        action="store_true",
        help="do not use FS (the daemons do not share this file system, e.g. a container)",
    )
    parser.add_argument("--iwd", default="/tmp", help="working directory of the test job")
    parser.add_argument("--check", action="append", help="run only checks starting with this")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="per-call deadline (s)"
    )
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    return parser


def render(outcomes: list[Outcome]) -> str:
    """The table: one line per check, the observed bytes under each failure."""
    width = max((len(o.name) for o in outcomes), default=10)
    lines = []
    for outcome in outcomes:
        lines.append(f"{outcome.name:<{width}}  {outcome.status.upper():<4}  {outcome.detail}")
        if outcome.status == "fail" and outcome.observed:
            lines.append(f"{'':<{width}}        observed (last {len(outcome.observed)} bytes): "
                         f"{outcome.observed.hex()}")  # fmt: skip
    counts = {s: sum(o.status == s for o in outcomes) for s in ("pass", "fail", "skip")}
    lines.append(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the battery; exit 1 when a check failed."""
    target = Target(
        args.pool,
        token_dir=args.token_dir,
        scitoken_file=args.scitoken,
        ssl_cafile=args.ca_file,
        write_method=args.write_method,
        iwd=args.iwd,
        fs=False if args.no_fs else None,
        timeout=args.timeout,
    )
    outcomes = run_checks(target, args.check)
    if args.json:
        print(json.dumps([o.as_dict() for o in outcomes], indent=2))
    else:
        print(render(outcomes))
    sys.stdout.flush()
    return 1 if any(o.status == "fail" for o in outcomes) else 0
