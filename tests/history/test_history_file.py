"""Reading history files: the same records forwards and backwards, whatever the block size."""

from __future__ import annotations

import io

import pytest

from cedar.classad_wire import ClassAd
from cedar.commands import history
from cedar.commands.history import read_history_file
from cedar.errors import ClassAdParseError, InvalidArgument


def _file(count: int, *, crlf: bool = False, final_newline: bool = True) -> bytes:
    parts = []
    for i in range(count):
        kind = "SPAWN " if i % 3 == 1 else ""
        parts.append(
            f'ClusterId = {i}\nProcId = 0\nArgs = "{"x" * (i * 7)}"\n'
            f"*** {kind}ClusterId={i} ProcId=0 CurrentTime=1\n"
        )
    text = "".join(parts)
    if not final_newline:
        text = text.rstrip("\n")
    if crlf:
        text = text.replace("\n", "\r\n")
    return text.encode()


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 16])
@pytest.mark.parametrize(("crlf", "final_newline"), [(False, True), (True, True), (False, False)])
def test_backwards_is_forwards_reversed(
    monkeypatch: pytest.MonkeyPatch, block: int, crlf: bool, final_newline: bool
) -> None:
    monkeypatch.setattr(history, "_BLOCK", block)
    data = _file(12, crlf=crlf, final_newline=final_newline)
    forwards = [(r.type, r.ad["ClusterId"], r.ad["Args"]) for r in
                read_history_file(io.BytesIO(data), forwards=True)]  # fmt: skip
    backwards = [(r.type, r.ad["ClusterId"], r.ad["Args"]) for r in
                 read_history_file(io.BytesIO(data))]  # fmt: skip
    assert backwards == list(reversed(forwards))
    assert [t for t, _, _ in forwards][:3] == ["JOB", "SPAWN", "JOB"]
    assert len(forwards) == 12


def test_bad_files(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidArgument, match="ends inside a record"):
        list(read_history_file(io.BytesIO(_file(2) + b"A = 1\n")))
    with pytest.raises(InvalidArgument, match="not a history file record"):
        list(read_history_file(io.BytesIO(b"no equals sign\n*** x\n")))
    monkeypatch.setattr(history, "MAX_RECORD_BYTES", 100)
    with pytest.raises(InvalidArgument, match="larger than 100 bytes"):
        list(read_history_file(io.BytesIO(b"A = 1\n" * 200 + b"*** x\n")))
    with pytest.raises(InvalidArgument, match="larger than 100 bytes"):
        list(read_history_file(io.BytesIO(b"A = 1\n" * 200 + b"*** x\n"), forwards=True))
    assert list(read_history_file(io.BytesIO(b""))) == []
    assert list(read_history_file(io.BytesIO(b"\n\n"))) == []


def test_raw_text_ads() -> None:
    ad = ClassAd.from_raw_text('A = 1\nB = "two"  \n\nC = A + 1\n')
    assert (ad["A"], ad["B"], ad.eval("C")) == (1, "two", 2)
    odd = ClassAd.from_raw_text("A=1\n  B = 2\nA = 3\n")  # not condor's own layout
    assert (odd["A"], odd["B"]) == (3, 2) and odd.spelling("a") == "A"
    with pytest.raises(ClassAdParseError):
        ClassAd.from_raw_text("= 1\n")
    with pytest.raises(ClassAdParseError):
        ClassAd.from_raw_lines(["A = "])
    lazy = ClassAd.from_raw_text("A = ((\n")  # parsed only when used
    with pytest.raises(ClassAdParseError):
        lazy.lookup("A")
