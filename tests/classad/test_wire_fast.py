"""The bulk ClassAd reader, the value fast paths and the encoding cache change nothing observable.

``get_classad`` reads an ad in bulk and builds its entries on first use; the line-by-line
reader it falls back to is the reference behaviour.  On any input both must give the same ad
(names, spellings, order, raw values) and leave the reader at the same place, or raise the same
``ProtocolError`` (message and offset).
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cedar.classad_wire import ClassAd, get_classad, put_classad, wire
from cedar.classad_wire.expr import Literal
from cedar.classad_wire.wire import _get_classad_lines, _read_count
from cedar.errors import ClassAdParseError, ProtocolError
from cedar.stream.primitives import MessageReader, MessageWriter

_NAMES = st.sampled_from(["A", "a", "Cpus", "MyType", "x_1", "Ümlaut", "b c", "ZKM", ""])
_VALUES = st.sampled_from(
    ["1", "-7", "1.5", '"s"', "true", "FALSE", "A + 1", "{1, 2}", "[a = 1]", " ", "", '"a\\"b"']
)
_SEPARATORS = st.sampled_from([" = ", "=", "  =  ", " =", "= ", "\t= ", " == "])


@st.composite
def _line(draw: st.DrawFn) -> bytes | None:
    """A wire item: mostly ``Name = value`` lines in their many spellings, sometimes worse."""
    kind = draw(st.sampled_from(["line"] * 8 + ["null", "zkm", "noeq", "bytes"]))
    if kind == "null":
        return None
    if kind == "zkm":
        return b"ZKM"
    if kind == "noeq":
        return draw(_NAMES).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=8))
    lead = draw(st.sampled_from(["", "", " ", "\t", "\n "]))
    text = lead + draw(_NAMES) + draw(_SEPARATORS) + draw(_VALUES)
    return text.encode("utf-8") + draw(st.sampled_from([b"", b"", b"\xff", b" ", b"\0junk"]))


def _payload(count: int, items: list[bytes | None], crypto: bool, types: bool) -> bytes:
    writer = MessageWriter(crypto=crypto)
    writer.put_int(count)
    for item in items:
        if item is None:
            writer.put_null_string()
        elif crypto:
            writer.put_bytes(struct.pack(">Q", len(item) + 1) + item + b"\0")
        else:
            writer.put_bytes(item + b"\0")
    if types:
        writer.put_string("").put_string("")
    return writer.getvalue()


def _entries(ad: ClassAd) -> list[tuple[str, str, Any]]:
    return [(key, entry[0], entry[1]) for key, entry in ad.entry_table().items()]


def _outcome(payload: bytes, crypto: bool, types: bool, fast: bool) -> tuple[object, int]:
    reader = MessageReader(payload, crypto=crypto)
    try:
        if fast:
            result: object = _entries(get_classad(reader, types=types))
        else:
            count = _read_count(reader, 1_000_000)
            result = _entries(_get_classad_lines(reader, count, types, False))
    except ProtocolError as exc:
        result = ("error", str(exc), exc.offset)
    return result, reader.offset


@settings(max_examples=500)
@given(
    st.lists(_line(), max_size=7),
    st.integers(-1, 2),
    st.booleans(),
    st.booleans(),
    st.integers(0, 12),
)
def test_bulk_reader_matches_line_reader(
    items: list[bytes | None], extra: int, crypto: bool, types: bool, cut: int
) -> None:
    """For any payload (miscounted, cut short), the bulk reader gives the line reader's entries,
    or the same ProtocolError at the same offset, and leaves the reader at the same offset."""
    payload = _payload(max(0, len(items) + extra), items, crypto, types)
    if cut > 6:
        payload = payload[: len(payload) - (cut - 6)]
    assert _outcome(payload, crypto, types, True) == _outcome(payload, crypto, types, False)


@pytest.mark.parametrize("crypto", [False, True])
def test_canonical_ad_round_trip_is_read_in_bulk_and_lazily(crypto: bool) -> None:
    ad = ClassAd({"A": 1, "b": "x", "Ümlaut": 2.5, "R": ClassAd.parse_old("R = A + 1").lookup("R")})
    writer = MessageWriter(crypto=crypto)
    put_classad(writer, ad)
    back = get_classad(MessageReader(writer.getvalue(), crypto=crypto))
    assert back._shape is not None  # entries not built yet
    # Names, membership, length and values are read from the shared shape...
    assert len(back) == 4 and "Ümlaut" in back and "B" in back and "nope" not in back
    assert list(back) == ["A", "b", "Ümlaut", "R"]
    assert back["a"] == 1 and back["B"] == "x" and back["Ümlaut"] == 2.5
    assert back._shape is not None
    # ...anything else builds the table once.
    assert back == ad and back._shape is None
    assert list(back) == ["A", "b", "Ümlaut", "R"]


def _shape_reader_outcome(payload: bytes, crypto: bool, fast: bool) -> tuple[object, int]:
    reader = MessageReader(payload, crypto=crypto)
    try:
        if fast:
            ad = get_classad(reader)
            result: object = (list(ad), [ad.raw_text(name) for name in ad])
        else:
            count = _read_count(reader, 1_000_000)
            ad = _get_classad_lines(reader, count, True, False)
            result = (list(ad), [ad.raw_text(name) for name in ad])
    except ProtocolError as exc:
        result = ("error", str(exc), exc.offset)
    return result, reader.offset


_SHAPE_LINES = [b'Name = "slot1@h"', b"Cpus = 1", b"Start = (a == b)", b'MyType = "Machine"']


@pytest.mark.parametrize("crypto", [False, True])
def test_recurring_shape_gets_a_compiled_reader(crypto: bool) -> None:
    for index in range(wire._SHAPE_READER_AFTER + 8):
        lines = [b'Name = "slot%d@h"' % index, *_SHAPE_LINES[1:]]
        reader = MessageReader(_payload(4, lines, crypto, True) + b"after", crypto=crypto)
        ad = get_classad(reader)
        assert reader.remaining == len(b"after")
        assert ad["Name"] == f"slot{index}@h" and ad["cpus"] == 1
    assert ad._shape is not None and crypto in ad._shape.readers
    assert ad.lookup("Start") == ClassAd.parse_old("Start = (a == b)").lookup("Start")


@pytest.mark.parametrize("crypto", [False, True])
def test_shape_reader_matches_line_reader_on_damaged_input(crypto: bool) -> None:
    """Every byte changed in turn (length prefixes included), and every cut: same ad or error."""
    for _ in range(wire._SHAPE_READER_AFTER + 8):  # make sure the shape has its compiled reader
        ad = get_classad(MessageReader(_payload(4, _SHAPE_LINES, crypto, True), crypto=crypto))
    assert ad._shape is not None and crypto in ad._shape.readers
    whole = _payload(4, _SHAPE_LINES, crypto, True)
    damaged = [whole[:cut] for cut in range(len(whole))]
    for position, original in enumerate(whole):
        for byte in {0, 1, 0x20, 0x3D, 0xAD, (original + 1) % 256}:
            if byte != original:
                damaged.append(whole[:position] + bytes((byte,)) + whole[position + 1 :])
    for payload in damaged:
        fast = _shape_reader_outcome(payload, crypto, True)
        assert fast == _shape_reader_outcome(payload, crypto, False), payload


def test_repeated_names_in_bulk_keep_first_spelling_and_place_last_value() -> None:
    items: list[bytes | None] = [b"Foo = 1", b"bar = 2", b"FOO = 3"]
    for crypto in (False, True):
        ad = get_classad(MessageReader(_payload(3, items, crypto, True), crypto=crypto))
        assert list(ad) == ["Foo", "bar"]
        assert ad["foo"] == 3


def test_simple_values_are_cached_and_lookup_stays_equal() -> None:
    ad = ClassAd.parse_old('I = 42\nS = "text"\nR = 2.5\nB = true\nE = I + 1\n')
    wire = MessageWriter(crypto=True)
    put_classad(wire, ad)
    back = get_classad(MessageReader(wire.getvalue(), crypto=True))
    assert back.to_dict() == {"I": 42, "S": "text", "R": 2.5, "B": True, "E": ad.lookup("E")}
    assert back["I"] == 42
    assert back.entry_table()["i"][1] == "42"  # still raw once the table is built
    for name in ("I", "S", "R", "B", "E"):
        assert back.lookup(name) == ad.lookup(name)
        assert back[name] == ad[name]
    assert isinstance(back.lookup("I"), Literal)
    back["I"] = 7
    assert back["I"] == 7 and back.lookup("I") == Literal(7)


def test_bad_value_still_reported_on_access() -> None:
    payload = _payload(2, [b"A = 1", b"B = (1 +"], True, True)
    ad = get_classad(MessageReader(payload, crypto=True))
    assert ad["A"] == 1
    with pytest.raises(ClassAdParseError, match="'B'"):
        ad["B"]
    with pytest.raises(ClassAdParseError, match="'B'"):
        ad.to_dict()


def test_nan_literals_are_equal_and_hash_alike() -> None:
    one, two = Literal(float("nan")), Literal(float("nan"))
    assert one == two and hash(one) == hash(two)
    assert Literal(1) != Literal(True) and Literal(1) == Literal(1)


def _encode(ad: ClassAd, **options: Any) -> bytes:
    writer = MessageWriter(crypto=True)
    put_classad(writer, ad, **options)
    return writer.getvalue()


def test_encoding_cache_is_dropped_by_every_change() -> None:
    ad = ClassAd({"A": 1, "B": "x", "ClaimId": "secret"})
    options: dict[str, Any] = {"exclude_private": True}
    first = _encode(ad, **options)
    assert first == _encode(ClassAd({"A": 1, "B": "x"}))  # the private ClaimId is left out
    assert _encode(ad, **options) == first  # now from the cache
    only_a = _encode(ClassAd({"A": 1}))
    assert _encode(ad, projection=["A"]) == only_a
    assert _encode(ad, projection=["B"]) == _encode(ClassAd({"B": "x"}))  # another cache entry
    assert _encode(ad, projection=["A"]) == only_a  # cached per options: A's, not B's
    changes = [
        lambda: ad.__setitem__("A", 2),
        lambda: ad.__setitem__("New", 3),
        lambda: ad.__delitem__("B"),
        lambda: ad.set_expr("B", Literal("y")),
        lambda: ad._set_raw("C", "4"),
        lambda: ad.pop("C"),
        lambda: ad.update({"D": 5}),
        lambda: ad.clear(),
    ]
    for change in changes:
        _encode(ad, **options)
        _encode(ad, projection=["A", "D"])
        change()
        fresh = ClassAd()
        for name in ad:
            fresh.set_expr(ad.spelling(name), ad.lookup(name))
        assert _encode(ad, **options) == _encode(fresh, **options)
        assert _encode(ad, projection=["A", "D"]) == _encode(fresh, projection=["A", "D"])


def test_encoding_cache_keys_on_options() -> None:
    ad = ClassAd({"A": 1, "ClaimId": "secret", "_condor_privX": "p"})
    variants: list[dict[str, Any]] = [
        {},
        {"exclude_private": True},
        {"peer_version": (25, 0, 0)},
        {"private_names": ["A"]},
        {"projection": "A ClaimId"},
        {"projection": ["A"], "server_time": 5},
        {"projection": ["A"], "expand_projection": False},
        {"server_time": 7, "types": False},
    ]
    expected = [_encode(ClassAd(dict(ad)), **v) for v in variants]
    for _ in range(3):
        assert [_encode(ad, **v) for v in variants] == expected
    plain = MessageWriter()
    put_classad(plain, ad)
    put_classad(plain, ad)
    single = MessageWriter()
    put_classad(single, ClassAd(dict(ad)))
    assert plain.getvalue() == single.getvalue() * 2


def test_wire_ads_copy_pickle_and_deepcopy() -> None:
    import copy
    import pickle

    ad = ClassAd.parse_old('A = 1\nS = "x"\nE = A + 1\nL = {1, 2}\n')
    wire = MessageWriter(crypto=True)
    put_classad(wire, ad)
    back = get_classad(MessageReader(wire.getvalue(), crypto=True))
    assert back._shape is not None  # read on its shared shape
    for clone in (copy.copy(back), copy.deepcopy(back), pickle.loads(pickle.dumps(back))):
        assert clone == ad and clone is not back
    clone = copy.deepcopy(back)
    clone["A"] = 2
    assert back["A"] == 1 and clone["E"] == ad.lookup("E")


def test_shape_registry_is_bounded() -> None:
    from cedar.classad_wire import classad

    for index in range(classad._SHAPES_MAX * 2):
        classad.ad_shape((f"A{index}", "B"))
    assert len(classad._SHAPES) <= classad._SHAPES_MAX
    huge = tuple(f"N{index}" for index in range(classad._SHAPES_MAX_NAMES + 1))
    assert classad.ad_shape(huge) is not None and huge not in classad._SHAPES
    half = classad._SHAPES_MAX_NAMES // 2
    for tag in ("p", "q", "r"):
        classad.ad_shape(tuple(f"{tag}{index}" for index in range(half)))
    assert sum(map(len, classad._SHAPES)) <= classad._SHAPES_MAX_NAMES


@pytest.mark.parametrize("crypto", [False, True])
def test_names_of_the_last_shape_are_checked_not_assumed(crypto: bool) -> None:
    """After an ad of names A, B: same-sized ads with other names or odd values read exactly."""
    get_classad(MessageReader(_payload(2, [b"A = 1", b"B = 2"], crypto, True), crypto=crypto))
    for lines in (
        [b"A = 1", b"B = 2"],
        [b"A =  1", b"B = 2"],
        [b"A = 1", b"B = "],
        [b"A = 1", b"C = 2"],
        [b"a = 1", b"B = 2"],
        [b" A = 1", b"B = 2"],
        [b"A = 1", b"B = = 2"],
        [b"A = 1", b"A = 2"],
        [b"AB = 1", b"B = 2"],
    ):
        payload = _payload(2, list(lines), crypto, True)
        assert _shape_reader_outcome(payload, crypto, True) == _shape_reader_outcome(
            payload, crypto, False
        ), lines


def test_eval_of_a_literal_attribute_is_what_the_evaluator_gives() -> None:
    from cedar.classad_wire import evaluate
    from cedar.classad_wire.expr import AttrRef

    text = (
        'I = 3\nF = 2.5\nS = "x"\nB = true\nL = {1, 2}\nR = [a = 1]\nE = I + 1\nU = undefined\n'
        "Err = error\nRef = Missing\nT = absTime(0)\n"
    )
    target = ClassAd.parse_old("Missing = 7\nI = 99\n")
    for ad in (ClassAd.parse_old(text), _wire_copy(ClassAd.parse_old(text))):
        for name in [*ad, "Absent", "i"]:
            for other in (None, target):
                assert repr(ad.eval(name, other)) == repr(evaluate(AttrRef(name), ad, other))


def _wire_copy(ad: ClassAd) -> ClassAd:
    writer = MessageWriter(crypto=True)
    put_classad(writer, ad)
    return get_classad(MessageReader(writer.getvalue(), crypto=True))


@pytest.mark.parametrize("crypto", [False, True])
def test_a_repeated_name_keeps_first_spelling_and_place_and_last_value(crypto: bool) -> None:
    """The 25.x schedd sends JobStatus twice in every job ad: the fast path reads such ads
    (many times over, so its plan is reused) exactly as the line reader does."""
    lines = [b"JobStatus = 5", b"ClusterId = 1", b'Owner = "u"', b"jobstatus = 2"]
    for _ in range(3):
        payload = _payload(4, list(lines), crypto, True)
        fast = get_classad(MessageReader(payload, crypto=crypto))
        assert list(fast) == ["JobStatus", "ClusterId", "Owner"]
        assert fast["JobStatus"] == 2 and fast.raw_columns()[1][0] == "2"
        assert _shape_reader_outcome(payload, crypto, True) == _shape_reader_outcome(
            payload, crypto, False
        )


def test_expression_lookups_answer_from_the_shape() -> None:
    """Matching reads a few attributes of each of many slot ads: a wire ad answers ``get_expr``
    and ``lookup`` from its shape and raw texts, with the trees the entry table would give."""
    source = ClassAd({"Memory": 1024, "Name": "slot1@h", "Ok": True, "Big": 1 << 40, "L": [1, "a"]})
    source.set_expr("Start", "TARGET.RequestMemory <= MY.Memory && Ok")
    writer = MessageWriter(crypto=False)
    for _ in range(3):
        put_classad(writer, source)
    reader = MessageReader(writer.getvalue(), crypto=False)
    ads = [get_classad(reader) for _ in range(3)]
    built = ClassAd(source)
    for ad in ads:
        for name in ("memory", "NAME", "Ok", "Big", "L", "start"):
            assert ad.get_expr(name) == built.get_expr(name), name
            assert ad.lookup(name) == built.lookup(name), name
        assert ad.get_expr("Absent") is None
        with pytest.raises(KeyError):
            ad.lookup("Absent")
    assert ads[0].eval("Start", ClassAd({"RequestMemory": 512})) is True
    assert ads[1].get_expr("Start") is ads[2].get_expr("Start")  # one tree for one text


def test_membership_of_a_wire_ad_ignores_case() -> None:
    """``in`` answers from the shape's index, which holds the spellings and the folded keys."""
    reader = MessageReader(_payload(4, _SHAPE_LINES, False, True), crypto=False)
    ad = get_classad(reader)
    assert ad._shape is not None
    for name in ("Name", "name", "NAME", "cpus", "MyType", "mytype", "sTaRt"):
        assert name in ad, name
    for name in ("Memory", "Nam", "", 1, None):
        assert name not in ad, name
    assert "ümlaut" not in ad


