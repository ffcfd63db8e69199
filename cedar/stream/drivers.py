"""Drivers that run protocol coroutines over a real transport.

* :class:`SyncChannel` -- a blocking socket (the sync API and the CLIs);
* :class:`TrioChannel` -- a Trio stream (the async API and the servers);
* :class:`ReplayChannel` -- recorded bytes (tests and captures);
* :class:`MemoryPair` -- a client and a server protocol against each other, in memory.

They only move bytes: stepping the protocol, batching writes, cutting messages out of what
arrived and bounding each wait are the shared sans-I/O core in :mod:`cedar.stream.driving`.

Every network wait is bounded by ``timeout`` seconds (default 20, applied per read or write as the
reference does) and, when a :class:`Deadline` is given, by the time left to the whole call (the
clients' per-call deadline: connect + handshake + whole reply).  Closed connections, resets and
timeouts become :mod:`cedar.errors` exceptions, thrown into the protocol first so it can explain
them.
"""

from __future__ import annotations

import _thread  # the lock alone: threading is a costly import at start-up
import contextlib
import errno
import functools
import select
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from cedar.errors import CedarConnectionError, CedarError, CedarTimeout, ConnectionClosed
from cedar.stream.connection import CedarConnection
from cedar.stream.driving import (
    Deadline,
    DriverCore,
    Flush,
    NeedData,
    Waits,
    deadline_passed,
)
from cedar.stream.framing import CLIENT_MAX_PACKET
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Deliver, Finished, Offload, Protocol, Receive, ReceiveRaw

if TYPE_CHECKING:
    import trio  # imported where used: the sync API never needs Trio (start-up time)

__all__ = [
    "WAIT_TIMEOUT",
    "Deadline",
    "MemoryPair",
    "ReplayChannel",
    "SyncChannel",
    "SyncListener",
    "TrioChannel",
    "TrioListener",
]

T = TypeVar("T")

#: The drivers' own default for one connect or wait when they are used directly; the clients
#: pass their per-call deadline instead (``cedar.commands.DEFAULT_TIMEOUT``).
WAIT_TIMEOUT = 20.0
_READ_SIZE = 65536
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


def _connect_limit(timeout: float, deadline: Deadline | None, peer: str) -> float:
    if deadline is None:
        return timeout
    left = deadline.remaining()
    if left <= 0:
        raise deadline_passed(deadline, "connecting to", peer)
    return min(timeout, left)


def _connect_failed(peer: str, exc: OSError) -> CedarConnectionError:
    return CedarConnectionError(
        f"cannot connect to {peer}: {exc.strerror or exc}; is the daemon running there?"
    )


@functools.lru_cache(maxsize=256)
def _ip_family(host: str) -> int | None:
    """``AF_INET``/``AF_INET6`` for an IP address literal, ``None`` for a name to resolve."""
    for family in (socket.AF_INET, socket.AF_INET6):  # (not ipaddress: a start-up import)
        try:
            socket.inet_pton(family, host)
        except (OSError, ValueError):  # ValueError: a NUL in the text
            continue
        return family
    return None  # a name, or an IPv6 literal with a scope ("%eth0"): the resolver fills it in


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
    return await _open_trio_address(family, (host, port))


async def _open_trio_address(family: int, address: tuple[Any, ...]) -> trio.SocketStream:
    """A connection to one socket address (no name resolution, no racing of candidates)."""
    import trio

    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    try:
        await sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return trio.SocketStream(sock)


#: Seconds the address a host name last connected to is reused without asking the resolver.
ADDRESS_TTL = 60.0
_ADDRESSES_KEPT = 256


