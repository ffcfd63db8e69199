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

``--in-process`` adds, in the same rounds and this process, the server's two ways of writing the
listing without any HTTP: ``ads+json`` (``query_iter()`` and ``ad_json_bytes`` per ad, what the
listing did before it was transcoded) and ``transcode`` (``json_chunks``: the schedd's messages
straight to JSON, no ad made, what ``/api/v1/jobs`` does now), with their CPU against the
library's: what is left of the server's CPU over these is the HTTP side.  The server's CPU is
also printed split into user and system time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import httpx
import trio
from bench_serve import pool_settings, pool_token, process_cpu, start_server

from cedar.http_api.adjson import ad_json_bytes, json_chunks
from cedar.service_core import Caller, PoolAccess


def process_times(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds used so far by process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


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
    token = pool_token()
    settings = pool_settings()
    access = PoolAccess(settings)
    schedd = await access.schedd(Caller.from_token(token), stream=True)
    private = settings.private_attrs

    async def in_process(name: str) -> int:
        """One listing written in this process (no HTTP), as ``name`` says; the ads counted."""
        count = 0
        if name == "library":
            async for _ad in schedd.query_iter():
                count += 1
        elif name == "ads+json":
            async for ad in schedd.query_iter():
                ad_json_bytes(ad, private)
                count += 1
        else:
            async for items in json_chunks(schedd, None, (), private):
                b"\n".join(items)
                count += len(items)
        return count

    servers = {}
    for i, spec in enumerate(args.server or ["this="]):
        name, _, directory = spec.partition("=")
        servers[name] = (start_server(args.port + i, directory), args.port + i)
    print(f"load average {os.getloadavg()}; client {args.client}", flush=True)
    local = ["library", *(["ads+json", "transcode"] if args.in_process else [])]
    times: dict[str, list[float]] = {name: [] for name in [*servers, *local]}
    cpus: dict[str, list[float]] = {name: [] for name in times}
    split: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
    counts: dict[str, int] = {}
    try:
        for _, port in servers.values():  # warm: imports, route contexts, sessions
            await stream(args.client, port, token)
        for _ in range(args.rounds):
            for name in times:
                if name in local:
                    cpu, start_time = process_cpu(), time.perf_counter()
                    count = await in_process(name)
                    pid = None
                else:
                    process, port = servers[name]
                    pid = process.pid
                    before = process_times(pid)
                    cpu, start_time = process_cpu(pid), time.perf_counter()
                    count = await stream(args.client, port, token)
                    after = process_times(pid)
                    split[name].append((after[0] - before[0], after[1] - before[1]))
                times[name].append(time.perf_counter() - start_time)
                cpus[name].append(process_cpu(pid) - cpu)
                counts[name] = count
        library = statistics.median(times["library"])
        library_cpu = statistics.median(cpus["library"])
        for name in times:
            wall = statistics.median(times[name])
            cpu_median = statistics.median(cpus[name])
            user_sys = ""
            if split.get(name):
                user = statistics.median(u for u, _ in split[name])
                system = statistics.median(s for _, s in split[name])
                user_sys = f" (user {user:.2f} + sys {system:.2f})"
            where = "in this process" if name in local else "server"
            print(
                f"  {name:<10} {counts[name]} ads  median {wall:6.2f} s  "
                f"{counts[name] / wall:8.0f} ads/s  ({100 * library / wall:3.0f}% of the "
                f"library)  CPU {cpu_median:5.2f} s{user_sys} = library CPU / "
                f"{cpu_median / library_cpu:.2f} ({where})  "
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
    parser.add_argument(
        "--in-process", action="store_true", help="also time the JSON writers in this process"
    )
    trio.run(main, parser.parse_args())
