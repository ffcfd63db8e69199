"""TCP reassembly: turn captured segments into the two byte streams of each conversation.

Segments are applied in capture order the way a receiving TCP stack would: bytes are accepted
once everything before them has arrived, so retransmissions, overlaps and out-of-order delivery
all yield the bytes the application read, and every byte knows the frame at which it became
readable (that is what orders the messages of the two directions).  A hole that never fills is
kept as a *gap*; whoever reads past it gets a :class:`CaptureError` saying where.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from cedar.capture.errors import CaptureError
from cedar.capture.pcap import Segment, TcpSegment

C2S = "C→S"
S2C = "S→C"

_MOD = 1 << 32


def _rel(seq: int, base: int) -> int:
    """Offset of ``seq`` after ``base`` as a signed 32-bit difference (handles wrap-around)."""
    diff = (seq - base) % _MOD
    return diff - _MOD if diff >= 1 << 31 else diff


@dataclass
class Gap:
    """Bytes of a direction that are missing from the capture."""

    offset: int
    length: int | None  # None: unknown (the stream was cut off inside a segment)
    frame: int  # frame after which the bytes would have been needed


@dataclass
class DirectionStream:
    """The bytes one side sent, as the other side's application read them."""

    direction: str
    data: bytearray = field(default_factory=bytearray)
    #: (stream end offset, frame, time) each time the readable prefix grew; offsets increase.
    arrivals: list[tuple[int, int, float]] = field(default_factory=list)
    gap: Gap | None = None
    fin: bool = False
    reset: bool = False

    def arrival(self, end_offset: int) -> tuple[int, float]:
        """``(frame, time)`` at which the bytes up to ``end_offset`` were all readable."""
        ends = [a[0] for a in self.arrivals]
        index = bisect.bisect_left(ends, end_offset)
        if index >= len(self.arrivals):
            index = len(self.arrivals) - 1
        _, frame, time = self.arrivals[index]
        return frame, time


@dataclass
class TcpConversation:
    """One TCP connection; the client is the side that sent the SYN (or spoke first)."""

    number: int
    client: tuple[str, int]
    server: tuple[str, int]
    first_frame: int
    first_time: float
    streams: dict[str, DirectionStream]
    handshake_seen: bool

    @property
    def label(self) -> str:
        (ch, cp), (sh, sp) = self.client, self.server
        return f"{ch}:{cp} → {sh}:{sp}"


class _DirectionBuilder:
    def __init__(self, direction: str) -> None:
        self.stream = DirectionStream(direction)
        self.base: int | None = None  # sequence number of stream offset 0
        self.pending: list[tuple[int, int, int, float, bytes]] = []  # heap
        self.counter = 0
        self.cut_off: tuple[int, int] | None = None  # (offset, frame) of a truncated segment
        self.segments: list[TcpSegment] = []

    def add(self, segment: TcpSegment) -> None:
        if segment.syn:
            self.base = (segment.seq + 1) % _MOD
        if segment.rst:
            self.stream.reset = True
        if segment.fin:
            self.stream.fin = True
        if segment.payload or segment.wire_length:
            self.segments.append(segment)

    def finish(self) -> DirectionStream:
        segments = self.segments
        if segments and self.base is None:
            # No SYN captured: start at the lowest sequence number seen.
            first = segments[0].seq
            self.base = min((s.seq for s in segments), key=lambda q: _rel(q, first))
        stream = self.stream
        for segment in segments:
            assert self.base is not None
            offset = _rel(segment.seq, self.base)
            if segment.truncated:
                end = offset + len(segment.payload)
                if self.cut_off is None or end < self.cut_off[0]:
                    self.cut_off = (end, segment.frame)
            if segment.payload:
                self.counter += 1
                heapq.heappush(
                    self.pending,
                    (offset, self.counter, segment.frame, segment.time, segment.payload),
                )
            self._drain(segment.frame, segment.time)
        if self.cut_off is not None and self.cut_off[0] >= len(stream.data):
            # The readable prefix ends where a snaplen-truncated segment was cut off (a
            # retransmission that filled the hole in would have moved the end past it).
            stream.gap = Gap(len(stream.data), None, self.cut_off[1])
        if stream.gap is None and self.pending:
            offset, _, frame, _, _ = min(self.pending)
            stream.gap = Gap(len(stream.data), offset - len(stream.data), frame)
        return stream

    def _drain(self, frame: int, time: float) -> None:
        stream = self.stream
        grew = False
        while self.pending:
            offset, _, _, _, payload = self.pending[0]
            end = len(stream.data)
            if offset > end:
                break
            heapq.heappop(self.pending)
            if offset < 0:
                payload, offset = payload[-offset:], 0
            if offset + len(payload) > end:
                stream.data += payload[end - offset :]
                grew = True
        if grew:
            stream.arrivals.append((len(stream.data), frame, time))


@dataclass
class _Pending:
    client: tuple[str, int]
    server: tuple[str, int]
    frame: int
    time: float
    handshake: bool
    dirs: dict[str, _DirectionBuilder]


def reassemble(segments: Iterable[Segment]) -> list[TcpConversation]:
    """Group TCP segments into conversations, in order of appearance (UDP is skipped)."""
    live: dict[tuple[tuple[str, int], tuple[str, int]], _Pending] = {}
    done: list[_Pending] = []
    for segment in segments:
        if not isinstance(segment, TcpSegment):
            continue
        a, b = (segment.src, segment.sport), (segment.dst, segment.dport)
        key = (a, b) if a <= b else (b, a)
        conv = live.get(key)
        if conv is not None and segment.syn and not segment.ack:
            client_side = conv.dirs[C2S]
            # A fresh SYN on a used 4-tuple starts a new connection (port reuse).
            if conv.client != a or client_side.segments or client_side.stream.fin:
                done.append(live.pop(key))
                conv = None
        if conv is None:
            # The SYN sender is the client; a SYN-ACK comes from the server; without a
            # handshake the first side to send data is the client (CEDAR clients speak first).
            client, server = (b, a) if segment.syn and segment.ack else (a, b)
            conv = _Pending(
                client,
                server,
                segment.frame,
                segment.time,
                segment.syn,
                {C2S: _DirectionBuilder(C2S), S2C: _DirectionBuilder(S2C)},
            )
            live[key] = conv
        elif segment.syn:
            conv.handshake = True
        if (
            not conv.handshake
            and segment.payload
            and not conv.dirs[C2S].segments
            and not conv.dirs[S2C].segments
        ):
            conv.client, conv.server = a, b
        direction = C2S if a == conv.client else S2C
        conv.dirs[direction].add(segment)
    done.extend(live.values())
    done.sort(key=lambda conv: conv.frame)
    return [
        TcpConversation(
            number=number,
            client=conv.client,
            server=conv.server,
            first_frame=conv.frame,
            first_time=conv.time,
            streams={d: builder.finish() for d, builder in conv.dirs.items()},
            handshake_seen=conv.handshake,
        )
        for number, conv in enumerate(done, start=1)
    ]


def check_complete(conversation: TcpConversation, direction: str) -> None:
    """Raise if bytes of ``direction`` are missing from the capture."""
    gap = conversation.streams[direction].gap
    if gap is None:
        return
    detail = (
        f"{gap.length} bytes missing" if gap.length is not None else "segment cut off by snaplen"
    )
    raise CaptureError(
        f"TCP stream incomplete ({detail}, near frame {gap.frame}): the capture lost packets "
        "or was truncated",
        conversation=conversation.number,
        direction=direction,
        offset=gap.offset,
    )