class _KnownAddresses:
    """The address each ``(host name, port)`` last connected to, for :data:`ADDRESS_TTL`.

    Trio resolves a name in a worker thread and races its candidates in a nursery: about half a
    millisecond per connection on a loaded 2-core machine, paid by every query a server makes to
    a pool named by host name (``COLLECTOR_HOST = cm.example.org``).  The address that worked is
    connected to directly next time; when it fails, it is forgotten and the name resolved and
    raced again, so a moved daemon or a changed name service answer is seen at once, and any
    answer within :data:`ADDRESS_TTL` seconds.  Process-wide and bounded (oldest dropped)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int], tuple[float, int, tuple[Any, ...]]] = {}
        self._lock = _thread.allocate_lock()  # several threads may each run a Trio loop

    def get(self, host: str, port: int, now: float) -> tuple[int, tuple[Any, ...]] | None:
        with self._lock:
            found = self._known.get((host, port))
            if found is None:
                return None
            if now - found[0] >= ADDRESS_TTL:
                self._known.pop((host, port), None)
                return None
            return found[1], found[2]

    def remember(self, host: str, port: int, now: float, stream: trio.SocketStream) -> None:
        try:
            address = stream.socket.getpeername()
        except OSError:
            return
        with self._lock:
            self._known.pop((host, port), None)
            self._known[(host, port)] = (now, stream.socket.family, tuple(address))
            while len(self._known) > _ADDRESSES_KEPT:
                self._known.pop(next(iter(self._known)))

    def forget(self, host: str, port: int) -> None:
        with self._lock:
            self._known.pop((host, port), None)

    def clear(self) -> None:
        with self._lock:
            self._known.clear()


KNOWN_ADDRESSES = _KnownAddresses()


async def _open_trio_name(host: str, port: int) -> trio.SocketStream:
    """A connection to a host name: to the address it last connected to when that is recent
    and still answers, else resolved and raced by Trio (then remembered)."""
    import trio

    known = KNOWN_ADDRESSES.get(host, port, time.monotonic())
    if known is not None:
        try:
            return await _open_trio_address(*known)
        except OSError:
            KNOWN_ADDRESSES.forget(host, port)  # moved, or gone: ask the resolver again
        except BaseException:
            KNOWN_ADDRESSES.forget(host, port)  # no answer in time: the next call races again
            raise
    stream = await trio.open_tcp_stream(host, port)
    KNOWN_ADDRESSES.remember(host, port, time.monotonic(), stream)
    return stream


def _wait_scope(seconds: float) -> trio.CancelScope:
    """A scope ending ``seconds`` from now (``trio.fail_after`` without its context-manager
    wrapper: this runs for every read and write)."""
    import trio

    return trio.CancelScope(deadline=trio.current_time() + seconds)


def receive_one(part_size: int | None = None) -> Protocol[MessageReader]:
    """The next message (or piece): a driver's ``read_message`` runs this."""
    message: MessageReader = yield Receive(part_size)
    return message


def receive_raw(max_bytes: int) -> Protocol[bytes]:
    """Some unframed bytes: a driver's ``read_raw`` runs this (so the deadline bounds it too)."""
    data: bytes = yield ReceiveRaw(max_bytes)
    return data


