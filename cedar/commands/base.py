"""Running one client command end to end: connect, shared-port preamble, security, body.

``body(session)`` is a protocol coroutine that writes the payload (``session.payload_writer()``)
and reads the reply; it is the only part a specific command supplies.  A cached session the
server has forgotten (``SID_NOT_FOUND``) is retried once on a new connection with a full
handshake -- the reference library fails that command instead (spec 03 §6.3).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

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
    except ConnectionClosed:
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


def _protocol(
    conn: CedarConnection,
    target: Sinful,
    command: int,
    body: Body[T],
    security: ClientSecurity | None,
    raw: bool | None,
    timeout: float,
    endpoints: tuple[tuple[str, int] | None, tuple[str, int] | None],
    options: dict[str, Any],
) -> Protocol[T]:
    """:func:`command_protocol` with the drivers' arguments (socket endpoints, timeout)."""
    return command_protocol(
        conn,
        target,
        command,
        body,
        security=security,
        raw=raw,
        deadline=int(timeout),
        local_address=endpoints[0],
        peer_address=endpoints[1],
        **options,
    )


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
    options = {"auth_command": auth_command, "permission_hint": permission_hint}
    target = resolve_address(address)
    for attempt in (1, 2):
        host, port = target.endpoint
        with SyncChannel.connect(host, port, timeout=timeout) as channel:
            protocol = _protocol(
                channel.conn,
                target,
                command,
                body,
                security,
                raw,
                timeout,
                _endpoints(channel.sock),
                options,
            )
            try:
                return channel.run(protocol)
            except SessionRejected:
                if attempt == 2:
                    raise
                log.info("the server forgot our session; retrying with a new one")
    raise AssertionError("unreachable")


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
    options = {"auth_command": auth_command, "permission_hint": permission_hint}
    target = resolve_address(address)
    for attempt in (1, 2):
        emitted = False
        host, port = target.endpoint
        with SyncChannel.connect(host, port, timeout=timeout) as channel:
            protocol = _protocol(
                channel.conn,
                target,
                command,
                body,
                security,
                raw,
                timeout,
                _endpoints(channel.sock),
                options,
            )
            try:
                for value in channel.iterate(protocol):
                    emitted = True
                    yield value
                return
            except SessionRejected:
                if attempt == 2 or emitted:
                    raise
                log.info("the server forgot our session; retrying with a new one")


async def _open(target: Sinful, timeout: float) -> TrioChannel:
    host, port = target.endpoint
    return await TrioChannel.connect(host, port, timeout=timeout)


def _trio_endpoints(channel: TrioChannel) -> tuple[tuple[str, int] | None, tuple[str, int] | None]:
    return _endpoints(getattr(channel.stream, "socket", None))


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
    options = {"auth_command": auth_command, "permission_hint": permission_hint}
    target = resolve_address(address)
    for attempt in (1, 2):
        async with await _open(target, timeout) as channel:
            protocol = _protocol(
                channel.conn,
                target,
                command,
                body,
                security,
                raw,
                timeout,
                _trio_endpoints(channel),
                options,
            )
            try:
                return await channel.run(protocol)
            except SessionRejected:
                if attempt == 2:
                    raise
                log.info("the server forgot our session; retrying with a new one")
    raise AssertionError("unreachable")


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
    options = {"auth_command": auth_command, "permission_hint": permission_hint}
    target = resolve_address(address)
    for attempt in (1, 2):
        emitted = False
        async with await _open(target, timeout) as channel:
            protocol = _protocol(
                channel.conn,
                target,
                command,
                body,
                security,
                raw,
                timeout,
                _trio_endpoints(channel),
                options,
            )
            try:
                async for value in channel.iterate(protocol):
                    emitted = True
                    yield value
                return
            except SessionRejected:
                if attempt == 2 or emitted:
                    raise
                log.info("the server forgot our session; retrying with a new one")


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
