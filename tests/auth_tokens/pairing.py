"""Run a client and a server protocol against each other in memory (no sockets)."""

from __future__ import annotations

from typing import Any

from cedar.errors import ConnectionClosed
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import MemoryPair
from cedar.stream.protocol import Protocol

_DIRECTION = {"c2s": "C->S", "s2c": "S->C"}


def _holds_unread(conn: CedarConnection) -> bool:
    """True if bytes the protocol never read are left (the peer has closed by now)."""
    try:
        return conn.next_message() is not None
    except ConnectionClosed as exc:
        return exc.mid_message


def run_pair(
    client: Protocol[Any],
    server: Protocol[Any],
    client_conn: CedarConnection | None = None,
    server_conn: CedarConnection | None = None,
) -> tuple[Any, Any, list[tuple[str, bytes]]]:
    """Both results and the message log ``(direction, payload)``; no message may stay unread."""
    pair = MemoryPair(client_conn, server_conn)
    client_result, server_result = pair.run(client, server)
    for conn in (pair.client_conn, pair.server_conn):  # an unread message would desynchronise
        assert not _holds_unread(conn), "unread message"
    return client_result, server_result, [(_DIRECTION[d], p) for d, p in pair.log]
