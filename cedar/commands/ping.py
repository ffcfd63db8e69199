"""``DC_SEC_QUERY``: ask a daemon whether we are authorized at a level (what condor_ping does).

A new session is always negotiated (60040 is never a valid session command), with
``AuthCommand`` = the level's ``DC_NOP`` command; after an AUTHORIZED post-auth ad the daemon
sends ``{AuthorizationSucceeded = ...}`` and closes (spec 03 §6.5).

:func:`ping` / :func:`ping_async` (in :mod:`cedar.commands._async.ping` and its generated twin)
run :class:`PingRequest`; they are exported from :mod:`cedar.commands` and :mod:`cedar`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from cedar.auth.client import CommandDenied, CommandSession
from cedar.auth.client_config import ClientSecurity, default_security
from cedar.auth.permissions import NOP_FOR_LEVEL
from cedar.classad_wire import get_handshake_ad
from cedar.commands.base import DEFAULT_TIMEOUT
from cedar.errors import InvalidArgument
from cedar.stream.protocol import Protocol, Receive


@dataclass
class PingResult:
    """What one ``DC_SEC_QUERY`` told us (never the session id)."""

    level: str
    command: int
    authorized: bool
    user: str | None
    method: str | None
    crypto: str | None
    encrypted: bool
    remote_version: str | None
    error: str | None = None
    #: What our credential proved, when the method says (KERBEROS: our principal).
    principal: str | None = None
    #: How the daemon was reached: ``"direct"``, or the CCB route (broker, ccbid, reversed
    #: connection or relay); None when no connection was made.
    route: str | None = None
    #: The daemon's session is in our cache, so later commands at this level resume it
    #: (no new authentication) for ``resumable_for`` seconds.
    resumable: bool = False
    resumable_for: int | None = None


def level_command(level: str) -> int:
    """The command to test for a level name, or a plain command number."""
    name = level.strip().upper()
    if name.isdigit():
        return int(name)
    if name not in NOP_FOR_LEVEL:
        raise InvalidArgument(
            f"unknown permission level {level!r}; use one of {', '.join(NOP_FOR_LEVEL)} "
            "or a command number"
        )
    return NOP_FOR_LEVEL[name]


def _seconds(value: object) -> int | None:
    """A session duration as the daemon sent it (an int, or a string of one)."""
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None


def sec_query_body(session: CommandSession) -> Protocol[bool]:
    """Read the daemon's final ``{AuthorizationSucceeded}`` ad."""
    message = yield Receive()
    ad = get_handshake_ad(message)
    message.end_of_message()
    return ad.get("AuthorizationSucceeded") is True


class _PingOptions(TypedDict):
    security: ClientSecurity | None
    timeout: float
    raw: bool
    auth_command: int
    permission_hint: str
    route_taken: Callable[[str], None]


class PingRequest:
    """What :func:`ping` and :func:`ping_async` need around their one I/O call."""

    def __init__(
        self, level: str, security: ClientSecurity | None, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.level = level
        self.command = level_command(level)
        #: The security the call runs with (the process default when none is given), so the
        #: result can say whether the new session was kept.
        self.security = security or default_security()
        #: ``run_command*`` options: always a new, negotiated session for ``command``.
        self.options = _PingOptions(
            security=self.security,
            timeout=timeout,
            raw=False,
            auth_command=self.command,
            permission_hint=level.upper(),
            route_taken=self.taken,
        )
        #: How the daemon was reached (see :attr:`PingResult.route`).
        self.route: str | None = None

    def taken(self, route: str) -> None:
        """Hear the route of the connection (``route_taken`` of ``run_command``)."""
        self.route = route

    def body(self, session: CommandSession) -> Protocol[PingResult]:
        ok = yield from sec_query_body(session)
        return PingResult(
            level=self.level,
            command=self.command,
            authorized=ok,
            user=session.authenticated_user,
            method=session.method,
            principal=session.client_principal,
            crypto=session.crypto_method,
            encrypted=session.encrypted,
            remote_version=session.remote_version,
            route=self.route,
            resumable=self.security.sessions.holds(session.session_id),
            resumable_for=_seconds(session.policy.get("SessionDuration")),
        )

    def denied(self, exc: CommandDenied) -> PingResult:
        """A refusal is an answer, not an error."""
        return PingResult(
            level=self.level,
            command=self.command,
            authorized=False,
            user=exc.user,
            method=exc.method,
            crypto=None,
            encrypted=False,
            remote_version=None,
            error=str(exc),
            route=self.route,
        )


@dataclass(frozen=True)
class Identity:
    """Who a daemon authenticated us as (``cedar whoami``): :class:`PingResult` seen from the
    caller's side, with the daemon's address.  Never the session id nor a credential."""

    address: str
    level: str
    authorized: bool
    #: The identity the daemon mapped us to (condor_ping -verbose's "Remote Mapping").
    identity: str | None
    method: str | None
    principal: str | None
    crypto: str | None
    encrypted: bool
    session: str
    session_duration: int | None
    route: str | None
    remote_version: str | None
    error: str | None

    @classmethod
    def from_ping(cls, address: str, result: PingResult) -> Identity:
        """The identity in one ping's answer."""
        if result.resumable:
            session = "new, kept for later commands"
        else:
            session = "new, not kept" if result.method or result.authorized else "none"
        return cls(
            address=address,
            level=result.level,
            authorized=result.authorized,
            identity=result.user,
            method=result.method,
            principal=result.principal,
            crypto=result.crypto,
            encrypted=result.encrypted,
            session=session,
            session_duration=result.resumable_for if result.resumable else None,
            route=result.route,
            remote_version=result.remote_version,
            error=result.error,
        )
