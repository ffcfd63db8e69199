"""How fast ``cedar ping`` and ``cedar q`` start against a real pool (issue 20: <= 100 ms; issue
39: ``cedar q -totals`` <= 60 ms over ``python -c pass``, beside ``condor_q -totals``).

Run it against a pool of your own (``tools/live_pool.sh start DIR > DIR.env; . DIR.env``)::

    python bench/bench_startup.py              # median of 10 runs per case
    python bench/bench_startup.py --runs 20 --json /tmp/startup.json

For each case, side by side in one run (the cases alternate, so load hits them alike):

* ``first byte``: from just before the process is spawned to the first byte it sends to a
  daemon.  The collector is reached through a small TCP proxy in this process, which notes the
  arrival time of the first chunk on the clock the spawn was timed with (``time.monotonic``);
  ``cedar q`` asks the collector where the schedd is first, so its first byte goes there too.
* ``wall``: spawn to exit, output to ``/dev/null``, straight to the pool (no proxy: its
  Python threads would add to every round trip of the handshake).
* ``cpu``: the CPU seconds (user + system) of the direct run, from ``wait4``: much less
  sensitive to the machine's load than the wall times.
* ``imports``: ``python -X importtime`` of the same command line: the sum of every module's own
  time (what the whole run spent importing, before and after the first byte), and the shares of
  the biggest packages.  ``-X importtime`` itself slows imports down: compare these numbers with
  each other, not with ``first byte``.

``--instructions`` also counts each case's instructions once under valgrind's callgrind: the
one number a shared machine does not disturb.  To measure the IDTOKENS handshake as issue 39
asks, run with ``_condor_SEC_CLIENT_AUTHENTICATION_METHODS=IDTOKENS
_condor_SEC_TOKEN_DIRECTORY=DIR/tokens`` (the pool's token).

Medians and minima are printed: on a shared machine a burst of other work can slow half the
runs, and the minimum is then the better estimate of the command's own cost.

``python -c pass`` (Python's own start, ``site`` included) and ``python -c "import cedar"``
are measured the same way for reference.  ``--baseline DIR`` adds each cedar case run with
another source tree (``git archive main | tar -x -C DIR``) first on ``PYTHONPATH``, interleaved
with this one, so that a before/after comparison sees the same load.  The ``cedar`` package is
byte-compiled first.  On a shared 2-core machine the numbers are noisy: the load average is
printed with them.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

CEDAR = str(Path(sys.executable).parent / "cedar")
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


class FirstByteProxy:
    """A loopback TCP proxy to ``upstream`` that records when the first byte of a client
    arrives (``first``, a ``time.monotonic()`` value; reset with :meth:`reset`)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.first: float | None = None
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self) -> None:
        with self.lock:
            self.first = None

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.upstream, timeout=30)
        except OSError:
            client.close()
            return
        for sock in (client, server):  # no Nagle delays added to the exchange
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()
        self._pump(client, server, True)

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_client:
                    now = time.monotonic()
                    with self.lock:
                        if self.first is None:
                            self.first = now
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (sink, source):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def timed(
    argv: list[str], proxy: FirstByteProxy | None, env: dict[str, str] | None = None
) -> tuple[float, float | None, float, int]:
    """(wall seconds, first-byte seconds or None, CPU seconds, exit status) of one run."""
    if proxy is not None:
        proxy.reset()
    start = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, wait_status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    child.returncode = os.waitstatus_to_exitcode(wait_status)
    first = None
    if proxy is not None and proxy.first is not None:
        first = proxy.first - start
    return wall, first, usage.ru_utime + usage.ru_stime, child.returncode


def import_profile(
    argv: list[str], env: dict[str, str] | None = None, repeat: int = 3
) -> tuple[float, dict[str, float]]:
    """Total import time (seconds, the sum of the modules' own times) and per-package sums, of
    the least disturbed of ``repeat`` runs."""
    profiles = [_import_profile(argv, env) for _ in range(repeat)]
    return min(profiles, key=lambda profile: profile[0])


def _import_profile(argv: list[str], env: dict[str, str] | None) -> tuple[float, dict[str, float]]:
    result = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    total = 0
    packages: dict[str, float] = {}
    for line in result.stderr.splitlines():
        match = IMPORT_LINE.match(line)
        if match is None:
            continue
        own = int(match[1])
        total += own
        name = match[4]
        key = ".".join(name.split(".")[:2]) if name.startswith("cedar.") else name.split(".")[0]
        packages[key] = packages.get(key, 0.0) + own / 1e6
    return total / 1e6, packages


