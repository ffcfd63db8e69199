#!/usr/bin/env python3
"""Replay recorded captures against cedar's own client and server (see cedar.capture.replay).

Usage: python tools/pcap_replay.py [CAPTURE ...]   (default: every captures/*.pcap)
Prints a table (capture, conversation, kind, side, verdict) with the differences under each
DIFF and the reason of each SKIP, then the documented server deviations; exits 1 if any replay
differs from the recording.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cedar.capture.replay import SERVER_DEVIATIONS, VOLATILE, ReplayReport, replay_capture

ROOT = Path(__file__).resolve().parents[1]


def _verdict(report: ReplayReport) -> str:
    if report.skipped:
        return "SKIP"
    return "OK" if report.ok else "DIFF"


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "captures").glob("*.pcap"))
    rows: list[tuple[str, str, str, str, str, list[str]]] = []
    for path in paths:
        for r in replay_capture(str(path)):
            notes = r.differences if not r.skipped else [r.skipped]
            rows.append((path.stem, f"#{r.conversation}", r.kind, r.side, _verdict(r), notes))
    header = ("capture", "conv", "kind", "side", "verdict")
    widths = [max(len(str(row[i])) for row in [*rows, (*header, [])]) for i in range(5)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row[:5], widths, strict=True)).rstrip())
        if row[4] != "OK":
            for note in row[5]:
                print(f"      {note}")
    counts = {v: sum(1 for row in rows if row[4] == v) for v in ("OK", "DIFF", "SKIP")}
    print(f"\n{counts['OK']} OK, {counts['DIFF']} DIFF, {counts['SKIP']} SKIP")
    print("ignored everywhere (values vary per run): " + ", ".join(sorted(VOLATILE)))
    print("server-side deviations (ignored, deliberate):")
    for name, reason in SERVER_DEVIATIONS.items():
        print(f"  {name}: {reason}")
    return 1 if counts["DIFF"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