class _BlockingDriver:
    """Runs protocols with blocking I/O; subclasses say how bytes are written and read."""

    conn: CedarConnection
    waits: Waits
    #: Whether ``Send(flush=False)`` messages may be held back and written together.
    batch_writes = True

    def _write(self, data: bytes, limit: float) -> None:
        raise NotImplementedError

    def _receive(self, limit: float) -> bytes:
        """Block until some bytes arrive (``b""``: the peer closed)."""
        raise NotImplementedError

    def _nothing_to_read(self) -> bool:
        """Whether a read would block right now (then a streamed piece may be handed out early)."""
        return False

    def _steps(self, protocol: Protocol[Any]) -> Iterator[Deliver | Finished]:
        core = DriverCore(self.conn, protocol, self.waits, batch_writes=self.batch_writes)
        try:
            step = core.start()
            while True:
                if isinstance(step, Flush):
                    try:
                        self._write(step.data, step.limit)
                    except CedarError as exc:
                        step = core.failed(exc)
                        continue
                    step = core.wrote()
                elif isinstance(step, NeedData):
                    if step.early and self._nothing_to_read():
                        step = core.idle()
                        continue
                    try:
                        data = self._receive(step.limit)
                    except CedarError as exc:
                        step = core.failed(exc)
                        continue
                    step = core.received(data)
                elif isinstance(step, Deliver):
                    yield step
                    step = core.delivered()
                elif isinstance(step, Offload):  # blocking work: this driver blocks anyway
                    step = core.computed(step.function(core.limit()))
                else:
                    yield step
                    return
        finally:
            core.close()

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
                yield from step.values()

    def read_message(self, part_size: int | None = None) -> MessageReader:
        """Block until the next whole message (or piece of one) has arrived."""
        return self.run(receive_one(part_size))

    def read_raw(self, max_bytes: int) -> bytes:
        """Block until some unframed bytes (at most ``max_bytes``) have arrived."""
        return self.run(receive_raw(max_bytes))


class SyncChannel(Waits, _BlockingDriver):
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
        super().__init__(timeout, peer, deadline)
        self.conn = conn or CedarConnection(max_packet_size=CLIENT_MAX_PACKET)  # a client's
        self.waits = self
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
                raise deadline_passed(deadline, "connecting to", peer) from None
            raise _connect_timed_out(peer, timeout) from None
        except OSError as exc:
            raise _connect_failed(peer, exc) from None
        return cls(sock, timeout=timeout, peer=peer, deadline=deadline)

    def _write(self, data: bytes, limit: float) -> None:
        try:
            if self.deadline is not None:  # else the socket keeps its per-wait timeout
                self.sock.settimeout(limit)
            self.sock.sendall(data)
        except TimeoutError:
            raise self.timed_out("sending to") from None
        except OSError as exc:
            raise _describe_os_error(exc, self.peer) from None

    def _receive(self, limit: float) -> bytes:
        try:
            if self.deadline is not None:
                self.sock.settimeout(limit)
            return self.sock.recv(_READ_SIZE)
        except TimeoutError:
            raise self.timed_out("waiting for") from None
        except OSError as exc:
            raise _describe_os_error(exc, self.peer) from None

    def _nothing_to_read(self) -> bool:
        """The socket is momentarily empty: the peer is still producing (hand a piece out)."""
        return not _readable(self.sock)

    def close(self) -> None:
        """Close the socket."""
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> SyncChannel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class TrioChannel(Waits):
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
        super().__init__(timeout, peer, deadline)
        self.conn = conn or CedarConnection(max_packet_size=CLIENT_MAX_PACKET)  # a client's
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

        peer = f"{host}:{port}"
        scope = _wait_scope(_connect_limit(timeout, deadline, peer))
        stream: trio.SocketStream | None = None
        try:
            with scope:
                family = _ip_family(host)
                if family is None:
                    stream = await _open_trio_name(host, port)
                else:  # an address: no resolution, no racing of candidates to set up
                    stream = await _open_trio_stream(family, host, port)
        except OSError as exc:
            raise _connect_failed(peer, exc) from None
        if stream is None:  # the scope ran out
            if deadline is not None and deadline.remaining() <= 0:
                raise deadline_passed(deadline, "connecting to", peer)
            raise _connect_timed_out(peer, timeout)
        return cls(stream, timeout=timeout, peer=peer, deadline=deadline)

    async def _write(self, data: bytes, limit: float) -> None:
        import trio

        scope = _wait_scope(limit)
        try:
            with scope:
                await self.stream.send_all(data)
        except trio.BrokenResourceError as exc:
            raise ConnectionClosed(f"connection to {self.peer} was closed by the peer") from exc
        except trio.ClosedResourceError:
            raise self.already_closed() from None
        except OSError as exc:
            raise _describe_os_error(exc, self.peer) from None
        if scope.cancelled_caught:
            raise self.timed_out("sending to")

    async def _receive(self, limit: float) -> bytes:
        import trio

        data: bytes | bytearray | None = None
        try:
            with _wait_scope(limit):
                data = await self.stream.receive_some(_READ_SIZE)
        except trio.BrokenResourceError:
            data = b""  # a reset reads like a close: neither carries information
        except trio.ClosedResourceError:
            raise self.already_closed() from None
        if data is None:  # the scope ran out
            raise self.timed_out("waiting for")
        return bytes(data)

    async def _steps(self, protocol: Protocol[Any]) -> AsyncIterator[Deliver | Finished]:
        core = DriverCore(self.conn, protocol, self)
        try:
            step = core.start()
            while True:
                if isinstance(step, Flush):
                    try:
                        await self._write(step.data, step.limit)
                    except CedarError as exc:
                        step = core.failed(exc)
                        continue
                    step = core.wrote()
                elif isinstance(step, NeedData):  # no early pieces: other tasks use the wait
                    try:
                        data = await self._receive(step.limit)
                    except CedarError as exc:
                        step = core.failed(exc)
                        continue
                    step = core.received(data)
                elif isinstance(step, Deliver):
                    yield step
                    step = core.delivered()
                elif isinstance(step, Offload):
                    step = core.computed(await self._offload(step.function, core.limit()))
                else:
                    yield step
                    return
        finally:
            core.close()

    async def _offload(self, function: Callable[[float], Any], limit: float) -> Any:
        """``function(limit)`` in a worker thread, so the loop runs on meanwhile; once ``limit``
        has passed it is left to finish alone (its own waits are bounded by ``limit``) and the
        call is a :class:`~cedar.errors.CedarTimeout`."""
        import trio

        with trio.move_on_after(limit):
            return await trio.to_thread.run_sync(function, limit, abandon_on_cancel=True)
        raise self.timed_out("waiting for")

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

    async def read_message(self, part_size: int | None = None) -> MessageReader:
        """Wait until the next whole message (or piece of one) has arrived."""
        return await self.run(receive_one(part_size))

    async def read_raw(self, max_bytes: int) -> bytes:
        """Wait until some unframed bytes (at most ``max_bytes``) have arrived."""
        return await self.run(receive_raw(max_bytes))

    async def aclose(self) -> None:
        """Close the stream."""
        await self.stream.aclose()

    async def __aenter__(self) -> TrioChannel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _listening_socket(host: str) -> socket.socket:
    """A TCP socket listening on an ephemeral port of ``host`` (a reversed connection's end)."""
    family = _ip_family(host) or socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((host, 0))
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise CedarConnectionError(f"cannot listen on {host}: {exc.strerror or exc}") from None
    return sock


