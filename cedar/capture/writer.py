"""Writing captures: conversations of CEDAR bytes as pcap/pcapng files (with dpkt).

Used to record our own client/server traffic into ``captures/`` and by tests that need
captures with retransmissions, reordering, truncation or known session keys.  Frames are
Ethernet/IPv4/TCP with a full SYN / FIN handshake and correct sequence numbers.
"""

from __future__ import annotations

import io
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cedar.capture._dpkt import dpkt, require_dpkt
from cedar.capture.tcp import C2S

Frame = tuple[float, bytes]


@dataclass
class Endpoints:
    """Addresses of one recorded conversation."""

    client: tuple[str, int] = ("127.0.0.2", 40000)
    server: tuple[str, int] = ("127.0.0.1", 9618)


def _frame(
    src: tuple[str, int], dst: tuple[str, int], seq: int, ack: int, flags: int, payload: bytes = b""
) -> bytes:
    require_dpkt()
    tcp = dpkt.tcp.TCP(
        sport=src[1],
        dport=dst[1],
        seq=seq % (1 << 32),
        ack=ack % (1 << 32),
        flags=flags,
        win=65535,
        data=payload,
    )
    ip = dpkt.ip.IP(
        src=socket.inet_aton(src[0]),
        dst=socket.inet_aton(dst[0]),
        p=dpkt.ip.IP_PROTO_TCP,
        ttl=64,
        data=tcp,
    )
    ip.len = len(bytes(ip))
    eth = dpkt.ethernet.Ethernet(
        src=b"\x00" * 6, dst=b"\x00" * 6, type=dpkt.ethernet.ETH_TYPE_IP, data=ip
    )
    return bytes(eth)


def tcp_frames(
    chunks: Iterable[tuple[str, bytes]],
    *,
    endpoints: Endpoints | None = None,
    start_time: float = 1_700_000_000.0,
    segment_size: int = 65495,
    client_isn: int = 1000,
    server_isn: int = 5000,
) -> list[Frame]:
    """Frames of one TCP connection carrying ``chunks`` (``(direction, bytes)`` in order)."""
    ends = endpoints or Endpoints()
    client, server = ends.client, ends.server
    time = start_time
    frames: list[Frame] = []
    seq = {C2S: client_isn + 1, "S→C": server_isn + 1}

    def emit(data: bytes) -> None:
        nonlocal time
        frames.append((time, data))
        time += 0.0001

    ack = dpkt.tcp.TH_ACK
    emit(_frame(client, server, client_isn, 0, dpkt.tcp.TH_SYN))
    emit(_frame(server, client, server_isn, client_isn + 1, dpkt.tcp.TH_SYN | ack))
    emit(_frame(client, server, seq[C2S], seq["S→C"], ack))
    for direction, data in chunks:
        src, dst = (client, server) if direction == C2S else (server, client)
        other = "S→C" if direction == C2S else C2S
        for pos in range(0, len(data), segment_size):
            piece = data[pos : pos + segment_size]
            emit(_frame(src, dst, seq[direction], seq[other], ack | dpkt.tcp.TH_PUSH, piece))
            seq[direction] += len(piece)
    emit(_frame(client, server, seq[C2S], seq["S→C"], ack | dpkt.tcp.TH_FIN))
    emit(_frame(server, client, seq["S→C"], seq[C2S] + 1, ack | dpkt.tcp.TH_FIN))
    emit(_frame(client, server, seq[C2S] + 1, seq["S→C"] + 1, ack))
    return frames


def udp_frame(
    payload: bytes, *, endpoints: Endpoints | None = None, time: float = 1_700_000_000.0
) -> Frame:
    """One UDP datagram from the client to the server."""
    ends = endpoints or Endpoints()
    require_dpkt()
    udp = dpkt.udp.UDP(sport=ends.client[1], dport=ends.server[1], data=payload)
    udp.ulen = len(bytes(udp))
    ip = dpkt.ip.IP(
        src=socket.inet_aton(ends.client[0]),
        dst=socket.inet_aton(ends.server[0]),
        p=dpkt.ip.IP_PROTO_UDP,
        ttl=64,
        data=udp,
    )
    ip.len = len(bytes(ip))
    eth = dpkt.ethernet.Ethernet(
        src=b"\x00" * 6, dst=b"\x00" * 6, type=dpkt.ethernet.ETH_TYPE_IP, data=ip
    )
    return time, bytes(eth)


def write_frames(frames: Sequence[Frame], *, pcapng: bool = False) -> bytes:
    """The bytes of a capture file holding ``frames`` (Ethernet link type)."""
    require_dpkt()
    out = io.BytesIO()
    writer_class = dpkt.pcapng.Writer if pcapng else dpkt.pcap.Writer
    writer = writer_class(out, snaplen=262144, linktype=dpkt.pcap.DLT_EN10MB)
    for time, frame in frames:
        writer.writepkt(frame, ts=time)
    return out.getvalue()


def write_capture(
    conversations: Sequence[Sequence[tuple[str, bytes]]],
    *,
    pcapng: bool = False,
    server: tuple[str, int] = ("127.0.0.1", 9618),
) -> bytes:
    """A capture of several conversations, one after the other (client ports 40000, 40001…)."""
    frames: list[Frame] = []
    time = 1_700_000_000.0
    for number, chunks in enumerate(conversations):
        ends = Endpoints(("127.0.0.2", 40000 + number), server)
        part = tcp_frames(chunks, endpoints=ends, start_time=time)
        frames.extend(part)
        time = part[-1][0] + 1
    return write_frames(frames, pcapng=pcapng)
