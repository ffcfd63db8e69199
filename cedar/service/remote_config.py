"""A running daemon's configuration value: DC_CONFIG_VAL (60007), READ level.

Observed against 25.13.2 (the spec names the command but not its payload): the client sends the
knob name as one string; the daemon answers with the value as a string, or the legacy NULL
string (the single byte 0xAD) when the knob is not defined, followed by more strings (the
defining line, its file and line, the default, a counter) that condor_config_val -verbose shows
and this reader ignores.  (A protocol coroutine; it belongs with the clients in
``cedar.commands`` when that package takes it.)
"""

from __future__ import annotations

from collections.abc import Callable

from cedar.auth.client import ClientSecurity, CommandSession
from cedar.commands._async.command import run_command_async
from cedar.numbers import Command
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive, Send


def config_val_body(name: str) -> Callable[[CommandSession], Protocol[str | None]]:
    """The body of DC_CONFIG_VAL for ``name``: its value, or None when it is not defined."""

    def body(session: CommandSession) -> Protocol[str | None]:
        writer = session.payload_writer()
        writer.put_string(name)
        yield Send(writer)
        reply: MessageReader = yield Receive()
        return reply.get_nullable_string()

    return body


async def remote_config_value(
    address: str, name: str, *, security: ClientSecurity, timeout: float
) -> str | None:
    """``name``'s value in the daemon at ``address`` (None: not defined there)."""
    value: str | None = await run_command_async(
        address, Command.DC_CONFIG_VAL, config_val_body(name), security=security, timeout=timeout
    )
    return value
