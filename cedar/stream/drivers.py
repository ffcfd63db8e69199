"""Drivers that run protocol coroutines over a real transport.

* :class:`SyncChannel` -- a blocking socket (the sync API and the CLIs);
* :class:`TrioChannel` -- a Trio stream (the async API and the servers);
* :class:`ReplayChannel` -- recorded bytes (tests and captures).

Every network wait is bounded by ``timeout`` seconds (default 20, applied per read or write as the
reference does) and, when a :class:`Deadline` is given, by the time left to the whole call (the
clients' per-call deadline: connect + handshake + whole reply).  Closed connections, resets and
timeouts become :mod:`cedar.errors` exceptions, thrown into the protocol first so it can explain
them.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import ipaddress
import select
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from cedar.errors import CedarConnectionError, CedarError, CedarTimeout, ConnectionClosed
from cedar.stream.connection import CedarConnection
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import (
    Deliver,
    Finished,
    Protocol,
    ProtocolRunner,
    ReadMessage,
    ReadRaw,
    Write,
)

if TYPE_CHECKING:
    import trio  # imported where used: the sync API never needs Trio (start-up time)

T = TypeVar("T")

#: The drivers' own default for one connect or wait when they are used directly; the clients
#: pass their per-call deadline instead (``cedar.commands.DEFAULT_TIMEOUT``).
WAIT_TIMEOUT = 20.0
_READ_SIZE = 65536
#: Least plaintext of a streamed message handed out early (see SyncChannel.read_message).
_EARLY_PIECE = 16 << 10
_RESET_ERRNOS = {errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED, errno.ENOTCONN}


def _readable(sock: socket.socket) -> bool:
    """Whether a read would return at once (data, EOF or an error is waiting)."""
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True  # let the read itself report it


def _describe_os_error(exc: OSError, peer: str) -> CedarConnectionError:
    if exc.errno in _RESET_ERRNOS:
        return ConnectionClosed(f"connection to {peer} was closed by the peer ({exc.strerror})")
    return CedarConnectionError(f"network error talking to {peer}: {exc.strerror or exc}")


def _connect_timed_out(peer: str, timeout: float) -> CedarTimeout:
    return CedarTimeout(f"timed out after {timeout} s connecting to {peer}")


def _deadline_passed(deadline: Deadline, doing: str, peer: str) -> CedarTimeout:
    return CedarTimeout(
        f"the call did not finish within its {deadline.seconds} s deadline ({doing} {peer}); "
        "the peer is slow or stalled (raise timeout= if it is just slow)"
    )


def _connect_limit(timeout: float, deadline: Deadline | None, peer: str) -> float:
    if deadline is None:
        return timeout
    left = deadline.remaining()
    if left <= 0:
        raise _deadline_passed(deadline, "connecting to", peer)
    return min(timeout, left)


def _connect_failed(peer: str, exc: OSError) -> CedarConnectionError:
    return CedarConnectionError(
        f"cannot connect to {peer}: {exc.strerror or exc}; is the daemon running there?"
    )


@functools.lru_cache(maxsize=256)
def _ip_family(host: str) -> int | None:
    """``AF_INET``/``AF_INET6`` for an IP address literal, ``None`` for a name to resolve."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        return None  # let the resolver fill in the scope
    return socket.AF_INET if address.version == 4 else socket.AF_INET6


def _connect_socket(host: str, port: int, timeout: float) -> socket.socket:
    """A connected blocking socket; an IP literal skips ``getaddrinfo``."""
    family = _ip_family(host)
    if family is None:
        return socket.create_connection((host, port), timeout=timeout)
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


async def _open_trio_stream(family: int, host: str, port: int) -> trio.SocketStream:
    import trio

    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    try:
        await sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    return trio.SocketStream(sock)


def _wait_scope(seconds: float) -> trio.CancelScope:
    """A scope ending ``seconds`` from now (``trio.fail_after`` without its context-manager
    wrapper: this runs for every read and write)."""
    import trio

    return trio.CancelScope(deadline=trio.current_time() + seconds)


class Deadline:
    """The moment a whole call must be over, however the peer paces its bytes.

    A per-read timeout alone lets a peer that drips one byte per read keep a call alive
    forever; every wait of a channel given a deadline is cut to the time left.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left (negative once past)."""
        return self._at - time.monotonic()

    def __repr__(self) -> str:
        return f"<Deadline {self.seconds} s, {max(self.remaining(), 0.0):.1f} s left>"


