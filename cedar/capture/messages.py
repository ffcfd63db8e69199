"""From reassembled streams to CEDAR messages, ordered across both directions.

Each direction of a TCP conversation is cut into packets with :func:`cedar.stream.framing.
decode_header` and packets into messages at the end flag; packet headers are in clear even under
AES-GCM, so this works for encrypted traffic too.  The messages of both directions are then put
in the order the peers saw them complete, which is what a stateful dissector must follow.  UDP
datagrams (SafeSock, spec 01 §5) become one-message conversations of their own.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import BinaryIO

from cedar.capture.errors import CaptureError
from cedar.capture.pcap import UdpDatagram, read_segments
from cedar.capture.tcp import C2S, S2C, DirectionStream, TcpConversation, check_complete, reassemble
from cedar.errors import ProtocolError
from cedar.stream.framing import HEADER_SIZE, decode_header

#: SafeSock fragment header (spec 01 §5): magic, last flag, seq, length, 12-byte message id.
SAFESOCK_MAGIC = b"MaGic6.0"
_FRAGMENT = struct.Struct(">8sBHH12s")


@dataclass
class WireMessage:
    """One CEDAR message as it crossed the wire."""

    direction: str
    #: Stream offset of the message's first packet header (0 for UDP).
    offset: int
    #: ``(header, body)`` of each packet; a UDP message has one with an empty header.
    packets: list[tuple[bytes, bytes]]
    #: Frame (and time) at which the message's last byte had arrived.
    frame: int
    time: float
    #: Unframed bytes (a clear-mode file body, spec 01 §7.2), not a packet.
    raw: bool = False

    @property
    def body(self) -> bytes:
        """The packet payloads joined (the message itself when it is in clear)."""
        return b"".join(body for _, body in self.packets)

    @property
    def wire(self) -> bytes:
        """The message's bytes as on the wire, headers included."""
        return b"".join(header + body for header, body in self.packets)


@dataclass
class Conversation:
    """A TCP connection (or a UDP datagram) and its CEDAR messages in the order they completed."""

    number: int
    transport: str  # "tcp" or "udp"
    client: tuple[str, int]
    server: tuple[str, int]
    first_frame: int
    first_time: float
    messages: list[WireMessage] = field(default_factory=list)
    #: Raised after the messages: the capture breaks off or is malformed at that point.
    error: CaptureError | None = None

    @property
    def label(self) -> str:
        (ch, cp), (sh, sp) = self.client, self.server
        return f"{ch}:{cp} → {sh}:{sp}" + (" (UDP)" if self.transport == "udp" else "")


class FileBodyTracker:
    """Finds the unframed file bodies in one direction of a clear file transfer (spec 07 §7).

    Fed each message of the direction as it is cut, it follows the uploader's side of the
    sub-protocol (header with ``SandboxSize``, command, name, go-ahead, mode, size) and says how
    many raw body bytes follow the message just fed.  It only ever starts at a header it can
    read, so encrypted streams (whose bodies are chunk messages) are left alone.
    """

    _SANDBOX = b"SandboxSize"

    def __init__(self) -> None:
        self.state = "idle"
        self.command = 0
        self.first = True

    @staticmethod
    def _int(body: bytes) -> int | None:
        return struct.unpack(">q", body[:8])[0] if len(body) >= 8 else None

    def feed(self, body: bytes) -> int:
        """The number of raw bytes that follow this message (0 almost always)."""
        value = self._int(body)
        state = self.state
        if state == "idle":
            if value in (0, 1) and self._SANDBOX in body[8:64]:
                self.state, self.first = "command", True
        elif state == "command":
            self.command = value if len(body) == 8 and value is not None else -1
            if self.command == 0:
                self.state = "report"
            elif self.command in (1, 2, 3, 6):
                self.state = "name"
            else:
                self.state = "idle"  # an item kind without a known layout: stop following
        elif state == "name":
            self.state = "g1" if self.first else "mode"
        elif state == "g1":
            self.state = "g5"
        elif state == "g5":
            self.state, self.first = "mode", False
        elif state == "mode":
            self.state = "command" if self.command == 6 else "size"
        elif state == "size":
            if value is None or value < 0:
                self.state = "idle"
            elif value == 0:
                self.state = "marker"
            else:
                self.state = "command"
                return value
        elif state == "marker":
            self.state = "command"
        elif state == "report":
            self.state = "idle"
        return 0


