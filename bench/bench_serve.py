"""``cedar serve`` against the real pool, side by side in one run: the HTTP API versus the
library called directly, and restd's ``/v1`` served by cedar versus restd itself.

Run (as root, with the pool's environment; restd optional, see
``/work/shared/peers/htcondor-restd/PEER.md``)::

    . /tmp/pool.env
    python bench/bench_serve.py [--jobs 2000] [--stream-jobs 40000] \\
        [--restd http://127.0.0.1:9680 --restd-pid PID]

It starts ``cedar serve`` in a subprocess (its own interpreter, as in production), fills the
queue with held jobs owned by the pool's testuser (IDTOKEN from ``CEDAR_LIVE_TOKEN_DIR``), and
prints, for 1, 10 and 100 concurrent clients: requests/s, p50/p99 latency and ads/s for a one-job
GET, a job listing and a history query through the API and through ``AsyncSchedd``; then
``/v1/jobs/DEFAULT`` (whole and projected) and ``/v1/status?query=startd`` against restd; then the
streaming of ``--stream-jobs`` jobs (JSON Lines, ``limit=0``) with the server's peak RSS.  The
jobs it submitted are removed at the end.  Numbers on a shared, loaded machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import trio

from cedar.commands import AsyncSchedd
from cedar.commands.submit import Submit
from cedar.config import Config
from cedar.service import Caller, PoolAccess, ServiceSettings

HELD = "executable = /bin/sleep\narguments = 600\ntransfer_executable = false\nhold = true\n"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def process_cpu(pid: int | None = None) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` (None: this one)."""
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(
    label: str,
    work: Callable[[], Awaitable[int]],
    concurrency: int,
    total: int,
    cpu_pid: int | None = None,
) -> tuple[float, float]:
    """Run ``work`` ``total`` times with ``concurrency`` tasks; print rps, p50, p99, ads/s, and
    the CPU time per request of the process doing the work (``cpu_pid``: the server; None: this
    process, for the library).  CPU time is far less sensitive to the machine's load than wall
    time, so it is the fairer comparison on a shared machine."""
    latencies: list[float] = []
    ads = [0]
    remaining = [total]

    async def worker() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            start = time.perf_counter()
            count = await work()  # (not ``ads[0] += await ...``: that loses updates)
            ads[0] += count
            latencies.append(time.perf_counter() - start)

    cpu = process_cpu(cpu_pid)
    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    elapsed = time.perf_counter() - start
    cpu_ms = (process_cpu(cpu_pid) - cpu) * 1000 / max(1, len(latencies))
    p50, p99 = percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000
    print(
        f"  {label:<34} c={concurrency:<3} {len(latencies) / elapsed:8.1f} req/s  "
        f"p50 {p50:8.2f} ms  p99 {p99:8.2f} ms  {ads[0] / elapsed:10.0f} ads/s  "
        f"cpu {cpu_ms:7.2f} ms/req",
        flush=True,
    )
    return p50, ads[0] / elapsed