_REPEAT_LINES = [b"JobStatus = 5", b"ClusterId = 1", b'Owner = "u"', b"jobstatus = 2"]


def _merging_reader(crypto: bool) -> Any:
    """The compiled reader of the ads of _REPEAT_LINES' names, if there is one."""
    for shape_reader in wire._SHAPE_READERS.get((4, crypto), ()):
        owner = shape_reader.owner
        if getattr(owner, "names", None) == ("JobStatus", "ClusterId", "Owner", "jobstatus"):
            assert shape_reader.merge is not None and owner.readers[crypto] is shape_reader
            return shape_reader
    return None


@pytest.mark.parametrize("crypto", [False, True])
def test_a_recurring_shape_with_a_repeated_name_gets_a_compiled_reader(crypto: bool) -> None:
    """Every 25.x job ad repeats JobStatus: such ads earn a compiled reader too, which merges
    the repeat as the line reader does (first spelling and place, last value)."""
    for index in range(wire._SHAPE_READER_AFTER + 8):
        lines = [*_REPEAT_LINES[:1], b"ClusterId = %d" % index, *_REPEAT_LINES[2:]]
        reader = MessageReader(_payload(4, lines, crypto, True) + b"after", crypto=crypto)
        ad = get_classad(reader)
        assert reader.remaining == len(b"after")
        assert list(ad) == ["JobStatus", "ClusterId", "Owner"]
        assert ad["ClusterId"] == index and ad["JobStatus"] == 2
    shape_reader = _merging_reader(crypto)
    assert shape_reader is not None
    plan = shape_reader.owner
    assert ad.raw_columns() == (("JobStatus", "ClusterId", "Owner"), ["2", str(index), '"u"'])
    # read by the compiled reader now: same outcome as the line reader
    payload = _payload(4, list(_REPEAT_LINES), crypto, True)
    before = plan.seen
    assert _shape_reader_outcome(payload, crypto, True) == _shape_reader_outcome(
        payload, crypto, False
    )
    assert plan.seen == before  # not counted again: the compiled reader took it


