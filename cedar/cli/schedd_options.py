"""The schedd options ``cedar submit`` and ``cedar transfer-data`` share, and the client they
name: a module of its own so that both programs import it without importing each other."""

from __future__ import annotations

import argparse

from cedar.cli.common import add_common_options
from cedar.commands import Schedd


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
