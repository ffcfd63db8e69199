"""The compact JSON of an ad (``cedar.http_api.adjson.ad_json``) is the indented writer's document
on one line: same members, same order, same values, names lower-cased only when asked."""

from __future__ import annotations

import json
import re

import pytest

from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.classad_wire.jsonfmt import ad_to_json_compact, ad_to_json_sorted
from cedar.http_api.adjson import ad_json, ad_json_bytes
from cedar.stream.primitives import MessageReader, MessageWriter

TEXT = r"""
ClusterId = 12
ProcId = 0
Owner = "testuser"
Cmd = "/bin/echo \"quoted\": yes"
Args = "line1\nline2"
Requirements = (TARGET.Memory >= RequestMemory) && (TARGET.Arch == "X86_64")
Rank = 0.5
Empty = {}
Names = { "a", "B\": c", 3 }
Nested = [ Inner = 1; Deep = [ Leaf = "x"; Other = { 1, 2 } ]; Str = "v" ]
Undefinedness = undefined
Flag = true
Big = 123456789012345678901
Neg = -7
Err = error
When = absTime("2024-01-02T03:04:05Z")
""".strip()


def reference(ad: ClassAd, lower: bool) -> str:
    """The former way: the indented text, each line's indentation dropped (names lowered)."""
    out = []
    for line in ad_to_json_sorted(ad).split("\n"):
        line = line.lstrip(" ")
        if lower and line[:1] == '"':
            end = line.find('": ')
            if end > 0 and "\\" not in line[1:end]:
                line = line[:end].lower() + line[end:]
        out.append(line)
    return "".join(out)


@pytest.mark.parametrize("lower", [False, True])
def test_compact_is_the_indented_document_on_one_line(lower: bool) -> None:
    ad = ClassAd.from_raw_text(TEXT)
    compact = ad_to_json_compact(ad, lower=lower)
    assert "\n" not in compact
    assert compact == reference(ClassAd.from_raw_text(TEXT), lower)
    decoded = json.loads(compact)
    indented = json.loads(ad_to_json_sorted(ClassAd.from_raw_text(TEXT)))
    if not lower:
        assert decoded == indented and list(decoded) == list(indented)
    else:
        assert list(decoded) == [name.lower() for name in indented]
        assert decoded["nested"] == {"deep": {"leaf": "x", "other": [1, 2]}, "inner": 1, "str": "v"}
        assert decoded["names"] == ["a", 'B": c', 3]


def test_empty_ad_and_redaction() -> None:
    assert ad_to_json_compact(ClassAd()) == "{}"
    ad = ClassAd.from_raw_text('Owner = "u"\nSecret = "s3cret"')
    assert json.loads(ad_json(ad, ["Secret"])) == {"Owner": "u", "Secret": "<REDACTED>"}


def test_plans_follow_each_shape() -> None:
    """Ads of different shapes, and the same texts with and without lower-casing, never share
    a plan or a cached value by mistake."""
    first = ClassAd.from_raw_text('B = 1\na = "x"\nNested = [ Q = 1 ]')
    second = ClassAd.from_raw_text('a = "x"\nC = 2\nNested = [ Q = 1 ]')
    for _ in range(2):
        assert ad_to_json_compact(first) == '{"a": "x","B": 1,"Nested": {"Q": 1}}'
        assert ad_to_json_compact(second) == '{"a": "x","C": 2,"Nested": {"Q": 1}}'
        assert ad_to_json_compact(second, lower=True) == '{"a": "x","c": 2,"nested": {"q": 1}}'
        assert ad_to_json_compact(first, frozenset({"b"})) == '{"B": 1}'


def _wire_ads(count: int) -> list[ClassAd]:
    """Ads read from the wire, as a listing gets them (one shared shape, received texts)."""
    out = []
    for i in range(count):
        writer = MessageWriter(crypto=True)
        source = ClassAd.from_raw_text(
            f'ProcId = {i}\nOwner = "u"\nEnv = "TOKEN=s{i}"\nClaimId = Other + {i}\nZ = {i}'
        )
        put_classad(writer, source)
        out.append(get_classad(MessageReader(writer.getvalue(), crypto=True)))
    return out


