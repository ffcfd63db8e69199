"""The small DER codec Kerberos needs (RFC 4120 §5: X.690 DER, explicit context tags).

Only what the KERBEROS method reads and writes: INTEGER, BIT STRING, OCTET STRING,
GeneralString, GeneralizedTime, SEQUENCE (OF), context ``[n]`` and application ``[APPLICATION n]``
tags.  Decoding is bounded (lengths checked against the input, one level decoded at a time and
only as deep as the fixed message layouts go), so a peer's
garbage ends in :class:`~cedar.auth.errors.KerberosError`, never in an exception of Python's own.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from cedar.auth.errors import KerberosError

UNIVERSAL, APPLICATION, CONTEXT = 0, 1, 2
INTEGER, BIT_STRING, OCTET_STRING, SEQUENCE = 0x02, 0x03, 0x04, 0x10
GENERAL_STRING, GENERALIZED_TIME = 0x1B, 0x18


@dataclass(frozen=True)
class Tlv:
    """One decoded element: tag class, constructed bit, tag number and content octets."""

    cls: int
    constructed: bool
    number: int
    value: bytes

    def children(self) -> list[Tlv]:
        """The elements of a constructed value, in order."""
        if not self.constructed:
            raise KerberosError("malformed Kerberos message: a primitive where a sequence belongs")
        return decode_all(self.value)

    def fields(self) -> dict[int, Tlv]:
        """A SEQUENCE's explicitly tagged fields by tag number (the inner element of each)."""
        out: dict[int, Tlv] = {}
        for child in self.children():
            if child.cls != CONTEXT or not child.constructed:
                raise KerberosError("malformed Kerberos message: an untagged field")
            inner = child.children()
            if len(inner) != 1:
                raise KerberosError("malformed Kerberos message: a tag holds no single value")
            out[child.number] = inner[0]
        return out

    def unwrap(self, cls: int, number: int) -> Tlv:
        """The single element inside an explicit ``[cls number]`` tag."""
        if self.cls != cls or self.number != number or not self.constructed:
            raise KerberosError(f"unexpected Kerberos message (tag {self.cls}/{self.number})")
        inner = self.children()
        if len(inner) != 1:
            raise KerberosError("malformed Kerberos message: a tag holds no single value")
        return inner[0]

    def as_int(self) -> int:
        """An INTEGER's value."""
        self._expect(INTEGER)
        if not self.value or len(self.value) > 9:
            raise KerberosError("malformed Kerberos message: integer out of range")
        return int.from_bytes(self.value, "big", signed=True)

    def as_bytes(self) -> bytes:
        """An OCTET STRING's content."""
        self._expect(OCTET_STRING)
        return self.value

    def as_str(self) -> str:
        """A KerberosString (GeneralString, IA5 in practice)."""
        self._expect(GENERAL_STRING)
        return self.value.decode("utf-8", "replace")

    def as_time(self) -> float:
        """A KerberosTime (``YYYYMMDDHHMMSSZ``) as a POSIX timestamp."""
        self._expect(GENERALIZED_TIME)
        try:
            stamp = datetime.datetime.strptime(self.value.decode("ascii"), "%Y%m%d%H%M%SZ")
        except (UnicodeDecodeError, ValueError):
            raise KerberosError("malformed Kerberos message: bad time") from None
        return stamp.replace(tzinfo=datetime.timezone.utc).timestamp()

    def as_bits(self) -> int:
        """A BIT STRING as an integer (bit 0 = the most significant of the first octet)."""
        self._expect(BIT_STRING)
        if not self.value:
            raise KerberosError("malformed Kerberos message: empty bit string")
        return int.from_bytes(self.value[1:].ljust(4, b"\0")[:4], "big")

    def _expect(self, number: int) -> None:
        if self.cls != UNIVERSAL or self.number != number or self.constructed:
            raise KerberosError(f"malformed Kerberos message: expected universal type {number}")


