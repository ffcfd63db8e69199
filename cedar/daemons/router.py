"""A shared-port style router: several daemons behind one listening port (spec 03 §8.5).

The router reads the first message of each connection.  A ``SHARED_PORT_CONNECT`` (75) request
names the daemon; the connection is handed to it with the preamble consumed, so the daemon's
transcript digests start after it, as with the real shared-port server.  Anything else goes to
the default daemon with the bytes already read replayed into its connection state.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import trio

from cedar.auth.permissions import SHARED_PORT_CONNECT
from cedar.auth.sharedport import parse_preamble, validate_id
from cedar.daemons.daemon import Daemon, open_listeners, serve_in_thread
from cedar.errors import CedarError, ProtocolError
from cedar.stream.connection import CedarConnection
from cedar.stream.framing import HEADER_SIZE, decode_header
from cedar.stream.primitives import MessageReader

log = logging.getLogger("cedar.daemons.router")

#: A preamble is tiny; a first packet larger than this is not one and is forwarded as-is.
_MAX_PEEK = 4096


class SharedPortRouter:
    """Listens on one port and routes connections to attached daemons by shared-port id."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default_id: str | None = None,
        timeout: float = 20.0,
    ) -> None:
        self.host = host
        self.port = port
        self.default_id = default_id
        self.timeout = timeout
        self._daemons: dict[str, Daemon] = {}
        self._cancel: trio.CancelScope | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self.stats = {"routed": 0, "unknown_id": 0, "default": 0}

    def attach(self, daemon: Daemon, sock_id: str | None = None, *, default: bool = False) -> str:
        """Route ``sock_id`` (default: the daemon's name) to ``daemon``; returns the id."""
        sock_id = sock_id or daemon.name
        validate_id(sock_id)
        self._daemons[sock_id] = daemon
        if default:
            self.default_id = sock_id
        if self.port:
            daemon.set_shared_port(self.host, self.port, sock_id)
        return sock_id

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Listen and route until cancelled."""
        listeners = await open_listeners(self.host, self.port)
        self.port = listeners[0].socket.getsockname()[1]
        for sock_id, daemon in self._daemons.items():
            daemon.set_shared_port(self.host, self.port, sock_id)
        with trio.CancelScope() as scope:
            self._cancel = scope
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                await nursery.start(trio.serve_listeners, self._route, listeners)
                task_status.started(self)

    def stop(self) -> None:
        """Stop routing (callable from any thread)."""
        if self._cancel is None or self._token is None:
            return
        try:
            trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
        except RuntimeError:
            self._cancel.cancel()
        except trio.RunFinishedError:
            pass

    @contextlib.contextmanager
    def run_in_thread(self) -> Iterator[SharedPortRouter]:
        """Route in a background thread for the duration of a ``with`` block."""
        with serve_in_thread(self.serve, self.stop):
            yield self

    async def _route(self, stream: trio.SocketStream) -> None:
        try:
            with trio.fail_after(self.timeout):
                buffered = await self._read_first_packet(stream)
            target, leftover = self._choose(buffered)
        except (trio.TooSlowError, CedarError, trio.BrokenResourceError) as exc:
            log.info("shared port: dropping a connection: %s", exc)
            target, leftover = None, b""
        if target is None:
            with contextlib.suppress(Exception):
                await stream.aclose()
            return
        conn = CedarConnection(max_message_size=target.policy.max_message_size)
        if leftover:
            conn.receive_data(leftover)
        await target.handle_stream(stream, conn)

    async def _read_first_packet(self, stream: trio.SocketStream) -> bytes:
        data = bytearray()
        while len(data) < HEADER_SIZE:
            chunk = await stream.receive_some(_MAX_PEEK)
            if not chunk:
                raise ProtocolError("connection closed before the first packet")
            data += chunk
        _last, length = decode_header(bytes(data[:HEADER_SIZE]))
        while len(data) < HEADER_SIZE + min(length, _MAX_PEEK):
            chunk = await stream.receive_some(_MAX_PEEK)
            if not chunk:
                raise ProtocolError("connection closed inside the first packet")
            data += chunk
        return bytes(data)

    def _choose(self, data: bytes) -> tuple[Daemon | None, bytes]:
        last, length = decode_header(data[:HEADER_SIZE])
        body = data[HEADER_SIZE : HEADER_SIZE + length]
        if last and len(body) == length and length >= 8:
            reader = MessageReader(body)
            if reader.get_int() == SHARED_PORT_CONNECT:
                preamble = parse_preamble(reader)
                daemon = self._daemons.get(preamble.sock_id)
                if daemon is None:
                    self.stats["unknown_id"] += 1
                    log.info("shared port: no daemon with the requested id; closing")
                    return None, b""
                self.stats["routed"] += 1
                return daemon, data[HEADER_SIZE + length :]
        default = self._daemons.get(self.default_id) if self.default_id else None
        if default is None:
            log.info("shared port: a command without a preamble and no default daemon; closing")
            return None, b""
        self.stats["default"] += 1
        return default, data