def _wait_ran_out(deadline: Deadline | None, doing: str, peer: str, limit: float) -> CedarTimeout:
    if deadline is not None and deadline.remaining() < 0.05:
        return deadline_passed(deadline, doing, peer)
    return CedarTimeout(f"timed out after {limit:.1f} s {doing} {peer}")


#: Connections a listener for reversed connections lets wait (one is expected; a few forged
#: ones must not keep the real one out).
_BACKLOG = 16


class SyncListener:
    """Where a target connects back to us (CCB, spec 09 §5.2): a listening socket beside a
    connection, on the local address that connection uses (so the target can reach it)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        host, port = sock.getsockname()[:2]
        #: The address to publish (``MyAddress``).
        self.address: tuple[str, int] = (str(host), int(port))

    @classmethod
    def beside(cls, channel: SyncChannel) -> SyncListener:
        """Listen on ``channel``'s local address, any port."""
        return cls(_listening_socket(str(channel.sock.getsockname()[0])))

    def wait(
        self, watched: SyncChannel | None, *, timeout: float, deadline: Deadline, peer: str
    ) -> SyncChannel | None:
        """The next incoming connection (a channel with ``timeout``), or None as soon as
        ``watched`` has something to read; :class:`CedarTimeout` once ``deadline`` passes."""
        if watched is not None and (watched.conn.buffered_bytes or watched.conn.peer_closed):
            return None
        limit = max(deadline.remaining(), 0.0)
        sockets = [self.sock] if watched is None else [self.sock, watched.sock]
        try:
            ready = select.select(sockets, [], [], limit)[0]
        except (OSError, ValueError) as exc:
            raise CedarConnectionError(f"cannot wait for {peer}: {exc}") from None
        if self.sock in ready:
            try:
                sock, _address = self.sock.accept()
            except OSError as exc:
                raise CedarConnectionError(f"cannot accept from {peer}: {exc.strerror}") from None
            return SyncChannel(sock, timeout=timeout, peer=peer, deadline=deadline)
        if ready:
            return None
        raise _wait_ran_out(deadline, "waiting for a connection from", peer, limit)

    def close(self) -> None:
        """Stop listening."""
        with contextlib.suppress(OSError):
            self.sock.close()


