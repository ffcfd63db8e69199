"""Query throughput: cedar vs the reference bindings against the same mock pool, in one run.

A mock pool (:class:`cedar.daemons.pool.MockPool`, FS + AES-GCM) runs in a child process, its
collector filled with copies of the real slot ads recorded in
``captures/status-startd-long-raw.out`` and its schedd with jobs.  This process then times the
same queries through ``cedar`` and through ``htcondor2`` and prints the ratio
reference time / cedar time (above 1: cedar is faster).  The server runs in its own process
because the reference bindings keep the GIL while they wait on the network.

    python bench/bench_query.py [--slots 2000] [--jobs 2000] [--repeat 5]

The reference bindings are optional; without them only cedar's numbers are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("CONDOR_CONFIG", "/dev/null")
os.environ.setdefault("_condor_SEC_CLIENT_AUTHENTICATION_METHODS", "FS")

from cedar.commands import Collector, Schedd  # noqa: E402

CAPTURES = Path(__file__).resolve().parent.parent / "captures"
PROJECTION = ["Name", "Memory", "Cpus"]

SERVER = """
import sys
from cedar.classad_wire import ClassAd
from cedar.commands import Schedd
from cedar.daemons.pool import MockPool

slots, jobs, recording = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
blocks = [b for b in open(recording).read().split("\\n\\n") if "=" in b]
templates = [ClassAd.parse_old(block) for block in blocks]
with MockPool().run_in_thread() as pool:
    for index in range(slots):
        ad = templates[index % len(templates)].copy()
        ad["Name"] = f"slot{index}@bench"
        ad["Machine"] = f"host{index // 8}"
        ad.pop("LastHeardFrom", None)  # recorded long ago: the collector would expire it
        pool.collector.store.add(ad)
    Schedd(pool.schedd_address).submit({"executable": "/bin/true", "arguments": "$(Process)"},
                                        count=jobs)
    print(pool.host_port, pool.schedd_address, flush=True)
    sys.stdin.read()
"""


def timed(function: Callable[[], int], repeat: int) -> tuple[float, int]:
    """Median wall time of ``repeat`` calls after one warm-up call, and the warm-up's result."""
    result = function()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def cedar_cases(pool: str, schedd_address: str) -> dict[str, Callable[[], int]]:
    collector, schedd = Collector(pool), Schedd(schedd_address)
    return {
        "slots": lambda: len(collector.query("startd")),
        "slots, read every value": lambda: sum(
            len(ad.to_dict()) for ad in collector.query("startd")
        ),
        "slots, 3 attributes projected": lambda: len(
            collector.query("startd", projection=PROJECTION)
        ),
        "jobs": lambda: len(schedd.query()),
    }


def reference_cases(pool: str, schedd_address: str) -> dict[str, Callable[[], int]] | None:
    try:
        import classad2
        import htcondor2
    except ImportError as exc:
        print(f"reference bindings unavailable ({exc}); cedar only", file=sys.stderr)
        return None
    collector = htcondor2.Collector(pool)
    location = classad2.ClassAd({"MyAddress": schedd_address, "Name": "mock-schedd"})
    location["MyType"] = "Scheduler"
    location["CondorVersion"] = "$CondorVersion: 25.0.0 2025-01-01 $"
    schedd = htcondor2.Schedd(location)
    slots = htcondor2.AdTypes.Startd
    return {
        "slots": lambda: len(collector.query(slots)),
        "slots, read every value": lambda: sum(
            len({k: ad.eval(k) for k in ad}) for ad in collector.query(slots)
        ),
        "slots, 3 attributes projected": lambda: len(collector.query(slots, projection=PROJECTION)),
        "jobs": lambda: len(schedd.query()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--slots", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    recording = str(CAPTURES / "status-startd-long-raw.out")
    command = [sys.executable, "-c", SERVER, str(args.slots), str(args.jobs), recording]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as server:
        assert server.stdout is not None and server.stdin is not None
        pool, schedd_address = server.stdout.readline().split()
        ours = cedar_cases(pool, schedd_address)
        theirs = reference_cases(pool, schedd_address)
        print(f"{args.slots} slot ads, {args.jobs} jobs, median of {args.repeat} runs")
        print(f"{'case':32} {'ads':>6} {'cedar ms':>9} {'reference ms':>13} {'ratio':>6}")
        for label, case in ours.items():
            our_time, count = timed(case, args.repeat)
            row = f"{label:32} {count:6} {our_time * 1000:9.1f}"
            if theirs is not None:
                their_time, _ = timed(theirs[label], args.repeat)
                row += f" {their_time * 1000:13.1f} {their_time / our_time:6.2f}"
            print(row)
        server.stdin.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
