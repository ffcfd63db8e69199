"""``ping_async``: whether we are authorized at a level on a daemon (DC_SEC_QUERY)."""

from __future__ import annotations

from cedar.auth.client import CommandDenied
from cedar.auth.client_config import ClientSecurity, SecurityConfig, client_security
from cedar.auth.permissions import DC_SEC_QUERY
from cedar.auth.sinful import Sinful
from cedar.commands._async.command import run_command_async
from cedar.commands.base import DEFAULT_TIMEOUT
from cedar.commands.ping import Identity, PingRequest, PingResult


async def ping_async(
    address: str | Sinful,
    level: str = "READ",
    *,
    security: ClientSecurity | SecurityConfig | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> PingResult:
    """Whether we are authorized at ``level`` on the daemon at ``address``.

    A refusal is an answer (``authorized=False``), not an error; failing to reach the daemon
    raises.  The whole call is bounded by ``timeout`` seconds.
    """
    request = PingRequest(level, client_security(security), timeout)
    try:
        return await run_command_async(address, DC_SEC_QUERY, request.body, **request.options)
    except CommandDenied as exc:
        return request.denied(exc)


async def whoami_async(
    address: str | Sinful,
    level: str = "WRITE",
    *,
    security: ClientSecurity | SecurityConfig | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Identity:
    """Who the daemon at ``address`` authenticates us as at ``level`` (a ping, read for its
    identity: method, mapped name, crypto, the session, the route)."""
    result = await ping_async(address, level, security=security, timeout=timeout)
    return Identity.from_ping(str(address), result)