class TrioListener:
    """The Trio twin of :class:`SyncListener`."""

    def __init__(self, sock: trio.socket.SocketType) -> None:
        self.sock = sock
        host, port = sock.getsockname()[:2]
        #: The address to publish (``MyAddress``).
        self.address: tuple[str, int] = (str(host), int(port))

    @classmethod
    async def beside(cls, channel: TrioChannel) -> TrioListener:
        """Listen on ``channel``'s local address, any port."""
        import trio

        local = channel.stream.socket.getsockname()  # type: ignore[attr-defined]
        return cls(trio.socket.from_stdlib_socket(_listening_socket(str(local[0]))))

    async def wait(
        self, watched: TrioChannel | None, *, timeout: float, deadline: Deadline, peer: str
    ) -> TrioChannel | None:
        """The next incoming connection (a channel with ``timeout``), or None as soon as
        ``watched`` has something to read; :class:`CedarTimeout` once ``deadline`` passes."""
        import trio

        if watched is not None and (watched.conn.buffered_bytes or watched.conn.peer_closed):
            return None
        limit = max(deadline.remaining(), 0.0)
        accepted: list[trio.socket.SocketType] = []
        readable: list[bool] = []

        async def accept(scope: trio.CancelScope) -> None:
            sock, _address = await self.sock.accept()
            accepted.append(sock)
            scope.cancel()

        async def watch(scope: trio.CancelScope, sock: Any) -> None:
            await trio.lowlevel.wait_readable(sock)
            readable.append(True)
            scope.cancel()

        try:
            with trio.move_on_after(limit):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(accept, nursery.cancel_scope)
                    if watched is not None:
                        sock = watched.stream.socket  # type: ignore[attr-defined]
                        nursery.start_soon(watch, nursery.cancel_scope, sock)
        except OSError as exc:
            raise CedarConnectionError(f"cannot accept from {peer}: {exc.strerror}") from None
        if accepted:
            stream = trio.SocketStream(accepted[0])
            return TrioChannel(stream, timeout=timeout, peer=peer, deadline=deadline)
        if readable:
            return None
        raise _wait_ran_out(deadline, "waiting for a connection from", peer, limit)

    async def aclose(self) -> None:
        """Stop listening."""
        self.sock.close()


