"""A hand-made TCP peer on the loopback for tests that need a daemon which misbehaves on
purpose (hangs up after the first bytes, drips, never answers): the listener, its accept loop
and their clean stop written once (``from tests.loopback import serving``); and a port held
for a server that must know its port before it binds (``held_port``)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

#: ``handle(connection, stop)``: serve one client; return when done or once ``stop`` is set.
Handler = Callable[[socket.socket, threading.Event], None]

#: How long the accept loop waits before looking at ``stop`` again.
POLL = 0.2


@contextlib.contextmanager
def serving(handle: Handler, join_timeout: float = 10) -> Iterator[str]:
    """Listen on ``127.0.0.1`` (a free port) and yield its ``host:port``; each client is handed
    to ``handle`` in its own thread and its connection closed after.  On leaving the block the
    listener closes, ``stop`` is set and every thread is joined (so what a handler recorded is
    complete when the block ends)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(POLL)
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def one(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            handle(conn, stop)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:  # the poll's timeout, or the listener closed
                continue
            conn.settimeout(None)  # not the listener's poll timeout: the handler decides
            thread = threading.Thread(target=one, args=(conn,), daemon=True)
            threads.append(thread)
            thread.start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        acceptor.join(join_timeout)
        listener.close()
        for thread in threads:
            thread.join(join_timeout)


@contextlib.contextmanager
def held_port() -> Iterator[int]:
    """A loopback port kept from everyone else until the block ends, for a server that must be
    told its port before it binds (it names itself in what it serves, as the MCP metadata).

    Probing for a free port and binding it later races with every other test run on the
    machine.  Here the port stays bound (``SO_REUSEADDR``, not listening) while the block runs:
    no ``bind(0)`` or outgoing connection is given it, and a server that binds with
    ``SO_REUSEADDR`` (Hypercorn does) can still take it on Linux.  A server that needs no
    port in advance should bind port 0 and report the port it got instead.
    """
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", 0))
        yield int(holder.getsockname()[1])


def first_bytes(received: list[bytes], timeout: float = 30) -> Handler:
    """A handler that records the first bytes a client sends, then hangs up (the client has
    then sent its first message and fails at once: connection closed)."""

    def handle(conn: socket.socket, stop: threading.Event) -> None:
        conn.settimeout(timeout)
        received.append(conn.recv(65536))

    return handle


def silent(connected: threading.Event | None = None) -> Handler:
    """A handler that accepts and never answers (a hung daemon) until the block ends; it sets
    ``connected`` once a client is in."""

    def handle(conn: socket.socket, stop: threading.Event) -> None:
        if connected is not None:
            connected.set()
        stop.wait()

    return handle
