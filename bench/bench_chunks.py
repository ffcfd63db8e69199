"""CPU of the job query's and history's protocols, in process, against another checkout.

Run: ``python bench/bench_chunks.py [--other /path/to/checkout] [--records N] [--rounds R]``.
Each protocol reads a scripted reply of ``N`` job ads (one shape, as a listing's are) handed
over 64 KiB at a time, as a socket gives it, through the drivers' core (no sockets, no
daemon): ``query_chunks`` and ``history_chunks`` (both framings: a header and one message per
record, or every record in one message) with a listing's JSON writers, and the ad protocols.
One child process per checkout and round, the checkouts interleaved; each child reports its
best CPU time of a few runs after a warm-up.  Prints each case's best time per checkout and the
ratio (< 1: this checkout spends less).  A shared machine makes the numbers noisy: compare
ratios, and the spread of the rounds' ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
STEP = 64 << 10  # bytes handed over per read


def measure(records: int, repeats: int, only: str = "") -> dict[str, float]:
    """Best CPU seconds of each case, for the ``cedar`` this interpreter imports."""
    from cedar.auth.client import CommandSession
    from cedar.classad_wire import ClassAd, put_classad
    from cedar.classad_wire.jsonfmt import ad_to_json_compact_bytes, columns_json_bytes
    from cedar.commands.history import history_chunks_protocol, history_protocol, history_request
    from cedar.commands.schedd import query_chunks_protocol, query_protocol, query_request
    from cedar.stream.connection import CedarConnection
    from cedar.stream.driving import DriverCore, Flush, Waits
    from cedar.stream.framing import frame_plain
    from cedar.stream.primitives import MessageWriter
    from cedar.stream.protocol import Deliver, Finished

    def message(*ads: dict[str, object]) -> bytes:
        writer = MessageWriter()
        for ad in ads:
            put_classad(writer, ClassAd(ad))
        return frame_plain(writer.getvalue())

    jobs = [
        {"ClusterId": 7, "ProcId": i, "Owner": "alice", "Cmd": "/bin/sleep", "Args": "600",
         "JobStatus": 5, "QDate": 1_700_000_000 + i, "RequestMemory": 128, "Iwd": "/tmp/x"}
        for i in range(records)
    ]  # fmt: skip
    final = {"Owner": 0, "AdCount": records, "MalformedAds": 0, "NumJobMatches": records}
    each = b"".join(message(job) for job in jobs)
    wires = {
        "query": each + message({"Owner": 0}),
        "streamed": message({"Owner": 1, "StreamResults": True}) + each + message(final),
        "one-message": message(*jobs, final),
    }
    query, history = query_request("true"), history_request("true")
    shaped, other = columns_json_bytes, ad_to_json_compact_bytes
    Body = Callable[[CommandSession], Any]
    cases: dict[str, tuple[str, Body]] = {
        "query_chunks": (
            "query",
            lambda s: query_chunks_protocol(s, query, shaped, other, 1 << 16, 10**9),
        ),
        "query (ads)": ("query", lambda s: query_protocol(s, query)),
        "history_chunks, streamed": (
            "streamed",
            lambda s: history_chunks_protocol(s, history, shaped, other, 1 << 16, 10**9),
        ),
        "history_chunks, one message": (
            "one-message",
            lambda s: history_chunks_protocol(s, history, shaped, other, 1 << 16, 10**9),
        ),
        "history (ads), streamed": ("streamed", lambda s: history_protocol(s, history)),
    }

    def run(body: Body, wire: bytes) -> int:
        conn = CedarConnection(max_message_size=64 << 20)
        core = DriverCore(conn, body(CommandSession(conn, 515, raw=False)), Waits(60, "x", None))
        position = delivered = 0
        action: Any = core.start()
        while not isinstance(action, Finished):
            if isinstance(action, Flush):
                action = core.wrote()
            elif isinstance(action, Deliver):
                delivered += len(action.values())
                action = core.delivered()
            else:
                action = core.received(wire[position : position + STEP])
                position += STEP
        return delivered

    best: dict[str, float] = {}
    for name, (wire, body) in cases.items():
        if only not in name:
            continue
        run(body, wires[wire])  # warm-up: the shape's reader is compiled
        times = []
        for _ in range(repeats):
            start = time.process_time()
            run(body, wires[wire])
            times.append(time.process_time() - start)
        best[name] = min(times)
    return best


def child(checkout: Path, records: int, repeats: int, only: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONDONTWRITEBYTECODE="1")
    code = (
        "import json, sys, cedar; "
        f"assert cedar.__file__.startswith({str(checkout)!r}), cedar.__file__; "
        "from bench_chunks import measure; "
        f"print(json.dumps(measure({records}, {repeats}, {only!r})))"
    )
    env["PYTHONPATH"] += os.pathsep + str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=checkout,  # (the directory of ``-c`` comes first on the path)
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--other", type=Path, help="another checkout to compare with")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="only the cases whose name holds this")
    args = parser.parse_args()
    checkouts = {"this": HERE}
    if args.other:
        checkouts["other"] = args.other.resolve()
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    print(f"{args.records} job ads, load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    for _ in range(args.rounds):
        for name, path in checkouts.items():
            runs[name].append(child(path, args.records, args.repeats, args.only))
    print(f"load average {os.getloadavg()[0]:.2f} at the end; best CPU ms of each case:")
    for case in runs["this"][0]:
        this = min(r[case] for r in runs["this"])
        line = f"{case:<30} this {this * 1e3:8.1f}"
        if "other" in runs:
            other = min(r[case] for r in runs["other"])
            pairs = zip(runs["this"], runs["other"], strict=True)
            ratios = sorted(a[case] / b[case] for a, b in pairs)
            spread = f"{ratios[0]:.2f}-{ratios[-1]:.2f}"
            line += f"  other {other * 1e3:8.1f}  ratio {this / other:.3f}"
            line += f" (rounds: median {statistics.median(ratios):.3f}, {spread})"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