class _Transport:
    """What the socket and the Trio channel share: their state and how failures are worded.

    Both translate their transport's errors into :mod:`cedar.errors` with the same texts, so a
    caller sees the same message whichever API it uses.
    """

    def __init__(
        self, conn: CedarConnection | None, timeout: float, peer: str, deadline: Deadline | None
    ) -> None:
        self.conn = conn or CedarConnection()
        self.timeout = timeout
        self.peer = peer
        self.deadline = deadline

    def _wait_limit(self, doing: str) -> float:
        """How long the next wait may take: the per-wait timeout or the time left to the call."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline.remaining()
        if left <= 0:
            raise self._timed_out(doing)
        return min(self.timeout, left)

    def _timed_out(self, doing: str) -> CedarTimeout:
        if self.deadline is not None and self.deadline.remaining() < 0.05:  # timers round
            return _deadline_passed(self.deadline, doing, self.peer)
        return CedarTimeout(f"timed out after {self.timeout} s {doing} {self.peer}")

    def _already_closed(self) -> ConnectionClosed:
        return ConnectionClosed(f"connection to {self.peer} is already closed")


#: Held-back messages (``Send(flush=False)``) are written once they reach this many bytes.
_WRITE_BATCH = 256 << 10


class _PendingWrites:
    """Messages sent with ``Send(flush=False)``, written in one go with the next one to flush.

    A pipelined submission sends thousands of unanswered messages; one write per batch instead
    of one per message saves most of their syscalls.  Whatever is pending is written before the
    protocol waits for a message, emits a value or finishes.
    """

    __slots__ = ("_chunks", "_size")

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._size = 0

    def add(self, write: Write) -> bool:
        """Queue the bytes of ``write``; true when they (and what is queued) must go out now."""
        self._chunks.append(write.data)
        self._size += len(write.data)
        return write.flush or self._size >= _WRITE_BATCH

    def take(self) -> bytes:
        """Everything queued, in order; the queue is then empty."""
        data = self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)
        self._chunks.clear()
        self._size = 0
        return data

    def __bool__(self) -> bool:
        return bool(self._chunks)


class _BlockingDriver:
    """The stepping loop shared by the blocking drivers; subclasses move the bytes."""

    conn: CedarConnection
    #: Whether ``Send(flush=False)`` messages may be held back (see :class:`_PendingWrites`).
    batch_writes = True

    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def read_message(self, part_size: int | None = None) -> MessageReader:
        """Block until the next whole message (or piece of one) has arrived."""
        raise NotImplementedError

    def read_raw(self, max_bytes: int) -> bytes:
        """Block until some unframed bytes (at most ``max_bytes``) have arrived."""
        raise NotImplementedError

    def _steps(self, protocol: Protocol[Any]) -> Iterator[Deliver | Finished]:
        runner = ProtocolRunner(self.conn, protocol)
        pending = _PendingWrites()
        try:
            action = runner.start()
            while True:
                try:
                    if isinstance(action, Write):
                        if pending.add(action) or not self.batch_writes:
                            self._write(pending.take())
                        action = runner.resume(None)
                        continue
                    if pending:
                        self._write(pending.take())
                    if isinstance(action, Finished):
                        yield action
                        return
                    if isinstance(action, ReadMessage):
                        action = runner.resume(self.read_message(action.part_size))
                    elif isinstance(action, ReadRaw):
                        action = runner.resume(self.read_raw(action.max_bytes))
                    else:
                        yield action
                        action = runner.resume(None)
                except CedarError as exc:
                    action = runner.throw(exc)
        finally:
            runner.close()

    def run(self, protocol: Protocol[T], on_emit: Callable[[Any], None] | None = None) -> T:
        """Run ``protocol`` to completion and return its result."""
        for step in self._steps(protocol):
            if isinstance(step, Finished):
                return step.result  # type: ignore[no-any-return]
            if on_emit is not None:
                for value in step.values():
                    on_emit(value)
        raise AssertionError("unreachable: protocol ended without a result")

    def iterate(self, protocol: Protocol[Any]) -> Iterator[Any]:
        """Run ``protocol``, yielding each value it emits as soon as it is decoded."""
        for step in self._steps(protocol):
            if isinstance(step, Deliver):
                if step.many:
                    yield from step.value
                else:
                    yield step.value


class SyncChannel(_Transport, _BlockingDriver):
    """A blocking TCP connection driving protocols with :class:`CedarConnection` state."""

    def __init__(
        self,
        sock: socket.socket,
        *,
        conn: CedarConnection | None = None,
        timeout: float = WAIT_TIMEOUT,
        peer: str = "peer",
        deadline: Deadline | None = None,
    ) -> None:
        super().__init__(conn, timeout, peer, deadline)
        self.sock = sock
        sock.settimeout(timeout)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @classmethod
    def connect(
        cls,
        host: str,
        port: int,
        *,
        timeout: float = WAIT_TIMEOUT,
        deadline: Deadline | None = None,
    ) -> SyncChannel:
        """Open a TCP connection to ``host:port``."""
        peer = f"{host}:{port}"
        limit = _connect_limit(timeout, deadline, peer)
        try:
            sock = _connect_socket(host, port, limit)
        except TimeoutError:
            if deadline is not None and deadline.remaining() <= 0:
                raise _deadline_passed(deadline, "connecting to", peer) from None
            raise _connect_timed_out(peer, timeout) from None
        except OSError as exc:
            raise _connect_failed(peer, exc) from None
        return cls(sock, timeout=timeout, peer=peer, deadline=deadline)

    def _write(self, data: bytes) -> None:
        try:
            if self.deadline is not None:
                self.sock.settimeout(self._wait_limit("sending to"))
            self.sock.sendall(data)
        except TimeoutError:
            raise self._timed_out("sending to") from None
        except OSError as exc:
            raise _describe_os_error(exc, self.peer) from None

    def read_message(self, part_size: int | None = None) -> MessageReader:
        """Block until the next whole message (or piece of one) has arrived.

        A piece is handed out early when the socket has nothing more right now (the peer is
        still producing): the caller decodes it meanwhile instead of waiting idle.
        """
        while True:
            message = self.conn.next_message(part_size)
            if message is not None:
                return message
            if part_size is not None and not _readable(self.sock):
                message = self.conn.early_piece(_EARLY_PIECE)
                if message is not None:
                    return message
            try:
                if self.deadline is not None:
                    self.sock.settimeout(self._wait_limit("waiting for"))
                data = self.sock.recv(_READ_SIZE)
            except TimeoutError:
                raise self._timed_out("waiting for") from None
            except OSError as exc:
                raise _describe_os_error(exc, self.peer) from None
            self.conn.receive_data(data)

    def read_raw(self, max_bytes: int) -> bytes:
        """Block until some unframed bytes (at most ``max_bytes``) have arrived."""
        while True:
            data = self.conn.next_raw(max_bytes)
            if data is not None:
                return data
            try:
                received = self.sock.recv(_READ_SIZE)
            except TimeoutError:
                raise self._timed_out("waiting for") from None
            except OSError as exc:
                raise _describe_os_error(exc, self.peer) from None
            self.conn.receive_data(received)

    def close(self) -> None:
        """Close the socket."""
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> SyncChannel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class TrioChannel(_Transport):
    """A Trio stream driving protocols with :class:`CedarConnection` state."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        conn: CedarConnection | None = None,
        timeout: float = WAIT_TIMEOUT,
        peer: str = "peer",
        deadline: Deadline | None = None,
    ) -> None:
        super().__init__(conn, timeout, peer, deadline)
        self.stream = stream

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        *,
        timeout: float = WAIT_TIMEOUT,
        deadline: Deadline | None = None,
    ) -> TrioChannel:
        """Open a TCP connection to ``host:port``."""
        import trio

        peer = f"{host}:{port}"
        scope = _wait_scope(_connect_limit(timeout, deadline, peer))
        stream: trio.SocketStream | None = None
        try:
            with scope:
                family = _ip_family(host)
                if family is None:
                    stream = await trio.open_tcp_stream(host, port)
                else:  # an address: no resolution, no racing of candidates to set up
                    stream = await _open_trio_stream(family, host, port)
        except OSError as exc:
            raise _connect_failed(peer, exc) from None
        if stream is None:  # the scope ran out
            if deadline is not None and deadline.remaining() <= 0:
                raise _deadline_passed(deadline, "connecting to", peer)
            raise _connect_timed_out(peer, timeout)
        return cls(stream, timeout=timeout, peer=peer, deadline=deadline)

    async def _write(self, data: bytes) -> None:
        import trio

        scope = _wait_scope(self._wait_limit("sending to"))
        try:
            with scope:
                await self.stream.send_all(data)
        except trio.BrokenResourceError as exc:
            raise ConnectionClosed(f"connection to {self.peer} was closed by the peer") from exc
        except trio.ClosedResourceError:
            raise self._already_closed() from None
        except OSError as exc:
            raise _describe_os_error(exc, self.peer) from None
        if scope.cancelled_caught:
            raise self._timed_out("sending to")

    async def read_message(self, part_size: int | None = None) -> MessageReader:
        """Wait until the next whole message (or piece of one) has arrived."""
        import trio

        while True:
            message = self.conn.next_message(part_size)
            if message is not None:
                return message
            scope = _wait_scope(self._wait_limit("waiting for"))
            data: bytes | bytearray | None = None
            try:
                with scope:
                    data = await self.stream.receive_some(_READ_SIZE)
            except trio.BrokenResourceError:
                data = b""  # a reset reads like a close: neither carries information
            except trio.ClosedResourceError:
                raise self._already_closed() from None
            if data is None:  # the scope ran out
                raise self._timed_out("waiting for")
            self.conn.receive_data(bytes(data))

    async def read_raw(self, max_bytes: int) -> bytes:
        """Wait until some unframed bytes (at most ``max_bytes``) have arrived."""
        import trio

        while True:
            buffered = self.conn.next_raw(max_bytes)
            if buffered is not None:
                return buffered
            try:
                with trio.fail_after(self.timeout):
                    data = await self.stream.receive_some(_READ_SIZE)
            except trio.TooSlowError:
                raise self._timed_out("waiting for") from None
            except trio.BrokenResourceError:
                data = b""
            except trio.ClosedResourceError:
                raise self._already_closed() from None
            self.conn.receive_data(bytes(data))

    async def _steps(self, protocol: Protocol[Any]) -> AsyncIterator[Deliver | Finished]:
        runner = ProtocolRunner(self.conn, protocol)
        pending = _PendingWrites()
        try:
            action = runner.start()
            while True:
                try:
                    if isinstance(action, Write):
                        if pending.add(action):
                            await self._write(pending.take())
                        action = runner.resume(None)
                        continue
                    if pending:
                        await self._write(pending.take())
                    if isinstance(action, Finished):
                        yield action
                        return
                    if isinstance(action, ReadMessage):
                        action = runner.resume(await self.read_message(action.part_size))
                    elif isinstance(action, ReadRaw):
                        action = runner.resume(await self.read_raw(action.max_bytes))
                    else:
                        assert isinstance(action, Deliver)
                        yield action
                        action = runner.resume(None)
                except CedarError as exc:
                    action = runner.throw(exc)
        finally:
            runner.close()

    async def run(self, protocol: Protocol[T], on_emit: Callable[[Any], None] | None = None) -> T:
        """Run ``protocol`` to completion and return its result."""
        async for step in self._steps(protocol):
            if isinstance(step, Finished):
                return step.result  # type: ignore[no-any-return]
            if on_emit is not None:
                for value in step.values():
                    on_emit(value)
        raise AssertionError("unreachable: protocol ended without a result")

    async def iterate(self, protocol: Protocol[Any]) -> AsyncIterator[Any]:
        """Run ``protocol``, yielding each value it emits as soon as it is decoded."""
        async for step in self._steps(protocol):
            if isinstance(step, Deliver):
                for value in step.values():
                    yield value

    async def aclose(self) -> None:
        """Close the stream."""
        await self.stream.aclose()

    async def __aenter__(self) -> TrioChannel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class ReplayChannel(_BlockingDriver):
    """Runs a protocol against recorded peer bytes and records what the protocol sends.

    ``peer_bytes`` is everything the peer sent on the connection, in order (wire bytes: packets
    with headers).  :attr:`sent` collects the wire bytes of each message the protocol sends; a
    protocol that waits for more than was recorded gets :class:`ConnectionClosed`.
    """

    def __init__(self, peer_bytes: bytes, *, conn: CedarConnection | None = None) -> None:
        self.conn = conn or CedarConnection()
        self.conn.receive_data(peer_bytes)
        self.conn.receive_data(b"")
        self.sent: list[bytes] = []

    batch_writes = False  # record each message on its own

    def _write(self, data: bytes) -> None:
        self.sent.append(data)

    def read_message(self, part_size: int | None = None) -> MessageReader:
        """The next recorded message or piece (EOF was fed in, so this never waits)."""
        message = self.conn.next_message(part_size)
        assert message is not None
        return message

    def read_raw(self, max_bytes: int) -> bytes:
        """The next recorded unframed bytes (EOF was fed in, so this never waits)."""
        data = self.conn.next_raw(max_bytes)
        assert data is not None
        return data


