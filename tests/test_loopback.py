"""The shared hand-made loopback peer (``tests/loopback.py``): it serves each client, records
what a handler saw by the time its block ends, and leaves nothing listening or running."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.loopback import first_bytes, serving


def _connect(address: str) -> socket.socket:
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def test_first_bytes_of_each_client_are_recorded_and_the_client_hung_up() -> None:
    received: list[bytes] = []
    with serving(first_bytes(received)) as address:
        for message in (b"one", b"two"):
            with _connect(address) as client:
                client.sendall(message)
                assert client.recv(10) == b""  # hung up after reading
    assert sorted(received) == [b"one", b"two"]
    with pytest.raises(OSError):
        _connect(address).close()  # the listener is closed


def test_leaving_the_block_stops_a_handler_that_runs_until_stop() -> None:
    started, ended = threading.Event(), threading.Event()

    def hold(conn: socket.socket, stop: threading.Event) -> None:
        started.set()
        stop.wait()
        ended.set()

    with serving(hold) as address, _connect(address):
        assert started.wait(10)
        assert not ended.is_set()
    assert ended.is_set()  # joined before the block ended


def test_a_handler_error_on_the_socket_does_not_escape() -> None:
    def fail(conn: socket.socket, stop: threading.Event) -> None:
        conn.close()
        conn.sendall(b"x")  # OSError: a closed socket

    with serving(fail) as address, _connect(address) as client:
        assert client.recv(10) == b""
