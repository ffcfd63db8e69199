#!/usr/bin/env python3
"""Replay recorded captures against cedar's own client and server (see cedar.capture.replay).

Usage: python tools/pcap_replay.py [CAPTURE ...]   (default: every captures/*.pcap)
Prints one line per conversation side; exits 1 if any replay differs from the recording.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cedar.capture.replay import replay_capture

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "captures").glob("*.pcap"))
    failed = 0
    for path in paths:
        for report in replay_capture(str(path)):
            if report.skipped:
                status = f"SKIP ({report.skipped})"
            elif report.ok:
                status = "OK"
            else:
                failed += 1
                status = "DIFF\n      " + "\n      ".join(report.differences)
            print(f"{path.name} #{report.conversation} {report.kind} {report.side}: {status}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