@pytest.mark.parametrize("crypto", [False, True])
def test_merging_shape_reader_matches_line_reader_on_damaged_input(crypto: bool) -> None:
    """Every byte of an ad with a repeated name changed in turn, and every cut, through the
    compiled merging reader: the line reader's ad, or its error at its offset."""
    for _ in range(wire._SHAPE_READER_AFTER + 8):
        get_classad(MessageReader(_payload(4, list(_REPEAT_LINES), crypto, True), crypto=crypto))
    assert _merging_reader(crypto) is not None
    whole = _payload(4, list(_REPEAT_LINES), crypto, True)
    damaged = [whole[:cut] for cut in range(len(whole))]
    for position, original in enumerate(whole):
        for byte in {0, 1, 0x20, 0x3D, 0xAD, 0xFF, (original + 1) % 256}:
            if byte != original:
                damaged.append(whole[:position] + bytes((byte,)) + whole[position + 1 :])
    for payload in damaged:
        fast = _shape_reader_outcome(payload, crypto, True)
        assert fast == _shape_reader_outcome(payload, crypto, False), payload


def test_a_run_of_ads_with_a_repeated_name_is_read_in_bulk() -> None:
    """A reply of flagged ads (``I(more) AD`` ...) whose ads repeat a name: all read, merged."""
    writer = MessageWriter(crypto=True)
    total = wire._SHAPE_READER_AFTER + 50
    for index in range(total):
        writer.put_int(1)
        body = _payload(
            4, [b"A = %d" % index, b"B = 1", b"a = %d" % (index * 2), b"C = 2"], True, True
        )
        writer.put_bytes(body)
    writer.put_int(0)
    ads, done = wire.get_flagged_classads(MessageReader(writer.getvalue(), crypto=True))
    assert done and len(ads) == total
    assert [ad["A"] for ad in ads] == [index * 2 for index in range(total)]
    assert all(list(ad) == ["A", "B", "C"] for ad in ads)


