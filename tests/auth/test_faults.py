"""Faults on either side: each must end in a clear error, never a hang (spec 03 §7, spec 01 §4)."""

from __future__ import annotations

import socket

import pytest

from cedar.auth import ClientSecurity, CommandDenied, SecurityConfig, start_command
from cedar.classad_wire import ClassAd, put_classad
from cedar.commands import ping
from cedar.daemons.testing import mock_daemon, wait_for
from cedar.errors import AuthenticationError, ConnectionClosed, IntegrityError, ProtocolError
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import ReplayChannel
from tests.support import ad_messages

from .test_handshake import TARGET, exchange, fs_security


def flip_last_byte(direction, index):
    def tamper(d, i, data):
        if (d, i) == (direction, index):
            return data[:-1] + bytes([data[-1] ^ 1])
        return data

    return tamper


def test_wrong_gcm_tag_from_server(pump):
    daemon, _ = mock_daemon()
    # s2c: M2, A2, F1, F3, K1, P1 -> P1 (index 5) is the first encrypted message
    with pytest.raises(IntegrityError, match="tag did not verify"):
        exchange(lambda: pump(flip_last_byte("s2c", 5)), daemon, fs_security())


def test_wrong_gcm_tag_from_client(pump):
    daemon, handler = mock_daemon()
    harness_box = []

    def make():
        harness_box.append(pump(flip_last_byte("c2s", 3)))  # M1, A1, F2, C1
        return harness_box[0]

    with pytest.raises(ConnectionClosed):
        exchange(make, daemon, fs_security())
    assert isinstance(harness_box[0].server_error, IntegrityError)
    assert handler.seen == []


M2_FS = {
    "Enact": "YES",
    "Integrity": "NO",
    "Encryption": "NO",
    "Authentication": "YES",
    "AuthMethods": "FS",
    "AuthMethodsList": "FS",
}


def run_client(peer_bytes: bytes, security=None):
    channel = ReplayChannel(peer_bytes)
    security = security or fs_security(crypto_methods=[])
    proto = start_command(
        channel.conn, 5, security=security, target=TARGET, peer_address=("127.0.0.1", 9618)
    )
    return channel, proto


