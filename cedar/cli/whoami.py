"""``cedar whoami``: who a daemon authenticates us as (the schedd unless told otherwise).

One ``DC_SEC_QUERY``, as ``cedar ping`` sends it (the same request and handshake driver), read
for its identity: the authentication method, the name the daemon mapped us to (what
``condor_ping -verbose`` prints as "Remote Mapping"), the Kerberos principal, the crypto, whether
the session is kept for later commands, and the route (direct, or the CCB broker and reversed
connection or relay).  Exit status as ``cedar ping``: 0 authorized, 1 not, 3 unreachable.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from cedar.cli.common import (
    EXIT_REFUSED,
    EXIT_USAGE,
    HelpFormatter,
    condor_style,
    exit_code,
    guarded,
)
from cedar.cli.ping import add_target_options, target_address
from cedar.errors import CedarError

if TYPE_CHECKING:
    from cedar.auth.client_config import ClientSecurity
    from cedar.commands.ping import Identity


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: ``cedar ping``'s ways of naming a daemon, one level, ``--json``."""
    parser = argparse.ArgumentParser(
        prog="cedar whoami",
        description="Show who a daemon authenticates this client as (default: the local schedd).",
        formatter_class=HelpFormatter,
    )
    add_target_options(parser)
    parser.add_argument("--json", action="store_true", help="print the identity as JSON")
    parser.add_argument(
        "level",
        nargs="?",
        default="WRITE",
        metavar="LEVEL",
        help="the permission level the session is made for (default: WRITE, as condor_ping)",
    )
    return parser


def describe(identity: Identity) -> str:
    """The identity as lines of ``Label: value`` (condor_ping -verbose's layout)."""
    from cedar.auth.methods import TOOL_SPELLINGS

    method = identity.method
    rows = [
        ("Destination", identity.address),
        ("Remote Mapping", identity.identity or "unknown"),
        ("Authenticated using", TOOL_SPELLINGS.get(method, method) if method else "none"),
    ]
    if identity.principal:
        rows.append(("Principal", identity.principal))
    crypto = identity.crypto or "none"
    rows.append(("Encryption", crypto if identity.encrypted else f"none (crypto {crypto})"))
    session = identity.session
    if identity.session_duration:
        session += f" ({identity.session_duration} s)"
    rows.append(("Session", session))
    rows.append(("Route", identity.route or "none"))
    rows.append(("Remote Version", identity.remote_version or "unknown"))
    rows.append((f"Authorized ({identity.level})", "TRUE" if identity.authorized else "FALSE"))
    if identity.error:
        rows.append(("Error", identity.error))
    return "\n".join(f"{label + ':':<22}{value}" for label, value in rows)


def run(args: argparse.Namespace, security: ClientSecurity | None = None) -> int:
    """Ask the daemon; print what it says about us."""
    from cedar.auth.client_config import default_security
    from cedar.commands import whoami

    security = security or default_security()
    try:
        target = target_address(args, security)
        identity = whoami(target, args.level, security=security, timeout=args.timeout)
    except ValueError as exc:
        print(f"cedar whoami: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CedarError as exc:
        print(f"cedar whoami: {exc}", file=sys.stderr)
        return exit_code(exc)
    if args.json:
        print(json.dumps(asdict(identity), indent=2))
    else:
        print(describe(identity))
    return 0 if identity.authorized else EXIT_REFUSED


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (``cedar whoami``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    debug = "--debug" in argv or "-debug" in argv
    return guarded(
        "cedar whoami", debug, lambda: run(parser.parse_args(condor_style(argv, parser)))
    )