def test_bytes_values_decode_in_one_pass_as_one_by_one() -> None:
    from cedar.classad_wire.classad import _texts

    raws = [b"1", b'"\xc3\xa9"', b'"\xff\xfe"', b"", b'"\xe2\x82"']
    assert _texts(raws) == [raw.decode("utf-8", "surrogateescape") for raw in raws]
    # a value holding a NUL (never read from the wire) still decodes one by one
    assert _texts([b"a\0b", b"c"]) == ["a\0b", "c"]


@pytest.mark.parametrize("crypto", [False, True])
def test_plain_variant_matches_line_reader_on_damaged_input(crypto: bool) -> None:
    """``read_shaped_values`` tries a shape's plain variant first (values that are their own
    JSON, for the transcoder): every byte changed in turn, and every cut, gives the line
    reader's values at the line reader's offset, or nothing with the reader left in place."""
    lines = [b'Name = "slot1@h"', b"Cpus = 1", b"Memory = 2048.0", b"Start = (a == b)"]
    for _ in range(wire._SHAPE_READER_AFTER + 8):
        get_classad(MessageReader(_payload(4, lines, crypto, True), crypto=crypto))
    whole = _payload(4, lines, crypto, True)
    for _ in range(2):  # the first read by the shape's reader makes the variant
        found = wire.read_shaped_values(MessageReader(whole, crypto=crypto))
    assert found is not None and isinstance(found[0].names, wire.PlainNames)
    assert found[0].names.plain == (0, 1, 2)
    damaged = [whole[:cut] for cut in range(len(whole))]
    for position, original in enumerate(whole):
        for byte in {0, 1, 0x09, 0x20, 0x22, 0x2D, 0x30, 0x5C, 0xAD, (original + 1) % 256}:
            if byte != original:
                damaged.append(whole[:position] + bytes((byte,)) + whole[position + 1 :])
    for payload in damaged:
        reader = MessageReader(payload, crypto=crypto)
        found = wire.read_shaped_values(reader)
        if found is None:
            assert reader.offset == 0
            continue
        line_reader = MessageReader(payload, crypto=crypto)
        count = _read_count(line_reader, 1_000_000)
        ad = _get_classad_lines(line_reader, count, True, False)
        assert reader.offset == line_reader.offset, payload
        texts = [value.decode("utf-8", "surrogateescape") for value in found[1]]
        assert (found[0].names, texts) == (ad.raw_columns()[0], list(ad.raw_columns()[1]))
        plain = getattr(found[0].names, "plain", ())
        assert all(wire._plain_kind(found[1][i]) is not None for i in plain), payload


