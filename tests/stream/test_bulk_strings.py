"""The bulk string reader and writer agree exactly with the one-string-at-a-time primitives.

``MessageReader.get_strings`` is the ClassAd reader's hot path; on any input -- NULL markers,
NULs inside a string, bad length prefixes, truncation -- it must give the same strings, the
same error (message and offset) and leave the reader at the same place as calling
``get_nullable_string_bytes`` in a loop.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cedar.errors import ProtocolError
from cedar.stream import MessageReader, MessageWriter
from cedar.stream.primitives import MAX_CRYPTO_STRING, NULL_STRING_MARKER

_BODY = st.binary(max_size=12) | st.sampled_from([b"ZKM", b"A = 1", b"\xad", b"\xadx", b"a\0b"])


@st.composite
def _crypto_string(draw: st.DrawFn) -> bytes:
    """One crypto-mode string, usually well formed, sometimes not in one of many ways."""
    body = draw(_BODY)
    kind = draw(st.sampled_from(["ok"] * 6 + ["null", "zero", "short", "long", "noterm", "huge"]))
    if kind == "null":
        return struct.pack(">Q", 1) + bytes((NULL_STRING_MARKER,))
    if kind == "zero":
        return struct.pack(">Q", 0)
    if kind == "short":  # prefix says fewer bytes than are there: the rest is the next string
        return struct.pack(">Q", max(len(body), 1)) + body + b"\0"
    if kind == "long":  # prefix claims more
        return struct.pack(">Q", len(body) + 5) + body + b"\0"
    if kind == "noterm":
        return struct.pack(">Q", len(body)) + body
    if kind == "huge":
        return struct.pack(">q", draw(st.sampled_from([-1, MAX_CRYPTO_STRING + 1, 1 << 62])))
    return struct.pack(">Q", len(body) + 1) + body + b"\0"


@st.composite
def _plain_string(draw: st.DrawFn) -> bytes:
    body = draw(_BODY)
    kind = draw(st.sampled_from(["ok"] * 6 + ["null", "noterm"]))
    if kind == "null":
        return bytes((NULL_STRING_MARKER,))
    if kind == "noterm":
        return body
    return body + b"\0"


def _one_by_one(reader: MessageReader, count: int) -> list[bytes | None]:
    return [reader.get_nullable_string_bytes() for _ in range(count)]


def _outcome(read: object, payload: bytes, crypto: bool, count: int) -> tuple[object, int]:
    reader = MessageReader(payload, crypto=crypto)
    try:
        result: object = read(reader, count)  # type: ignore[operator]
    except ProtocolError as exc:
        result = ("error", str(exc), exc.offset)
    return result, reader.offset


_NUL_INSIDE = struct.pack(">Q", 4) + b"a\0b\0"
_NULL = struct.pack(">Q", 1) + bytes((NULL_STRING_MARKER,))


@settings(max_examples=400)
@example([_NUL_INSIDE], 1, 0, False)
@example([_NUL_INSIDE, _NULL, _NUL_INSIDE], 3, 0, False)
@example([_NULL, _NUL_INSIDE], 2, 0, False)
@example([struct.pack(">Q", 3) + b"ab\0"] * 3, 3, 2, True)
@given(
    st.lists(_crypto_string(), max_size=8),
    st.integers(0, 10),
    st.integers(0, 40),
    st.booleans(),
)
def test_crypto_bulk_reader_matches_single_reader(
    strings: list[bytes], count: int, cut: int, truncate: bool
) -> None:
    """For any run of crypto-mode strings, cut or not, the bulk reader gives what reading them
    one by one gives (values, or the same ProtocolError at the same offset), ending at the same
    offset."""
    payload = b"".join(strings)
    if truncate:
        payload = payload[: max(0, len(payload) - cut)]
    bulk = _outcome(MessageReader.get_strings, payload, True, count)
    assert bulk == _outcome(_one_by_one, payload, True, count)


@settings(max_examples=300)
@example([b"\xad", b"ab\0", b"\0"], 3, 0)
@example([b"ab\0", b"cd"], 2, 0)
@given(st.lists(_plain_string(), max_size=8), st.integers(0, 10), st.integers(0, 20))
def test_plain_bulk_reader_matches_single_reader(
    strings: list[bytes], count: int, cut: int
) -> None:
    """For any run of plain strings, cut or not, the bulk reader gives what reading them one by
    one gives (values, or the same ProtocolError at the same offset), ending at the same offset."""
    payload = b"".join(strings)
    payload = payload[: max(0, len(payload) - cut)] if cut % 2 else payload
    bulk = _outcome(MessageReader.get_strings, payload, False, count)
    assert bulk == _outcome(_one_by_one, payload, False, count)


@pytest.mark.parametrize("crypto", [False, True])
def test_bulk_reader_huge_count_on_short_message_fails_cleanly(crypto: bool) -> None:
    writer = MessageWriter(crypto=crypto).put_string("A = 1")
    reader = MessageReader(writer.getvalue(), crypto=crypto)
    with pytest.raises(ProtocolError):
        reader.get_strings(1_000_000)


@settings(max_examples=200)
@given(
    st.lists(st.text(max_size=10).filter(lambda t: "\0" not in t) | st.none(), max_size=8),
    st.booleans(),
)
def test_bulk_writer_matches_put_string(values: list[str | None], crypto: bool) -> None:
    """put_strings writes exactly the bytes of put_string called once per value."""
    one = MessageWriter(crypto=crypto)
    for value in values:
        one.put_string(value)
    assert MessageWriter(crypto=crypto).put_strings(values).getvalue() == one.getvalue()


def test_bulk_writer_refuses_nul_and_writes_nothing() -> None:
    writer = MessageWriter(crypto=True).put_string("x")
    with pytest.raises(ValueError):
        writer.put_strings(["a", "b\0c"])
    assert writer.getvalue() == MessageWriter(crypto=True).put_string("x").getvalue()


def test_seek_stays_inside_the_message() -> None:
    reader = MessageReader(b"abc\0")
    reader.get_string()
    reader.seek(0)
    assert reader.get_string() == "abc"
    with pytest.raises(ValueError):
        reader.seek(5)
