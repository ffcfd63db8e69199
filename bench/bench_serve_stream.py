"""The 40 000-job stream (issue 22's ">= 80% of the library's ads/s"), A/B: the library and one or
more ``cedar serve`` builds side by side, alternating in rounds.

Run as root with the pool's environment, the queue already holding the jobs (``bench_serve.py
--stream-jobs`` fills it; this one does not submit)::

    . /tmp/pool.env
    python bench/bench_serve_stream.py [--rounds 4] [--client curl|httpx] \\
        [--server this=] [--server main=/work/main]

Each ``--server NAME=DIR`` starts ``cedar serve`` with ``DIR`` first on ``PYTHONPATH`` (empty:
the ``cedar`` this interpreter imports).  Every round streams ``GET /api/v1/jobs?limit=0&format=
jsonl`` from each server (with ``curl`` into ``/dev/null``, the lightest client, or httpx's
``aiter_lines`` as ``bench_serve.py`` does) and iterates ``AsyncSchedd.query_iter()`` over the
same queue (the library's ads/s, as ``bench_serve.py`` defines it).  Printed: the median wall
time and ads/s of each, the ratio to the library, and CPU seconds (the server's from ``/proc``,
the library's this process's): CPU moves far less with the machine's load than wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import httpx
import trio
from bench_serve import process_cpu, start_server

from cedar.config import Config
from cedar.service import Caller, PoolAccess, ServiceSettings


async def stream(client: str, port: int, token: str) -> int:
    """Stream the whole queue once; the number of ads received."""
    url = f"http://127.0.0.1:{port}/api/v1/jobs?limit=0&format=jsonl"
    if client == "curl":  # lines counted by wc, so that this process does no work meanwhile
        done = await trio.run_process(
            f"curl -sS -H @- '{url}' | wc -l",
            shell=True,
            stdin=f"Authorization: Bearer {token}\n".encode(),  # not in the process list
            capture_stdout=True,
        )
        return int(done.stdout)
    count = 0
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=600) as http,
        http.stream("GET", url) as response,
    ):
        async for _ in response.aiter_lines():
            count += 1
    return count


async def main(args: argparse.Namespace) -> None:
    token_dir = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    token = next(Path(token_dir, n).read_text().strip() for n in sorted(os.listdir(token_dir)))
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    access = PoolAccess(ServiceSettings.from_config(config))
    schedd = await access.schedd(Caller.from_token(token), stream=True)
    servers = {}
    for i, spec in enumerate(args.server or ["this="]):
        name, _, directory = spec.partition("=")
        servers[name] = (start_server(args.port + i, directory), args.port + i)
    print(f"load average {os.getloadavg()}; client {args.client}", flush=True)
    times: dict[str, list[float]] = {name: [] for name in [*servers, "library"]}
    cpus: dict[str, list[float]] = {name: [] for name in times}
    counts: dict[str, int] = {}
    try:
        for _, port in servers.values():  # warm: imports, route contexts, sessions
            await stream(args.client, port, token)
        for _ in range(args.rounds):
            for name in times:
                if name == "library":
                    cpu, start_time, count = process_cpu(), time.perf_counter(), 0
                    async for _ad in schedd.query_iter():
                        count += 1
                    pid = None
                else:
                    process, port = servers[name]
                    pid = process.pid
                    cpu, start_time = process_cpu(pid), time.perf_counter()
                    count = await stream(args.client, port, token)
                times[name].append(time.perf_counter() - start_time)
                cpus[name].append(process_cpu(pid) - cpu)
                counts[name] = count
        library = statistics.median(times["library"])
        for name in times:
            wall = statistics.median(times[name])
            print(
                f"  {name:<10} {counts[name]} ads  median {wall:6.2f} s  "
                f"{counts[name] / wall:8.0f} ads/s  ({100 * library / wall:3.0f}% of the "
                f"library)  CPU {statistics.median(cpus[name]):5.2f} s  "
                f"rounds {' '.join(f'{t:.2f}' for t in times[name])}",
                flush=True,
            )
        print(f"load average {os.getloadavg()}")
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--client", choices=["curl", "httpx"], default="curl")
    parser.add_argument("--server", action="append", help="NAME=DIR (DIR first on PYTHONPATH)")
    parser.add_argument("--port", type=int, default=18770)
    trio.run(main, parser.parse_args())
