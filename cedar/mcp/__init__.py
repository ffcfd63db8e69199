"""``cedar mcp``: HTCondor for AI agents, as a Model Context Protocol server (extra ``[mcp]``).

Built on the official ``mcp`` SDK, run on Trio.  :mod:`.tools` is the tool table,
:mod:`.server` the SDK server around it, :mod:`.access` what it keeps beyond the service core
(who calls and what they may see are :mod:`cedar.service_core`'s),
:mod:`.http` the streamable HTTP app (standalone with Hypercorn, or mounted in ``cedar serve``),
:mod:`.cli` the command.  Nothing here is imported by ``import cedar``.
"""

from __future__ import annotations

from cedar.mcp.access import PoolAccess, pool_access
from cedar.mcp.server import build_server
from cedar.mcp.settings import McpSettings

__all__ = ["McpSettings", "PoolAccess", "build_server", "pool_access"]