def test_redaction_is_planned_per_shape_and_leaves_the_ad_alone() -> None:
    """Private members (any case, plain or expression values) are written as the mask in every
    ad of a shape; the ads keep their values; a plan without the mask is not reused for one with
    it, nor the other way round."""
    ads = _wire_ads(3)
    for i, ad in enumerate(ads):
        plain = json.loads(ad_to_json_compact(ad))
        assert plain["Env"] == f"TOKEN=s{i}" and plain["ClaimId"] == f"/Expr(Other + {i})/"
        hidden = json.loads(ad_json(ad, ("env", "CLAIMID", "Absent")))
        assert hidden == {**plain, "Env": "<REDACTED>", "ClaimId": "<REDACTED>"}
        assert list(hidden) == list(plain)  # same members, same order
        lowered = json.loads(ad_json(ad, ["Env"], lower=True))
        assert lowered["env"] == "<REDACTED>" and lowered["claimid"] == plain["ClaimId"]
        assert ad["Env"] == f"TOKEN=s{i}"  # unchanged
        assert json.loads(ad_to_json_compact(ad)) == plain
    assert json.loads(ad_json(ads[0], ("Env",)))["Env"] == "<REDACTED>"
    assert json.loads(ad_json(ads[0]))["Env"] == "TOKEN=s0"


def test_percent_signs_in_names_and_values_are_written_as_they_are() -> None:
    """The compact writer fills a per-shape template: a ``%`` in a name or a value is text."""
    ad = ClassAd()
    ad["Pct%s"] = "100%s done %d %%"
    ad["B"] = 1
    for _ in range(2):  # the planned shape too
        text = ad_to_json_compact(ad)
        assert json.loads(text) == {"B": 1, "Pct%s": "100%s done %d %%"}
        assert text == reference(ad, False)


def test_wire_ads_read_in_bulk_give_the_same_texts_and_json() -> None:
    """Ads of one recurring shape (after enough of them the bulk shape reader keeps their values
    as the received bytes) give the same raw texts and compact JSON as the same ads parsed from
    text, an undecodable byte included (kept as a surrogate, as the line reader keeps it)."""
    kinds = set()
    for i in range(300):
        lines = [f"ProcId = {i}", f'Cmd = "/bin/x{i}"', f"Req = Memory > {i}", 'Z = "é"']
        source = ClassAd.from_raw_text("\n".join(lines))
        writer = MessageWriter(crypto=True)
        put_classad(writer, source)
        ad = get_classad(MessageReader(writer.getvalue(), crypto=True))
        kinds.add(type(ad._values[0]))
        assert ad.raw_columns()[0] == source.raw_columns()[0]
        assert list(ad.raw_columns()[1]) == list(source.raw_columns()[1])
        assert ad_to_json_compact(ad) == ad_to_json_compact(source)
        writer = MessageWriter(crypto=True)
        writer.put_int(2).put_strings([b'A = "\xff"', f"B = {i}".encode(), b"", b""])
        ad = get_classad(MessageReader(writer.getvalue(), crypto=True))
        kinds.add(type(ad._values[0]))
        assert list(ad.raw_columns()[1]) == ['"\udcff"', str(i)]
        assert ad_to_json_compact(ad) == reference(ad, False)
    assert bytes in kinds and str in kinds  # both kinds of stored values were written


EVERY_TYPE = (
    TEXT
    + r"""
Unicode = "café ☃"
Control = "bell\u0007 tab\t nul-less"
Pct%d = "100%s done"
Real = 1.5e300
Negative = -0.25
Quoted = "say \"hi\" \\ back"
Expression = Memory * 2 + (Disk > 0 ? 1 : 0)
Time = relTime("1:00:00")
""".rstrip()
)


@pytest.mark.parametrize("crypto", [True, False])
def test_bytes_writer_gives_the_text_writers_bytes(crypto: bool) -> None:
    """The stream writes each ad from its received bytes (``ad_json_bytes``): for ads of every
    value type, read from the wire line by line and (after enough of one shape) by the bulk
    shape reader, it gives exactly ``ad_json(...).encode()``, lower-cased and redacted too."""
    private_sets: list[tuple[str, ...]] = [(), ("Cmd", "nested", "Absent")]
    kinds = set()
    for i in range(300):
        source = ClassAd.from_raw_text(f'{EVERY_TYPE}\nProcId = {i}\nSerial = "s{i}"')
        writer = MessageWriter(crypto=crypto)
        put_classad(writer, source)
        ad = get_classad(MessageReader(writer.getvalue(), crypto=crypto))
        kinds.add(type(ad.raw_values()[1][0]))
        for private in private_sets:
            for lower in (False, True):
                expected = ad_json(ad, private, lower=lower).encode()
                assert ad_json_bytes(ad, private, lower=lower) == expected
                assert ad_json_bytes(source, private, lower=lower) == expected  # text ads too
    assert bytes in kinds  # the received-bytes path was taken
    decoded = json.loads(ad_json_bytes(ad, ("Cmd",)))
    assert decoded["Cmd"] == "<REDACTED>" and decoded["Unicode"] == "café ☃"
    assert decoded["Pct%d"] == "100%s done" and decoded["Serial"] == "s299"


