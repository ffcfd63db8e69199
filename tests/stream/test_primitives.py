"""Spec 01 §3: every primitive vector, round-trip properties, and malformed input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cedar.errors import ProtocolError
from cedar.stream import MessageReader, MessageWriter


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        (0, "00 00 00 00 00 00 00 00"),
        (1, "00 00 00 00 00 00 00 01"),
        (60010, "00 00 00 00 00 00 ea 6a"),
        (666, "00 00 00 00 00 00 02 9a"),
        (262144, "00 00 00 00 00 04 00 00"),
        (-1, "ff ff ff ff ff ff ff ff"),
        (0xFFFFFFFF, "00 00 00 00 ff ff ff ff"),
    ],
)
def test_integer_vectors(value: int, wire: str) -> None:
    assert MessageWriter().put_int(value).getvalue() == h(wire)


def test_int_field_truncates_like_a_c_cast() -> None:
    # unsigned 0xffffffff and int -1 decode into a 32-bit field as the same bit pattern
    assert MessageReader(h("00000000ffffffff")).get_int32() == -1
    assert MessageReader(h("ffffffffffffffff")).get_int32() == -1
    assert MessageReader(h("0000000180000000")).get_int32() == -(1 << 31)
    assert MessageReader(h("ffffffffffffffff")).get_uint() == (1 << 64) - 1


@pytest.mark.parametrize(
    ("value", "wire", "decoded"),
    [
        (0.0, "00" * 16, 0.0),
        (0.25, "000000003fffffff ffffffffffffffff", 0.24999999988358468),
        (1.0, "000000003fffffff 0000000000000001", 0.9999999995343387),
        (-1.5, "ffffffffa0000001 0000000000000001", -1.4999999997671694),
        (3.14159, "000000006487e7bf 0000000000000002", 3.1415899987991853),
    ],
)
def test_double_vectors(value: float, wire: str, decoded: float) -> None:
    assert MessageWriter().put_double(value).getvalue() == h(wire)
    assert MessageReader(h(wire)).get_double() == decoded


def test_double_rejects_nan_and_infinity() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            MessageWriter().put_double(bad)


@pytest.mark.parametrize(
    ("value", "plain", "crypto"),
    [
        ("abc", "61626300", "0000000000000004 61626300"),
        ("", "00", "0000000000000001 00"),
        ("Hi", "486900", "0000000000000003 486900"),
    ],
)
def test_string_vectors(value: str, plain: str, crypto: str) -> None:
    assert MessageWriter().put_string(value).getvalue() == h(plain)
    assert MessageWriter(crypto=True).put_string(value).getvalue() == h(crypto)
    assert MessageReader(h(plain)).get_string() == value
    assert MessageReader(h(crypto), crypto=True).get_string() == value


def test_crypto_string_vector_from_a_live_schedd() -> None:
    text = 'ReturnCode = "AUTHORIZED"'
    wire = MessageWriter(crypto=True).put_string(text).getvalue()
    assert wire[:8] == h("000000000000001a") and wire[8:] == text.encode() + b"\0"


def test_null_string_marker_is_0xad() -> None:
    assert MessageWriter().put_null_string().getvalue() == b"\xad"
    assert MessageWriter(crypto=True).put_null_string().getvalue() == h("0000000000000001 ad")
    reader = MessageReader(b"\xadxyz\0")
    assert reader.get_nullable_string() is None
    assert reader.get_string() == "xyz"
    assert MessageReader(h("0000000000000001ad"), crypto=True).get_nullable_string() is None
    assert MessageReader(b"\xad").get_string() == ""


def test_crypto_string_of_length_zero_reads_as_empty() -> None:
    assert MessageReader(bytes(8), crypto=True).get_string() == ""


def test_embedded_nul_is_refused_on_send() -> None:
    with pytest.raises(ValueError):
        MessageWriter().put_string("a\0b")


def test_char_and_raw_bytes() -> None:
    wire = MessageWriter().put_char(0x41).put_bytes(b"\x00\x01").getvalue()
    assert wire == b"A\x00\x01"
    reader = MessageReader(wire)
    assert reader.get_char() == 0x41 and reader.get_bytes(2) == b"\x00\x01"
    reader.end_of_message()


def test_undecodable_bytes_survive_a_round_trip() -> None:
    raw = b"caf\xe9"
    text = MessageReader(raw + b"\0").get_string()
    assert MessageWriter().put_string(text).getvalue() == raw + b"\0"


# -- malformed input: each names the offset and what was expected --------------------------------


def test_read_past_end_of_message() -> None:
    reader = MessageReader(h("0000000000000001 00"))
    reader.get_int()
    reader.get_char()
    with pytest.raises(ProtocolError, match=r"message ends before an integer.*offset 9"):
        reader.get_int()


def test_string_without_terminator() -> None:
    with pytest.raises(ProtocolError, match=r"without NUL terminator.*offset 0"):
        MessageReader(b"abc").get_string()


def test_crypto_string_longer_than_message() -> None:
    with pytest.raises(ProtocolError, match="string bytes"):
        MessageReader(h("0000000000000010 4142"), crypto=True).get_string()


@pytest.mark.parametrize("length", ["ffffffffffffffff", "0000000000989681"])  # -1, 10_000_001
def test_crypto_string_length_out_of_range(length: str) -> None:
    with pytest.raises(ProtocolError, match="out of range"):
        MessageReader(h(length) + b"x" * 16, crypto=True).get_string()


def test_unread_bytes_at_end_of_message() -> None:
    reader = MessageReader(h("0000000000000001 aabbcc"))
    reader.get_int()
    assert not reader.at_end()
    with pytest.raises(ProtocolError, match=r"3 unread bytes.*offset 8"):
        reader.end_of_message()


# -- properties ---------------------------------------------------------------------------------

int64 = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
wire_text = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",))).filter(
    lambda s: not s.encode().startswith(b"\xad")
)


@given(int64)
def test_int_round_trip(value: int) -> None:
    """Every 64-bit integer reads back equal."""
    assert MessageReader(MessageWriter().put_int(value).getvalue()).get_int() == value


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_double_round_trip_is_lossy_by_31_bits(value: float) -> None:
    """A double reads back truncated toward zero, within 2**-30 of its magnitude (spec 01)."""
    decoded = MessageReader(MessageWriter().put_double(value).getvalue()).get_double()
    assert abs(decoded - value) <= abs(value) * 2.0**-30
    assert abs(decoded) <= abs(value)  # truncation toward zero


@given(st.lists(st.one_of(int64, wire_text), max_size=20), st.booleans())
def test_mixed_message_round_trip(values: list[int | str], crypto: bool) -> None:
    """Any mix of integers and strings reads back equal, in order, with nothing left over."""
    writer = MessageWriter(crypto=crypto)
    for value in values:
        if isinstance(value, int):
            writer.put_int(value)
        else:
            writer.put_string(value)
    reader = MessageReader(writer.getvalue(), crypto=crypto)
    decoded = [reader.get_int() if isinstance(v, int) else reader.get_string() for v in values]
    reader.end_of_message()
    assert decoded == values
