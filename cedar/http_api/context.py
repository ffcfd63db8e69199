"""What every route shares in one process: settings, pool access, rate limits, counters.

Held on ``app.state.services``.  Nothing here is needed by another replica or after a restart.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field

from fastapi import Request

from cedar.auth.signing_key import SigningKey
from cedar.classad_wire.expr import Expr
from cedar.config import Config
from cedar.errors import ConfigError, InvalidArgument
from cedar.http_api.metrics import PoolGauges
from cedar.service_core import (
    Caller,
    Identity,
    PoolAccess,
    RateLimiter,
    ServiceSettings,
    check_constraint,
)
from cedar.service_core.access import CLIENT_ADDRESS
from cedar.service_core.metadata import TokenIssuers
from cedar.service_core.minting import TokenMinter

_ATTRIBUTE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")


@dataclass
class Services:
    """The per-process state of one ``cedar serve``."""

    settings: ServiceSettings
    access: PoolAccess
    limiter: RateLimiter
    started: float = field(default_factory=time.time)
    requests: Counter[tuple[str, int]] = field(default_factory=Counter)
    latency_sum: dict[str, float] = field(default_factory=dict)
    ads_sent: int = 0
    minter: TokenMinter | None = None
    #: The pool's gauges of ``/metrics`` (read at most once per ``metrics_interval``).
    gauges: PoolGauges = field(default_factory=PoolGauges)
    #: The pool's token issuers, named in the protected-resource metadata (RFC 9728).
    issuers: TokenIssuers = field(default_factory=lambda: TokenIssuers(None, ()))

    @classmethod
    def create(cls, settings: ServiceSettings, access: PoolAccess | None = None) -> Services:
        minter = None
        if settings.proxy_header:
            if not settings.signing_key_file or not settings.proxy_addresses:
                raise ConfigError(
                    "CEDAR_SERVE_PROXY_HEADER needs CEDAR_SERVE_SIGNING_KEY_FILE and "
                    "CEDAR_SERVE_PROXY_ADDRESSES"
                )
            config = settings.config or Config()
            issuer = config.get("TRUST_DOMAIN") or config.get("UID_DOMAIN")
            if not issuer:
                raise ConfigError("token minting needs TRUST_DOMAIN (or UID_DOMAIN)")
            key_path = settings.signing_key_file
            key = SigningKey.load(key_path, "POOL" if key_path.endswith("/POOL") else None)
            minter = TokenMinter(key, issuer, settings.minted_lifetime)
        return cls(
            settings,
            access or PoolAccess(settings),
            RateLimiter(settings.rate, settings.burst, max_keys=max(1000, settings.max_callers)),
            minter=minter,
            issuers=TokenIssuers.from_config(settings.config or Config()),
        )

    def resource(self, request: Request) -> str:
        """This API's resource identifier (RFC 9728): ``CEDAR_SERVE_URL``, else the base URL
        the request reached (scheme, host and port, no path)."""
        return self.settings.public_url or str(request.base_url).rstrip("/")

    def projection(self, text: str | None) -> list[str]:
        """``a,b,c`` as attribute names, bounded in number and checked in shape."""
        if text is None or not text.strip():
            return []
        names = [n.strip() for n in text.split(",") if n.strip()]
        if len(names) > self.settings.max_projection:
            raise InvalidArgument(
                f"projection of {len(names)} attributes; at most {self.settings.max_projection}"
            )
        for name in names:
            if not _ATTRIBUTE.match(name) or len(name) > 256:
                raise InvalidArgument(f"{name[:60]!r} is not an attribute name")
        return names

    def constraint(self, text: str | None) -> Expr | None:
        return check_constraint(text, self.settings.max_constraint)

    async def scope_user(self, caller: Caller) -> str | None:
        """The ``user@domain`` whose jobs ``caller`` sees: the service core's one scope rule
        (:meth:`PoolAccess.scope_user`; None = every job)."""
        return await self.access.scope_user(caller)

    def check_job_reader(self, caller: Caller) -> None:
        """The core's anonymous-listing rule (:meth:`PoolAccess.check_job_reader`)."""
        self.access.check_job_reader(caller)

    async def identity(self, caller: Caller) -> Identity:
        return await self.access.whoami(caller)


def services(request: Request) -> Services:
    """The process's :class:`Services`."""
    found: Services = request.app.state.services
    return found


async def services_dep(request: Request) -> Services:
    """:func:`services` as a route dependency.  A coroutine on purpose: FastAPI runs a plain
    function dependency in a worker thread, and that hand-off (a thread wake-up, then GIL
    switches while the event loop waits) cost milliseconds per request on a loaded machine."""
    return services(request)


async def caller_of(request: Request) -> Caller:
    """The request's caller (checked for shape), after its rate limit (a coroutine, for the
    reason :func:`services` is)."""
    svc: Services = request.app.state.services
    header = request.headers.get("authorization")
    caller = Caller.from_authorization(header)
    if header is None and svc.minter is not None and svc.settings.proxy_header:
        user = request.headers.get(svc.settings.proxy_header)
        peer = request.client.host if request.client else None
        if user is not None and peer in svc.settings.proxy_addresses:
            caller = svc.minter.caller(user)
    address = request.client.host if request.client else "-"
    CLIENT_ADDRESS.set(address)  # failed credentials are counted per address (whoami)
    key = caller.key
    if not caller.authenticated:  # anonymous callers are told apart by address
        key = f"anonymous:{address}"
    svc.limiter.check(key)
    return caller
