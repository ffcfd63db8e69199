"""Spec 01 §2: packet framing, message reassembly and malformed headers."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cedar.errors import ConnectionClosed, ProtocolError
from cedar.stream import CedarConnection, MessageWriter
from cedar.stream.framing import MAX_PACKET_PAYLOAD, decode_header, encode_header, frame_plain


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def feed(*chunks: bytes, eof: bool = False) -> CedarConnection:
    conn = CedarConnection()
    for chunk in chunks:
        conn.receive_data(chunk)
    if eof:
        conn.receive_data(b"")
    return conn


def test_first_packet_of_dc_authenticate_header() -> None:
    # spec 01 §2.8: end=1, len=639
    assert encode_header(True, 639) == h("01 0000027f")
    assert decode_header(h("01 0000027f")) == (True, 639)


def test_one_packet_per_message_when_it_fits() -> None:
    wire = CedarConnection().send_message(MessageWriter().put_int(60010))
    assert wire == h("01 00000008 000000000000ea6a")


def test_reference_style_split_is_accepted() -> None:
    # A 20 KB message sent as 4091-byte packets (spec 01 §2.4) reassembles into one message.
    payload = bytes(range(256)) * 80
    conn = feed(frame_plain(payload, chunk=4091))
    message = conn.next_message()
    assert message is not None and message.payload == payload
    assert conn.next_message() is None


def test_large_message_is_split_below_one_mib() -> None:
    payload = b"x" * (MAX_PACKET_PAYLOAD + 10)
    wire = CedarConnection().send_message(payload)
    assert wire[:5] == h("00 00100000")
    assert wire[5 + MAX_PACKET_PAYLOAD : 10 + MAX_PACKET_PAYLOAD] == h("01 0000000a")


@pytest.mark.parametrize("end", range(1, 11))
def test_end_flags_1_to_10_end_a_message(end: int) -> None:
    message = feed(bytes([end]) + h("00000001 2a")).next_message()
    assert message is not None and message.get_char() == 0x2A


@pytest.mark.parametrize(
    ("header", "error"),
    [
        ("0b 00000001", "end flag 0x0b"),
        ("80 00000001", "end flag 0x80"),
        ("01 00000000", "length 0"),
        ("01 00100001", "larger than the 1 MiB limit"),
    ],
)
def test_bad_headers_are_rejected(header: str, error: str) -> None:
    with pytest.raises(ProtocolError, match=error):
        feed(h(header) + b"\0").next_message()


def test_bad_header_error_names_the_stream_offset() -> None:
    conn = feed(h("01 00000001 2a") + h("0c 00000001 2a"))
    assert conn.next_message() is not None
    with pytest.raises(ProtocolError, match="offset 6"):
        conn.next_message()


def test_message_split_across_reads_and_packets() -> None:
    # 10 + 1 + 68 byte packets, end flags 0, 0, 1 (spec 01 §2.3 [live]); fed a byte at a time.
    payload = bytes(range(79))
    wire = (
        h("00 0000000a")
        + payload[:10]
        + h("00 00000001")
        + payload[10:11]
        + h("01 00000044")
        + payload[11:]
    )
    conn = CedarConnection()
    for index, byte in enumerate(wire):
        assert conn.next_message() is None, index
        conn.receive_data(bytes([byte]))
    message = conn.next_message()
    assert message is not None and message.payload == payload


def test_reads_never_cross_a_message_boundary() -> None:
    conn = feed(h("01 00000008 0000000000000004") + h("01 00000008 0000000000000005"))
    first = conn.next_message()
    assert first is not None and first.get_int() == 4
    with pytest.raises(ProtocolError, match="message ends"):
        first.get_int()
    second = conn.next_message()
    assert second is not None and second.get_int() == 5


def test_eof_at_a_message_boundary() -> None:
    conn = feed(eof=True)
    with pytest.raises(ConnectionClosed, match="closed by the peer"):
        conn.next_message()


@pytest.mark.parametrize("wire", ["01 0000", "01 00000008 00000000", "00 00000001 2a"])
def test_eof_inside_a_packet_or_message(wire: str) -> None:
    with pytest.raises(ConnectionClosed, match="middle of a packet or message"):
        feed(h(wire), eof=True).next_message()


def test_oversized_reassembled_message_is_cut_off() -> None:
    conn = CedarConnection(max_message_size=100)
    conn.receive_data(frame_plain(b"y" * 101, chunk=60))
    with pytest.raises(ProtocolError, match="exceeds the 100-byte limit"):
        conn.next_message()


def test_empty_message_is_never_sent() -> None:
    with pytest.raises(ValueError):
        CedarConnection().send_message(b"")


@given(st.binary(min_size=1, max_size=20000), st.integers(min_value=1, max_value=5000))
def test_any_packet_split_round_trips(payload: bytes, chunk: int) -> None:
    """A payload split into packets of any size reassembles into one equal message."""
    conn = feed(frame_plain(payload, chunk=chunk))
    message = conn.next_message()
    assert message is not None and message.payload == payload


def test_header_struct_is_the_construct_declaration() -> None:
    from cedar.stream.framing import HEADER_SIZE, PACKET_HEADER

    for end, length in ((0, 1), (1, 639), (10, MAX_PACKET_PAYLOAD), (7, 0xFFFFFFFF)):
        built = PACKET_HEADER.build({"end": end, "length": length})
        assert len(built) == HEADER_SIZE
        if end <= 1 and length <= MAX_PACKET_PAYLOAD:
            assert encode_header(bool(end), length) == built
        if length <= MAX_PACKET_PAYLOAD:
            assert decode_header(built) == (end != 0, length)


# A message after the first takes the one-packet path of ``next_message`` when it is whole and
# in one packet; the rules are the same as for any other.


def _after_one(wire: bytes = b"", **options: int) -> CedarConnection:
    """A connection that has read one message, ``wire`` then received."""
    conn = CedarConnection(**options)
    conn.receive_data(h("01 00000001 2a") + wire)
    assert conn.next_message() is not None
    return conn


@pytest.mark.parametrize("end", range(1, 11))
def test_later_messages_end_with_any_end_flag(end: int) -> None:
    message = _after_one(bytes([end]) + h("00000001 2b")).next_message()
    assert message is not None and message.complete and message.get_char() == 0x2B


@pytest.mark.parametrize(
    ("header", "error"),
    [
        ("0b 00000001", "end flag 0x0b"),
        ("01 00000000", "length 0"),
        ("01 00100001", "larger than the 1 MiB limit"),
    ],
)
def test_later_bad_headers_are_rejected_at_their_offset(header: str, error: str) -> None:
    conn = _after_one(h(header) + b"\0")
    with pytest.raises(ProtocolError, match=error) as failure:
        conn.next_message()
    assert "offset 6" in str(failure.value) or "offset 7" in str(failure.value)


def test_later_oversized_message_is_cut_off() -> None:
    conn = _after_one(frame_plain(b"y" * 101), max_message_size=100)
    with pytest.raises(ProtocolError, match="exceeds the 100-byte limit"):
        conn.next_message()


def test_later_message_fed_a_byte_at_a_time() -> None:
    conn = _after_one()
    wire = frame_plain(b"abc") + frame_plain(b"de")
    for index, byte in enumerate(wire[:8]):
        assert conn.next_message() is None, index
        conn.receive_data(bytes([byte]))
    first = conn.next_message()
    assert first is not None and first.payload == b"abc"
    conn.receive_data(wire[8:])
    second = conn.next_message()
    assert second is not None and second.payload == b"de" and conn.next_message() is None


def test_later_clear_packets_feed_the_received_digest() -> None:
    wire = h("01 00000001 2a") + frame_plain(b"abc") + frame_plain(b"de", chunk=1)
    conn = CedarConnection()
    conn.receive_data(wire)
    assert [m.payload for m in iter(conn.next_message, None)] == [b"*", b"abc", b"de"]
    assert conn.transcript_digests()[1] == hashlib.sha256(wire).digest()


def test_a_client_takes_the_large_packets_a_schedd_sends() -> None:
    """The 25.13.2 schedd sends an ad over 1 MiB in packets over 1 MiB (observed: 1 349 450
    bytes for a 5 MiB attribute).  A client's connection (the drivers' default) takes packets
    up to its message limit; the spec's 1 MiB stays the default, which servers keep."""
    from cedar.stream.connection import CedarConnection
    from cedar.stream.drivers import SyncChannel
    from cedar.stream.framing import CLIENT_MAX_PACKET, encode_header

    payload = b"y" * (2 << 20)
    packet = encode_header(True, len(payload)) + payload
    client = CedarConnection(max_packet_size=CLIENT_MAX_PACKET)
    client.receive_data(packet)
    message = client.next_message()
    assert message is not None and message.payload == payload
    strict = CedarConnection()
    strict.receive_data(packet)
    with pytest.raises(ProtocolError, match="larger than the 1 MiB limit"):
        strict.next_message()
    over = CedarConnection(max_packet_size=CLIENT_MAX_PACKET)
    over.receive_data(encode_header(True, CLIENT_MAX_PACKET + 1) + b"z")
    with pytest.raises(ProtocolError, match="larger than the"):
        over.next_message()
    import socket

    left, right = socket.socketpair()
    with left, right:
        assert SyncChannel(left).conn.max_packet_size == CLIENT_MAX_PACKET
