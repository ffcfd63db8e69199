"""What ``cedar mcp`` keeps beyond the service core: fetched job output, and the core's pool
access made from the MCP settings.

Who is calling, how the pool is reached on their behalf and which jobs they may see are the
service core's (:mod:`cedar.service_core`), the same for ``cedar serve``'s APIs, the web page and
MCP: over stdio the caller is :meth:`Caller.local` (the user who started the server, with the
process's HTCondor configuration, token or FS), over HTTP a bearer token; the scope and admin
rules are :meth:`PoolAccess.scope_user` and :meth:`ServiceSettings.is_admin`.  ``Caller`` and
``PoolAccess`` are still importable from here (their old home); they are the core's classes.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from cedar.service_core import Caller as Caller
from cedar.service_core import PoolAccess as PoolAccess

if TYPE_CHECKING:
    from cedar.auth.client_config import ClientSecurity
    from cedar.mcp.settings import McpSettings

#: Bytes of fetched job output kept (fetching a spooled job's output lets it leave the queue,
#: so a second look is answered from here); the oldest is dropped.
MAX_KEPT_OUTPUT = 32 * 1024 * 1024


def pool_access(settings: McpSettings, security: ClientSecurity | None = None) -> PoolAccess:
    """The service core's pool access for a standalone ``cedar mcp`` (``security``: the stdio
    caller's credentials; None = the process's default)."""
    return PoolAccess(settings.service_settings(), local_security=security)


class KeptOutputs:
    """Output files each caller fetched, per job, bounded by :data:`MAX_KEPT_OUTPUT` in all."""

    def __init__(self, limit: int = MAX_KEPT_OUTPUT) -> None:
        self.limit = limit
        self._files: OrderedDict[tuple[str, str], list[tuple[str, bytes]]] = OrderedDict()

    def kept(self, caller: Caller, job_id: str) -> list[tuple[str, bytes]] | None:
        """Output files of a job this caller fetched before, if still kept."""
        return self._files.get((caller.key, job_id))

    def keep(self, caller: Caller, job_id: str, files: list[tuple[str, bytes]]) -> None:
        """Remember fetched output (the oldest dropped past the limit)."""
        self._files[(caller.key, job_id)] = files
        while len(self._files) > 1 and self._bytes() > self.limit:
            self._files.popitem(last=False)

    def _bytes(self) -> int:
        return sum(len(data) for files in self._files.values() for _, data in files)
