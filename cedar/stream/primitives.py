"""CEDAR primitive encodings over the bytes of one message (spec 01 §3).

A :class:`MessageWriter` builds the payload of one message and a :class:`MessageReader` takes
one apart.  Both work on bytes only; packets, encryption and sockets live elsewhere.  The one
piece of connection state that changes the encoding -- whether the stream is in *crypto mode*,
which makes strings length-prefixed -- is passed in explicitly.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable

from cedar.errors import InvalidArgument, ProtocolError

#: The legacy NULL-string marker of plain mode (``'\\255'`` in the reference, not 0xFF).
NULL_STRING_MARKER = 0xAD
#: Largest length prefix accepted for a crypto-mode string.
MAX_CRYPTO_STRING = 10_000_000
#: Scale of the mantissa in the double encoding (2**31 - 1).
DOUBLE_MANTISSA_SCALE = 2147483647.0

_INT64 = struct.Struct(">q")
_UINT64 = struct.Struct(">Q")
_INT64_FROM = _INT64.unpack_from
_UINT64_FROM = _UINT64.unpack_from
_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1


def _to_bytes(value: str | bytes | None) -> bytes:
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return bytes(value)


def decode_text(raw: bytes) -> str:
    """A wire string as ``str``; undecodable bytes survive a round trip (surrogateescape)."""
    return raw.decode("utf-8", "surrogateescape")


class MessageTruncated(ProtocolError):
    """A read ran past the end of the bytes at hand.

    For a whole message this is a malformed message; for a streamed one (:class:`MessageReader`
    with ``complete`` false) it only means that more packets are needed.
    """


class MessageWriter:
    """Accumulates the payload of one CEDAR message.

    ``crypto`` is the stream's crypto mode while the strings are put; under AES-GCM it is always
    true and every string is length-prefixed.
    """

    __slots__ = ("_parts", "crypto")

    def __init__(self, *, crypto: bool = False) -> None:
        self._parts: list[bytes] = []
        self.crypto = crypto

    def put_int(self, value: int) -> MessageWriter:
        """Any integer type: 8 bytes big-endian, negatives sign-extended, others zero-extended."""
        value = int(value)
        if value < _INT64_MIN or value > _UINT64_MAX:
            raise InvalidArgument(f"integer {value} does not fit in 64 bits")
        self._parts.append(_INT64.pack(value) if value < 0 else _UINT64.pack(value))
        return self

    def put_char(self, value: int) -> MessageWriter:
        """One raw byte."""
        self._parts.append(bytes((value & 0xFF,)))
        return self

    def put_double(self, value: float) -> MessageWriter:
        """The lossy frexp/ldexp scheme: int(trunc(m * (2**31-1))) then int(e)."""
        if math.isnan(value) or math.isinf(value):
            raise InvalidArgument("NaN and infinity have no CEDAR encoding")
        mantissa, exponent = math.frexp(value)
        self.put_int(int(mantissa * DOUBLE_MANTISSA_SCALE))
        return self.put_int(exponent)

    def put_string(self, value: str | bytes | None) -> MessageWriter:
        """A string in the form the current crypto mode requires; ``None`` is sent as ``""``."""
        raw = _to_bytes(value)
        if b"\0" in raw:
            raise InvalidArgument("a CEDAR string cannot contain a NUL byte")
        if self.crypto:
            self._parts.append(_UINT64.pack(len(raw) + 1))
        self._parts.append(raw + b"\0")
        return self

    def put_strings(self, values: Iterable[str | bytes | None]) -> MessageWriter:
        """Several strings, exactly as :meth:`put_string` each, in one piece.

        For the ClassAd writer, which puts hundreds per ad.  Nothing is written when one of them
        cannot be sent.
        """
        raws = [_to_bytes(value) for value in values]
        if b"\0" in b"".join(raws):
            raise InvalidArgument("a CEDAR string cannot contain a NUL byte")
        if not raws:
            return self
        if self.crypto:
            pack = _UINT64.pack
            chunks = []
            for raw in raws:
                chunks.append(pack(len(raw) + 1))
                chunks.append(raw)
                chunks.append(b"\0")
            self._parts.append(b"".join(chunks))
        else:
            raws.append(b"")
            self._parts.append(b"\0".join(raws))
        return self

    def put_null_string(self) -> MessageWriter:
        """The legacy NULL string (``put_nullstr``)."""
        if self.crypto:
            self._parts.append(_UINT64.pack(1) + bytes((NULL_STRING_MARKER,)))
        else:
            self._parts.append(bytes((NULL_STRING_MARKER,)))
        return self

    def put_secret(self, value: str | bytes) -> MessageWriter:
        """A secret; identical to a string because cedar only uses AES-GCM (spec 01 §3.6)."""
        return self.put_string(value)

    def put_bytes(self, value: bytes) -> MessageWriter:
        """Raw bytes, no length, no terminator."""
        self._parts.append(bytes(value))
        return self

    def getvalue(self) -> bytes:
        """The payload built so far."""
        if len(self._parts) > 1:
            self._parts[:] = [b"".join(self._parts)]
        return self._parts[0] if self._parts else b""

    def __bytes__(self) -> bytes:
        return self.getvalue()

    def __len__(self) -> int:
        return len(self.getvalue())


class MessageReader:
    """Reads primitives from the payload of one complete CEDAR message.

    Reads never go past the end of the message; every failure raises :class:`ProtocolError` naming
    the offset and what was expected.
    """

    __slots__ = ("_data", "_pos", "complete", "crypto")

    def __init__(self, payload: bytes, *, crypto: bool = False, complete: bool = True) -> None:
        self._data = bytes(payload)
        self._pos = 0
        self.crypto = crypto
        #: False for the first pieces of a streamed message (more of it follows).
        self.complete = complete

    @property
    def offset(self) -> int:
        """Bytes consumed so far."""
        return self._pos

    @property
    def remaining(self) -> int:
        """Bytes not yet consumed."""
        return len(self._data) - self._pos

    @property
    def payload(self) -> bytes:
        """The whole message payload."""
        return self._data

    def seek(self, offset: int) -> None:
        """Go back (or forward) to ``offset``, for a reader that tries a fast path first."""
        if not 0 <= offset <= len(self._data):
            raise InvalidArgument(f"offset {offset} outside the message")
        self._pos = offset

    def at_end(self) -> bool:
        """``peek_end_of_message``: true when every byte of the message has been read."""
        return self._pos >= len(self._data)

    def end_of_message(self) -> None:
        """Receive-side EOM: fails when bytes are left unread (spec 01 §2.6)."""
        if self._pos != len(self._data):
            raise ProtocolError(
                f"{len(self._data) - self._pos} unread bytes at end of message", offset=self._pos
            )

    def _take(self, count: int, what: str) -> bytes:
        end = self._pos + count
        if end > len(self._data):
            raise MessageTruncated(
                f"message ends before {what} ({count} bytes needed, {self.remaining} left)",
                offset=self._pos,
            )
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def get_int(self) -> int:
        """A signed 64-bit integer."""
        pos = self._pos
        if pos + 8 > len(self._data):
            self._take(8, "an integer")  # raises MessageTruncated
        self._pos = pos + 8
        return int(_INT64_FROM(self._data, pos)[0])

    def get_uint(self) -> int:
        """An unsigned 64-bit integer."""
        pos = self._pos
        if pos + 8 > len(self._data):
            self._take(8, "an integer")  # raises MessageTruncated
        self._pos = pos + 8
        return int(_UINT64_FROM(self._data, pos)[0])

    def get_int32(self) -> int:
        """An ``int`` field: the low 32 bits as a signed value (C cast, no range error)."""
        low = self.get_uint() & 0xFFFFFFFF
        return low - (1 << 32) if low & 0x80000000 else low

    def get_char(self) -> int:
        """One raw byte."""
        return self._take(1, "a char")[0]

    def get_double(self) -> float:
        """The frexp/ldexp double scheme."""
        frac = self.get_int32()
        exponent = self.get_int32()
        try:
            return math.ldexp(frac / DOUBLE_MANTISSA_SCALE, exponent)
        except OverflowError:
            raise ProtocolError("double exponent out of range", offset=self._pos - 8) from None

    def get_bytes(self, count: int) -> bytes:
        """Exactly ``count`` raw bytes."""
        return self._take(count, f"{count} raw bytes")

    def get_nullable_string_bytes(self) -> bytes | None:
        """A string as raw bytes, ``None`` for the NULL-string marker."""
        start = self._pos
        if self.crypto:
            length = self.get_int()
            if length < 0 or length > MAX_CRYPTO_STRING:
                raise ProtocolError(f"string length prefix {length} out of range", offset=start)
            if length == 0:
                return b""
            raw = self._take(length, "the string bytes of the length prefix")
            if raw[0] == NULL_STRING_MARKER:
                return None
            nul = raw.find(b"\0")
            return raw if nul < 0 else raw[:nul]
        data = self._data
        if start >= len(data):
            raise MessageTruncated("message ends before a string", offset=start)
        if data[start] == NULL_STRING_MARKER:
            self._pos = start + 1
            return None
        nul = data.find(b"\0", start)
        if nul < 0:
            raise MessageTruncated(
                "string without NUL terminator before end of message", offset=start
            )
        self._pos = nul + 1
        return data[start:nul]

    def get_strings(self, count: int) -> list[bytes | None]:
        """``count`` strings as by :meth:`get_nullable_string_bytes`, in one tight loop.

        The ClassAd reader takes hundreds of strings per ad, so the per-call overhead of the
        single-string reader dominates there.  Any string the fast loop does not take (a
        malformed one included) goes through the single-string reader, so results, errors,
        offsets and the position after an error are exactly that reader's.  The list only grows
        as strings are actually read: a huge ``count`` on a short message allocates nothing.
        """
        data = self._data
        end = len(data)
        pos = self._pos
        out: list[bytes | None] = []
        append = out.append
        single = self.get_nullable_string_bytes
        if not self.crypto:
            find = data.find
            for _ in range(count):
                nul = find(b"\0", pos)
                if nul >= 0 and (nul == pos or data[pos] != NULL_STRING_MARKER):
                    append(data[pos:nul])
                    pos = nul + 1
                    continue
                self._pos = pos
                append(single())
                pos = self._pos
            self._pos = pos
            return out
        unpack = _INT64.unpack_from
        slow = False
        while len(out) < count:
            try:
                for _ in range(count - len(out)):
                    length = unpack(data, pos)[0]
                    start = pos + 8
                    stop = start + length
                    # Terminated, not the NULL marker: the common case.  A NUL inside is
                    # looked for once for all strings, below.
                    if not (
                        0 < length <= MAX_CRYPTO_STRING
                        and stop <= end
                        and data[stop - 1] == 0
                        and data[start] != NULL_STRING_MARKER
                    ):
                        break
                    append(data[start : stop - 1])
                    pos = stop
                else:
                    break
            except struct.error:
                pass  # fewer than 8 bytes left: the single reader says so
            self._pos = pos
            append(single())
            pos = self._pos
            slow = True
        self._pos = pos
        if slow:
            if any(raw is not None and b"\0" in raw for raw in out):
                return [raw if raw is None else raw.split(b"\0", 1)[0] for raw in out]
        elif b"\0" in b"".join(out):  # type: ignore[arg-type]
            return [raw.split(b"\0", 1)[0] for raw in out]  # type: ignore[union-attr]
        return out

    def get_string_bytes(self) -> bytes:
        """A string as raw bytes; the NULL marker reads as ``b""``."""
        raw = self.get_nullable_string_bytes()
        return b"" if raw is None else raw

    def get_string(self) -> str:
        """A string (UTF-8; undecodable bytes kept via surrogateescape)."""
        return decode_text(self.get_string_bytes())

    def get_nullable_string(self) -> str | None:
        """A string, or ``None`` for the NULL-string marker (``get_nullstr``)."""
        raw = self.get_nullable_string_bytes()
        return None if raw is None else decode_text(raw)

    def get_secret(self) -> str:
        """A secret; identical to a string under AES-GCM."""
        return self.get_string()

    def __repr__(self) -> str:
        return f"<MessageReader {len(self._data)} bytes, at {self._pos}, crypto={self.crypto}>"
