"""``cedar serve``: HTCondor over HTTP (``pip install 'htc-cedar[serve]'``).

An ASGI app (FastAPI on Trio, served by Hypercorn's trio worker) over :mod:`cedar.service_core`:
``/api/v1`` (jobs, sandboxes, history, collector, daemons), restd's read-only ``/v1``,
``/openapi.json`` (generated) and ``/docs`` (served from the package).  :func:`create_app` is the
factory the web page and the MCP server mount into.  Nothing here is imported by ``import cedar``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

    from cedar.service_core import PoolAccess, ServiceSettings


def create_app(settings: ServiceSettings, access: PoolAccess | None = None) -> FastAPI:
    """The ASGI app for one pool (see :mod:`cedar.http_api.app`)."""
    from cedar.http_api.app import create_app as build

    return build(settings, access)


def main(argv: Any = None) -> int:
    """``cedar serve``."""
    from cedar.http_api.cli import main as run

    return run(argv)


__all__ = ["create_app", "main"]
