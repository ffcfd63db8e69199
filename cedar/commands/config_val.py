"""A running daemon's configuration value: DC_CONFIG_VAL (60007), READ level.

Observed against 25.13.2 (the spec names the command but not its payload): the client sends the
knob name as one string; the daemon answers with the value as a string, or the legacy NULL
string (the single byte 0xAD) when the knob is not defined, followed by more strings (the
defining line, its file and line, the default, a counter) that ``condor_config_val -verbose``
shows and this reader ignores.  The protocol coroutine is here; the clients are
:func:`cedar.commands._async.config_val.remote_config_value_async` and its sync twin.
"""

from __future__ import annotations

from collections.abc import Callable

from cedar.auth.client import CommandSession
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