def test_truncated_handshake():
    data = ad_messages(M2_FS)
    channel, proto = run_client(data[: len(data) // 2])
    with pytest.raises(ConnectionClosed, match="truncated"):
        channel.run(proto)


def test_ad_over_the_attribute_limit_from_server():
    big = {f"Attr{i}": i for i in range(101)}
    channel, proto = run_client(ad_messages(big))
    with pytest.raises(ProtocolError, match="101"):
        channel.run(proto)


def test_ad_over_the_attribute_limit_from_client(pump):
    daemon, _ = mock_daemon()
    harness = pump()

    def client():
        ad = ClassAd()
        ad["Command"] = 5
        for i in range(100):
            ad[f"Attr{i}"] = i
        writer = harness.client_conn.writer().put_int(60010)
        put_classad(writer, ad)
        from cedar.stream.protocol import Receive, Send

        yield Send(writer)
        yield Receive()

    with pytest.raises(ConnectionClosed):
        harness.run(client(), harness.closing(daemon.connection_protocol(harness.server_conn)))
    assert isinstance(harness.server_error, ProtocolError)


def test_server_offers_only_methods_we_lack():
    m2 = dict(M2_FS, AuthMethods="KERBEROS", AuthMethodsList="KERBEROS,MUNGE")
    zero = CedarConnection().send_message(CedarConnection().writer().put_int(0))
    channel, proto = run_client(ad_messages(m2, extra=zero))
    with pytest.raises(AuthenticationError) as info:
        channel.run(proto)
    message = str(info.value)
    assert "KERBEROS, MUNGE" in message and "cedar lacks" in message
    assert channel.sent[1] == bytes.fromhex("01 00000008 0000000000000000")  # mask 0


def test_server_with_an_empty_method_list():
    m2 = dict(M2_FS, AuthMethods="", AuthMethodsList="")
    channel, proto = run_client(ad_messages(m2))
    with pytest.raises(AuthenticationError, match="accepts none of the methods .*FS"):
        channel.run(proto)
    assert len(channel.sent) == 1  # no mask sent


def test_peer_closes_mid_handshake_client_side():
    channel, proto = run_client(ad_messages(M2_FS))  # EOF while waiting for the chosen method
    with pytest.raises(AuthenticationError, match="required authentication"):
        channel.run(proto)


def test_peer_closes_inside_a_method():
    chosen = CedarConnection().send_message(CedarConnection().writer().put_int(4))
    channel, proto = run_client(ad_messages(M2_FS, extra=chosen))  # EOF before F1
    with pytest.raises(ConnectionClosed):
        channel.run(proto)


def test_server_closing_instead_of_answering():
    channel, proto = run_client(b"")
    with pytest.raises(CommandDenied, match="Connection closed during command authorization"):
        channel.run(proto)


# -- the daemon survives hostile peers ----------------------------------------------------------


def connect(daemon) -> socket.socket:
    host, port = daemon.host, daemon.port
    sock = socket.create_connection((host, port), timeout=30)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.fixture
def hostile():
    daemon, _ = mock_daemon(connection_timeout=1.0, max_message_size=4096)
    with daemon.run_in_thread():
        yield daemon


def still_serving(daemon) -> bool:
    security = ClientSecurity(SecurityConfig(methods=["CLAIMTOBE"]))
    return ping(daemon.address, "READ", security=security).authorized


@pytest.mark.parametrize(
    "payload",
    [
        b"\xff\x00\x00\x00\x08" + bytes(8),  # bad end flag
        b"\x01\x00\x00\x00\x00",  # zero length
        b"\x01\xff\xff\xff\xff",  # over 1 MiB
        b"\x01\x00\x00\x00\x08" + (60010).to_bytes(8, "big"),  # DC_AUTHENTICATE, no ad
        b"\x01\x00\x00\x00\x10" + (60010).to_bytes(8, "big") + (1 << 62).to_bytes(8, "big"),
        (b"\x00\x00\x00\x0f\xa0" + bytes(4000)) * 3,  # over the message size limit
        b"\x01\x00\x00\x00\x08" + (12345).to_bytes(8, "big"),  # unknown raw command
    ],
)
def test_daemon_closes_on_bad_input(hostile, payload):
    with connect(hostile) as sock:
        sock.sendall(payload)
        assert read_until_closed(sock) == b""
    assert still_serving(hostile)


def test_daemon_closes_idle_and_half_finished_connections(hostile):
    with connect(hostile) as idle, connect(hostile) as partial:
        partial.sendall(b"\x01\x00\x00\x01\x00" + bytes(10))  # announces 256 bytes, sends 10
        assert read_until_closed(idle) == b""  # closed by the per-read timeout
        assert read_until_closed(partial) == b""
    assert still_serving(hostile)


def test_peer_closes_mid_handshake_server_side(hostile):
    m1 = ad_messages({"Command": 5, "Enact": "NO", "AuthenticationNew": "REQUIRED",
                       "AuthMethods": "FS", "CryptoMethods": "AES"})  # fmt: skip
    payload = b"\x01" + (len(m1) - 5 + 8).to_bytes(4, "big") + (60010).to_bytes(8, "big") + m1[5:]
    with connect(hostile) as sock:
        sock.sendall(payload)
        sock.recv(65536)  # M2 arrives; then we vanish
    assert still_serving(hostile)


def test_connection_cap():
    daemon, _ = mock_daemon(max_connections=1, connection_timeout=30)
    with daemon.run_in_thread():
        with connect(daemon) as first:
            first.sendall(b"\x01\x00\x00\x00")  # incomplete header: the server waits
            assert wait_for(lambda: daemon.stats["connections"] == 1)
            with connect(daemon) as second:
                assert read_until_closed(second) == b""
            assert daemon.stats["rejected_connections"] == 1
        assert wait_for(lambda: daemon._active == 0)
        assert still_serving(daemon)
