"""Reading TCP segments out of pcap and pcapng files (with dpkt).

Only what CEDAR dissection needs is kept: the endpoints, sequence numbers, flags and payload of
every TCP segment, plus how many payload bytes the segment really carried on the wire (so a
snaplen-truncated or cut-off capture is reported instead of silently misparsed).
"""

from __future__ import annotations

import io
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeAlias

from cedar.capture._dpkt import dpkt, require_dpkt
from cedar.capture.errors import CaptureError

_PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1",
    b"\xa1\xb2\xc3\xd4",
    b"\x4d\x3c\xb2\xa1",
    b"\xa1\xb2\x3c\x4d",
}
_PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"

DLT_NULL = 0
DLT_EN10MB = 1
DLT_RAW_VALUES = {12, 14, 101}
DLT_LOOP = 108
DLT_LINUX_SLL = 113
DLT_LINUX_SLL2 = 276

TH_FIN = 0x01
TH_SYN = 0x02
TH_RST = 0x04
TH_ACK = 0x10


@dataclass(frozen=True)
class TcpSegment:
    """One TCP segment of the capture."""

    frame: int  #: 1-based frame number in the file (as Wireshark counts)
    time: float
    src: str
    sport: int
    dst: str
    dport: int
    seq: int
    flags: int
    payload: bytes
    #: Payload bytes the segment carried on the wire; more than ``len(payload)`` if truncated.
    wire_length: int

    @property
    def truncated(self) -> bool:
        return len(self.payload) < self.wire_length

    @property
    def syn(self) -> bool:
        return bool(self.flags & TH_SYN)

    @property
    def fin(self) -> bool:
        return bool(self.flags & TH_FIN)

    @property
    def rst(self) -> bool:
        return bool(self.flags & TH_RST)

    @property
    def ack(self) -> bool:
        return bool(self.flags & TH_ACK)


@dataclass(frozen=True)
class UdpDatagram:
    """One UDP datagram of the capture (CEDAR sends a few commands, e.g. RESCHEDULE, over UDP)."""

    frame: int
    time: float
    src: str
    sport: int
    dst: str
    dport: int
    payload: bytes
    wire_length: int

    @property
    def truncated(self) -> bool:
        return len(self.payload) < self.wire_length


Segment: TypeAlias = "TcpSegment | UdpDatagram"


def _open_reader(data: bytes, name: str) -> Any:
    require_dpkt()
    magic = data[:4]
    try:
        if magic in _PCAP_MAGICS:
            return dpkt.pcap.Reader(io.BytesIO(data))
        if magic == _PCAPNG_MAGIC:
            return dpkt.pcapng.Reader(io.BytesIO(data))
    except (dpkt.NeedData, dpkt.UnpackError, ValueError) as exc:
        raise CaptureError(f"{name}: unreadable capture file header ({exc})", offset=0) from None
    raise CaptureError(
        f"{name}: not a pcap or pcapng file (starts with {magic.hex() or 'nothing'})", offset=0
    )


def _network_layer(datalink: int, frame: bytes) -> Any:
    """The IP packet of a link-layer frame, or None for anything that is not IP."""
    if datalink == DLT_EN10MB:
        eth = dpkt.ethernet.Ethernet(frame)
        return eth.data
    if datalink in (DLT_NULL, DLT_LOOP):
        return dpkt.loopback.Loopback(frame).data
    if datalink in DLT_RAW_VALUES:
        version = frame[0] >> 4 if frame else 0
        if version == 4:
            return dpkt.ip.IP(frame)
        if version == 6:
            return dpkt.ip6.IP6(frame)
        return None
    if datalink == DLT_LINUX_SLL:
        return dpkt.sll.SLL(frame).data
    if datalink == DLT_LINUX_SLL2:
        return dpkt.sll2.SLL2(frame).data
    raise CaptureError(f"unsupported link type {datalink}")


def _segment(frame_no: int, ts: float, ip: Any) -> Segment | None:
    if isinstance(ip, dpkt.ip.IP):
        if ip.offset or ip.mf:
            return None  # IP fragments: never produced on loopback, not reassembled here
        protocol = ip.p
        src, dst = socket.inet_ntoa(ip.src), socket.inet_ntoa(ip.dst)
        ip_payload_len = ip.len - ip.hl * 4
    elif isinstance(ip, dpkt.ip6.IP6):
        protocol = ip.nxt
        src = socket.inet_ntop(socket.AF_INET6, ip.src)
        dst = socket.inet_ntop(socket.AF_INET6, ip.dst)
        ip_payload_len = ip.plen
    else:
        return None
    if protocol == dpkt.ip.IP_PROTO_UDP:
        udp = ip.data
        if not isinstance(udp, dpkt.udp.UDP):
            raise CaptureError(f"frame {frame_no} is cut off inside its UDP header")
        payload = bytes(udp.data)
        return UdpDatagram(
            frame=frame_no,
            time=float(ts),
            src=src,
            sport=udp.sport,
            dst=dst,
            dport=udp.dport,
            payload=payload,
            wire_length=max(udp.ulen - 8, len(payload)),
        )
    if protocol != dpkt.ip.IP_PROTO_TCP:
        return None
    tcp = ip.data
    if not isinstance(tcp, dpkt.tcp.TCP):
        # dpkt leaves the bytes raw when the TCP header itself is cut off.
        raise CaptureError(
            f"frame {frame_no} is cut off inside its TCP header (truncated capture?)"
        )
    payload = bytes(tcp.data)
    wire_length = max(ip_payload_len - tcp.off * 4, len(payload))
    return TcpSegment(
        frame=frame_no,
        time=float(ts),
        src=src,
        sport=tcp.sport,
        dst=dst,
        dport=tcp.dport,
        seq=tcp.seq,
        flags=tcp.flags,
        payload=payload,
        wire_length=wire_length,
    )


def read_segments(source: str | os.PathLike[str] | bytes | BinaryIO) -> list[Segment]:
    """All TCP segments and UDP datagrams of a pcap/pcapng capture, in file order.

    ``source`` is a path, the file's bytes, or a binary file object.
    """
    if isinstance(source, bytes):
        data, name = source, "capture"
    elif isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        try:
            with open(source, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise CaptureError(f"cannot read {name}: {exc.strerror or exc}") from None
    else:
        data, name = source.read(), getattr(source, "name", "capture")
    reader = _open_reader(data, name)
    datalink = reader.datalink()
    segments: list[Segment] = []
    frames: Iterator[tuple[float, bytes]] = iter(reader)
    frame_no = 0
    while True:
        try:
            ts, frame = next(frames)
        except StopIteration:
            break
        except (dpkt.NeedData, dpkt.UnpackError, ValueError) as exc:
            raise CaptureError(
                f"{name}: capture file is truncated or corrupt after frame {frame_no} ({exc})",
                frame=frame_no + 1,
            ) from None
        frame_no += 1
        try:
            ip = _network_layer(datalink, frame)
            segment = _segment(frame_no, ts, ip) if ip is not None else None
        except (dpkt.NeedData, dpkt.UnpackError) as exc:
            raise CaptureError(
                f"{name}: frame {frame_no} cannot be decoded ({exc}); truncated capture?",
                frame=frame_no,
            ) from None
        if segment is not None:
            segments.append(segment)
    return segments
