"""The pool as one caller sees it: clients that carry only that caller's token.

A :class:`PoolAccess` is made once per process.  For each caller it builds a client security
policy whose only credential is the caller's bearer token (TOKEN for an IDTOKEN, SCITOKENS for a
SciToken; no method at all for an anonymous caller, whose reads start unnegotiated where the
daemon allows it), so the daemons authorize the caller and the
server's own FS or host identity, token directory and signing keys are never used on a caller's
behalf.  Each token gets its own bounded session cache, kept in a bounded table (least recently
used dropped first).  Nothing here is needed across restarts or replicas: a lost entry costs one
handshake.

It is also the one scope rule of every mouth (``cedar serve``'s APIs, the web page, ``cedar
mcp``): :meth:`PoolAccess.scope_user` says whose jobs a caller sees (its identity; everyone's
for an admin, :meth:`ServiceSettings.is_admin`; an anonymous caller only where the deployment
allows it), and :meth:`PoolAccess.scoped` / :meth:`PoolAccess.scoped_job` write it into the
constraint as parsed trees.  The user who started ``cedar mcp`` over stdio is
:meth:`Caller.local`: the process's own credentials (``local_security``).
"""

from __future__ import annotations

import contextvars
import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from cedar.auth.client_config import ClientSecurity, SecurityConfig, default_security
from cedar.auth.policy import Requirement
from cedar.auth.session import ClientSessionCache
from cedar.classad_wire.constraints import and_constraints
from cedar.classad_wire.expr import Expr
from cedar.commands import AsyncCollector, AsyncSchedd
from cedar.commands._async.ping import ping_async
from cedar.commands.base import MAX_RESULTS
from cedar.commands.ping import PingResult
from cedar.config import Config
from cedar.errors import AuthenticationError, PermissionDenied
from cedar.numbers import DaemonType
from cedar.service_core import scope
from cedar.service_core.caller import IDTOKEN, Caller
from cedar.service_core.errors import ServiceError
from cedar.service_core.limits import RateLimiter
from cedar.service_core.settings import ServiceSettings
from cedar.submit_language import SubmitSettings

#: The network address of the client a request came from, set by the mouth that received it
#: (``cedar serve``'s caller dependency): failed credentials are counted per address.
CLIENT_ADDRESS: contextvars.ContextVar[str] = contextvars.ContextVar(
    "cedar_service_client", default="-"
)
#: Tokens remembered as refused (each costs the pool nothing while remembered).
REFUSED_TOKENS = 4096

#: Sessions one token may hold (one per daemon and command family is enough).
SESSIONS_PER_CALLER = 32
#: A token directory that never holds a token: the caller's token is the only one offered.
NO_TOKEN_DIRECTORY = "/dev/null"
#: Bytes of answers kept for reuse (``CEDAR_SERVE_STATUS_CACHE``), all callers together; an
#: answer larger than a quarter of this is never kept.
KEPT_ANSWER_BYTES = 32 << 20


@dataclass(frozen=True)
class Identity:
    """What a daemon authenticated for a caller (cedar's handshake result)."""

    authenticated: bool
    user: str | None
    method: str | None
    #: Whether the daemon authorizes the caller at the level asked.
    authorized: bool = True

    @property
    def scope_user(self) -> str | None:
        """The ``user@domain`` the caller's job views are limited to (None = anonymous)."""
        return self.user if self.authenticated else None


ANONYMOUS = Identity(authenticated=False, user=None, method=None)


class _Entry:
    __slots__ = ("identity", "identity_time", "security")

    def __init__(self, security: ClientSecurity) -> None:
        self.security = security
        self.identity: Identity | None = None
        self.identity_time = 0.0