def test_bytes_writer_gives_undecodable_bytes_back() -> None:
    """A value that was not UTF-8 on the wire comes out as the bytes received (the text writer's
    result could not even be encoded), in the bulk-read ads as in the others."""
    for i in range(200):
        writer = MessageWriter(crypto=True)
        writer.put_int(2).put_strings([b'A = "\xff"', f"B = {i}".encode(), b"", b""])
        ad = get_classad(MessageReader(writer.getvalue(), crypto=True))
        assert ad_json_bytes(ad) == b'{"A": "\xff","B": %d}' % i


@pytest.mark.parametrize("crypto", [True, False])
def test_transcoded_ads_are_the_ad_writers_bytes(crypto: bool) -> None:
    """A listing's ads go from the message's bytes to JSON with no ad made
    (``read_shaped_values`` + ``json_writers``): every value type, a repeated name (the 25.x
    schedd sends ``JobStatus`` twice), a value that is not UTF-8, lower-cased and redacted, the
    same bytes as ``ad_json`` of the ad read from the same message."""
    from cedar.classad_wire.wire import read_shaped_values
    from cedar.http_api.adjson import json_writers

    private_sets: list[tuple[str, ...]] = [(), ("Cmd", "nested", "Absent")]
    transcoded = 0
    for i in range(300):
        source = ClassAd.from_raw_text(f'{EVERY_TYPE}\nProcId = {i}\nSerial = "s{i}"')
        strings = [f"{name} = {text}".encode() for name, text in source.raw_items()]
        strings[1:1] = [b"JobStatus = 1", b'Raw = "\xfe%d"' % i, b"JobStatus = %d" % (i % 7)]
        writer = MessageWriter(crypto=crypto)
        writer.put_int(len(strings)).put_strings([*strings, b"", b""])
        payload = writer.getvalue()
        ad = get_classad(MessageReader(payload, crypto=crypto))
        reader = MessageReader(payload, crypto=crypto)
        found = read_shaped_values(reader)
        if found is None:
            assert reader.offset == 0  # left for the general reader
            continue
        assert reader.at_end()
        transcoded += 1
        shape, values = found
        for private in private_sets:
            for lower in (False, True):
                shaped, _ = json_writers(private, lower=lower)
                expected = ad_json_bytes(ClassAd.from_raw_lines(_lines(ad)), private, lower=lower)
                assert shaped(shape.names, values) == expected
                assert ad_json_bytes(ad, private, lower=lower) == expected
    assert transcoded > 100  # the shape got its reader and the rest went straight to JSON
    decoded = json.loads(shaped(shape.names, values).decode("utf-8", "surrogateescape"))
    assert decoded["jobstatus"] == 299 % 7 and decoded["raw"] == "\udcfe299"


def _lines(ad: ClassAd) -> list[str]:
    """The ad's ``Name = value`` lines as text: an ad that holds no received bytes."""
    return [f"{name} = {text}" for name, text in ad.raw_items()]


#: Values around the edges of ``wire.PLAIN`` (a value whose JSON is its received bytes), and
#: whether each is one.
PLAIN_CASES = [
    (b"0", True),
    (b"-0", False),  # JSON 0
    (b"7", True),
    (b"-7", True),
    (b"123456789012345678", True),
    (b"-123456789012345678", True),
    (b"1234567890123456789", False),  # 19 digits: left to the mapping
    (b"123456789012345678901", False),  # beyond 64 bits
    (b"0.0", True),
    (b"-0.0", True),
    (b"12.0", True),
    (b"-12.0", True),
    (b"123456789012345.0", True),
    (b"1234567890123456.0", False),  # 16 digits: left to the mapping
    (b"1.5", False),
    (b"1.50", False),  # JSON 1.5
    (b"1e10", False),  # JSON 10000000000.0
    (b"1.0E10", False),
    (b"0.30000000000000004", False),  # JSON 0.3
    (b"true", True),
    (b"false", True),
    (b"TRUE", False),  # JSON true
    (b"undefined", False),  # JSON null
    (b'""', True),
    (b'"/bin/sleep"', True),
    (b'"caf\xc3\xa9 \xe2\x98\x83"', True),  # UTF-8 kept as is
    (b'"\xff\xfe"', True),  # not UTF-8: kept as received
    (b'"del \x7f"', True),
    (b'"tab\tx"', False),  # JSON escapes control characters
    (b'"bell\x07"', False),
    (b'"say \\"hi\\""', False),  # an escape
    (b'"back\\\\slash"', False),
    (b'"a" + "b"', False),  # an expression that starts and ends with a quote
    (b'real("INF")', False),
    (b'real("-INF")', False),
    (b'real("NaN")', False),
    (b"{ 1, 2 }", False),
    (b"[ A = 1 ]", False),
    (b"Memory * 2", False),
]


