"""Who is calling, how the pool is reached on their behalf, and which jobs they may see.

Over stdio the caller is the user who started the server: the process-wide client security
(their HTCondor configuration, token or FS), as ``cedar`` uses.  Over HTTP the caller is a
bearer token, and the service core (:mod:`cedar.service`, shared with ``cedar serve``) gives
it a client security whose only credential is that token, with its own session cache.

The identity is what the schedd authenticated (a ``DC_SEC_QUERY``), asked once per caller.
Scoping is the same for both transports and the same as ``cedar serve``'s: a caller who is not
one of the configured admins sees and touches only jobs whose ``User`` is their identity
(:func:`cedar.service.owner_scope`), combined with their own constraint as parsed trees.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from cedar.auth.client_config import ClientSecurity, default_security
from cedar.classad_wire.constraints import and_constraints
from cedar.classad_wire.expr import Expr
from cedar.commands import AsyncCollector, AsyncSchedd, ping_async
from cedar.config import default_config
from cedar.errors import PermissionDenied
from cedar.mcp_server.settings import McpSettings
from cedar.service import Caller as TokenCaller
from cedar.service import PoolAccess as ServicePoolAccess
from cedar.service import ServiceSettings, owner_scope, scoped_job

#: Callers (tokens) whose identity is kept at once; the oldest is dropped.
MAX_CALLERS = 256
#: Bytes of fetched job output kept (fetching a spooled job's output lets it leave the queue,
#: so a second look is answered from here); the oldest is dropped.
MAX_KEPT_OUTPUT = 32 * 1024 * 1024


@dataclass
class Caller:
    """One caller: ``transport`` is ``stdio`` or ``http``; ``key`` names its cached state
    (a hash of the token, never the token itself)."""

    transport: str
    key: str
    security: ClientSecurity | None = field(default=None, repr=False)
    token: TokenCaller | None = field(default=None, repr=False)
    identity: str | None = None  #: ``user@domain`` as the schedd authenticated it
    method: str | None = None


class PoolAccess:
    """The pool as one server sees it: clients per caller, identities, scoping."""

    def __init__(
        self,
        settings: McpSettings,
        security: ClientSecurity | None = None,
        *,
        service: ServicePoolAccess | None = None,
    ) -> None:
        self.settings = settings
        self._local_security = security
        self._callers: OrderedDict[str, Caller] = OrderedDict()
        self._service = service  #: shared with cedar serve when mounted there
        self._outputs: OrderedDict[tuple[str, str], list[tuple[str, bytes]]] = OrderedDict()

    def kept_output(self, caller: Caller, job_id: str) -> list[tuple[str, bytes]] | None:
        """Output files of a job this caller fetched before, if still kept."""
        return self._outputs.get((caller.key, job_id))

    def keep_output(self, caller: Caller, job_id: str, files: list[tuple[str, bytes]]) -> None:
        """Remember fetched output (bounded by :data:`MAX_KEPT_OUTPUT` in all)."""
        self._outputs[(caller.key, job_id)] = files
        while len(self._outputs) > 1 and self._kept_bytes() > MAX_KEPT_OUTPUT:
            self._outputs.popitem(last=False)

    def _kept_bytes(self) -> int:
        return sum(len(data) for files in self._outputs.values() for _, data in files)

    def local_caller(self) -> Caller:
        """The user who started the server (stdio)."""
        return self._remember(Caller("stdio", "local", self._local_security or default_security()))

    @property
    def service(self) -> ServicePoolAccess:
        """The service core's pool access (per-token credentials and sessions)."""
        if self._service is None:
            self._service = ServicePoolAccess(
                ServiceSettings(
                    collector=self.settings.pool,
                    schedd_name=self.settings.schedd_name,
                    timeout=self.settings.daemon_timeout,
                    max_callers=MAX_CALLERS,
                    config=default_config(),
                )
            )
        return self._service

    def token_caller(self, token: str) -> Caller:
        """The holder of a bearer token (HTTP); :class:`~cedar.service.BadCredential` for a
        token that cannot be one."""
        holder = TokenCaller.from_token(token)
        known = self._callers.get(holder.key)
        if known is not None:
            self._callers.move_to_end(holder.key)
            return known
        security = self.service.security(holder)
        return self._remember(Caller("http", holder.key, security, holder))

    def _remember(self, caller: Caller) -> Caller:
        known = self._callers.get(caller.key)
        if known is not None:
            return known
        self._callers[caller.key] = caller
        while len(self._callers) > MAX_CALLERS:
            self._callers.popitem(last=False)
        return caller

    def schedd(self, caller: Caller) -> AsyncSchedd:
        """A schedd client acting as ``caller``."""
        return AsyncSchedd(
            self.settings.schedd_address,
            name=self.settings.schedd_name,
            pool=self.settings.pool,
            security=caller.security,
            timeout=self.settings.daemon_timeout,
            max_results=self.settings.max_jobs + 1,
        )

    def collector(self, caller: Caller) -> AsyncCollector:
        """The pool's collector, asked as ``caller``."""
        return AsyncCollector(
            self.settings.pool, security=caller.security, timeout=self.settings.daemon_timeout
        )

    async def identify(self, caller: Caller) -> str:
        """``user@domain`` as the schedd authenticates ``caller`` (asked once)."""
        if caller.identity is None and caller.token is not None:
            identity = await self.service.whoami(caller.token)
            caller.identity, caller.method = identity.user, identity.method
        if caller.identity is None:
            address = await self.schedd(caller).locate()
            result = await ping_async(
                address, "WRITE", security=caller.security, timeout=self.settings.daemon_timeout
            )
            user = result.user or ""
            if not result.authorized or not user or user.startswith("unauthenticated@"):
                reason = result.error or "not authorized at WRITE"
                raise PermissionDenied(f"the schedd did not authenticate you ({reason})")
            caller.identity, caller.method = user, result.method
        return caller.identity

    async def _scope_user(self, caller: Caller) -> str | None:
        """The user ``caller``'s views are limited to (their identity), or None for an admin."""
        identity = await self.identify(caller)
        return None if self.settings.is_admin(identity) else identity

    async def scope(self, caller: Caller) -> Expr | None:
        """The constraint limiting ``caller`` to their jobs, or None for an admin."""
        user = await self._scope_user(caller)
        return None if user is None else owner_scope(user)

    async def scoped(self, caller: Caller, *parts: str | Expr | None) -> Expr | None:
        """``parts`` and the caller's scope, combined as parsed trees (sent as they are)."""
        return and_constraints([await self.scope(caller), *parts])

    async def scoped_job(self, caller: Caller, cluster: int, proc: int) -> Expr | None:
        """Job ``cluster.proc`` if it is in the caller's scope (no scope for an admin), as
        :func:`cedar.service.scoped_job` writes it: the job's id tested first."""
        return scoped_job(cluster, proc, await self._scope_user(caller))
