"""Malformed and truncated captures give a CaptureError naming conversation and offset."""

from __future__ import annotations

import io

import pytest

from cedar.capture import CaptureError, dissect
from cedar.capture.tcp import C2S, S2C
from cedar.capture.writer import tcp_frames, write_capture, write_frames
from cedar.cli.decode import build_parser, run
from cedar.errors import CedarError
from cedar.stream.framing import frame_plain

from .conftest import CAPTURES, ad_message

QUERY = ad_message({"MyType": "Query", "Requirements": True}, prefix=5)


def test_not_a_capture() -> None:
    with pytest.raises(CaptureError, match="not a pcap or pcapng file"):
        dissect(b"hello world, not a pcap")


def test_file_cut_inside_a_record_header() -> None:
    data = (CAPTURES / "status-startd-raw.pcap").read_bytes()
    with pytest.raises(CaptureError, match="truncated or corrupt after frame"):
        dissect(data[: -(66 + 8)])  # leaves half of the last record header


def test_file_cut_inside_the_last_record() -> None:
    data = (CAPTURES / "status-startd-raw.pcap").read_bytes()
    # The last frames are FIN/ACKs without payload: cut into the reply's frame instead.
    frames = tcp_frames([(C2S, frame_plain(QUERY)), (S2C, frame_plain(b"\0" * 8))])
    capture = write_frames(frames[:4])  # handshake + the query segment only
    with pytest.raises(CaptureError) as info:
        dissect(capture[:-10], strict=True)
    error = info.value
    assert isinstance(error, CedarError)
    assert error.conversation == 1
    assert error.direction == C2S
    assert error.offset == 0
    assert "conversation 1, C→S, offset 0" in str(error)
    assert data  # the real capture is intact


def test_truncated_message_reports_its_offset() -> None:
    first = frame_plain(QUERY)
    second = frame_plain(QUERY)
    capture = write_capture([[(C2S, first + second[:20])]])
    (conv,) = dissect(capture)
    assert len(conv.messages) == 1
    assert conv.error is not None
    assert conv.error.offset == len(first)
    assert "truncated message" in str(conv.error)
    with pytest.raises(CaptureError, match=rf"conversation 1, C→S, offset {len(first)}"):
        dissect(capture, strict=True)


def test_malformed_packet_header() -> None:
    good = frame_plain(QUERY)
    bad = b"\x20\x00\x00\x00\x08" + b"\0" * 8  # end flag 0x20 is not allowed (spec 01 §2.2)
    capture = write_capture([[(C2S, good), (S2C, frame_plain(b"\0" * 8))], [(C2S, good + bad)]])
    with pytest.raises(CaptureError) as info:
        dissect(capture, strict=True)
    assert info.value.conversation == 2
    assert info.value.offset == len(good)
    assert "end flag" in str(info.value)


def test_lost_segment_is_a_gap() -> None:
    frames = tcp_frames([(C2S, frame_plain(QUERY))], segment_size=16)
    capture = write_frames(frames[:4] + frames[5:])  # drop the second data segment
    with pytest.raises(CaptureError) as info:
        dissect(capture, strict=True)
    assert info.value.offset == 0  # the message that cannot be completed
    assert "16 bytes are missing at offset 16" in str(info.value)


def test_undecodable_message_is_reported_in_place() -> None:
    # A query result that announces an ad but stops: framing fine, contents not.
    reply = frame_plain(bytes.fromhex("0000000000000001"))
    capture = write_capture([[(C2S, frame_plain(QUERY)), (S2C, reply)]])
    (conv,) = dissect(capture)
    assert conv.messages[0].problem is None
    assert conv.messages[1].problem
    with pytest.raises(CaptureError, match="conversation 1, S→C, offset 0: message 2"):
        dissect(capture, strict=True)


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(build_parser().parse_args(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_cli_reports_truncation_with_partial_transcript(tmp_path) -> None:  # type: ignore[no-untyped-def]
    capture = write_capture([[(C2S, frame_plain(QUERY)), (S2C, b"\x01\x00\x00\x00\x30abc")]])
    path = tmp_path / "cut.pcap"
    path.write_bytes(capture)
    status, out, err = _cli([str(path)])
    assert status == 1
    assert "RAW QUERY_STARTD_ADS(5)" in out
    assert "conversation 1, S→C, offset 0: truncated message" in err


def test_cli_unusable_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "junk.pcap"
    path.write_bytes(b"\xd4\xc3\xb2\xa1" + b"\0" * 5)
    status, out, err = _cli([str(path)])
    assert status == 2
    assert out == ""
    assert err.startswith("cedar decode: ")
