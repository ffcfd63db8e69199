"""The capture dissector on damaged captures: CaptureError (a ProtocolError) or reported problems.

Also replays the reference daemons' recorded replies, mutated, into our client protocols.
"""

from __future__ import annotations

import contextlib
import functools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cedar.capture import C2S, S2C, CaptureError, dissect, load_conversations
from cedar.capture.writer import write_capture
from cedar.commands import collector as cc
from cedar.commands import schedd as cs
from cedar.errors import CedarError, ProtocolError
from cedar.numbers import Command
from cedar.stream.framing import frame_plain
from tests.support import CAPTURES

from .helpers import client_protocol, fuzz, mutated, mutated_conversation, replay_client

NAMES = [
    "status-startd-raw",
    "q-all-raw",
    "history-bindings-raw",
    "submit-2procs-plain",
    "hold-cluster-plain",
    "qedit-plain",
    "ping-collector-read-plain",
    "status-token-aes",
    "q-fs-aes",
]


@functools.cache
def capture_bytes(name: str) -> bytes:
    return (CAPTURES / f"{name}.pcap").read_bytes()


@functools.cache
def conversations(name: str) -> list[list[tuple[str, bytes]]]:
    """Each conversation of a capture as ``(direction, payload)`` messages."""
    return [
        [(m.direction, m.body) for m in conv.messages]
        for conv in load_conversations(capture_bytes(name))
        if conv.transport == "tcp"
    ]


def _dissect_all_ways(data: bytes) -> int | None:
    """The property of dissecting any bytes: a CaptureError, or conversations whose JSON forms
    are real JSON; strict mode then raises a CaptureError or finds the same conversations.
    Returns how many conversations the lenient dissection found (None: CaptureError)."""
    try:
        result = dissect(data)
    except CaptureError:
        return None
    for conv in result:
        json.dumps(conv.to_json(verbose=True))
        for message in conv.messages:
            json.dumps(message.to_json(verbose=True))
    try:
        strict = dissect(data, strict=True)
    except CaptureError:
        return len(result)
    assert len(strict) == len(result)
    return len(result)


@pytest.mark.parametrize("name", NAMES)
@fuzz(40)
@given(data=st.data())
def test_damaged_pcap_file(name: str, data: Any) -> None:
    """A damaged recorded pcap dissects with the :func:`_dissect_all_ways` property."""
    raw = bytearray(capture_bytes(name))
    how = data.draw(st.sampled_from(["flip", "truncate", "splice", "zero"]))
    pos = data.draw(st.integers(0, len(raw) - 1))
    if how == "flip":
        raw[pos] ^= 1 << data.draw(st.integers(0, 7))
    elif how == "truncate":
        del raw[pos:]
    elif how == "splice":
        raw[pos:pos] = data.draw(st.binary(min_size=1, max_size=32))
    else:
        raw[pos : pos + 8] = b"\xff" * 8 if data.draw(st.booleans()) else bytes(8)
    _dissect_all_ways(bytes(raw))


@pytest.mark.parametrize("name", NAMES)
@fuzz(40)
@given(data=st.data())
def test_mutated_messages_in_capture(name: str, data: Any) -> None:
    """A valid pcap holding a mutated recorded message is dissected without a CaptureError
    (the file is sound; only the CEDAR bytes are bad) and with the _dissect_all_ways property."""
    convs = conversations(name)
    index = data.draw(st.integers(0, len(convs) - 1))
    messages = list(convs[index])
    if not messages:
        return
    which = data.draw(st.integers(0, len(messages) - 1))
    direction, body = messages[which]
    messages[which] = (direction, data.draw(mutated(body)))
    chunks = [(d, frame_plain(b) if b else b"") for d, b in messages]
    if data.draw(st.booleans()):
        # A raw slice of the stream: cuts mid-packet or mid-header.
        chunks[-1] = (chunks[-1][0], chunks[-1][1][: data.draw(st.integers(0, 12))])
    assert _dissect_all_ways(write_capture([[c for c in chunks if c[1]]])) is not None


@fuzz(60)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_are_not_a_capture(data: bytes) -> None:
    """Arbitrary bytes are refused as a capture with a CaptureError."""
    with pytest.raises(CaptureError):
        dissect(data)


@fuzz(60)
@given(st.lists(st.tuples(st.sampled_from([C2S, S2C]), st.binary(min_size=1, max_size=80))))
def test_arbitrary_streams_in_a_valid_capture(chunks: list[tuple[str, bytes]]) -> None:
    """A valid pcap of arbitrary TCP payloads is dissected without a CaptureError, into at most
    one conversation, with the :func:`_dissect_all_ways` property."""
    found = _dissect_all_ways(write_capture([chunks] if chunks else []))
    assert found is not None and found <= 1


# --------------------------------------------------------------------------- reference replies

QUERY = cc.build_query_ad(cc.AdType.STARTD)
CLIENTS = {
    "status-startd-raw": client_protocol(
        int(Command.QUERY_STARTD_ADS), lambda s: cc.query_protocol(s, QUERY), raw=True
    ),
    "q-all-raw": client_protocol(
        Command.QUERY_JOB_ADS,
        lambda s: cs.query_protocol(s, cs.query_request(None, (), -1)),
        raw=True,
    ),
    "history-bindings-raw": client_protocol(
        Command.QUERY_SCHEDD_HISTORY,
        lambda s: cs.history_protocol(s, cs.history_request(None, (), -1, None)),
        raw=True,
    ),
}


def _server_payloads(name: str) -> list[bytes]:
    (conv,) = [c for c in conversations(name) if any(d == S2C for d, _ in c)][:1]
    return [body for direction, body in conv if direction == S2C]


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_reference_replies_replay(name: str) -> None:
    result, emitted = replay_client(CLIENTS[name], _server_payloads(name))
    assert emitted


@pytest.mark.parametrize("name", sorted(CLIENTS))
@fuzz(150)
@given(data=st.data())
def test_mutated_reference_replies(name: str, data: Any) -> None:
    """Our clients fed a mutated reply recorded from the real daemons return or raise a
    CedarError, never another exception."""
    bad = data.draw(mutated_conversation(_server_payloads(name)))
    with contextlib.suppress(CedarError):
        replay_client(CLIENTS[name], bad)


def test_capture_error_is_a_protocol_error() -> None:
    assert issubclass(CaptureError, ProtocolError)
