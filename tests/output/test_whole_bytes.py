"""``cedar q``'s sorted whole ads written as bytes from the received values
(``cedar.output.whole.long_bytes``, ``cedar.classad_wire.jsonfmt.ad_to_json_sorted_bytes``, the
byte path of ``cedar.cli.q``) are exactly the text forms, encoded; a value that is not UTF-8
goes out as the byte it was (condor_q prints it raw), where the text path can only escape it."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.classad_wire.jsonfmt import ad_to_json_sorted, ad_to_json_sorted_bytes
from cedar.cli import q
from cedar.output import long_text
from cedar.output.whole import attribute_filter, long_bytes
from cedar.stream.primitives import MessageReader, MessageWriter


def _source(i: int) -> ClassAd:
    """A job ad whose values vary by ``i``: plain literals, escapes, non-ASCII, expressions,
    lists, nested ads, reals, a ``%`` (the writers fill templates)."""
    lines = [
        f"ClusterId = {7 - i % 3}",
        f"ProcId = {i}",
        'Owner = "testuser"',
        f'Args = "a \\"quoted\\" {i}\\\\ back"',
        f'Note = "héllo ☃ {i % 5}"',
        f'Requirements = (TARGET.Memory >= {i}) && (TARGET.Arch == "X86_64")',
        f"Rank = {i}.5",
        'Names = { "a", "b", 3 }',
        f'Nested = [ Inner = {i}; Str = "v" ]',
        'Pct = "100% done %s"',
        "Undef = undefined",
        "Flag = true",
        f"Big = {10**20 + i}",
        "Neg = -7",
    ]
    if i % 4 == 0:
        lines.append(f"Extra{i % 8} = {i}")  # a second and third shape
    return ClassAd.from_raw_text("\n".join(lines))


def _wire(source: ClassAd, crypto: bool) -> ClassAd:
    writer = MessageWriter(crypto=crypto)
    put_classad(writer, source)
    return get_classad(MessageReader(writer.getvalue(), crypto=crypto))


def _wire_ads(count: int, crypto: bool) -> list[ClassAd]:
    """Enough ads of each shape that the bulk shape reader takes over (values kept as bytes)."""
    return [_wire(_source(i), crypto) for i in range(count)]


@pytest.mark.parametrize("crypto", [True, False])
@pytest.mark.parametrize("only", [None, ["ProcId", "note", "Pct", "absent"], []])
def test_bytes_are_the_texts_encoded(crypto: bool, only: list[str] | None) -> None:
    wanted = attribute_filter(only)
    kinds = set()
    for ad in _wire_ads(400, crypto):
        kinds.add(ad.raw_values()[1][0].__class__)
        data = long_bytes(ad, wanted)
        if data is None:  # an ad whose values are text: the caller uses the text form
            continue
        assert data == long_text(ad, wanted).encode("utf-8")
        json_bytes = ad_to_json_sorted_bytes(ad, wanted)
        assert json_bytes == ad_to_json_sorted(ad, wanted).encode("utf-8")
    assert bytes in kinds  # the byte forms were exercised


def test_an_ad_not_from_the_wire_has_no_byte_form() -> None:
    assert long_bytes(_source(1)) is None
    assert ad_to_json_sorted_bytes(_source(1)) is None


def _undecodable(i: int) -> ClassAd:
    writer = MessageWriter(crypto=True)
    lines = [b"ClusterId = 9", f"ProcId = {i}".encode(), b'Bad = "x\xffy"', b"", b""]
    writer.put_int(3).put_strings(lines)
    return get_classad(MessageReader(writer.getvalue(), crypto=True))


def _printed(form: str, batches: list[list[ClassAd]], binary: bool) -> bytes:
    request = SimpleNamespace(form=form, attributes=None, custom=lambda: None)
    if binary:
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace")
        q._write_whole(request, batches, out, streaming=False)
        out.flush()
        return raw.getvalue()
    text = io.StringIO()
    q._write_whole(request, batches, text, streaming=False)
    return text.getvalue().encode("utf-8", "backslashreplace")


@pytest.mark.parametrize("form", ["long", "json", "xml"])
def test_q_writes_the_same_bytes_as_text(form: str) -> None:
    """Batches in id order, each sorted by (ClusterId, ProcId), ads from the wire and not
    (a ``-jobads`` file's) mixed: the byte path prints what the text path prints."""
    ads = _wire_ads(300, crypto=True)
    batches = [ads[:150] + [_source(1000)], ads[150:], []]
    assert _printed(form, batches, True) == _printed(form, batches, False)
    assert _printed(form, [[]], True) == _printed(form, [[]], False)


def test_q_writes_an_undecodable_byte_as_received() -> None:
    ads = [_undecodable(i) for i in range(300)]
    assert ads[-1].raw_values()[1][0].__class__ is bytes
    long = _printed("long", [ads], True)
    assert b'Bad = "x\xffy"\nClusterId = 9\nProcId = 0\n\n' in long
    assert b'"Bad": "x\xffy"' in _printed("json", [ads], True)
    assert b"\\udcff" in _printed("long", [ads], False)  # the text path can only escape it
