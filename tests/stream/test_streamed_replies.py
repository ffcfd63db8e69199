"""Streamed replies: a query answer of any size is decoded ad by ad, in bounded memory.

A real collector answers with one message holding every ad; these tests send such replies
(plain and AES-GCM, in the reference's 4091-byte packets) through a connection whose whole-
message limit is far smaller than the reply, and hostile ones that must fail clearly.
"""

from __future__ import annotations

import socket
import threading

import pytest

from cedar.classad_wire import ClassAd
from cedar.classad_wire.wire import put_classad
from cedar.commands.collector import read_query_results
from cedar.errors import ConnectionClosed, ProtocolError
from cedar.stream import CedarConnection, ReplayChannel
from cedar.stream.drivers import SyncChannel
from cedar.stream.framing import REFERENCE_PACKET_PAYLOAD, frame_plain
from cedar.stream.primitives import MessageWriter
from cedar.stream.protocol import Protocol, StreamedMessage

KEY = bytes(range(32))


def _slot(index: int) -> ClassAd:
    return ClassAd(
        {"Name": f"slot{index}@host", "Memory": 2048 + index, "Arch": "X86_64", "Cpus": 4}
    )


def _reply_payload(count: int, *, crypto: bool) -> bytes:
    writer = MessageWriter(crypto=crypto)
    for index in range(count):
        writer.put_int(1)
        put_classad(writer, _slot(index))
    writer.put_int(0)
    return writer.getvalue()


def _results(stream: StreamedMessage) -> Protocol[int]:
    return (yield from read_query_results(stream))


def _client(crypto: bool, *, max_message_size: int = 4096) -> CedarConnection:
    conn = CedarConnection(max_message_size=max_message_size)
    if crypto:
        conn.install_aes_key(KEY)
    return conn


def _wire(payload: bytes, *, crypto: bool) -> bytes:
    if not crypto:
        return frame_plain(payload, chunk=REFERENCE_PACKET_PAYLOAD)
    # One AES-GCM packet per 4091 bytes, as the reference sends a long reply.
    sender = CedarConnection()
    sender.install_aes_key(KEY)
    step = REFERENCE_PACKET_PAYLOAD
    pieces = [payload[i : i + step] for i in range(0, len(payload), step)]
    send = sender._aes.send  # type: ignore[union-attr]
    transcript = sender.transcript_digests()
    return b"".join(
        send.seal(i == len(pieces) - 1, piece, transcript[0] + transcript[1] if i == 0 else b"")
        for i, piece in enumerate(pieces)
    )


@pytest.mark.parametrize("crypto", [False, True])
def test_reply_larger_than_the_message_limit_streams_every_ad(crypto: bool) -> None:
    payload = _reply_payload(3000, crypto=crypto)
    conn = _client(crypto)
    assert len(payload) > 50 * conn.max_message_size
    channel = ReplayChannel(_wire(payload, crypto=crypto), conn=conn)
    ads = list(channel.iterate(_results(StreamedMessage(part_size=8192))))
    assert [ad["Name"] for ad in ads] == [f"slot{i}@host" for i in range(3000)]
    assert ads[1234]["Memory"] == 2048 + 1234


def _names_read_while_the_peer_pauses(
    count: int, stream: StreamedMessage, release_after: int
) -> tuple[list[str], bool]:
    """The names the client reads from a reply whose second half the peer sends only once
    ``release_after`` ads were handed out; and whether that happened (not the peer's timeout)."""
    wire = frame_plain(_reply_payload(count, crypto=False), chunk=REFERENCE_PACKET_PAYLOAD)
    ours, theirs = socket.socketpair()
    release = threading.Event()
    waited: list[bool] = []

    def serve() -> None:
        half = len(wire) // 2
        theirs.sendall(wire[:half])
        waited.append(release.wait(60))  # False: the client sat waiting for more bytes
        theirs.sendall(wire[half:])
        theirs.close()

    thread = threading.Thread(target=serve)
    thread.start()
    seen: list[str] = []
    try:
        with SyncChannel(ours, conn=_client(False), timeout=10) as channel:
            for ad in channel.iterate(_results(stream)):
                seen.append(ad["Name"])
                if len(seen) == release_after:
                    release.set()
    finally:
        release.set()
        thread.join(10)
    return seen, waited == [True]


