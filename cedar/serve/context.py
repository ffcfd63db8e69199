"""What every route shares in one process: settings, pool access, rate limits, counters.

Held on ``app.state.services``.  Nothing here is needed by another replica or after a restart.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field

from fastapi import Request

from cedar.errors import InvalidArgument
from cedar.service import (
    Caller,
    Identity,
    PoolAccess,
    RateLimiter,
    ServiceError,
    ServiceSettings,
    check_constraint,
)

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

    @classmethod
    def create(cls, settings: ServiceSettings, access: PoolAccess | None = None) -> Services:
        return cls(
            settings,
            access or PoolAccess(settings),
            RateLimiter(settings.rate, settings.burst, max_keys=max(1000, settings.max_callers)),
        )

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

    def constraint(self, text: str | None) -> str | None:
        return check_constraint(text, self.settings.max_constraint)

    async def scope_user(self, caller: Caller) -> str | None:
        """The ``user@domain`` whose jobs ``caller`` sees under /api/v1 (refuses an anonymous
        caller unless ``CEDAR_SERVE_ANONYMOUS_JOBS`` allows it, then None = no scope)."""
        identity = await self.access.whoami(caller)
        if not identity.authenticated:
            if not self.settings.anonymous_jobs:
                raise ServiceError(401, "this needs 'Authorization: Bearer <IDTOKEN or SciToken>'")
            return None
        return identity.user

    async def identity(self, caller: Caller) -> Identity:
        return await self.access.whoami(caller)


def services(request: Request) -> Services:
    """The process's :class:`Services`."""
    found: Services = request.app.state.services
    return found


def caller_of(request: Request) -> Caller:
    """The request's caller (checked for shape), after its rate limit."""
    caller = Caller.from_authorization(request.headers.get("authorization"))
    key = caller.key
    if not caller.authenticated:  # anonymous callers are told apart by address
        key = f"anonymous:{request.client.host if request.client else '-'}"
    services(request).limiter.check(key)
    return caller