def split_stream(
    conversation: TcpConversation, direction: str, *, file_bodies: bool = False
) -> tuple[list[WireMessage], CaptureError | None]:
    """Cut one direction into messages; the error (if any) describes the unusable rest.

    ``file_bodies``: the conversation runs a file transfer; its clear file bodies (raw bytes
    between packets) become messages of their own with ``raw`` set.
    """
    stream: DirectionStream = conversation.streams[direction]
    data = bytes(stream.data)
    messages: list[WireMessage] = []
    packets: list[tuple[bytes, bytes]] = []
    tracker = FileBodyTracker() if file_bodies else None
    start = pos = 0
    while pos + HEADER_SIZE <= len(data):
        header = data[pos : pos + HEADER_SIZE]
        try:
            last, length = decode_header(header, offset=pos)
        except ProtocolError as exc:
            reason = str(exc).split(" (at byte offset")[0]
            return messages, CaptureError(
                f"malformed CEDAR packet header {header.hex()}: {reason}",
                conversation=conversation.number,
                direction=direction,
                offset=pos,
            )
        if pos + HEADER_SIZE + length > len(data):
            break
        if not packets:
            start = pos
        packets.append((header, data[pos + HEADER_SIZE : pos + HEADER_SIZE + length]))
        pos += HEADER_SIZE + length
        if last:
            frame, time = stream.arrival(pos)
            message = WireMessage(direction, start, packets, frame, time)
            messages.append(message)
            packets = []
            raw = tracker.feed(message.body) if tracker is not None else 0
            if raw:
                if pos + raw > len(data):
                    break
                frame, time = stream.arrival(pos + raw)
                body = data[pos : pos + raw]
                messages.append(WireMessage(direction, pos, [(b"", body)], frame, time, raw=True))
                pos += raw
    begin = start if packets else pos
    gap = stream.gap
    if begin == len(data):
        if gap is None:
            return messages, None
        try:
            check_complete(conversation, direction)
        except CaptureError as exc:
            return messages, exc
    have = len(data) - begin
    if gap is None:
        why = "the stream ended"
    elif gap.length is None:
        why = f"frame {gap.frame} was cut off by the capture's snaplen at offset {gap.offset}"
    else:
        why = f"{gap.length} bytes are missing at offset {gap.offset} (near frame {gap.frame})"
    return messages, CaptureError(
        f"truncated message: only {have} bytes of it were captured ({why})",
        conversation=conversation.number,
        direction=direction,
        offset=begin,
    )


#: Commands whose conversations carry the file-transfer sub-protocol (spec 07 §5, §6).
_FILE_TRANSFER_COMMANDS = (480, 486, 488, 489)


def _runs_file_transfer(first_messages: list[WireMessage]) -> bool:
    """Whether a conversation's first client messages start 488/489 (raw or negotiated)."""
    for message in first_messages:
        body = message.body
        if len(body) >= 8 and struct.unpack(">q", body[:8])[0] in _FILE_TRANSFER_COMMANDS:
            return True
        if any(b"Command = %d\0" % c in body for c in _FILE_TRANSFER_COMMANDS):
            return True
    return False


def _tcp_conversation(conversation: TcpConversation) -> Conversation:
    result = Conversation(
        conversation.number,
        "tcp",
        conversation.client,
        conversation.server,
        conversation.first_frame,
        conversation.first_time,
    )
    errors = []
    file_bodies = _runs_file_transfer(split_stream(conversation, C2S)[0][:3])
    for direction in (C2S, S2C):
        messages, error = split_stream(conversation, direction, file_bodies=file_bodies)
        result.messages.extend(messages)
        if error is not None:
            errors.append(error)
    result.messages.sort(key=lambda m: (m.frame, m.offset))
    if errors:
        result.error = min(errors, key=lambda e: e.offset or 0)
    return result


def _udp_conversations(datagrams: list[UdpDatagram]) -> list[Conversation]:
    """Each SafeSock message is a conversation; fragments are joined by message id."""
    result: list[Conversation] = []
    fragments: dict[tuple[str, int, bytes], dict[int, bytes]] = {}
    for datagram in datagrams:
        conv = Conversation(
            0,
            "udp",
            (datagram.src, datagram.sport),
            (datagram.dst, datagram.dport),
            datagram.frame,
            datagram.time,
        )
        payload = datagram.payload
        if datagram.truncated:
            conv.error = CaptureError(
                f"UDP datagram in frame {datagram.frame} was cut off by the capture "
                f"({len(payload)} of {datagram.wire_length} bytes)",
                direction=C2S,
                offset=len(payload),
            )
            result.append(conv)
            continue
        if payload.startswith(SAFESOCK_MAGIC):
            if len(payload) < _FRAGMENT.size:
                conv.error = CaptureError(
                    "SafeSock fragment shorter than its 25-byte header", direction=C2S, offset=0
                )
                result.append(conv)
                continue
            _, last, seq, _, msg_id = _FRAGMENT.unpack_from(payload)
            key = (datagram.src, datagram.sport, msg_id)
            parts = fragments.setdefault(key, {})
            parts[seq] = payload[_FRAGMENT.size :]
            if not last or len(parts) != seq + 1:
                continue
            payload = b"".join(parts[i] for i in sorted(parts))
            del fragments[key]
        conv.messages.append(WireMessage(C2S, 0, [(b"", payload)], datagram.frame, datagram.time))
        result.append(conv)
    return result


def load_conversations(
    source: str | os.PathLike[str] | bytes | BinaryIO,
) -> list[Conversation]:
    """Every CEDAR conversation of a capture, numbered from 1 in order of their first frame."""
    segments = read_segments(source)
    conversations = [_tcp_conversation(c) for c in reassemble(segments)]
    conversations += _udp_conversations([s for s in segments if isinstance(s, UdpDatagram)])
    conversations.sort(key=lambda c: c.first_frame)
    for number, conv in enumerate(conversations, start=1):
        conv.number = number
        if conv.error is not None:
            conv.error.conversation = number
    return conversations
