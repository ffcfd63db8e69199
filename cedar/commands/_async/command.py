"""Running one command on a fresh connection: connect, :func:`command_protocol`, one retry.

Both drivers bound the whole call by one deadline (``timeout``) and the results a call accepts
(``max_results``); the policy is :class:`~cedar.commands.base.CommandAttempts`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from cedar.auth.client import CommandSession, SessionRejected
from cedar.auth.client_config import ClientSecurity, SecurityConfig, client_security
from cedar.auth.sinful import Sinful
from cedar.classad_wire import ClassAd
from cedar.commands._async.ccb import open_attempt_async
from cedar.commands.base import (
    DEFAULT_TIMEOUT,
    HELD_CONNECTION_MAX,
    MAX_RESULTS,
    AsyncHook,
    Body,
    CommandAttempts,
)
from cedar.stream.protocol import Protocol

T = TypeVar("T")


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
    pipeline_resume: bool = False,
    route_taken: Callable[[str], None] | None = None,
) -> T:
    """Run one command and return what ``body`` returns, all within ``timeout`` seconds.

    ``pipeline_resume``: see :func:`~cedar.commands.base.command_protocol` (queries only).
    ``route_taken`` hears how the daemon was reached (direct, or the CCB route)."""
    attempts = CommandAttempts(
        address,
        command,
        body,
        security=security,
        timeout=timeout,
        raw=raw,
        auth_command=auth_command,
        permission_hint=permission_hint,
        pipeline_resume=pipeline_resume,
    )
    with attempts.observed():
        while True:
            async with await open_attempt_async(attempts, route_taken) as channel:
                try:
                    result: T = await channel.run(attempts.protocol(channel))
                    return result
                except SessionRejected as exc:
                    if not attempts.retry(exc):
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
    max_results: int = MAX_RESULTS,
    pipeline_resume: bool = False,
    connected: AsyncHook | None = None,
) -> AsyncIterator[Any]:
    """Run one command, yielding each value ``body`` emits as it arrives (at most
    ``max_results``), all within ``timeout`` seconds.

    ``connected`` is awaited once the connection is open, before anything is sent: a fan-out
    holds its connections open while another query makes the security session.  A connection
    held longer than :data:`~cedar.commands.base.HELD_CONNECTION_MAX` is replaced by a new one
    (the peer may have given up on it)."""
    attempts = CommandAttempts(
        address,
        command,
        body,
        security=security,
        timeout=timeout,
        raw=raw,
        auth_command=auth_command,
        permission_hint=permission_hint,
        max_results=max_results,
        pipeline_resume=pipeline_resume,
    )
    with attempts.observed():
        while True:
            async with await open_attempt_async(attempts) as channel:
                if connected is not None:
                    held = time.monotonic()
                    await connected()
                    connected = None
                    if time.monotonic() - held > HELD_CONNECTION_MAX:
                        continue  # reconnect
                try:
                    async for value in channel.iterate(attempts.protocol(channel)):
                        attempts.results += 1
                        if attempts.results > attempts.max_results:
                            raise attempts.too_many_results()
                        yield value
                    return
                except SessionRejected as exc:
                    if not attempts.retry(exc):
                        raise


class AsyncDaemonClient:
    """What the clients of one daemon share: where it is (given, or looked up once by
    :meth:`locate`), how they authenticate, and the bounds of each call (``timeout`` for a
    call as a whole, ``max_results`` for the ads one call accepts)."""

    def __init__(
        self,
        address: str | None,
        *,
        name: str | None,
        pool: str | None,
        security: ClientSecurity | SecurityConfig | None,
        timeout: float | None,
        max_results: int,
    ) -> None:
        self._address = address
        self._name = name
        self._pool = pool
        self.security = client_security(security)
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.max_results = max_results

    @property
    def address(self) -> str | None:
        """The daemon's sinful string, once known (given, or after the first call)."""
        return self._address

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._address or self._name or 'local'}>"

    async def locate(self) -> str:
        """The daemon's address, looking it up (once) when it was not given."""
        raise NotImplementedError

    async def _iterate(
        self, command: int, body: Callable[[CommandSession], Protocol[Any]]
    ) -> AsyncIterator[ClassAd]:
        """A read-only command (query, history): a resumed session is pipelined."""
        address = await self.locate()
        async for ad in iterate_command_async(
            address,
            command,
            body,
            security=self.security,
            timeout=self.timeout,
            max_results=self.max_results,
            pipeline_resume=True,
        ):
            yield ad
