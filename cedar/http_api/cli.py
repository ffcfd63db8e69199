"""``cedar serve``: the HTTP API for a pool (``--demo``: over an embedded mock pool)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from cedar.errors import CedarError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cedar serve",
        description="Serve HTCondor over HTTP (/api/v1, restd's /v1, /openapi.json, /docs). "
        "Settings: CEDAR_SERVE_* knobs of the HTCondor configuration, then these flags.",
    )
    parser.add_argument("--host", help="address to listen on (CEDAR_SERVE_HOST, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (CEDAR_SERVE_PORT, 8080)")
    parser.add_argument("--demo", action="store_true", help="serve an embedded mock pool")
    parser.add_argument(
        "--demo-tokens", metavar="DIR", help="with --demo: write the users' tokens here"
    )
    parser.add_argument("--pool", help="the collector (CEDAR_SERVE_COLLECTOR, COLLECTOR_HOST)")
    parser.add_argument("--schedd", help="a schedd address (default: located via the collector)")
    parser.add_argument("--tls-cert", help="PEM certificate (CEDAR_SERVE_TLS_CERTFILE)")
    parser.add_argument("--tls-key", help="PEM private key (CEDAR_SERVE_TLS_KEYFILE)")
    parser.add_argument(
        "--cors-origin", action="append", default=[], help="allow this origin (CORS off by default)"
    )
    parser.add_argument(
        "--shared-port-id",
        help="answer condor_shared_port's HTTP forwarding with this id "
        "(SHARED_PORT_HTTP_FORWARDING_ID; CEDAR_SERVE_SHARED_PORT_ID)",
    )
    # condor_master starts its daemons with -f (foreground); we always are
    parser.add_argument("-f", dest="foreground", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``cedar serve`` from its arguments."""
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run until interrupted."""
    from dataclasses import replace

    try:
        import fastapi  # noqa: F401
        import hypercorn  # noqa: F401
    except ImportError:
        print("cedar serve needs its extra: pip install 'htc-cedar[serve]'", file=sys.stderr)
        return 2
    import trio

    from cedar.config import Config, default_config, set_default_config
    from cedar.http_api.server import serve
    from cedar.service_core import ServiceSettings

    try:
        if args.demo:
            config = Config()  # self-contained: nothing of this machine's configuration
            set_default_config(config)
        else:
            config = default_config()
        settings = ServiceSettings.from_config(config)
        overrides = {
            "host": args.host,
            "port": args.port,
            "collector": args.pool,
            "schedd": args.schedd,
            "tls_cert": args.tls_cert,
            "tls_key": args.tls_key,
            "shared_port_id": args.shared_port_id,
        }
        settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
        if args.cors_origin:
            settings = replace(settings, cors_origins=tuple(args.cors_origin))
        if bool(settings.tls_cert) != bool(settings.tls_key):
            print("cedar serve: give both --tls-cert and --tls-key", file=sys.stderr)
            return 2
        trio.run(
            lambda: serve(
                settings,
                demo=args.demo,
                demo_tokens=args.demo_tokens,
                announce=_say,
                mount=_mount_mcp,
            )
        )
    except KeyboardInterrupt:
        return 130
    except CedarError as exc:
        if args.debug:
            raise
        print(f"cedar serve: {exc}", file=sys.stderr)
        return 1
    return 0


def _mount_mcp(app: object) -> None:
    """The MCP server at ``/mcp`` when the [mcp] extra is installed (else no /mcp)."""
    try:
        from cedar.mcp.http import mount_in_serve
    except ImportError:
        return
    if mount_in_serve(app) is None:
        _say("cedar serve: MCP not mounted (port 0, no CEDAR_MCP_RESOURCE_URL for its metadata)")
    else:
        _say("cedar serve: MCP (streamable HTTP) at /mcp")


def _say(text: str) -> None:
    print(text, flush=True)