def test_plain_literals_are_their_own_json() -> None:
    """The transcoder writes a value matched as ``wire.PLAIN`` as it came: for each such value
    the one mapping gives exactly those bytes; the others are converted by it."""
    from cedar.classad_wire import wire

    is_plain = re.compile(wire.PLAIN).fullmatch
    for raw, plain in PLAIN_CASES:
        assert (is_plain(raw) is not None) == plain, raw
        assert (wire._plain_kind(raw) is not None) == plain, raw  # its kinds, one by one
        source = ClassAd.from_raw_lines([f"A = {raw.decode('utf-8', 'surrogateescape')}"])
        written = ad_json_bytes(source)
        if plain:
            assert written == b'{"A": ' + raw + b"}", raw


@pytest.mark.parametrize("crypto", [True, False])
def test_values_changing_kind_are_transcoded_alike(crypto: bool) -> None:
    """The transcoder's plain variant of a shape's reader takes only plain values where the ads
    it learnt from had them: a value of another kind there (every case above, in turn, at two
    positions) is read by the shape's reader, the variant narrowed or dropped, and every ad is
    written as the one mapping writes it, lower-cased and redacted too."""
    from cedar.classad_wire import wire
    from cedar.classad_wire.wire import PlainNames, read_shaped_values
    from cedar.http_api.adjson import json_writers

    transcoded = by_variant = 0
    cases = [raw for raw, _ in PLAIN_CASES]
    for i in range(wire._SHAPE_READER_AFTER + 3 * len(cases)):
        odd = cases[i % len(cases)] if i > wire._SHAPE_READER_AFTER + len(cases) else b"1"
        other = cases[(i * 7) % len(cases)] if i % 3 == 0 else b'"x"'
        strings = [
            b"Changing = %s" % odd,
            b"ProcId = %d" % i,
            b'Cmd = "/bin/x"',
            b"Other = %s" % other,
            b"Req = Memory > 1",
            b"Real = 2.0",
        ]
        writer = MessageWriter(crypto=crypto)
        writer.put_int(len(strings)).put_strings([*strings, b"", b""])
        payload = writer.getvalue()
        reader = MessageReader(payload, crypto=crypto)
        found = read_shaped_values(reader)
        if found is None:
            get_classad(MessageReader(payload, crypto=crypto))  # the shape earns its reader
            continue
        assert reader.at_end()
        transcoded += 1
        shape, values = found
        by_variant += isinstance(shape.names, PlainNames)
        source = ClassAd.from_raw_lines([s.decode("utf-8", "surrogateescape") for s in strings])
        for private in [(), ("Changing", "Cmd")]:
            for lower in (False, True):
                shaped, _ = json_writers(private, lower=lower)
                assert shaped(shape.names, values) == ad_json_bytes(source, private, lower=lower)
    assert transcoded > 2 * len(cases) and by_variant > len(cases)
    for readers in wire._SHAPE_READERS.values():
        for shape_reader in readers:
            assert shape_reader.variants <= wire._VARIANTS_MAX


def test_a_bad_value_in_a_transcoded_ad_is_named() -> None:
    """A value no ClassAd reads (a leading zero) fails the listing with the attribute's name,
    as the ad writer does, from the cache of converted values too."""
    from cedar.classad_wire import wire
    from cedar.errors import ClassAdParseError
    from cedar.http_api.adjson import json_writers

    shaped, _ = json_writers()
    failed = 0
    for i in range(wire._SHAPE_READER_AFTER + 4):
        strings = [b"Fine = %d" % i, b"Bad = 007" if i > wire._SHAPE_READER_AFTER else b"Bad = 7"]
        writer = MessageWriter(crypto=False)
        writer.put_int(2).put_strings([*strings, b"", b""])
        reader = MessageReader(writer.getvalue())
        found = wire.read_shaped_values(reader)
        if found is None:
            get_classad(MessageReader(writer.getvalue()))
        elif i > wire._SHAPE_READER_AFTER:
            with pytest.raises(ClassAdParseError, match="'Bad'"):
                shaped(found[0].names, found[1])
            failed += 1
    assert failed == 3
