"""``cedar mcp``: serve the MCP server over stdio (default) or streamable HTTP (``--http``).

Over stdio only protocol messages reach stdout: logging goes to stderr (also with
``--debug``), and while serving the SDK points file descriptor 1 at stderr so that nothing
else can write onto the protocol stream.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

import mcp.server  # noqa: F401 - without the [mcp] extra, `cedar mcp` says it is not installed
import trio

from cedar.cli.common import add_common_options
from cedar.mcp.settings import McpSettings


def build_parser() -> argparse.ArgumentParser:
    """The options of ``cedar mcp``."""
    parser = argparse.ArgumentParser(
        prog="cedar mcp",
        description="Serve HTCondor to AI agents (Model Context Protocol): stdio by default, "
        "streamable HTTP with --http.",
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    parser.add_argument("--pool", metavar="HOST[:PORT]", help="the collector (default: config)")
    parser.add_argument("--name", metavar="SCHEDD", help="the schedd's name (default: local)")
    parser.add_argument(
        "--read-only", action="store_true", default=None, help="offer no tool that changes jobs"
    )
    parser.add_argument(
        "--admin",
        action="append",
        metavar="USER",
        help="an identity that sees every job (repeatable; adds to CEDAR_MCP_ADMINS)",
    )
    parser.add_argument("--serve-url", metavar="URL", help="base URL of cedar serve (links)")
    parser.add_argument(
        "--authorization-server",
        action="append",
        metavar="URL",
        help="an OAuth authorization server named in the HTTP metadata (repeatable)",
    )
    parser.add_argument("--resource-url", metavar="URL", help="this server's public URL (HTTP)")
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="limit for one tool call as a whole (default 60 s)",
    )
    add_common_options(parser)
    return parser


def settings_from(args: argparse.Namespace) -> McpSettings:
    """The settings: configuration knobs, then the flags."""
    from cedar.config import default_config

    settings = McpSettings.from_config(
        default_config(),
        pool=args.pool,
        schedd_name=args.name,
        read_only=args.read_only,
        serve_url=args.serve_url,
        resource_url=args.resource_url,
        timeout=args.call_timeout,
        daemon_timeout=args.timeout,
    )
    if args.admin:
        settings.admins = settings.admins | frozenset(args.admin)
    if args.authorization_server:
        settings.authorization_servers = tuple(args.authorization_server)
    return settings


def configure_logging(debug: bool) -> None:
    """Logging to stderr only: stdout belongs to the protocol."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("cedar mcp: %(name)s: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)


async def serve_stdio(settings: McpSettings) -> None:
    """Serve one client on this process's stdin and stdout."""
    from mcp.server.stdio import stdio_server

    from cedar.mcp.server import build_server

    server = build_server(settings)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(args: argparse.Namespace) -> int:
    """Serve until the client goes away (stdio) or until interrupted (HTTP)."""
    configure_logging(bool(args.debug))
    settings = settings_from(args)
    log = logging.getLogger("cedar.mcp")
    try:
        if args.http:
            from cedar.mcp.http import serve_http

            async def main() -> Any:
                await serve_http(settings, args.host, args.port)

            log.warning("serving MCP over HTTP on %s:%d (path /mcp)", args.host, args.port)
            trio.run(main)
        else:
            trio.run(serve_stdio, settings)
    except KeyboardInterrupt:
        return 130
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m cedar.mcp.cli``: the same as ``cedar mcp``."""
    parser = build_parser()
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
