"""Protocol coroutines run over the three drivers; transport failures become cedar errors."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
import trio
import trio.testing

from cedar.errors import CedarConnectionError, CedarTimeout, ConnectionClosed
from cedar.stream import (
    CedarConnection,
    Deadline,
    Emit,
    MemoryPair,
    MessageReader,
    Protocol,
    Receive,
    ReplayChannel,
    Send,
    SyncChannel,
    TrioChannel,
)
from cedar.stream.protocol import ReceiveRaw


def count_client(conn: CedarConnection, upto: int) -> Protocol[int]:
    """Ask for ``upto`` numbers, emit each as it arrives, return their sum."""
    yield Send(conn.writer().put_int(upto))
    total = 0
    for _ in range(upto):
        reply: MessageReader = yield Receive()
        value = reply.get_int()
        reply.end_of_message()
        yield Emit(value)
        total += value
    return total


def count_server(conn: CedarConnection) -> Protocol[None]:
    request: MessageReader = yield Receive()
    for value in range(request.get_int()):
        yield Send(conn.writer().put_int(value * 10))


def explaining_client(conn: CedarConnection) -> Protocol[str]:
    """Shows that transport errors are thrown into the protocol, which may explain them."""
    yield Send(conn.writer().put_int(1))
    try:
        yield Receive()
    except ConnectionClosed as exc:
        return f"explained: {exc}"
    return "no error"


@pytest.fixture
def server_socket() -> Iterator[tuple[socket.socket, int]]:
    listener = socket.create_server(("127.0.0.1", 0))
    yield listener, listener.getsockname()[1]
    listener.close()


def serve_once(listener: socket.socket, protocol_factory) -> threading.Thread:  # type: ignore[no-untyped-def]
    def run() -> None:
        sock, _ = listener.accept()
        with SyncChannel(sock, timeout=5) as channel:
            channel.run(protocol_factory(channel.conn))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_sync_driver_run_and_iterate(server_socket: tuple[socket.socket, int]) -> None:
    listener, port = server_socket
    serve_once(listener, count_server)
    emitted: list[int] = []
    with SyncChannel.connect("127.0.0.1", port, timeout=5) as channel:
        assert channel.run(count_client(channel.conn, 4), emitted.append) == 60
    assert emitted == [0, 10, 20, 30]
    serve_once(listener, count_server)
    with SyncChannel.connect("127.0.0.1", port, timeout=5) as channel:
        assert list(channel.iterate(count_client(channel.conn, 3))) == [0, 10, 20]


def test_sync_driver_times_out_instead_of_hanging(server_socket: tuple[socket.socket, int]) -> None:
    listener, port = server_socket
    with (
        SyncChannel.connect("127.0.0.1", port, timeout=0.2) as channel,
        pytest.raises(CedarTimeout, match=r"timed out after 0.2 s"),
    ):
        channel.run(count_client(channel.conn, 1))


def test_sync_driver_peer_close_is_thrown_into_the_protocol(
    server_socket: tuple[socket.socket, int],
) -> None:
    listener, port = server_socket

    def close_at_once() -> None:
        sock, _ = listener.accept()
        sock.recv(100)
        sock.close()

    threading.Thread(target=close_at_once, daemon=True).start()
    with SyncChannel.connect("127.0.0.1", port, timeout=5) as channel:
        assert channel.run(explaining_client(channel.conn)).startswith("explained: connection")


def test_connect_refused_says_what_to_check() -> None:
    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(CedarConnectionError, match=f"cannot connect to 127.0.0.1:{port}"):
        SyncChannel.connect("127.0.0.1", port, timeout=2)


def test_trio_driver_against_trio_server() -> None:
    async def main() -> None:
        async def handler(stream: trio.SocketStream) -> None:
            await TrioChannel(stream, timeout=5).run(count_server(CedarConnection()))

        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
            port = listeners[0].socket.getsockname()[1]
            channel = await TrioChannel.connect("127.0.0.1", port, timeout=5)
            async with channel:
                got = [v async for v in channel.iterate(count_client(channel.conn, 5))]
            assert got == [0, 10, 20, 30, 40]
            channel = await TrioChannel.connect("127.0.0.1", port, timeout=5)
            async with channel:
                assert await channel.run(count_client(channel.conn, 2)) == 10
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_trio_driver_timeout_and_close() -> None:
    async def main() -> None:
        client_stream, server_stream = trio.testing.memory_stream_pair()
        channel = TrioChannel(client_stream, timeout=0.1)
        with pytest.raises(CedarTimeout):
            await channel.run(count_client(channel.conn, 1))
        await server_stream.aclose()
        channel = TrioChannel(trio.testing.memory_stream_pair()[0], timeout=1)
        await channel.stream.aclose()
        with pytest.raises(ConnectionClosed):
            await channel.run(count_client(channel.conn, 1))

    trio.run(main)


def test_replay_driver_records_what_is_sent() -> None:
    server = CedarConnection()
    recorded = b"".join(server.send_message(server.writer().put_int(v)) for v in (7, 8))
    channel = ReplayChannel(recorded)
    assert channel.run(count_client(channel.conn, 2)) == 15
    assert channel.sent == [bytes.fromhex("0100000008") + (2).to_bytes(8, "big")]


def test_replay_driver_missing_reply_is_connection_closed() -> None:
    channel = ReplayChannel(b"")
    with pytest.raises(ConnectionClosed):
        channel.run(count_client(channel.conn, 1))


def test_memory_pair_runs_both_roles_and_records_the_conversation() -> None:
    pair = MemoryPair()
    client_result, server_result = pair.run(
        count_client(pair.client_conn, 3), count_server(pair.server_conn)
    )
    assert (client_result, server_result) == (30, None)
    assert pair.emitted["client"] == [0, 10, 20]
    assert [d for d, _ in pair.log] == ["c2s", "s2c", "s2c", "s2c"]
    assert pair.log[0][1] == (3).to_bytes(8, "big")
    assert len(pair.sent["s2c"]) == 3


def test_memory_pair_finished_side_closes_its_end() -> None:
    def hangs_up(conn: CedarConnection) -> Protocol[None]:
        yield Receive()  # reads the request, then returns without answering

    pair = MemoryPair()
    result, _ = pair.run(explaining_client(pair.client_conn), hangs_up(pair.server_conn))
    assert result.startswith("explained: connection closed")


def test_memory_pair_tamper_and_deadlock() -> None:
    def flip(direction: str, index: int, data: bytes) -> bytes:
        return data[:-1] + bytes([data[-1] ^ 1]) if direction == "s2c" else data

    pair = MemoryPair(tamper=flip)
    pair.run(count_client(pair.client_conn, 1), count_server(pair.server_conn))
    assert pair.emitted["client"] == [1]  # 0 * 10 with its last bit flipped in flight

    def waits(conn: CedarConnection) -> Protocol[None]:
        yield Receive()

    pair = MemoryPair()
    with pytest.raises(RuntimeError, match="deadlock"):
        pair.run(waits(pair.client_conn), waits(pair.server_conn))


# -- the call's deadline bounds every wait, raw bytes included (issue 26) --------------------


def read_raw_client(conn: CedarConnection) -> Protocol[bytes]:
    """Wait for unframed bytes (a clear file body) from a peer that never sends any."""
    data: bytes = yield ReceiveRaw(100)
    return data


def silent_server(conn: CedarConnection) -> Protocol[None]:
    yield Receive()  # waits for a message that never comes


class SilentSocket:
    """A connected socket whose peer never writes: every ``recv`` runs out of its timeout.

    It records the timeout each ``recv`` was given, so a test sees what bounded the wait
    without ever measuring time.
    """

    def __init__(self) -> None:
        self.timeout: float | None = None
        self.waits: list[float | None] = []

    def settimeout(self, value: float | None) -> None:
        self.timeout = value

    def setsockopt(self, *args: object) -> None:
        pass

    def recv(self, size: int) -> bytes:
        self.waits.append(self.timeout)
        raise TimeoutError

    def close(self) -> None:
        pass


def _read(channel: SyncChannel, how: str) -> object:
    if how == "read_raw":
        return channel.read_raw(100)
    if how == "read_message":
        return channel.read_message()
    return channel.run(read_raw_client(channel.conn))


@pytest.mark.parametrize("how", ["read_raw", "read_message", "protocol"])
def test_sync_driver_waits_are_cut_by_the_deadline(how: str) -> None:
    """Per-wait timeout one hour, deadline 5 s: the wait must be given at most the 5 s left."""
    sock = SilentSocket()
    channel = SyncChannel(sock, timeout=3600, deadline=Deadline(5))  # type: ignore[arg-type]
    with pytest.raises(CedarTimeout):
        _read(channel, how)
    assert sock.waits, "the driver never waited"
    assert all(wait is not None and wait <= 5 for wait in sock.waits), sock.waits


def test_sync_driver_a_passed_deadline_raises_before_waiting() -> None:
    sock = SilentSocket()
    channel = SyncChannel(sock, timeout=3600, deadline=Deadline(0))  # type: ignore[arg-type]
    with pytest.raises(CedarTimeout, match="deadline"):
        channel.read_raw(100)
    assert sock.waits == []


@pytest.mark.parametrize("how", ["read_raw", "read_message", "protocol"])
def test_trio_driver_waits_are_cut_by_the_deadline(how: str) -> None:
    """On Trio's virtual clock: the silent wait must end at the 5 s deadline, not the 1 h timeout.

    ``MockClock(autojump_threshold=0)`` jumps to the next timer as soon as every task waits,
    so this takes no real time and its result does not depend on the machine's load.
    """

    async def main() -> float:
        client_stream, _silent = trio.testing.memory_stream_pair()
        channel = TrioChannel(client_stream, timeout=3600, deadline=Deadline(5))
        start = trio.current_time()
        with pytest.raises(CedarTimeout):
            if how == "read_raw":
                await channel.read_raw(100)
            elif how == "read_message":
                await channel.read_message()
            else:
                await channel.run(read_raw_client(channel.conn))
        return trio.current_time() - start

    virtual_wait = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert virtual_wait <= 5


def test_memory_pair_a_side_that_must_wait_past_the_deadline_times_out() -> None:
    pair = MemoryPair(deadline=Deadline(0))
    with pytest.raises(CedarTimeout, match="deadline"):
        pair.run(read_raw_client(pair.client_conn), silent_server(pair.server_conn))


def test_memory_pair_without_a_deadline_still_reports_the_deadlock() -> None:
    pair = MemoryPair()
    with pytest.raises(RuntimeError, match="deadlock"):
        pair.run(read_raw_client(pair.client_conn), silent_server(pair.server_conn))


def test_replay_driver_read_raw_hands_out_recorded_bytes_then_closed() -> None:
    channel = ReplayChannel(b"abc")
    assert channel.read_raw(2) == b"ab"
    assert channel.read_raw(10) == b"c"
    with pytest.raises(ConnectionClosed):
        channel.read_raw(10)


def test_held_back_messages_go_out_before_a_wait() -> None:
    """``Send(flush=False)`` messages are written together, and before the protocol waits."""

    def client(conn: CedarConnection) -> Protocol[int]:
        for value in range(3):
            yield Send(conn.writer().put_int(value), flush=False)
        reply: MessageReader = yield Receive()
        return reply.get_int()

    def server(conn: CedarConnection) -> Protocol[None]:
        total = 0
        for _ in range(3):
            message: MessageReader = yield Receive()
            total += message.get_int()
        yield Send(conn.writer().put_int(total))

    async def main() -> tuple[int, int]:
        client_stream, server_stream = trio.testing.memory_stream_pair()
        writes: list[bytes] = []
        original = client_stream.send_all

        async def recording_send_all(data: bytes | bytearray | memoryview) -> None:
            writes.append(bytes(data))
            await original(data)

        client_stream.send_all = recording_send_all  # type: ignore[method-assign]
        client_channel = TrioChannel(client_stream, timeout=5)
        server_channel = TrioChannel(server_stream, timeout=5)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server_channel.run, server(server_channel.conn))
            result = await client_channel.run(client(client_channel.conn))
        return result, len(writes)

    assert trio.run(main) == (3, 1)


class _CountingResolver(trio.abc.HostnameResolver):
    """Trio's resolver hook: one name, answered with whichever loopback address is current."""

    def __init__(self, name: str, address: str) -> None:
        self.name, self.address, self.asked = name, address, 0

    async def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name != self.name:
            raise socket.gaierror(socket.EAI_NONAME, "unknown name")
        self.asked += 1
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (self.address, int(port)))]

    async def getnameinfo(self, sockaddr: Any, flags: int) -> Any:
        raise NotImplementedError