class PoolAccess:
    """Per-process access to one pool: per-caller clients, sessions and identities."""

    def __init__(
        self,
        settings: ServiceSettings,
        *,
        base: SecurityConfig | None = None,
        clock: Callable[[], float] = time.time,
        local_security: ClientSecurity | None = None,
    ) -> None:
        self.settings = settings
        #: The credentials of :meth:`Caller.local` (None: the process's default, on first use).
        self.local_security = local_security
        #: The wall clock a token's ``exp`` is compared with (a test fixes it).
        self.clock = clock
        #: Failed credentials per client address (:data:`CLIENT_ADDRESS`).
        self.failures = RateLimiter(settings.failure_rate, settings.failure_burst)
        #: Token key -> monotonic time the daemon refused it (bounded, oldest dropped).
        self._refused: OrderedDict[str, float] = OrderedDict()
        self.config = settings.config or Config()
        #: The pool's client policy (encryption, integrity, crypto); its methods and credentials
        #: are replaced per caller.
        self.base = base or SecurityConfig.from_config(self.config)
        self.submit_settings = SubmitSettings.from_config(self.config)
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._schedd_address = settings.schedd
        #: (caller key, what was asked) -> (monotonic time, answer): see :meth:`recent_answer`.
        self._answers: OrderedDict[tuple[str, Hashable], tuple[float, bytes]] = OrderedDict()
        self._answer_bytes = 0

    # ------------------------------------------------------------------ credentials

    def security_config(self, caller: Caller) -> SecurityConfig:
        """The policy for ``caller``: the pool's, with the caller's token as the only credential."""
        options: dict[str, object] = {
            "config": self.config,
            "SEC_TOKEN_DIRECTORY": NO_TOKEN_DIRECTORY,
            "SEC_PASSWORD_DIRECTORY": NO_TOKEN_DIRECTORY,
            "SEC_TOKEN_POOL_SIGNING_KEY_FILE": NO_TOKEN_DIRECTORY,
            "SCITOKENS_FILE": NO_TOKEN_DIRECTORY,
        }
        if caller.token is None:
            # Reads start unnegotiated (no handshake, no key) where the daemon allows it,
            # negotiated anonymously where it does not: anonymous either way.
            return dataclasses.replace(
                self.base,
                methods=[],
                authentication=Requirement.OPTIONAL,
                unnegotiated_reads=True,
                options=options,
            )
        if caller.kind == IDTOKEN:
            methods, options["token"] = ["TOKEN"], caller.token
        else:
            methods, options["scitoken"] = ["SCITOKENS"], caller.token
        return dataclasses.replace(
            self.base, methods=methods, authentication=Requirement.REQUIRED, options=options
        )

    def _entry(self, caller: Caller) -> _Entry:
        with self._lock:
            entry = self._entries.pop(caller.key, None)
            if entry is None and caller.is_local:
                if self.local_security is None:
                    self.local_security = default_security()
                entry = _Entry(self.local_security)
            if entry is None:
                security = ClientSecurity(
                    self.security_config(caller), ClientSessionCache(SESSIONS_PER_CALLER)
                )
                entry = _Entry(security)
            self._entries[caller.key] = entry
            while len(self._entries) > max(1, self.settings.max_callers):
                self._entries.popitem(last=False)
            return entry

    def security(self, caller: Caller) -> ClientSecurity:
        """The caller's client security (its own session cache)."""
        return self._entry(caller).security

    def forget(self, caller: Caller) -> None:
        """Drop what is kept for ``caller`` (its sessions, identity and answers)."""
        with self._lock:
            self._entries.pop(caller.key, None)
            for full_key in [k for k in self._answers if k[0] == caller.key]:
                self._drop_answer(full_key)

    def callers(self) -> int:
        """How many callers have sessions now (for metrics)."""
        return len(self._entries)

    # ------------------------------------------------------------------ clients

    def collector(self, caller: Caller) -> AsyncCollector:
        """The pool's collector, as ``caller``."""
        return AsyncCollector(
            self.settings.collector, security=self.security(caller), timeout=self.settings.timeout
        )

    async def schedd_address(self, caller: Caller) -> str:
        """The schedd's address (given, or located once through the collector)."""
        if self._schedd_address is None:
            location = await self.collector(caller).locate(
                DaemonType.SCHEDD, self.settings.schedd_name
            )
            self._schedd_address = location.address
        return self._schedd_address

    async def schedd(
        self, caller: Caller, *, max_results: int | None = None, stream: bool = False
    ) -> AsyncSchedd:
        """The pool's schedd, as ``caller`` (``stream``: with the deadline of a long listing)."""
        address = await self.schedd_address(caller)
        return AsyncSchedd(
            address,
            security=self.security(caller),
            timeout=self.settings.stream_timeout if stream else self.settings.timeout,
            settings=self.submit_settings,
            max_results=MAX_RESULTS if max_results is None else max_results,
        )

    # ------------------------------------------------------------------ answers

    def recent_answer(self, caller: Caller, key: Hashable, max_age: float) -> bytes | None:
        """An answer :meth:`keep_answer` kept for this caller and ``key`` less than
        ``max_age`` seconds ago, else None.  Kept per caller (a token's answer is never
        another caller's), so the daemon's authorization still holds, ``max_age`` late at most."""
        if max_age <= 0:
            return None
        with self._lock:
            found = self._answers.get((caller.key, key))
            if found is None:
                return None
            if time.monotonic() - found[0] >= max_age:
                self._drop_answer((caller.key, key))
                return None
            return found[1]

    def keep_answer(self, caller: Caller, key: Hashable, answer: bytes) -> None:
        """Keep ``answer`` for :meth:`recent_answer` (bounded: least recently kept dropped)."""
        if len(answer) > KEPT_ANSWER_BYTES // 4:
            return
        with self._lock:
            self._drop_answer((caller.key, key))
            self._answers[(caller.key, key)] = (time.monotonic(), answer)
            self._answer_bytes += len(answer)
            while self._answer_bytes > KEPT_ANSWER_BYTES:
                self._drop_answer(next(iter(self._answers)))

    def _drop_answer(self, full_key: tuple[str, Hashable]) -> None:
        dropped = self._answers.pop(full_key, None)
        if dropped is not None:
            self._answer_bytes -= len(dropped[1])

    # ------------------------------------------------------------------ identity

    async def ping(
        self, caller: Caller, level: str = "READ", address: str | None = None
    ) -> PingResult:
        """DC_SEC_QUERY as ``caller`` (the schedd unless ``address`` is given)."""
        target = address or await self.schedd_address(caller)
        return await ping_async(
            target, level, security=self.security(caller), timeout=self.settings.timeout
        )

    async def whoami(self, caller: Caller) -> Identity:
        """Who the schedd authenticated ``caller`` as (reused for ``whoami_ttl`` seconds).

        A token the daemon does not accept raises :class:`~cedar.errors.AuthenticationError`
        (a token for another pool, expired, revoked): it is never treated as anonymous.  A token
        past its own ``exp`` is refused here, whatever was learnt before (the daemon would
        refuse it too).  A refused token is refused again for ``refused_ttl`` seconds without
        asking the daemon, and a client address past its budget of failures
        (:data:`CLIENT_ADDRESS`) gets :class:`~cedar.service_core.RateLimited` for a token not yet
        known, so failed credentials cost the pool one handshake each at most, a few per client.
        """
        if caller.is_local:
            return await self._whoami_local(caller)
        if caller.token is None:
            return ANONYMOUS
        if caller.expires is not None and self.clock() >= caller.expires:
            raise AuthenticationError("the bearer token has expired")
        entry = self._entry(caller)
        now = time.monotonic()
        if entry.identity is not None and now - entry.identity_time < self.settings.whoami_ttl:
            return entry.identity
        self._check_not_refused(caller, now)
        client = CLIENT_ADDRESS.get()
        self.failures.check_left(client)
        try:
            result = await self.ping(caller, "READ")
            user = result.user
            if not user or user.startswith("unauthenticated@") or result.method in (None, ""):
                raise AuthenticationError(
                    "the daemon did not authenticate the token"
                    + (f": {result.error}" if result.error else "")
                )
        except AuthenticationError:
            self._refuse(caller, client, now)
            raise
        identity = Identity(
            authenticated=True, user=user, method=result.method, authorized=result.authorized
        )
        entry.identity, entry.identity_time = identity, now
        return identity

    async def _whoami_local(self, caller: Caller) -> Identity:
        """The process's own identity, as the schedd authenticates it at WRITE (READ may need
        no authentication at all); asked once.  Not authorized to write: refused."""
        entry = self._entry(caller)
        if entry.identity is None:
            result = await self.ping(caller, "WRITE")
            user = result.user or ""
            if not result.authorized or not user or user.startswith("unauthenticated@"):
                reason = result.error or "not authorized at WRITE"
                raise PermissionDenied(f"the schedd did not authenticate you ({reason})")
            entry.identity = Identity(authenticated=True, user=user, method=result.method)
        return entry.identity

    # ------------------------------------------------------------------ scope

    def check_job_reader(self, caller: Caller) -> None:
        """Refuse a caller without a token any job listing unless ``anonymous_jobs`` allows
        it: one rule for every mouth (restd lists every user's jobs to anyone where the pool
        allows anonymous READ; a deployment opts into that)."""
        if not caller.authenticated and not self.settings.anonymous_jobs:
            raise ServiceError(401, "this needs 'Authorization: Bearer <IDTOKEN or SciToken>'")

    async def scope_user(self, caller: Caller) -> str | None:
        """The ``user@domain`` whose jobs ``caller`` sees and touches; None = every job (an
        admin, or an anonymous caller where :meth:`check_job_reader` lets one list jobs)."""
        identity = await self.whoami(caller)
        if not identity.authenticated:
            self.check_job_reader(caller)
            return None
        return None if self.settings.is_admin(identity.user) else identity.user

    async def scoped(self, caller: Caller, *parts: str | Expr | None) -> Expr | None:
        """``parts`` limited to the caller's jobs, combined as parsed trees (sent as they are)."""
        return scope.scoped_constraint(and_constraints(parts), await self.scope_user(caller))

    async def scoped_job(self, caller: Caller, cluster: int, proc: int) -> Expr | None:
        """Job ``cluster.proc`` if it is in the caller's scope (:func:`scope.scoped_job`)."""
        return scope.scoped_job(cluster, proc, await self.scope_user(caller))

    def _check_not_refused(self, caller: Caller, now: float) -> None:
        with self._lock:
            refused = self._refused.get(caller.key)
            if refused is None:
                return
            if now - refused >= self.settings.refused_ttl:
                del self._refused[caller.key]
                return
        raise AuthenticationError("the daemon did not authenticate the token (refused before)")

    def _refuse(self, caller: Caller, client: str, now: float) -> None:
        self.failures.spend(client)
        with self._lock:
            self._entries.pop(caller.key, None)
            self._refused.pop(caller.key, None)
            self._refused[caller.key] = now
            while len(self._refused) > REFUSED_TOKENS:
                self._refused.popitem(last=False)
