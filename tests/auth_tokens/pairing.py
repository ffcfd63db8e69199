"""Run a client and a server protocol coroutine against each other in memory (no sockets)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Deliver, Finished, Protocol, ProtocolRunner, ReadMessage, Write


@dataclass
class Side:
    """One end: its connection, runner, pending action, and the payloads it sent."""

    conn: CedarConnection
    runner: ProtocolRunner
    action: Any = None
    sent_payloads: list[bytes] = field(default_factory=list)


def run_pair(
    client: Protocol[Any],
    server: Protocol[Any],
    client_conn: CedarConnection | None = None,
    server_conn: CedarConnection | None = None,
) -> tuple[Any, Any, list[tuple[str, bytes]]]:
    """Step both protocols until both finish; returns results and the message log (dir, payload)."""
    c = Side(client_conn or CedarConnection(), None)  # type: ignore[arg-type]
    s = Side(server_conn or CedarConnection(), None)  # type: ignore[arg-type]
    c.runner = ProtocolRunner(c.conn, client)
    s.runner = ProtocolRunner(s.conn, server)
    log: list[tuple[str, bytes]] = []
    # Capture payloads by wrapping send_message.
    for side, name in ((c, "C->S"), (s, "S->C")):
        original = side.conn.send_message

        def capture(message: Any, _orig: Any = original, _name: str = name) -> bytes:
            payload = message.getvalue() if hasattr(message, "getvalue") else bytes(message)
            log.append((_name, payload))
            return _orig(message)

        side.conn.send_message = capture  # type: ignore[method-assign]
    c.action = c.runner.start()
    s.action = s.runner.start()
    for _ in range(10_000):
        progressed = False
        for me, peer in ((c, s), (s, c)):
            if isinstance(me.action, Write):
                peer.conn.receive_data(me.action.data)
                me.action = me.runner.resume(None)
                progressed = True
            elif isinstance(me.action, ReadMessage):
                message = me.conn.next_message()
                if message is not None:
                    me.action = me.runner.resume(message)
                    progressed = True
                elif isinstance(peer.action, Finished) and not me.conn.peer_closed:
                    # The peer is done and will send nothing more: it "closes" the connection.
                    me.conn.receive_data(b"")
                    try:
                        me.conn.next_message()
                    except Exception as exc:  # noqa: BLE001
                        me.action = me.runner.throw(exc)
                    progressed = True
            elif isinstance(me.action, Deliver):
                me.action = me.runner.resume(None)
                progressed = True
        if isinstance(c.action, Finished) and isinstance(s.action, Finished):
            for side in (c, s):  # a message nobody read would desynchronise a real session
                assert side.conn.peer_closed or side.conn.next_message() is None, "unread message"
            return c.action.result, s.action.result, log
        if not progressed:
            raise AssertionError("both protocols are waiting: deadlock")
    raise AssertionError("protocols did not finish")
