"""Framing, AES-GCM and primitive readers fed arbitrary bytes: each test states its property."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cedar.errors import CedarError, ConnectionClosed, ProtocolError
from cedar.stream.connection import CedarConnection
from cedar.stream.framing import MAX_PACKET_PAYLOAD, encode_header
from cedar.stream.primitives import MAX_CRYPTO_STRING, MessageReader, MessageWriter

from .helpers import fuzz

KEY = bytes(range(32))


def _drain(
    conn: CedarConnection, data: bytes, chunks: list[int]
) -> tuple[list[bytes], type[CedarError] | None]:
    """Feed ``data`` in chunks, pulling messages after each; returns the payloads that came
    out and the class of the CedarError that ended it (None when none did)."""
    got: list[bytes] = []
    pos = 0
    try:
        for size in [*chunks, len(data)]:
            conn.receive_data(data[pos : pos + size])
            pos += size
            while (message := conn.next_message()) is not None:
                got.append(bytes(message.payload))
            if pos >= len(data):
                break
        conn.receive_data(b"")
        while (message := conn.next_message()) is not None:
            got.append(bytes(message.payload))
    except ConnectionClosed:
        pass
    except CedarError as exc:
        return got, type(exc)
    return got, None


def _packets(parts: list[tuple[int, bytes]]) -> bytes:
    return b"".join(bytes([end]) + len(body).to_bytes(4, "big") + body for end, body in parts)


def _framing_model(parts: list[tuple[int, bytes]], limit: int) -> tuple[list[bytes], bool]:
    """Spec 01 §2: a message is the bodies up to a packet whose end flag is 1..10; a flag over
    10, an empty packet, or a message over ``limit`` bytes is an error.  Returns (messages,
    ended in error)."""
    messages: list[bytes] = []
    current = b""
    for end, body in parts:
        if end > 10 or not body:
            return messages, True
        current += body
        if len(current) > limit:
            return messages, True
        if end:
            messages.append(current)
            current = b""
    return messages, False


@fuzz(300)
@given(st.binary(max_size=400), st.lists(st.integers(1, 50), max_size=8))
def test_plain_arbitrary_bytes(data: bytes, chunks: list[int]) -> None:
    """Arbitrary bytes give the same messages and the same CedarError (or none) however they
    are split across reads: framing never depends on how the bytes arrive."""
    whole = _drain(CedarConnection(max_message_size=4096), data, [])
    assert _drain(CedarConnection(max_message_size=4096), data, chunks) == whole


@fuzz(200)
@example([(0, b"a"), (1, b"b"), (10, b"c")])  # the end flags the reference accepts as last
@example([(1, b"a"), (11, b"b")])  # the first flag it refuses
@example([(0, b"a"), (1, b"")])  # an empty packet
@example([(0, b"x" * 64), (1, b"y" * 65)])  # one byte over the message limit
@given(st.lists(st.tuples(st.integers(0, 255), st.binary(max_size=64)), max_size=8))
def test_plain_packet_sequences(parts: list[tuple[int, bytes]]) -> None:
    """Any sequence of packets gives exactly the messages of the spec's framing model, and a
    ProtocolError exactly where the model has an error."""
    got, error = _drain(CedarConnection(max_message_size=128), _packets(parts), [])
    expected, failed = _framing_model(parts, 128)
    assert got == expected[: len(got)]
    if failed:
        assert error is not None and issubclass(error, ProtocolError), (got, error)
        assert got == expected
    else:
        assert got == expected and error is None, (got, error)


@fuzz(200)
@given(st.binary(max_size=300), st.lists(st.integers(1, 64), max_size=6))
def test_aes_arbitrary_bytes(data: bytes, chunks: list[int]) -> None:
    """Arbitrary bytes on an AES-GCM connection give the same outcome however they are split,
    and no message ever authenticates (the key is not the forger's)."""
    outcomes = []
    for split in ([], chunks):
        conn = CedarConnection(max_message_size=4096)
        conn.install_aes_key(KEY)
        outcomes.append(_drain(conn, data, split))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == []


def _sealed_stream(messages: list[bytes]) -> bytes:
    sender = CedarConnection()
    sender.install_aes_key(KEY, send_iv=bytes(16))
    return b"".join(sender.send_message(m) for m in messages)


@fuzz(200)
@given(
    st.lists(st.binary(min_size=1, max_size=40), min_size=1, max_size=4),
    st.integers(0, 10_000),
    st.integers(0, 7),
    st.sampled_from(["flip", "truncate", "drop-packet", "swap"]),
)
def test_aes_tampered_stream(messages: list[bytes], where: int, bit: int, how: str) -> None:
    """A tampered AES-GCM stream yields only a prefix of what was sent, then a CedarError:
    nothing altered ever authenticates."""
    wire = bytearray(_sealed_stream(messages))
    pos = where % len(wire)
    if how == "flip":
        wire[pos] ^= 1 << bit
    elif how == "truncate":
        del wire[pos:]
    elif how == "drop-packet":
        first = 5 + int.from_bytes(wire[1:5], "big")
        del wire[:first]
    else:
        wire = wire[pos:] + wire[:pos]
    receiver = CedarConnection()
    receiver.install_aes_key(KEY)
    try:
        got = []
        receiver.receive_data(bytes(wire))
        receiver.receive_data(b"")
        while (message := receiver.next_message()) is not None:
            got.append(message.payload)
    except CedarError:
        return
    # Whatever authenticated must be a prefix of what was sent.
    assert got == messages[: len(got)]


def test_announced_huge_packet_is_refused_before_buffering() -> None:
    conn = CedarConnection()
    conn.receive_data(encode_header(False, MAX_PACKET_PAYLOAD + 1) + b"x")
    with pytest.raises(ProtocolError, match="larger than the 1 MiB limit"):
        conn.next_message()


def test_many_packets_beyond_message_limit_fail() -> None:
    conn = CedarConnection(max_message_size=1000)
    conn.receive_data(_packets([(0, b"x" * 400)] * 3))
    with pytest.raises(ProtocolError, match="exceeds the 1000-byte limit"):
        conn.next_message()


READERS = ["int", "uint", "int32", "char", "double", "string", "nullable", "bytes", "eom"]


@fuzz(400)
@given(st.binary(max_size=64), st.lists(st.sampled_from(READERS), max_size=10), st.booleans())
def test_reader_getters(payload: bytes, calls: list[str], crypto: bool) -> None:
    """Any sequence of getters on any payload returns values in their type's range or raises a
    ProtocolError, and the reader's offset never leaves the payload."""
    reader = MessageReader(payload, crypto=crypto)
    for call in calls:
        try:
            if call == "int":
                assert -(1 << 63) <= reader.get_int() < 1 << 63
            elif call == "uint":
                assert 0 <= reader.get_uint() < 1 << 64
            elif call == "int32":
                assert -(1 << 31) <= reader.get_int32() < 1 << 31
            elif call == "char":
                reader.get_char()
            elif call == "double":
                assert isinstance(reader.get_double(), float)
            elif call == "string":
                assert isinstance(reader.get_string(), str)
            elif call == "nullable":
                reader.get_nullable_string()
            elif call == "bytes":
                reader.get_bytes(reader.remaining // 2 + 1)
            else:
                reader.end_of_message()
        except ProtocolError:
            pass
        assert 0 <= reader.offset <= len(payload)


@pytest.mark.parametrize("length", [MAX_CRYPTO_STRING + 1, 1 << 62, (1 << 64) - 1])
def test_crypto_string_length_prefix_is_bounded(length: int) -> None:
    reader = MessageReader((length & ((1 << 64) - 1)).to_bytes(8, "big") + b"ab", crypto=True)
    with pytest.raises(ProtocolError, match="out of range|ends before"):
        reader.get_string()


@fuzz(100)
@given(st.lists(st.text(max_size=20).filter(lambda s: "\0" not in s), max_size=5), st.booleans())
def test_strings_round_trip(texts: list[str], crypto: bool) -> None:
    """Strings written with put_string read back equal, in order, with nothing left over."""
    writer = MessageWriter(crypto=crypto)
    for text in texts:
        writer.put_string(text)
    reader = MessageReader(writer.getvalue(), crypto=crypto)
    assert [reader.get_string() for _ in texts] == texts
    reader.end_of_message()
