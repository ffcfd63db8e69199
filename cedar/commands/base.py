"""Running one client command end to end: connect, shared-port preamble, security, body.

``body(session)`` is a protocol coroutine that writes the payload (``session.payload_writer()``)
and reads the reply; it is the only part a specific command supplies.  A cached session the
server has forgotten (``SID_NOT_FOUND``) is retried once on a new connection with a full
handshake -- the reference library fails that command instead (spec 03 §6.3).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar

from cedar.auth.client import (
    ClientSecurity,
    CommandDenied,
    CommandSession,
    SessionRejected,
    start_command,
)
from cedar.auth.sharedport import send_preamble
from cedar.auth.sinful import Sinful
from cedar.errors import CedarConnectionError, ConnectionClosed
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import SyncChannel, TrioChannel
from cedar.stream.protocol import Protocol

T = TypeVar("T")
Body = Callable[[CommandSession], Protocol[T]]

log = logging.getLogger("cedar.commands")

DEFAULT_TIMEOUT = 20.0


def resolve_address(address: str | Sinful) -> Sinful:
    """The sinful to connect to (``addrs`` choice applied); CCB-only targets are refused."""
    sinful = address if isinstance(address, Sinful) else Sinful.parse(address)
    target = sinful.connect_target()
    if target.ccb_contacts:
        raise CedarConnectionError(
            f"{sinful} is reachable only through CCB, which cedar does not implement"
        )
    if target.port is None:
        raise CedarConnectionError(f"address {sinful} has no port")
    return target


def command_protocol(
    conn: CedarConnection,
    target: Sinful,
    command: int,
    body: Body[T],
    *,
    security: ClientSecurity | None = None,
    raw: bool | None = None,
    deadline: int = int(DEFAULT_TIMEOUT),
    local_address: tuple[str, int] | None = None,
    peer_address: tuple[str, int] | None = None,
    auth_command: int | None = None,
    permission_hint: str | None = None,
) -> Protocol[T]:
    """One whole client command on a fresh connection: preamble, ``start_command``, ``body``.

    Public so that every driver (sockets here, recorded traffic in :mod:`cedar.capture.replay`)
    runs the same sequence.  ``deadline`` is the seconds the shared-port preamble announces.
    """
    sock_id = target.shared_port_id
    if sock_id:
        subsystem = security.config.subsystem if security is not None else "TOOL"
        yield from send_preamble(conn, sock_id, client_name=subsystem, deadline=deadline)
    try:
        session = yield from start_command(
            conn,
            command,
            security=security,
            target=str(target),
            raw=raw,
            local_address=local_address,
            peer_address=peer_address,
            auth_command=auth_command,
            permission_hint=permission_hint,
        )
    except CommandDenied as exc:
        if sock_id and "Connection closed" in str(exc):
            raise CommandDenied(
                f"{exc} (Or the shared-port id {sock_id!r} is unknown at {target.host}:"
                f"{target.port}.)",
                command=exc.command,
                user=exc.user,
                method=exc.method,
            ) from None
        raise
    if not (session.resumed or session.raw):
        return (yield from body(session))
    try:
        return (yield from body(session))
    except ConnectionClosed as exc:
        if exc.mid_message:  # cut inside a message: a broken reply, not a refusal
            raise
        # Refusals after a raw start or a resumption are silent closes (spec 03 §6.3, §7.3).
        how = "resuming our session" if session.resumed else "the raw (unauthenticated) start"
        who = session.authenticated_user or "an unauthenticated user"
        raise CommandDenied(
            f"the server closed the connection after {how} of command {command}: the command "
            f"is unknown or was denied for {who}",
            command=command,
            user=session.authenticated_user,
            method=session.method,
        ) from None


class _CommandAttempts(Generic[T]):
    """What every driver of one command shares: the target, the protocol, the one retry.

    A cached session the server has forgotten (:class:`SessionRejected`) is retried once on a
    new connection with a full handshake, unless results were already handed out.
    """

    def __init__(
        self,
        address: str | Sinful,
        command: int,
        body: Body[T],
        security: ClientSecurity | None,
        timeout: float,
        raw: bool | None,
        auth_command: int | None,
        permission_hint: str | None,
    ) -> None:
        self.target = resolve_address(address)
        self.host, self.port = self.target.endpoint
        self.timeout = timeout
        self._command = command
        self._body = body
        self._security = security
        self._raw = raw
        self._auth_command = auth_command
        self._permission_hint = permission_hint
        self._attempt = 0

    def protocol(self, channel: SyncChannel | TrioChannel) -> Protocol[T]:
        """:func:`command_protocol` on a new connection (its socket gives the endpoints)."""
        self._attempt += 1
        if isinstance(channel, SyncChannel):
            sock: Any = channel.sock
        else:
            sock = getattr(channel.stream, "socket", None)
        local_address, peer_address = _endpoints(sock)
        return command_protocol(
            channel.conn,
            self.target,
            self._command,
            self._body,
            security=self._security,
            raw=self._raw,
            deadline=int(self.timeout),
            local_address=local_address,
            peer_address=peer_address,
            auth_command=self._auth_command,
            permission_hint=self._permission_hint,
        )

    def retry(self, *, emitted: bool = False) -> bool:
        """After :class:`SessionRejected`: whether to try again on a new connection."""
        if self._attempt >= 2 or emitted:
            return False
        log.info("the server forgot our session; retrying with a new one")
        return True


def _endpoints(sock: Any) -> tuple[tuple[str, int] | None, tuple[str, int] | None]:
    try:
        local, peer = sock.getsockname(), sock.getpeername()
        return (str(local[0]), int(local[1])), (str(peer[0]), int(peer[1]))
    except (OSError, AttributeError):
        return None, None


def run_command(
    address: str | Sinful,
    command: int,
    body: Body[T],
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    raw: bool | None = None,
    auth_command: int | None = None,
    permission_hint: str | None = None,
) -> T:
    """Run one command synchronously and return what ``body`` returns."""
    attempts = _CommandAttempts(
        address, command, body, security, timeout, raw, auth_command, permission_hint
    )
    while True:
        with SyncChannel.connect(attempts.host, attempts.port, timeout=timeout) as channel:
            try:
                return channel.run(attempts.protocol(channel))
            except SessionRejected:
                if not attempts.retry():
                    raise


def iterate_command(
    address: str | Sinful,
    command: int,
    body: Body[Any],
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    raw: bool | None = None,
    auth_command: int | None = None,
    permission_hint: str | None = None,
) -> Iterator[Any]:
    """Run one command synchronously, yielding each value ``body`` emits as it arrives."""
    attempts = _CommandAttempts(
        address, command, body, security, timeout, raw, auth_command, permission_hint
    )
    while True:
        emitted = False
        with SyncChannel.connect(attempts.host, attempts.port, timeout=timeout) as channel:
            try:
                for value in channel.iterate(attempts.protocol(channel)):
                    emitted = True
                    yield value
                return
            except SessionRejected:
                if not attempts.retry(emitted=emitted):
                    raise


async def run_command_async(
    address: str | Sinful,
    command: int,
    body: Body[T],
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    raw: bool | None = None,
    auth_command: int | None = None,
    permission_hint: str | None = None,
) -> T:
    """Run one command on Trio and return what ``body`` returns."""
    attempts = _CommandAttempts(
        address, command, body, security, timeout, raw, auth_command, permission_hint
    )
    while True:
        async with await TrioChannel.connect(
            attempts.host, attempts.port, timeout=timeout
        ) as channel:
            try:
                return await channel.run(attempts.protocol(channel))
            except SessionRejected:
                if not attempts.retry():
                    raise


async def iterate_command_async(
    address: str | Sinful,
    command: int,
    body: Body[Any],
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    raw: bool | None = None,
    auth_command: int | None = None,
    permission_hint: str | None = None,
) -> AsyncIterator[Any]:
    """Run one command on Trio, yielding each value ``body`` emits as it arrives."""
    attempts = _CommandAttempts(
        address, command, body, security, timeout, raw, auth_command, permission_hint
    )
    while True:
        emitted = False
        async with await TrioChannel.connect(
            attempts.host, attempts.port, timeout=timeout
        ) as channel:
            try:
                async for value in channel.iterate(attempts.protocol(channel)):
                    emitted = True
                    yield value
                return
            except SessionRejected:
                if not attempts.retry(emitted=emitted):
                    raise


__all__ = [
    "DEFAULT_TIMEOUT",
    "Body",
    "command_protocol",
    "resolve_address",
    "iterate_command",
    "iterate_command_async",
    "run_command",
    "run_command_async",
]
