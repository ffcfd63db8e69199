"""``cedar history -file`` next to ``condor_history -file`` on a generated history file.

Run: ``python bench/bench_history.py [records] [template-history-file]``.  Writes ``records``
copies (default 25 000) of the first record of the template (default: the recorded pool
history of the tests) with distinct job ids, then times both tools for ``-af ClusterId
ProcId``, the default table and ``-long`` (wall time and peak RSS of the child), checks that
they print the same, and prints the ratio.  ``condor_history`` must be on ``PATH``; without it
only cedar is timed.  Numbers on a shared machine are noisy: compare ratios, not seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parent.parent / "tests/history/data/pool.history"
CASES = (["-af", "ClusterId", "ProcId"], [], ["-long"])


def write_file(path: Path, records: int, template: Path) -> None:
    """``records`` records made from the template's first one, ids 1..records."""
    first = template.read_text().split("\n***", 1)[0]
    body = [line for line in first.splitlines() if not line.startswith(("ClusterId", "ProcId"))]
    text = "\n".join(body)
    with path.open("w") as out:
        for i in range(1, records + 1):
            out.write(f"{text}\nClusterId = {i}\nProcId = 0\n")
            out.write(f'*** Offset = {i} ClusterId = {i} ProcId = 0 Owner = "u" CurrentTime = 0\n')


def timed(argv: list[str], output: Path) -> tuple[float, int]:
    """Wall seconds and this child's peak RSS in KB (``wait4``'s own rusage)."""
    env = dict(os.environ, TZ="UTC")
    start = time.perf_counter()
    with output.open("w") as out:
        child = subprocess.Popen(argv, stdout=out, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(f"{argv[0]} exited {child.returncode}")
    return elapsed, usage.ru_maxrss


def main(argv: list[str]) -> int:
    records = int(argv[1]) if len(argv) > 1 else 25_000
    template = Path(argv[2]) if len(argv) > 2 else TEMPLATE
    condor = shutil.which("condor_history")
    cedar = [sys.executable, "-m", "cedar.cli.history"]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "history"
        write_file(path, records, template)
        size = path.stat().st_size / 1e6
        print(f"{records} records, {size:.0f} MB (wall time, peak RSS; ratio > 1: cedar faster)")
        print(f"{'case':<28} {'condor_history':>16} {'cedar':>16} {'ratio':>6} same")
        for case in CASES:
            ours = timed([*cedar, "-file", str(path), *case], Path(directory) / "ours")
            label = " ".join(case) or "(default table)"
            if condor is None:
                print(f"{label:<28} {'-':>16} {ours[0]:>7.2f} s {ours[1] // 1024:>4} MB")
                continue
            theirs = timed([condor, "-file", str(path), *case], Path(directory) / "theirs")
            same = (Path(directory) / "ours").read_bytes() == (
                Path(directory) / "theirs"
            ).read_bytes()
            print(
                f"{label:<28} {theirs[0]:>7.2f} s {theirs[1] // 1024:>4} MB "
                f"{ours[0]:>7.2f} s {ours[1] // 1024:>4} MB {theirs[0] / ours[0]:>6.2f} {same}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
