"""The shape reader's lazy values and the cut check of streamed pieces change nothing observable.

In clear mode an ad read by a compiled shape reader keeps its regular-expression match and
makes its value strings on first use; a streamed piece that ends inside an ad is recognised by
counting NULs instead of reading the ad string by string.  Both must give exactly the ads (and
errors) a whole-message read gives.
"""

from __future__ import annotations

import copy
import pickle

import pytest

from cedar.classad_wire import ClassAd, wire
from cedar.classad_wire.wire import get_classad, get_flagged_classads, put_classad
from cedar.commands.collector import read_query_results
from cedar.errors import ProtocolError
from cedar.stream import CedarConnection, ReplayChannel
from cedar.stream.framing import REFERENCE_PACKET_PAYLOAD, frame_plain
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Protocol, StreamedMessage

KEY = bytes(range(32))


def _slot(index: int) -> ClassAd:
    return ClassAd.parse_old(
        f'Name = "slot{index}@lazy"\nMemory = {2048 + index}\nStart = (Memory > 1024)\n'
        'Arch = "X86_64"\nOpSys = "LINUX"\n'
    )


def _ad_bytes(ad: ClassAd, crypto: bool) -> bytes:
    writer = MessageWriter(crypto=crypto)
    put_classad(writer, ad)
    return writer.getvalue()


def _warm(crypto: bool) -> None:
    """Read enough ads of the slot shape that it has its compiled reader."""
    for index in range(wire._SHAPE_READER_AFTER + 2):
        get_classad(MessageReader(_ad_bytes(_slot(index), crypto), crypto=crypto))


def _reply(ads: list[bytes], crypto: bool) -> bytes:
    writer = MessageWriter(crypto=crypto)
    for ad in ads:
        writer.put_int(1).put_bytes(ad)
    writer.put_int(0)
    return writer.getvalue()


def _results(stream: StreamedMessage) -> Protocol[int]:
    return (yield from read_query_results(stream))


def _streamed(payload: bytes, part_size: int, crypto: bool) -> list[ClassAd]:
    conn = CedarConnection(max_message_size=1 << 30)
    if crypto:
        conn.install_aes_key(KEY)
        sender = CedarConnection()
        sender.install_aes_key(KEY)
        packets = sender.send_message(payload)
    else:
        packets = frame_plain(payload, chunk=REFERENCE_PACKET_PAYLOAD)
    channel = ReplayChannel(packets, conn=conn)
    return list(channel.iterate(_results(StreamedMessage(part_size=part_size))))


def test_clear_shape_reader_makes_values_on_first_use() -> None:
    _warm(False)
    back = get_classad(MessageReader(_ad_bytes(_slot(7), False)))
    assert back._shape is not None and False in back._shape.readers
    assert back._match is not None  # read by the compiled reader, values not made yet
    assert list(back) == ["Name", "Memory", "Start", "Arch", "OpSys"] and len(back) == 5
    assert "memory" in back and back._match is not None  # names come from the shape
    assert back["MEMORY"] == 2055 and back["Name"] == "slot7@lazy"
    assert isinstance(back._values, tuple) and len(back._values) == 5
    assert not hasattr(back, "_match")  # dropped with the values made: it holds the whole piece
    assert back.lookup("Start") == _slot(7).lookup("Start")
    assert back == _slot(7)


@pytest.mark.parametrize("use", ["copy", "deepcopy", "pickle", "eq", "raw", "set", "expr"])
def test_an_untouched_lazy_ad_behaves_as_any_ad(use: str) -> None:
    _warm(False)
    back = get_classad(MessageReader(_ad_bytes(_slot(3), False)))
    assert back._match is not None
    expected = _slot(3)
    if use == "copy":
        assert copy.copy(back) == expected
    elif use == "deepcopy":
        assert copy.deepcopy(back) == expected
    elif use == "pickle":
        assert pickle.loads(pickle.dumps(back)) == expected
    elif use == "eq":
        assert back == expected and expected == back
    elif use == "raw":
        names, texts = back.raw_columns()
        assert list(zip(names, texts, strict=True)) == expected.raw_items()
    elif use == "set":
        back["Memory"] = 1
        assert back["Memory"] == 1 and back["Name"] == "slot3@lazy" and len(back) == 5
    else:
        assert back.get_expr("start") == expected.lookup("Start")
        assert back.eval("Start") is True


@pytest.mark.parametrize("crypto", [False, True])
@pytest.mark.parametrize("part_size", [64, 333, 1000, 4091, 5003, 65536])
def test_pieces_cut_anywhere_give_the_whole_reply(crypto: bool, part_size: int) -> None:
    _warm(crypto)
    ads = [_ad_bytes(_slot(index), crypto) for index in range(300)]
    payload = _reply(ads, crypto)
    whole, ended = get_flagged_classads(MessageReader(payload, crypto=crypto))
    assert ended and len(whole) == 300
    streamed = _streamed(payload, part_size, crypto)
    assert [ad.raw_items() for ad in streamed] == [ad.raw_items() for ad in whole]
    assert [ad["Memory"] for ad in streamed] == [2048 + index for index in range(300)]


@pytest.mark.parametrize("part_size", [64, 1000, 4091, 65536])
def test_a_null_string_in_a_cut_ad_is_still_refused(part_size: int) -> None:
    """The NUL count cannot see a NULL string: such an ad waits for more and then fails."""
    _warm(False)
    bad = MessageWriter().put_int(5)
    for line in ['Name = "x"', "Memory = 1", "Start = true", 'Arch = "a"']:
        bad.put_string(line)
    bad.put_null_string().put_string("").put_string("")
    ads = [_ad_bytes(_slot(index), False) for index in range(200)] + [bad.getvalue()]
    with pytest.raises(ProtocolError, match="NULL string"):
        _streamed(_reply(ads, False), part_size, False)


def test_a_cut_check_never_reports_a_complete_message_cut() -> None:
    """In the last piece (``complete``) an ad short of NULs is an error, not a wait."""
    _warm(False)
    payload = _reply([_ad_bytes(_slot(0), False)], False)
    truncated = payload[: len(payload) - 12]
    with pytest.raises(ProtocolError):
        get_flagged_classads(MessageReader(truncated))


def _other(index: int) -> ClassAd:
    return ClassAd.parse_old(f'Name = "other{index}"\nMemory = {index}\nState = "Idle"\n')


@pytest.mark.parametrize("crypto", [False, True])
def test_interleaved_shapes_read_as_the_line_reader_reads_them(crypto: bool) -> None:
    _warm(crypto)
    for index in range(wire._SHAPE_READER_AFTER + 2):
        get_classad(MessageReader(_ad_bytes(_other(index), crypto), crypto=crypto))
    made = [(_slot if index % 3 else _other)(index) for index in range(60)]
    payload = _reply([_ad_bytes(ad, crypto) for ad in made], crypto)
    ads, ended = get_flagged_classads(MessageReader(payload, crypto=crypto))
    assert ended and [ad.raw_items() for ad in ads] == [ad.raw_items() for ad in made]
    assert sum(ad._shape is not None for ad in ads) == 60  # all read on their shapes


def test_reading_leaves_the_garbage_collector_as_it_found_it() -> None:
    import gc

    payload = _reply([_ad_bytes(_slot(0), False)], False)
    was = gc.isenabled()
    try:
        gc.enable()
        get_flagged_classads(MessageReader(payload))
        assert gc.isenabled()
        with pytest.raises(ProtocolError):
            get_flagged_classads(MessageReader(payload[:-12]))
        assert gc.isenabled()
        gc.disable()
        get_flagged_classads(MessageReader(payload))
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