def _crypto_payload(items: list[bytes], prefixes: dict[int, bytes]) -> bytes:
    """An ad under crypto mode whose line ``i`` carries ``prefixes[i]`` (8 bytes) if given."""
    writer = MessageWriter(crypto=True)
    writer.put_int(len(items))
    for index, item in enumerate(items):
        prefix = prefixes.get(index, struct.pack(">Q", len(item) + 1))
        writer.put_bytes(prefix + item + b"\0")
    writer.put_string("").put_string("")
    return writer.getvalue()


def _lying_prefix_cases(items: list[bytes]) -> list[bytes]:
    """Each line's prefix lied about in turn: off by one, by 256 and 65536, zero, maximal."""
    cases = [_crypto_payload(items, {})]
    for index, item in enumerate(items):
        true = len(item) + 1
        for told in {true - 1, true + 1, true - 256, true + 256, true % 65536, 0, 1, 65535}:
            if 0 <= told != true:
                cases.append(_crypto_payload(items, {index: struct.pack(">Q", told)}))
    # Two compensating lies (the lengths' sum kept), and a lie about the line after a long one.
    cases.append(
        _crypto_payload(
            items, {0: struct.pack(">Q", len(items[0]) + 2), 1: struct.pack(">Q", len(items[1]))}
        )
    )
    return cases