class ReplayChannel(_BlockingDriver):
    """Runs a protocol against recorded peer bytes and records what the protocol sends.

    ``peer_bytes`` is everything the peer sent on the connection, in order (wire bytes: packets
    with headers).  :attr:`sent` collects the wire bytes of each message the protocol sends; a
    protocol that waits for more than was recorded gets :class:`ConnectionClosed`.  Everything
    is at hand from the start, so nothing here ever waits (a deadline would have nothing to cut).
    """

    batch_writes = False  # record each message on its own

    def __init__(self, peer_bytes: bytes, *, conn: CedarConnection | None = None) -> None:
        self.conn = conn or CedarConnection()
        self.conn.receive_data(peer_bytes)
        self.conn.receive_data(b"")
        self.waits = Waits(WAIT_TIMEOUT, "the recording", None)
        self.sent: list[bytes] = []

    def _write(self, data: bytes, limit: float) -> None:
        self.sent.append(data)

    def _receive(self, limit: float) -> bytes:
        return b""  # unreachable in practice: EOF was fed in, so a read never needs more


class MemoryPair:
    """Runs a client and a server protocol against each other in memory, without sockets.

    For tests of both roles and for trying a handler without a network: each side has its own
    :class:`CedarConnection`, bytes go straight from one to the other, and a side that finishes
    closes its end (the peer then sees :class:`ConnectionClosed` on its next read).  Records
    the wire bytes per direction (:attr:`sent`, keys ``"c2s"``/``"s2c"``), every message in clear
    in order (:attr:`log`, ``(direction, payload)``) and the values each side emitted.
    ``tamper(direction, index, data)`` may alter bytes in flight (fault tests).  With a
    ``deadline``, a side that has to wait once it has passed gets :class:`CedarTimeout` thrown
    in, as over a network.
    """

    def __init__(
        self,
        client_conn: CedarConnection | None = None,
        server_conn: CedarConnection | None = None,
        *,
        tamper: Callable[[str, int, bytes], bytes] | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        self.client_conn = client_conn or CedarConnection()
        self.server_conn = server_conn or CedarConnection()
        self.tamper = tamper
        self.deadline = deadline
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

        def core(conn: CedarConnection, protocol: Protocol[Any], peer: str) -> DriverCore:
            waits = Waits(WAIT_TIMEOUT, peer, self.deadline)
            return DriverCore(conn, protocol, waits, batch_writes=False)

        cores = {
            "client": core(self.client_conn, client, "the server"),
            "server": core(self.server_conn, server, "the client"),
        }
        peers = {"client": "server", "server": "client"}
        steps: dict[str, Any] = {}
        results: dict[str, Any] = {}
        try:
            for name, side in cores.items():
                steps[name] = side.start()
            for _ in range(max_steps):
                if len(results) == 2:
                    return results["client"], results["server"]
                progressed = False
                for name, side in cores.items():
                    if name in results:
                        continue
                    step = steps[name]
                    if isinstance(step, Flush):
                        direction = "c2s" if name == "client" else "s2c"
                        data = step.data
                        if self.tamper is not None:
                            data = self.tamper(direction, len(self.sent[direction]), data)
                        self.sent[direction].append(data)
                        self.log.append((direction, step.payload))
                        self._deliver(peers[name], data, cores, steps)
                        steps[name] = side.wrote()
                    elif isinstance(step, Deliver):
                        self.emitted[name].extend(step.values())
                        steps[name] = side.delivered()
                    elif isinstance(step, Offload):
                        steps[name] = side.computed(step.function(side.limit()))
                    elif isinstance(step, Finished):
                        results[name] = step.result
                        self._deliver(peers[name], b"", cores, steps)  # the peer sees EOF
                    else:
                        continue  # waiting: the other side's bytes will wake it
                    progressed = True
                if not progressed and len(results) < 2:
                    raise RuntimeError("deadlock: both protocols wait for a message")
            raise RuntimeError(f"protocols did not finish within {max_steps} steps")
        finally:
            for side in cores.values():
                side.close()

    @staticmethod
    def _deliver(
        name: str, data: bytes, cores: dict[str, DriverCore], steps: dict[str, Any]
    ) -> None:
        """Hand bytes (``b""``: EOF) to side ``name``, waking it if it waits for them."""
        if isinstance(steps[name], NeedData):
            steps[name] = cores[name].received(data)
        else:
            cores[name].conn.receive_data(data)