def test_trio_connect_by_name_resolves_once_then_again_when_the_address_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A host name is resolved (in Trio's worker thread) for its first connection only; the
    address that worked is used directly after that, until it stops answering (a moved
    daemon: the name is resolved again at once) or :data:`ADDRESS_TTL` passes."""
    import cedar.stream.drivers as drivers

    name = "cedar-test-collector.invalid"
    resolver = _CountingResolver(name, "127.0.0.1")
    now = [1000.0]
    monkeypatch.setattr(drivers, "time", type("Clock", (), {"monotonic": lambda: now[0]}))
    drivers.KNOWN_ADDRESSES.clear()

    async def main() -> None:
        trio.socket.set_custom_hostname_resolver(resolver)
        try:
            first = trio.socket.socket()
            await first.bind(("127.0.0.1", 0))
            first.listen()
            port = first.getsockname()[1]

            async def connect() -> str:
                channel = await TrioChannel.connect(name, port, timeout=5)
                async with channel:
                    assert isinstance(channel.stream, trio.SocketStream)
                    peer: str = channel.stream.socket.getpeername()[0]
                    return peer

            assert await connect() == "127.0.0.1" and resolver.asked == 1
            assert await connect() == "127.0.0.1" and resolver.asked == 1  # not asked again
            now[0] += drivers.ADDRESS_TTL
            assert await connect() == "127.0.0.1" and resolver.asked == 2  # too old: asked
            # the daemon moves: the old address refuses, the name now says 127.0.0.2
            first.close()
            second = trio.socket.socket()
            await second.bind(("127.0.0.2", port))
            second.listen()
            resolver.address = "127.0.0.2"
            assert await connect() == "127.0.0.2" and resolver.asked == 3
            assert await connect() == "127.0.0.2" and resolver.asked == 3
            second.close()
            with pytest.raises(CedarConnectionError):  # gone: an error, not a hang
                await connect()
            assert resolver.asked == 4
        finally:
            trio.socket.set_custom_hostname_resolver(None)
            drivers.KNOWN_ADDRESSES.clear()

    trio.run(main)


def test_trio_connect_by_name_forgets_an_address_that_did_not_answer_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A remembered address whose connect is cut by the deadline is forgotten, so the next
    call resolves and races the name's candidates again rather than waiting on it again."""
    import cedar.stream.drivers as drivers

    async def no_answer(family: int, address: tuple[Any, ...]) -> Any:
        await trio.sleep_forever()

    monkeypatch.setattr(drivers, "_open_trio_address", no_answer)
    drivers.KNOWN_ADDRESSES.clear()
    name = "cedar-test-slow.invalid"
    now = drivers.time.monotonic()
    drivers.KNOWN_ADDRESSES._known[(name, 9618)] = (now, socket.AF_INET, ("192.0.2.1", 9618))

    async def main() -> None:
        assert drivers.KNOWN_ADDRESSES.get(name, 9618, now) is not None
        with pytest.raises(CedarTimeout):
            await TrioChannel.connect(name, 9618, timeout=0.05)
        assert drivers.KNOWN_ADDRESSES.get(name, 9618, now) is None

    try:
        trio.run(main)
    finally:
        drivers.KNOWN_ADDRESSES.clear()
