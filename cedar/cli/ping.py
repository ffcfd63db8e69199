"""``cedar-ping``: is this client authorized at these levels? (in the spirit of condor_ping).

For each level a ``DC_SEC_QUERY`` is sent; the output names the authentication method, the crypto
method, the identity the daemon mapped us to and the daemon's version.  Exit status 0 only if
every level was authorized, 1 if one was not, 3 if the daemon could not be reached ("connection
refused"), 2 for usage errors (see :mod:`cedar.cli.common`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from cedar.cli.common import (
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    HelpFormatter,
    add_common_options,
    condor_style,
    exit_code,
    guarded,
)
from cedar.errors import CedarConnectionError, CedarError

if TYPE_CHECKING:  # imported where used: `cedar ping --help` loads no client stack
    from cedar.auth.client_config import ClientSecurity
    from cedar.commands.ping import PingResult

DEFAULT_COLLECTOR_PORT = 9618


def add_target_options(parser: argparse.ArgumentParser) -> None:
    """How a daemon is named (``--pool``, ``--address``, ``--type``, ``--name``, read by
    :func:`target_address`) and the common options; shared with ``cedar whoami``."""
    parser.add_argument("--pool", metavar="HOST[:PORT]", help="the collector (default port 9618)")
    parser.add_argument("--address", metavar="SINFUL", help="the daemon's address")
    parser.add_argument(
        "--type",
        metavar="TYPE",
        help="daemon type to locate (e.g. SCHEDD); with no --address, --pool, --type or --name, "
        "the local schedd, as condor_ping",
    )
    parser.add_argument("--name", metavar="NAME", help="daemon name to locate")
    add_common_options(parser)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (shared with ``cedar ping``)."""
    parser = argparse.ArgumentParser(
        prog="cedar-ping",
        description="Test whether this client is authorized at permission levels of a daemon.",
        formatter_class=HelpFormatter,
    )
    add_target_options(parser)
    parser.add_argument("--verbose", action="store_true", help="print every detail")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument(
        "levels",
        nargs="*",
        metavar="LEVEL",
        help="permission levels (READ, WRITE, ...) or command numbers (default: WRITE)",
    )
    return parser


def target_address(args: argparse.Namespace, security: ClientSecurity) -> str:
    """The daemon named by --address, --pool, --type and --name (the local schedd when none
    is), as condor_ping finds it; shared with `cedar whoami`."""
    if args.address:
        return str(args.address)
    daemon_type = (args.type or "COLLECTOR").upper()
    if daemon_type == "COLLECTOR" and not args.name and args.pool:
        pool = str(args.pool)
        if pool.startswith("<") or ":" in pool.strip("[]"):
            return pool
        return f"{pool}:{DEFAULT_COLLECTOR_PORT}"
    if args.type or args.name:
        from cedar.commands import Collector

        collector = Collector(args.pool, security=security, timeout=args.timeout)
        return collector.locate(daemon_type, args.name).address
    if args.pool:
        return str(args.pool)
    # Nothing named: the local schedd, as condor_ping (its default -type is the schedd).
    from cedar.commands import locate_schedd

    return locate_schedd(security=security, timeout=args.timeout)


def _line(result: PingResult, verbose: bool, unreachable: bool = False) -> str:
    if unreachable:
        reason = (result.error or "").lower()
        what = "connection refused" if "refused" in reason else "cannot connect"
        return f"{result.level}: {what} ({result.error})"
    if not result.authorized:
        text = f"{result.level}: NOT authorized"
        if result.error and verbose:
            text += f" ({result.error})"
        return text
    text = (
        f"{result.level}: authorized as {result.user or 'unknown'} "
        f"(authentication {result.method or 'none'}"
        + (f" as {result.principal}" if result.principal else "")
        + f", crypto {result.crypto or 'none'})"
    )
    if verbose:
        text += f"\n    command {result.command}; remote version {result.remote_version}"
        if result.route and result.route != "direct":
            text += f"\n    reached by {result.route}"
    return text


def run(args: argparse.Namespace, security: ClientSecurity | None = None) -> int:
    """Ping every requested level; 0 iff all were authorized, 1 if not, 2 on errors."""
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    from cedar.auth.client_config import default_security
    from cedar.commands import ping
    from cedar.commands.ping import PingResult

    levels = args.levels or ["WRITE"]
    security = security or default_security()
    try:
        target = target_address(args, security)
    except (CedarError, ValueError) as exc:
        print(f"{getattr(args, 'prog', 'cedar-ping')}: {exc}", file=sys.stderr)
        return exit_code(exc) if isinstance(exc, CedarError) else EXIT_USAGE
    results: list[PingResult] = []
    unreachable: set[str] = set()
    status = 0
    for level in levels:
        try:
            result = ping(target, level, security=security, timeout=args.timeout)
        except ValueError as exc:
            print(f"{getattr(args, 'prog', 'cedar-ping')}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except CedarError as exc:
            result = PingResult(level, 0, False, None, None, None, False, None, error=str(exc))
            if isinstance(exc, CedarConnectionError):
                unreachable.add(level)
                status = EXIT_UNREACHABLE
        results.append(result)
        if not result.authorized and status == 0:
            status = EXIT_REFUSED
    if args.json:
        print(json.dumps({"address": target, "results": [asdict(r) for r in results]}, indent=2))
    else:
        if args.verbose:
            print(f"Destination: {target}")
        for result in results:
            print(_line(result, args.verbose, result.level in unreachable))
            if result.level in unreachable:
                continue
            if not result.authorized and result.error and not args.verbose:
                print(f"    {result.error}", file=sys.stderr)
    return 0 if all(r.authorized for r in results) else (status or EXIT_REFUSED)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (``cedar-ping``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    debug = "--debug" in argv or "-debug" in argv
    return guarded("cedar-ping", debug, lambda: run(parser.parse_args(condor_style(argv, parser))))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
