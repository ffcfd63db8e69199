"""Answering on the pool's own port: condor_shared_port's HTTP forwarding
(``SHARED_PORT_HTTP_FORWARDING_ID``, HTCondor >= 25.7.2).

What the shared port does, observed with 25.13.2 (the spec is silent): it peeks at a new
connection, and when it looks like HTTP it connects to the Unix socket named by the forwarding id
-- the abstract socket ``<cookie>/<id>``, else the file ``$(LOCK)/daemon_sock/<id>`` (with
``DAEMON_SOCKET_DIR = auto``) -- sends one CEDAR message holding the int 76
(SHARED_PORT_PASS_SOCK), then one byte with the accepted socket attached (SCM_RIGHTS).  The
passed socket still holds the whole request (nothing was consumed).

cedar serve listens on the file socket and relays each passed connection to its own HTTP
listener on loopback (a byte pump per connection; Hypercorn has no public way to adopt an
accepted socket).
"""

from __future__ import annotations

import array
import contextlib
import logging
import os
import socket

import trio

from cedar.config import Config
from cedar.errors import ConfigError, ProtocolError
from cedar.numbers import Command
from cedar.stream.connection import CedarConnection

log = logging.getLogger("cedar.http_api")

#: Bytes read while waiting for the pass-socket message and its descriptor.
_MAX_PREAMBLE = 4096


def forwarding_socket_path(config: Config, sock_id: str) -> str:
    """Where the shared port looks for the forwarding target's file socket."""
    if not sock_id or "/" in sock_id or sock_id in (".", ".."):
        raise ConfigError(f"invalid shared-port id {sock_id!r}")
    directory = config.get("DAEMON_SOCKET_DIR")
    if not directory or directory.strip().lower() == "auto":
        lock = config.get("LOCK")
        if not lock:
            raise ConfigError("LOCK is not set: cannot find the shared port's socket directory")
        directory = os.path.join(lock, "daemon_sock")
    return os.path.join(directory, sock_id)


async def receive_passed_socket(conn: trio.socket.SocketType) -> socket.socket:
    """Read SHARED_PORT_PASS_SOCK and the descriptor that comes with it."""
    parser = CedarConnection()
    fds = array.array("i")
    command: int | None = None
    received = 0
    while command is None or not fds:
        data, ancillary, _, _ = await conn.recvmsg(512, socket.CMSG_SPACE(4 * fds.itemsize))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        if not data and not ancillary:
            raise ProtocolError("the shared port closed before passing a socket")
        received += len(data)
        if received > _MAX_PREAMBLE:
            raise ProtocolError("too much data before the passed socket")
        if command is None:
            parser.receive_data(data)
            message = parser.next_message()
            if message is not None:
                command = message.get_int()
                if command != Command.SHARED_PORT_PASS_SOCK:
                    raise ProtocolError(f"expected SHARED_PORT_PASS_SOCK, got command {command}")
    for extra in fds[1:]:
        os.close(extra)
    return socket.socket(fileno=fds[0])


async def _pump(source: trio.abc.Stream, sink: trio.abc.Stream) -> None:
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        while data := await source.receive_some(1 << 16):
            await sink.send_all(data)
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        if isinstance(sink, trio.SocketStream):
            await sink.send_eof()


async def _relay(conn: trio.socket.SocketType, port: int) -> None:
    with conn:
        try:
            with trio.fail_after(10):
                passed = await receive_passed_socket(conn)
        except (ProtocolError, OSError, trio.TooSlowError) as exc:
            log.warning("shared-port forwarding: %s", exc)
            return
    client = trio.SocketStream(trio.socket.from_stdlib_socket(passed))
    try:
        server = await trio.open_tcp_stream("127.0.0.1", port)
    except OSError as exc:
        log.warning("shared-port forwarding: cannot reach the HTTP listener: %s", exc)
        await client.aclose()
        return
    async with client, server, trio.open_nursery() as nursery:
        nursery.start_soon(_pump, client, server)
        nursery.start_soon(_pump, server, client)


async def serve_forwarding(
    path: str, port: int, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED
) -> None:
    """Accept the shared port's forwarded connections on ``path`` until cancelled."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with listener:
        await listener.bind(path)
        os.chmod(path, 0o600)  # only the shared port (root or condor) and us
        listener.listen(64)
        task_status.started(path)
        try:
            async with trio.open_nursery() as nursery:
                while True:
                    conn, _ = await listener.accept()
                    nursery.start_soon(_relay, conn, port)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)