def _decode_one(data: bytes, offset: int) -> tuple[Tlv, int]:
    if offset + 2 > len(data):
        raise KerberosError("malformed Kerberos message: truncated")
    first = data[offset]
    cls, constructed, number = first >> 6, bool(first & 0x20), first & 0x1F
    offset += 1
    if number == 0x1F:  # high tag number form
        number = 0
        for _ in range(4):
            if offset >= len(data):
                raise KerberosError("malformed Kerberos message: truncated tag")
            byte = data[offset]
            offset += 1
            number = (number << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        else:
            raise KerberosError("malformed Kerberos message: tag number too large")
    if offset >= len(data):
        raise KerberosError("malformed Kerberos message: truncated")
    length = data[offset]
    offset += 1
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or offset + count > len(data):
            raise KerberosError("malformed Kerberos message: bad length")
        length = int.from_bytes(data[offset : offset + count], "big")
        offset += count
    if offset + length > len(data):
        raise KerberosError("malformed Kerberos message: truncated value")
    return Tlv(cls, constructed, number, data[offset : offset + length]), offset + length


def decode(data: bytes) -> Tlv:
    """The one element ``data`` holds (trailing bytes are an error)."""
    tlv, end = _decode_one(data, 0)
    if end != len(data):
        raise KerberosError("malformed Kerberos message: trailing bytes")
    return tlv


def decode_all(data: bytes) -> list[Tlv]:
    """Every element of a constructed value's content."""
    out: list[Tlv] = []
    offset = 0
    while offset < len(data):
        tlv, offset = _decode_one(data, offset)
        out.append(tlv)
        if len(out) > 4096:
            raise KerberosError("malformed Kerberos message: too many elements")
    return out


# -- encoding ------------------------------------------------------------------------------------


def _length(size: int) -> bytes:
    if size < 0x80:
        return bytes([size])
    raw = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def tlv(cls: int, constructed: bool, number: int, value: bytes) -> bytes:
    """One element (tag numbers below 31 only: all Kerberos needs)."""
    return bytes([(cls << 6) | (0x20 if constructed else 0) | number]) + _length(len(value)) + value


def integer(value: int) -> bytes:
    """INTEGER, minimal two's complement."""
    size = max(1, (value + (value < 0)).bit_length() // 8 + 1)
    return tlv(UNIVERSAL, False, INTEGER, value.to_bytes(size, "big", signed=True))


def octets(value: bytes) -> bytes:
    """OCTET STRING."""
    return tlv(UNIVERSAL, False, OCTET_STRING, value)


def string(value: str) -> bytes:
    """KerberosString (GeneralString)."""
    return tlv(UNIVERSAL, False, GENERAL_STRING, value.encode("utf-8"))


def time(value: float) -> bytes:
    """KerberosTime: whole seconds, UTC."""
    stamp = datetime.datetime.fromtimestamp(int(value), datetime.timezone.utc)
    return tlv(UNIVERSAL, False, GENERALIZED_TIME, stamp.strftime("%Y%m%d%H%M%SZ").encode())


def bits32(value: int) -> bytes:
    """A 32-bit Kerberos flags BIT STRING (KDCOptions, APOptions, TicketFlags)."""
    return tlv(UNIVERSAL, False, BIT_STRING, b"\0" + value.to_bytes(4, "big"))


def sequence(*items: bytes) -> bytes:
    """SEQUENCE / SEQUENCE OF of already encoded items."""
    return tlv(UNIVERSAL, True, SEQUENCE, b"".join(items))


def tagged(number: int, value: bytes) -> bytes:
    """Explicit context tag ``[number]``."""
    return tlv(CONTEXT, True, number, value)


def fields(*pairs: tuple[int, bytes | None]) -> bytes:
    """A SEQUENCE of explicitly tagged fields; ``None`` values (OPTIONAL, absent) are left out."""
    return sequence(*(tagged(n, v) for n, v in pairs if v is not None))


def application(number: int, value: bytes) -> bytes:
    """Explicit ``[APPLICATION number]``."""
    return tlv(APPLICATION, True, number, value)
