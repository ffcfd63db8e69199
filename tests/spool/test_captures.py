"""The spool-* captures: the dissector shows the file-transfer sub-protocol; replays cover all."""

from __future__ import annotations

import io
import os

from cedar.capture import dissect
from cedar.capture.replay import replay_capture
from cedar.cli.decode import render_text
from tests.support import CAPTURES

SPOOL_CAPTURES = sorted(p for p in CAPTURES.glob("spool-*.pcap"))


def test_dissector_shows_names_modes_and_sizes() -> None:
    (_, spool, _) = dissect(CAPTURES / "spool-submit-plain.pcap", strict=True)
    notes = [(m.kind, m.summary) for m in spool.messages if m.kind.startswith("FT_")]
    names = [m.fields["name"] for m in spool.messages if m.kind == "FT_NAME"]
    assert names == ["sub", "sub/data.txt", "sub/empty.dat", "blob.bin", "job.sh"]
    modes = [m.fields["mode"] for m in spool.messages if m.kind in ("FT_MODE", "FT_MKDIR")]
    assert modes == [0o40750, 0o640, 0o644, 0o600, 0o755]
    bodies = [m for m in spool.messages if m.kind == "FT_BODY"]
    assert [(m.fields["name"], m.fields["bytes"], m.raw) for m in bodies] == [
        ("sub/data.txt", 18, True),
        ("blob.bin", 256, True),
        ("job.sh", 152, True),
    ]
    assert ("FT_EMPTY", "'sub/empty.dat': empty file (666)") in notes


def test_contents_only_when_asked() -> None:
    conversations = dissect(CAPTURES / "spool-submit-plain.pcap")
    plain, dumped = io.StringIO(), io.StringIO()
    render_text(conversations, plain, verbose=0)
    render_text(conversations, dumped, verbose=2)
    assert "line one" not in plain.getvalue() and "blob.bin" in plain.getvalue()
    assert "line one" in dumped.getvalue()


def test_every_spool_capture_decodes_and_replays() -> None:
    assert len(SPOOL_CAPTURES) == 17
    replayed = set()
    for path in SPOOL_CAPTURES:
        for conv in dissect(path, strict=True):
            assert all(m.kind != "UNDECODED" for m in conv.messages)
        for report in replay_capture(str(path)):
            assert report.ok or report.skipped, (path.name, report.differences)
            if report.ok and report.kind in ("spool", "transfer-data"):
                replayed.add((path.stem, report.side))
    clear = {p.stem for p in SPOOL_CAPTURES if "-aes" not in p.stem and "-rm-" not in p.stem}
    # both sides of every clear 488/489 capture, except the documented skips (test_replay)
    assert {name for name, side in replayed if side == "client"} >= clear - {
        "spool-transfer-data-raw",
        *(["spool-bindings-unreadable-plain"] if os.geteuid() == 0 else []),
    }
    assert {name for name, side in replayed if side == "server"} >= clear - {
        "spool-bindings-heldother-plain"
    }
