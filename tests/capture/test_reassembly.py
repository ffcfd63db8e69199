"""TCP reassembly and message splitting on synthetic captures."""

from __future__ import annotations

import random

from cedar.capture import dissect, load_conversations
from cedar.capture.tcp import C2S, S2C
from cedar.capture.writer import Endpoints, tcp_frames, write_capture, write_frames

from .conftest import CAPTURES, ad_message

QUERY = ad_message({"MyType": "Query", "TargetType": "Machine", "Requirements": True}, prefix=5)
REPLY = bytes.fromhex("0000000000000000")  # I(0): no ads


def _framed(payload: bytes, *, chunk: int | None = None) -> bytes:
    from cedar.stream.framing import frame_plain

    return frame_plain(payload, chunk=chunk) if chunk else frame_plain(payload)


def _raw_query_chunks() -> list[tuple[str, bytes]]:
    return [(C2S, _framed(QUERY)), (S2C, _framed(REPLY))]


def _summary(data: bytes) -> list[tuple[str, str]]:
    (conv,) = dissect(data, strict=True)
    return [(m.direction, m.kind) for m in conv.messages]


def test_in_order_capture() -> None:
    assert _summary(write_capture([_raw_query_chunks()])) == [
        (C2S, "RAW_COMMAND"),
        (S2C, "QUERY_RESULT"),
    ]


def test_pcapng_is_read_like_pcap() -> None:
    data = write_capture([_raw_query_chunks()], pcapng=True)
    assert data[:4] == b"\x0a\x0d\x0d\x0a"
    assert _summary(data) == [(C2S, "RAW_COMMAND"), (S2C, "QUERY_RESULT")]


def test_out_of_order_and_retransmitted_segments() -> None:
    frames = tcp_frames(_raw_query_chunks(), segment_size=7)
    request = frames[3 : 3 + -(-len(_framed(QUERY)) // 7)]
    reply = frames[3 + len(request) : -3]
    shuffled = request[:]
    random.Random(7).shuffle(shuffled)
    # Reorder the request's segments and retransmit some (duplicates after the originals).
    noisy = frames[:3] + shuffled + request[::5] + reply + frames[-3:]
    (conv,) = load_conversations(write_frames(noisy))
    assert conv.error is None
    payloads = [m.body for m in conv.messages]
    assert sorted(payloads) == sorted([QUERY, REPLY])
    (dissected,) = dissect(write_frames(noisy), strict=True)
    assert dissected.command == 5


def test_overlapping_retransmission_with_more_data() -> None:
    frames = tcp_frames([(C2S, _framed(QUERY))], segment_size=20)
    # Add one segment covering the 2nd and 3rd segments at once (a repacketised retransmit).
    from cedar.capture.writer import _frame

    stream = _framed(QUERY)
    ends = Endpoints()
    extra = (frames[5][0], _frame(ends.client, ends.server, 1001 + 20, 5001, 0x18, stream[20:60]))
    data = write_frames(frames[:4] + [extra] + frames[4:])
    (conv,) = load_conversations(data)
    assert [m.body for m in conv.messages] == [QUERY]


def test_multi_packet_message_is_one_message() -> None:
    chunks = [(C2S, _framed(QUERY, chunk=10)), (S2C, _framed(REPLY))]
    (conv,) = dissect(write_capture([chunks]), strict=True)
    assert conv.messages[0].packets == len(QUERY) // 10 + 1
    assert conv.messages[0].size == len(QUERY)


def test_capture_starting_mid_connection_finds_the_client() -> None:
    frames = tcp_frames(_raw_query_chunks())
    (conv,) = load_conversations(write_frames(frames[3:]))  # no SYN, SYN-ACK, ACK
    assert conv.client == ("127.0.0.2", 40000)
    assert [m.direction for m in conv.messages] == [C2S, S2C]


def test_port_reuse_makes_two_conversations() -> None:
    first = tcp_frames(_raw_query_chunks())
    second = tcp_frames(_raw_query_chunks(), start_time=1_700_000_100.0, client_isn=90000)
    convs = load_conversations(write_frames(first + second))
    assert [len(c.messages) for c in convs] == [2, 2]


def test_messages_of_both_directions_are_ordered_by_arrival() -> None:
    conv = load_conversations(CAPTURES / "q-fs-aes.pcap")[0]
    frames = [m.frame for m in conv.messages]
    assert frames == sorted(frames)
    directions = "".join("c" if m.direction == C2S else "s" for m in conv.messages)
    assert directions == "ccscsscssscssss"