def start_server(port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, _condor_CEDAR_SERVE_RATE="0", _condor_CEDAR_SERVE_MAX_PAGE_SIZE="100000")
    process = subprocess.Popen(
        [sys.executable, "-m", "cedar.cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("cedar serve did not start")


def rss_kib(pid: int) -> tuple[int, int]:
    """(current, peak) resident memory of a process, KiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


async def fill(schedd: AsyncSchedd, count: int) -> list[int]:
    clusters = []
    while count > 0:
        n = min(count, 5000)
        result = await schedd.submit(Submit(HELD + f"queue {n}"), submit_dir="/tmp")
        clusters.append(result.cluster)
        count -= n
    return clusters


async def main(args: argparse.Namespace) -> None:
    token_dir = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    token = next(Path(token_dir, n).read_text().strip() for n in sorted(os.listdir(token_dir)))
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    settings = ServiceSettings.from_config(config)
    access = PoolAccess(settings)
    caller = Caller.from_token(token)
    schedd = await access.schedd(caller, stream=True)  # a 40 000-job query takes a while
    server = start_server(args.port)
    base = f"http://127.0.0.1:{args.port}"
    headers = {"Authorization": f"Bearer {token}"}
    clusters = await fill(schedd, 100)  # the listed cluster: 100 whole job ads
    clusters += await fill(schedd, args.jobs - 100)
    first = clusters[0]
    pid = server.pid
    print(f"queue: {args.jobs} held jobs in clusters {clusters}; server pid {server.pid}")
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    try:
        async with (
            httpx.AsyncClient(base_url=base, headers=headers, timeout=120, limits=limits) as api,
            httpx.AsyncClient(timeout=120, limits=limits) as plain,
        ):
            await api.get("/api/v1/whoami")  # warm the caller's sessions

            async def api_one() -> int:
                r = await api.get(f"/api/v1/jobs/{first}.0")
                r.raise_for_status()
                return 1

            async def lib_one() -> int:
                return len(await schedd.query(f"ClusterId == {first} && ProcId == 0"))

            page = 100

            async def api_page() -> int:
                r = await api.get(
                    "/api/v1/jobs",
                    params={"limit": 0, "constraint": f"ClusterId == {first}", "format": "jsonl"},
                )
                return r.text.count("\n")

            async def lib_page() -> int:
                return len(await schedd.query(f"ClusterId == {first}"))

            async def api_history() -> int:
                r = await api.get("/api/v1/jobs/archive", params={"limit": page})
                return int(r.text.count('"ProcId"'))

            async def lib_history() -> int:
                return len([ad async for ad in schedd.history(None, (), page)])

            print("one-job GET (API vs library)")
            for c in (1, 10, 100):
                a, _ = await measure("API GET /api/v1/jobs/{id}", api_one, c, max(50, 3 * c), pid)
                b, _ = await measure("library query (one job)", lib_one, c, max(50, 3 * c))
                print(f"    -> the API adds {a - b:+.2f} ms at p50")
            print("job listing: one cluster of 100 whole job ads (API JSON Lines vs library)")
            for c in (1, 10, 100):
                await measure("API GET /api/v1/jobs (100 ads)", api_page, c, max(10, c), pid)
                await measure("library query (100 ads)", lib_page, c, max(10, c))
            print(f"history, newest {page}")
            for c in (1, 10, 100):
                await measure("API GET /api/v1/jobs/archive", api_history, c, max(10, c), pid)
                await measure("library history", lib_history, c, max(10, c))

            print("restd's /v1: cedar serve vs restd (same pool, same moment)")
            targets: list[tuple[str, str, int | None]] = [("cedar", base, pid)]
            if args.restd:
                targets.append(("restd", args.restd, args.restd_pid))
            for path in (
                "/v1/jobs/DEFAULT",
                "/v1/jobs/DEFAULT?projection=clusterid,procid",
                "/v1/status?query=startd",
            ):
                for name, url, target_pid in targets:

                    async def get(url: str = url, path: str = path) -> int:
                        r = await plain.get(url + path)
                        r.raise_for_status()
                        return len(r.json())

                    await measure(f"{name:<5} {path[:28]}", get, 1, 5, target_pid)
            if not args.restd:
                print("  (restd not given: --restd URL)")

        if args.stream_jobs > args.jobs:
            extra = await fill(schedd, args.stream_jobs - args.jobs)
            clusters += extra
        print(f"streaming {max(args.stream_jobs, args.jobs)} jobs (JSON Lines, limit=0)")
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=600) as api:
            before = rss_kib(server.pid)
            server_cpu = process_cpu(pid)
            start = time.perf_counter()
            count = 0
            async with api.stream(
                "GET", "/api/v1/jobs", params={"limit": 0, "format": "jsonl"}
            ) as r:
                async for _ in r.aiter_lines():
                    count += 1
            api_rate = count / (time.perf_counter() - start)
            server_cpu = process_cpu(pid) - server_cpu
            after = rss_kib(server.pid)
        start = time.perf_counter()
        lib_cpu = process_cpu()
        n = 0
        async for _ in schedd.query_iter():
            n += 1
        lib_rate = n / (time.perf_counter() - start)
        lib_cpu = process_cpu() - lib_cpu
        print(
            f"  API {count} ads at {api_rate:.0f} ads/s; library {n} ads at {lib_rate:.0f} ads/s "
            f"({100 * api_rate / lib_rate:.0f}% of the library); server RSS {before[0]} -> "
            f"{after[0]} KiB (peak {after[1]} KiB)\n"
            f"  CPU: server {server_cpu:.2f} s, library {lib_cpu:.2f} s (the library's CPU is "
            f"{100 * lib_cpu / max(server_cpu, 1e-9):.0f}% of the server's: the ads/s the API "
            f"reaches where CPU, not the machine's load, is the limit)"
        )
    finally:
        server.terminate()
        server.wait(10)
        for cluster in clusters:
            await schedd.remove(f"ClusterId == {cluster}", "bench_serve")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--stream-jobs", type=int, default=0)
    parser.add_argument("--port", type=int, default=18639)
    parser.add_argument("--restd", help="restd's base URL on the same pool")
    parser.add_argument("--restd-pid", type=int, help="restd's process id (for its CPU time)")
    trio.run(main, parser.parse_args())