_LYING_SHAPES = {
    "short": [b"A = 1", b'B = "b"', b"C = 3", b"D = true"],
    "line of 256 or more": [b"A = 1", b'B = "' + b"x" * 300 + b'"', b"C = 3", b"D = true"],
    "line of 65536 or more": [b"A = 1", b'B = "' + b"x" * 70_000 + b'"', b"C = 3", b"D = true"],
    "ad of 65536 or more": [
        b"A = 1", b'B = "' + b"x" * 40_000 + b'"', b'C = "' + b"y" * 40_000 + b'"', b"D = true"
    ],
    "value with a NUL": [b"A = 1", b'B = "b\0"', b"C = 3", b"D = true"],
    "value with a prefix inside": [
        b"A = 1",
        b'B = "b' + b"\0" * 7 + b'\x06C = 3',
        b"C = 3",
        b"D = true",
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(_LYING_SHAPES))
def test_shape_reader_never_trusts_a_lying_length_prefix(name: str) -> None:
    """Under crypto mode a length prefix that is not its line's length never gives another ad
    (or another place) than the line-by-line reader: both readers, and read_shaped_values."""
    honest = [b"A = 1", b'B = "b"', b"C = 3", b"D = true"]
    for _ in range(wire._SHAPE_READER_AFTER + 8):  # the shape A, B, C, D gets its reader
        get_classad(MessageReader(_crypto_payload(honest, {}), crypto=True))
    assert wire._SHAPE_READERS.get((4, True))
    for payload in _lying_prefix_cases(_LYING_SHAPES[name]):
        slow = _shape_reader_outcome(payload, True, False)
        assert _shape_reader_outcome(payload, True, True) == slow, payload[:64]
        reader = MessageReader(payload, crypto=True)
        shaped = wire.read_shaped_values(reader)
        if shaped is not None:
            names, raw = slow[0]  # type: ignore[misc]
            assert (list(shaped[0].names), [value.decode() for value in shaped[1]]) == (
                names,
                raw,
            )
            assert reader.offset == slow[1]
