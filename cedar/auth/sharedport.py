"""The shared-port preamble, command 75 (spec 03 §8.5), both roles."""

from __future__ import annotations

import functools

from cedar.auth.permissions import SHARED_PORT_CONNECT
from cedar.errors import InvalidArgument, ProtocolError
from cedar.record import Record
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Protocol, Send

MAX_ID_LENGTH = 1023
MAX_EXTRA_ARGS = 100


def send_preamble(
    conn: CedarConnection, sock_id: str, *, client_name: str = "TOOL", deadline: int = -1
) -> Protocol[None]:
    """Ask the shared-port server to hand this connection to daemon ``sock_id``.

    The server never answers, so the request goes out in one write with the message that
    follows it.  Afterwards the transcript digests restart (except for the id ``self``, which
    addresses the shared-port server itself).
    """
    validate_id(sock_id)
    yield Send(_preamble(sock_id, client_name, deadline, conn.encrypted), flush=False)
    if sock_id != "self":
        conn.reset_transcript()


@functools.lru_cache(maxsize=64)
def _preamble(sock_id: str, client_name: str, deadline: int, crypto: bool) -> bytes:
    """The request's payload (the same for every connection a client makes to one daemon)."""
    writer = MessageWriter(crypto=crypto).put_int(SHARED_PORT_CONNECT).put_string(sock_id)
    return writer.put_string(client_name).put_int(deadline).put_int(0).getvalue()


def validate_id(sock_id: str) -> None:
    """Ids name sockets in a directory: bounded length, no path characters."""
    if not sock_id or len(sock_id) > MAX_ID_LENGTH or "/" in sock_id or sock_id in (".", ".."):
        raise InvalidArgument(f"invalid shared-port id {sock_id!r}")


class Preamble(Record, frozen=True):
    """A parsed shared-port request."""

    __slots__ = ("sock_id", "client_name", "deadline")
    sock_id: str
    client_name: str
    deadline: int

    def __init__(self, sock_id: str, client_name: str, deadline: int) -> None:
        self._set(sock_id, client_name, deadline)


def parse_preamble(message: MessageReader) -> Preamble:
    """The rest of a command-75 message (after the int); raises :class:`ProtocolError`."""
    sock_id = message.get_string()
    client_name = message.get_string()
    deadline = message.get_int()
    extra = message.get_int()
    if not 0 <= extra <= MAX_EXTRA_ARGS:
        raise ProtocolError(f"shared-port request with {extra} extra arguments")
    for _ in range(extra):
        message.get_string()
    message.end_of_message()
    try:
        validate_id(sock_id)
    except ValueError as exc:
        raise ProtocolError(str(exc)) from None
    return Preamble(sock_id, client_name, deadline)