def test_ads_arrive_before_the_reply_ends() -> None:
    """The first ads are handed out while the peer still holds back the rest."""
    seen, released = _names_read_while_the_peer_pauses(500, StreamedMessage(part_size=4096), 10)
    assert len(seen) == 500 and released


def test_a_piece_is_handed_out_early_while_the_peer_pauses() -> None:
    """With the default 256 KiB pieces, the ads that arrived are decoded while the peer pauses."""
    stream = StreamedMessage()
    assert len(_reply_payload(2000, crypto=False)) < stream.part_size  # less than one piece
    seen, released = _names_read_while_the_peer_pauses(2000, stream, 1)
    assert seen == [f"slot{i}@host" for i in range(2000)] and released


def test_an_ad_that_never_ends_hits_the_per_item_limit() -> None:
    """A million announced attributes, streamed forever: refused at the per-ad bound."""
    writer = MessageWriter()
    writer.put_int(1).put_int(1_000_000)
    line = b"A" * 60 + b" = 1\0"
    endless = writer.getvalue() + line * 40_000  # ~2.6 MB and still inside the first ad
    channel = ReplayChannel(frame_plain(endless + line, chunk=REFERENCE_PACKET_PAYLOAD))
    stream = StreamedMessage(part_size=16384, max_item_size=1 << 20)
    with pytest.raises(ProtocolError, match="larger than 1048576 bytes"):
        list(channel.iterate(_results(stream)))


def test_a_million_attributes_announced_but_the_message_ends() -> None:
    writer = MessageWriter()
    writer.put_int(1).put_int(1_000_000).put_string("A = 1")
    channel = ReplayChannel(frame_plain(writer.getvalue()))
    with pytest.raises(ProtocolError):
        list(channel.iterate(_results(StreamedMessage())))


@pytest.mark.parametrize("crypto", [False, True])
def test_truncated_mid_ad_is_a_clear_connection_error(crypto: bool) -> None:
    wire = _wire(_reply_payload(200, crypto=crypto), crypto=crypto)
    cut = wire[: len(wire) // 2 + 7]  # inside a packet, inside an ad
    channel = ReplayChannel(cut, conn=_client(crypto))
    got = []
    with pytest.raises(ConnectionClosed) as caught:
        for ad in channel.iterate(_results(StreamedMessage(part_size=4096))):
            got.append(ad)
    assert caught.value.mid_message
    assert 0 < len(got) < 200


def test_bytes_after_the_final_zero_are_refused() -> None:
    payload = _reply_payload(3, crypto=False) + b"junk\0"
    channel = ReplayChannel(frame_plain(payload, chunk=64))
    with pytest.raises(ProtocolError, match="unread bytes"):
        list(channel.iterate(_results(StreamedMessage(part_size=64))))


def test_async_driver_streams_a_reply_beyond_the_message_limit() -> None:
    import trio
    import trio.testing

    from cedar.stream.drivers import TrioChannel

    payload = _reply_payload(1000, crypto=True)
    wire = _wire(payload, crypto=True)

    async def main() -> list[str]:
        ours, theirs = trio.testing.memory_stream_pair()
        names: list[str] = []
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                for start in range(0, len(wire), 10_000):
                    await theirs.send_all(wire[start : start + 10_000])
                await theirs.aclose()

            nursery.start_soon(serve)
            channel = TrioChannel(ours, conn=_client(True), timeout=10)
            async for ad in channel.iterate(_results(StreamedMessage(part_size=8192))):
                names.append(ad["Name"])
        return names

    names = trio.run(main)
    assert names == [f"slot{i}@host" for i in range(1000)]