class MemoryPair:
    """Runs a client and a server protocol against each other in memory, without sockets.

    For tests of both roles and for trying a handler without a network: each side has its own
    :class:`CedarConnection`, bytes go straight from one to the other, and a side that finishes
    closes its end (the peer then sees :class:`ConnectionClosed` on its next read).  Records
    the wire bytes per direction (:attr:`sent`, keys ``"c2s"``/``"s2c"``), every message in clear
    in order (:attr:`log`, ``(direction, payload)``) and the values each side emitted.
    ``tamper(direction, index, data)`` may alter bytes in flight (fault tests).
    """

    def __init__(
        self,
        client_conn: CedarConnection | None = None,
        server_conn: CedarConnection | None = None,
        *,
        tamper: Callable[[str, int, bytes], bytes] | None = None,
    ) -> None:
        self.client_conn = client_conn or CedarConnection()
        self.server_conn = server_conn or CedarConnection()
        self.tamper = tamper
        self.sent: dict[str, list[bytes]] = {"c2s": [], "s2c": []}
        self.log: list[tuple[str, bytes]] = []
        self.emitted: dict[str, list[Any]] = {"client": [], "server": []}

    def run(
        self, client: Protocol[Any], server: Protocol[Any], *, max_steps: int = 1_000_000
    ) -> tuple[Any, Any]:
        """Step both protocols until both return; ``(client_result, server_result)``.

        A protocol's own exception propagates; both waiting for a message is a deadlock and
        raises ``RuntimeError`` (a bug in the protocols, not a network condition).
        """
        sides = {
            "client": (ProtocolRunner(self.client_conn, client), self.server_conn, "c2s"),
            "server": (ProtocolRunner(self.server_conn, server), self.client_conn, "s2c"),
        }
        own = {"client": self.client_conn, "server": self.server_conn}
        actions = {name: runner.start() for name, (runner, _peer, _dir) in sides.items()}
        results: dict[str, Any] = {}
        for _ in range(max_steps):
            if len(results) == 2:
                return results["client"], results["server"]
            progressed = False
            for name, (runner, peer, direction) in sides.items():
                action = actions[name]
                if name in results:
                    continue
                if isinstance(action, Finished):
                    results[name] = action.result
                    peer.receive_data(b"")  # this side is done: the peer sees EOF
                    progressed = True
                elif isinstance(action, Write):
                    data = action.data
                    if self.tamper is not None:
                        data = self.tamper(direction, len(self.sent[direction]), data)
                    self.sent[direction].append(data)
                    self.log.append((direction, action.payload))
                    peer.receive_data(data)
                    actions[name] = runner.resume(None)
                    progressed = True
                elif isinstance(action, ReadMessage):
                    try:
                        message = own[name].next_message(action.part_size)
                    except CedarError as exc:
                        actions[name] = runner.throw(exc)
                        progressed = True
                        continue
                    if message is not None:
                        actions[name] = runner.resume(message)
                        progressed = True
                elif isinstance(action, ReadRaw):
                    try:
                        raw = own[name].next_raw(action.max_bytes)
                    except CedarError as exc:
                        actions[name] = runner.throw(exc)
                        progressed = True
                        continue
                    if raw is not None:
                        actions[name] = runner.resume(raw)
                        progressed = True
                else:
                    assert isinstance(action, Deliver)
                    self.emitted[name].extend(action.values())
                    actions[name] = runner.resume(None)
                    progressed = True
            if not progressed:
                raise RuntimeError("deadlock: both protocols wait for a message")
        raise RuntimeError(f"protocols did not finish within {max_steps} steps")
