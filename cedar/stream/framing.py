"""CEDAR packet framing (spec 01 §2): the 5-byte header and how messages become packets.

The header layout is declared with Construct (:data:`PACKET_HEADER`, built on first use so that a
client starts without importing Construct); sending and receiving use the same layout as one
``struct`` (a call per packet instead of a Construct build/parse; ``tests/stream`` checks that
the two agree).
"""

from __future__ import annotations

import struct
from typing import Any

from cedar.errors import InvalidArgument, ProtocolError

#: The header as one ``struct``: ``end`` (1 byte) + big-endian uint32 ``len`` (spec 01 §2.1).
#: A pipelined submission sends and reads thousands of small packets, and a Construct build or
#: parse cost ~13 µs each.
_HEADER = struct.Struct(">BI")
HEADER_SIZE = _HEADER.size
#: ``(end, length)`` of the header at the start of a buffer, unchecked (:func:`decode_header`
#: checks them): for a reader that checks the two itself on its short path.
header_fields = _HEADER.unpack_from
#: Largest packet payload either side may send or accept (spec 01 §2.3).
MAX_PACKET_PAYLOAD = 1 << 20
#: The largest packet a client takes from a daemon (its message limit, 64 MiB).  The 25.13.2
#: schedd sends a job ad holding a 5 MiB attribute in packets over 1 MiB (one of 1 349 450
#: bytes, observed), which its own condor_q refuses ("Failed to fetch ads"): one user's job
#: then broke every listing of the queue.  A server keeps the spec's 1 MiB for its peers.
CLIENT_MAX_PACKET = 64 << 20
#: End flags the reference accepts as "last packet"; senders only use 0 and 1 (spec 01 §2.2).
MAX_END_FLAG = 10
#: Payload bytes of a full packet sent by the reference (4096-byte buffer minus the header).
REFERENCE_PACKET_PAYLOAD = 4091


def __getattr__(name: str) -> Any:
    """``PACKET_HEADER``: the header's Construct declaration (``end`` Int8ub, ``length``
    Int32ub), made on first use: importing Construct costs a client ~10 ms of start-up."""
    if name != "PACKET_HEADER":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from construct import Int8ub, Int32ub, Struct

    header = Struct("end" / Int8ub, "length" / Int32ub)
    globals()[name] = header
    return header


def encode_header(end: bool, length: int) -> bytes:
    """The 5 header bytes of a packet; ``length`` counts the bytes after the header."""
    return _HEADER.pack(1 if end else 0, length)


def decode_header(
    header: bytes, *, offset: int = 0, limit: int = MAX_PACKET_PAYLOAD
) -> tuple[bool, int]:
    """Validate a packet header and return ``(is_last_packet, payload_length)``.

    ``offset`` only serves to make the error message point into the stream.  ``limit``: the
    largest payload taken (the spec's 1 MiB; a client reading a daemon's reply takes more,
    see :data:`CLIENT_MAX_PACKET`).
    """
    if len(header) != HEADER_SIZE:
        raise ProtocolError(
            f"a packet header is {HEADER_SIZE} bytes, got {len(header)}", offset=offset
        )
    end, length = _HEADER.unpack(header)
    if end > MAX_END_FLAG:
        raise ProtocolError(
            f"unrecognized packet header: end flag {end:#04x} (expected 0..10)", offset=offset
        )
    if length == 0:
        raise ProtocolError("improperly sized packet: length 0", offset=offset)
    if length > limit:
        bound = "1 MiB" if limit == MAX_PACKET_PAYLOAD else f"{limit}-byte"
        raise ProtocolError(
            f"packet length {length} is larger than the {bound} limit", offset=offset + 1
        )
    return end != 0, length


def split_payload(payload: bytes, chunk: int) -> list[bytes]:
    """Split a message payload into packet payloads of at most ``chunk`` bytes (at least one)."""
    if not payload:
        raise InvalidArgument("CEDAR never sends an empty message")
    return [payload[i : i + chunk] for i in range(0, len(payload), chunk)]


def frame_plain(payload: bytes, *, chunk: int = MAX_PACKET_PAYLOAD) -> bytes:
    """A whole message in clear: one packet when it fits, else ``chunk``-sized packets."""
    pieces = split_payload(payload, chunk)
    out = bytearray()
    for index, piece in enumerate(pieces):
        out += encode_header(index == len(pieces) - 1, len(piece))
        out += piece
    return bytes(out)