def instructions(argv: list[str], env: dict[str, str] | None = None) -> int | None:
    """Instructions one run executes (``valgrind --tool=callgrind``; None without valgrind):
    the same from run to run whatever else the machine does, unlike any time."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    result = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    match = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    return int(match[1].replace(",", "")) if match else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pool", default=os.environ.get("CEDAR_LIVE_COLLECTOR"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--level", default="WRITE", help="the level cedar ping asks for")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--top", type=int, default=8, help="packages shown per import profile")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count each case's instructions once under valgrind (slow; repeatable)",
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also run every cedar case with this source tree first on PYTHONPATH (e.g. "
        "`git archive main | tar -x -C DIR`), interleaved with this one",
    )
    options = parser.parse_args()
    if not options.pool:
        parser.error("no pool: --pool HOST:PORT or CEDAR_LIVE_COLLECTOR")
    host, _, port = options.pool.rpartition(":")
    proxy = FirstByteProxy((host, int(port)))
    via = f"127.0.0.1:{proxy.port}"
    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "cedar"), quiet=1, workers=1)
    python = sys.executable
    commands: dict[str, list[str]] = {  # "{pool}": the collector (through the proxy or not)
        "python -c pass": [python, "-c", "pass"],
        "import cedar": [python, "-c", "import cedar"],
        "cedar q --help": [python, CEDAR, "q", "--help"],
        f"cedar ping {options.level}": [python, CEDAR, "ping", "--pool", "{pool}", options.level],
        "cedar q": [python, CEDAR, "q", "-pool", "{pool}"],
        "cedar q -totals": [python, CEDAR, "q", "-totals", "-pool", "{pool}"],
    }
    condor_q = shutil.which("condor_q")
    if condor_q:  # the reference beside it, in the same run (issue 39)
        commands["condor_q -totals"] = [condor_q, "-totals", "-pool", "{pool}"]
    cases: dict[str, tuple[list[str], dict[str, str] | None]] = {}
    for name, argv in commands.items():
        cases[name] = (argv, None)
        if options.baseline and "cedar" in name:
            compileall.compile_dir(str(Path(options.baseline) / "cedar"), quiet=1, workers=1)
            baseline = {**os.environ, "PYTHONPATH": str(Path(options.baseline).resolve())}
            cases[f"{name} [baseline]"] = (argv, baseline)

    def argv_of(name: str, pool: str) -> list[str]:
        return [arg.replace("{pool}", pool) for arg in cases[name][0]]

    for name, (_, env) in cases.items():  # warm the caches (and check that it works)
        _, _, _, status = timed(argv_of(name, via), proxy, env)
        if status != 0:
            print(f"warning: {name} exited {status}", file=sys.stderr)
    walls: dict[str, list[float]] = {name: [] for name in cases}
    firsts: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    loads = [os.getloadavg()[0]]
    for _ in range(options.runs):
        for name, (argv, env) in cases.items():
            wall, _, cpu, _ = timed(argv_of(name, options.pool), None, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
            if "{pool}" in argv:
                _, first, _, _ = timed(argv_of(name, via), proxy, env)
                if first is not None:
                    firsts[name].append(first)
    loads.append(os.getloadavg()[0])
    results: dict[str, Any] = {"runs": options.runs, "load": loads, "cases": {}}
    print(f"{options.runs} runs per case, medians; load average {loads[0]:.2f} -> {loads[1]:.2f}")
    print(
        f"{'case':<31} {'first byte':>11} {'(min)':>9} {'wall':>9} {'(min)':>9} {'cpu':>9}"
        f" {'imports':>9}  biggest importers"
    )
    for name, (_, env) in cases.items():
        argv = argv_of(name, options.pool)
        total, packages = import_profile(argv, env) if argv[0] == python else (0.0, {})
        wall = statistics.median(walls[name])
        first = statistics.median(firsts[name]) if firsts[name] else None
        top = sorted(packages.items(), key=lambda item: -item[1])[: options.top]
        shares = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top) if total else ""
        first_text = " " * 21
        if first is not None:
            first_text = f"{1000 * first:8.1f} ms {1000 * min(firsts[name]):6.1f} ms"
        print(
            f"{name:<31} {first_text} {1000 * wall:6.1f} ms {1000 * min(walls[name]):6.1f} ms "
            f"{1000 * statistics.median(cpus[name]):6.1f} ms {1000 * total:6.1f} ms  {shares}"
        )
        results["cases"][name] = {
            "argv": argv[1:],
            "wall_median_s": wall,
            "first_byte_median_s": first,
            "walls_s": walls[name],
            "cpu_median_s": statistics.median(cpus[name]),
            "cpus_s": cpus[name],
            "first_bytes_s": firsts[name],
            "import_total_s": total,
            "import_by_package_s": packages,
        }
    if options.instructions:
        print(f"{'case':<31} {'instructions':>14}")
        for name, (_, env) in cases.items():
            count = instructions(argv_of(name, options.pool), env)
            results["cases"][name]["instructions"] = count
            print(f"{name:<31} {count / 1e6 if count else float('nan'):12.1f} M")
    if options.json:
        Path(options.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
