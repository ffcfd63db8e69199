"""``cedar serve`` against the real pool, side by side in one run: the HTTP API versus the
library called directly, and restd's ``/v1`` served by cedar versus restd itself.

Run (as root, with the pool's environment; restd optional, see
``/work/shared/peers/htcondor-restd/PEER.md``)::

    . /tmp/pool.env
    python bench/bench_serve.py [--jobs 2000] [--stream-jobs 40000] [--replicas N] \\
        [--restd http://127.0.0.1:9680 --restd-pid PID]

It starts ``cedar serve`` in a subprocess (its own interpreter, as in production), fills the
queue with held jobs owned by the pool's testuser (IDTOKEN from ``CEDAR_LIVE_TOKEN_DIR``), and
prints, for 1, 10 and 100 concurrent clients: requests/s, p50/p99 latency and ads/s for a one-job
GET, a job listing and a history query through the API and through ``AsyncSchedd``; then
``/v1/jobs/DEFAULT`` (whole and projected) and ``/v1/status?query=startd`` against restd, with
the same queries made by the library alone and by the reference client (``htcondor2``) alone: the
floor the daemon and the decoding set for any server; then the streaming of ``--stream-jobs``
jobs (JSON Lines, ``limit=0``) with the server's peak RSS.  The one-job GET is measured twice:
with httpx (whose own per-request work, ~1 ms of Python, is in the client's latency) and with a
minimal keep-alive HTTP/1.1 client, which leaves the API's own cost.  ``--replicas N`` starts N
``cedar serve`` processes and spreads the API's requests over them (what several processes behind
a load balancer give).  The jobs it submitted are removed at the end.  Numbers on a shared,
loaded machine are noisy.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import trio

from cedar.commands import AsyncSchedd
from cedar.config import Config
from cedar.service_core import Caller, PoolAccess, ServiceSettings
from cedar.submit_language import Submit

HELD = "executable = /bin/sleep\narguments = 600\ntransfer_executable = false\nhold = true\n"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def process_cpu(pid: int | list[int] | None = None) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` (None: this one; a list: their
    sum)."""
    if pid is None:
        return time.process_time()
    if isinstance(pid, list):
        return sum(process_cpu(one) for one in pid)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fine_cpu(pid: int | list[int] | None = None) -> float:
    """CPU seconds used so far, like :func:`process_cpu` but to the nanosecond: the sum of the
    process's threads' ``schedstat`` run times (``/proc/<pid>/stat`` counts 10 ms clock ticks,
    which is 0.1 ms a request over 100 requests: the size of what the one-job GET compares).
    A thread that ended is no longer counted; the server's work runs on its event-loop thread.
    """
    if pid is None:
        return time.process_time()
    if isinstance(pid, list):
        return sum(fine_cpu(one) for one in pid)
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # the thread ended meanwhile
            continue
    return total / 1e9


class RawHTTP:
    """A minimal keep-alive HTTP/1.1 GET client (one connection; Content-Length, chunked and
    read-to-close answers).

    httpx spends about a millisecond of Python per request, which lands in the measured latency
    of every API call but is the client's, not the API's; this client costs a few microseconds.
    """

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self.host, self.port = host, port
        self.head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.stream: trio.SocketStream | None = None
        self.buffer = b""

    async def get(self, path: str) -> tuple[int, bytes]:
        if self.stream is None:
            self.stream = await trio.open_tcp_stream(self.host, self.port)
        request = f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n{self.head}\r\n"
        await self.stream.send_all(request.encode())
        while b"\r\n\r\n" not in self.buffer:
            await self._more()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        if "content-length" in fields:
            body = await self._exactly(int(fields["content-length"]))
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            body = await self._chunked()
        else:  # an HTTP/1.0-style answer: the body ends with the connection
            with contextlib.suppress(ConnectionError):
                while True:
                    await self._more()
            body, self.buffer = self.buffer, b""
            await self.aclose()
            return status, body
        if fields.get("connection", "").lower() == "close" or lines[0].startswith("HTTP/1.0"):
            # Hypercorn ends a keep-alive connection after 1000 requests
            # (keep_alive_max_requests): the next request opens a new one, as httpx does.
            await self.aclose()
        return status, body

    async def _exactly(self, length: int) -> bytes:
        while len(self.buffer) < length:
            await self._more()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return body

    async def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            await self._more()
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    async def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await self._line()).split(b";")[0], 16)
            if size == 0:
                while await self._line():  # trailers, then the empty line
                    pass
                return b"".join(parts)
            parts.append(await self._exactly(size))
            await self._exactly(2)  # the CRLF after the chunk

    async def _more(self) -> None:
        assert self.stream is not None
        data = await self.stream.receive_some(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data

    async def aclose(self) -> None:
        if self.stream is not None:
            stream, self.stream, self.buffer = self.stream, None, b""
            await stream.aclose()


class RawPool:
    """Idle :class:`RawHTTP` connections, one per concurrent caller, over every replica; the
    replicas are taken in turn for each request (a round-robin load balancer), also at one
    client."""

    def __init__(self, ports: list[int], headers: dict[str, str]) -> None:
        self.free: dict[int, list[RawHTTP]] = {port: [] for port in ports}
        self.ports = itertools.cycle(ports)
        self.headers = headers

    async def get(self, path: str) -> tuple[int, bytes]:
        port = next(self.ports)
        free = self.free[port]
        conn = free.pop() if free else RawHTTP("127.0.0.1", port, self.headers)
        status, body = await conn.get(path)
        free.append(conn)
        return status, body

    async def aclose(self) -> None:
        for free in self.free.values():
            for conn in free:
                await conn.aclose()


async def measure(
    label: str,
    work: Callable[[], Awaitable[int]],
    concurrency: int,
    total: int,
    cpu_pid: int | list[int] | None = None,
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


async def interleaved(
    kinds: dict[str, tuple[Callable[[], Awaitable[int]], int | list[int] | None]],
    concurrency: int,
    rounds: int,
) -> None:
    """The one-job GET, fairly: in each round every one of ``concurrency`` clients makes one
    request of each kind (the library's query, the API by the raw client, the API by httpx),
    kind after kind, the order turning from round to round.  Load that drifts during the run
    lands on every kind alike.  One kind runs at a time, so the CPU it costs is measured per
    kind: the server's (``/proc``) for the API, this process's for the library.  Prints p50,
    p99, requests/s and CPU a request per kind, and what the API adds to the library's p50."""
    names = list(kinds)
    latencies: dict[str, list[float]] = {name: [] for name in names}
    cpu = dict.fromkeys(names, 0.0)
    busy = dict.fromkeys(names, 0.0)
    for turn in range(rounds):
        order = names[turn % len(names) :] + names[: turn % len(names)]
        for name in order:
            work, cpu_pid = kinds[name]
            done = latencies[name]

            async def one(
                work: Callable[[], Awaitable[int]] = work, done: list[float] = done
            ) -> None:
                start = time.perf_counter()
                await work()
                done.append(time.perf_counter() - start)

            before, start = fine_cpu(cpu_pid), time.perf_counter()
            async with trio.open_nursery() as nursery:
                for _ in range(concurrency):
                    nursery.start_soon(one)
            busy[name] += time.perf_counter() - start
            cpu[name] += max(0.0, fine_cpu(cpu_pid) - before)
    base = percentile(latencies["library"], 0.5) * 1000
    for name in names:
        values = latencies[name]
        p50, p99 = percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000
        whose = "this process" if kinds[name][1] is None else "server"
        added = "" if name == "library" else f"  adds {p50 - base:+7.2f} ms"
        print(
            f"  {name:<8} c={concurrency:<3} {len(values) / busy[name]:8.1f} req/s  "
            f"p50 {p50:8.2f} ms  p99 {p99:8.2f} ms  cpu {cpu[name] * 1000 / len(values):6.2f} "
            f"ms/req ({whose}){added}",
            flush=True,
        )


def start_server(port: int, directory: str = "") -> subprocess.Popen[bytes]:
    """``cedar serve`` on ``port``, without rate limits; from the checkout ``directory`` when one
    is given (first on ``PYTHONPATH`` and the working directory: ``-m`` puts that first)."""
    env = dict(os.environ, _condor_CEDAR_SERVE_RATE="0", _condor_CEDAR_SERVE_MAX_PAGE_SIZE="100000")
    if directory:
        env["PYTHONPATH"] = directory + os.pathsep + env.get("PYTHONPATH", "")
    process = subprocess.Popen(
        [sys.executable, "-m", "cedar.cli.main", "serve", "--port", str(port)],
        cwd=directory or None,
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
    raise SystemExit(f"cedar serve from {directory or 'here'} did not start")


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


class Replicas:
    """httpx clients over the replicas, used in turn (a round-robin load balancer)."""

    def __init__(self, ports: list[int], headers: dict[str, str], limits: httpx.Limits) -> None:
        self.clients = [
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=120, limits=limits
            )
            for port in ports
        ]
        self.turn = itertools.cycle(self.clients)

    async def get(self, path: str, **options: object) -> httpx.Response:
        return await next(self.turn).get(path, **options)  # type: ignore[arg-type]

    async def aclose(self) -> None:
        for one in self.clients:
            await one.aclose()


def reference_floor() -> dict[str, Callable[[], int]]:
    """The /v1 queries made by the reference client alone (``htcondor2``, the C++ library restd
    uses), anonymous as restd's callers are: what the daemon plus C++ decoding take.  Empty when
    the reference client is not installed."""
    try:
        import htcondor2
    except ImportError:
        return {}
    collector = htcondor2.Collector(os.environ["CEDAR_LIVE_COLLECTOR"])
    schedd = htcondor2.Schedd(collector.locate(htcondor2.DaemonTypes.Schedd))
    return {
        "/v1/jobs/DEFAULT": lambda: len(schedd.query()),
        "/v1/jobs/DEFAULT?projection=clusterid,procid": lambda: len(
            schedd.query(projection=["ClusterId", "ProcId"])
        ),
        "/v1/status?query=startd": lambda: len(collector.query(htcondor2.AdTypes.Startd)),
    }


def pool_token() -> str:
    """The first token of the pool's token directory (``CEDAR_LIVE_TOKEN_DIR``: testuser's)."""
    token_dir = os.environ["CEDAR_LIVE_TOKEN_DIR"]
    return next(Path(token_dir, n).read_text().strip() for n in sorted(os.listdir(token_dir)))


def pool_settings() -> ServiceSettings:
    """cedar serve's settings from the pool's configuration (``CEDAR_LIVE_CONDOR_CONFIG``)."""
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    return ServiceSettings.from_config(config)


async def main(args: argparse.Namespace) -> None:
    token = pool_token()
    settings = pool_settings()
    access = PoolAccess(settings)
    caller = Caller.from_token(token)
    schedd = await access.schedd(caller, stream=True)  # a 40 000-job query takes a while
    anonymous = await access.schedd(Caller.anonymous(), stream=True)  # restd's callers
    ports = [args.port + i for i in range(max(1, args.replicas))]
    servers = [start_server(port) for port in ports]
    pid: list[int] = [server.pid for server in servers]
    # --other: as many processes of the other checkout as --replicas, on the next ports
    other_ports = [args.port + len(ports) + i for i in range(len(ports))]
    others = [start_server(port, args.other) for port in other_ports] if args.other else []
    servers += others
    base = f"http://127.0.0.1:{ports[0]}"
    headers = {"Authorization": f"Bearer {token}"}
    compare = start_server(args.port + 50, args.compare) if args.compare else None
    compare_base = f"http://127.0.0.1:{args.port + 50}"
    if args.only == "status":  # the status list needs no jobs
        clusters = [0]
    elif args.only == "v1":  # fill the queue up to --jobs
        held = len(await anonymous.query(None, ["ProcId"]))
        clusters = await fill(schedd, args.jobs - held) if args.jobs > held else []
        clusters = clusters or [0]
    else:
        clusters = await fill(schedd, 100)  # the listed cluster: 100 whole job ads
        if not args.one_job_only:
            clusters += await fill(schedd, args.jobs - 100)
    first = clusters[0]
    print(f"queue: {args.jobs} held jobs in clusters {clusters}; server pids {pid}")
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    api = Replicas(ports, headers, limits)
    raw = RawPool(ports, headers)
    other_raw = RawPool(other_ports, headers)
    try:
        async with httpx.AsyncClient(timeout=120, limits=limits) as plain:
            await api.get("/api/v1/whoami")  # warm the caller's sessions
            v1_targets: list[tuple[str, str, int | list[int] | None]] = [("cedar", base, pid)]
            if compare is not None:
                v1_targets.append((args.compare_name, compare_base, compare.pid))
            if args.restd:
                v1_targets.append(("restd", args.restd, args.restd_pid))
            if args.only in ("v1", "status"):
                await v1_section(args, plain, v1_targets, access, anonymous)
                return

            async def api_one() -> int:
                r = await api.get(f"/api/v1/jobs/{first}.0")
                r.raise_for_status()
                return 1

            async def raw_one() -> int:
                status, _ = await raw.get(f"/api/v1/jobs/{first}.0")
                assert status == 200, status
                return 1

            async def lib_one() -> int:  # the route's query (limit 1: the scan stops at the job)
                return len(await schedd.query(f"ClusterId == {first} && ProcId == 0", (), 1))

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

            print(
                f"one-job GET, interleaved (library / raw client / httpx, one request of each "
                f"per client in turn; {len(ports)} server process(es))"
            )

            async def other_one() -> int:
                status, _ = await other_raw.get(f"/api/v1/jobs/{first}.0")
                assert status == 200, status
                return 1

            kinds: dict[str, tuple[Callable[[], Awaitable[int]], int | list[int] | None]] = {
                "library": (lib_one, None),
                "raw": (raw_one, pid),
                "httpx": (api_one, pid),
            }
            if others:
                print(f"  raw-other: the raw client against cedar serve from {args.other}")
                kinds["raw-other"] = (other_one, [server.pid for server in others])
            for work, _ in kinds.values():  # first requests build FastAPI's route contexts
                for _ in range(5):
                    await work()
            for c in (1, 10, 100):
                await interleaved(kinds, c, max(5, -(-args.one_job_requests // c)))
            if args.one_job_only:
                return
            print("job listing: one cluster of 100 whole job ads (API JSON Lines vs library)")
            for c in (1, 10, 100):
                await measure("API GET /api/v1/jobs (100 ads)", api_page, c, max(10, c), pid)
                await measure("library query (100 ads)", lib_page, c, max(10, c))
            print(f"history, newest {page}")
            for c in (1, 10, 100):
                await measure("API GET /api/v1/jobs/archive", api_history, c, max(10, c), pid)
                await measure("library history", lib_history, c, max(10, c))

            await v1_section(args, plain, v1_targets, access, anonymous)

        if args.stream_jobs > args.jobs:
            extra = await fill(schedd, args.stream_jobs - args.jobs)
            clusters += extra
        print(f"streaming {max(args.stream_jobs, args.jobs)} jobs (JSON Lines, limit=0)")
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=600) as stream:
            before = rss_kib(pid[0])
            server_cpu = process_cpu(pid)
            start = time.perf_counter()
            count = 0
            async with stream.stream(
                "GET", "/api/v1/jobs", params={"limit": 0, "format": "jsonl"}
            ) as r:
                async for _ in r.aiter_lines():
                    count += 1
            api_rate = count / (time.perf_counter() - start)
            server_cpu = process_cpu(pid) - server_cpu
            after = rss_kib(pid[0])
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
        await api.aclose()
        await raw.aclose()
        await other_raw.aclose()
        for server in [*servers, *([compare] if compare is not None else [])]:
            server.terminate()
            server.wait(10)
        for cluster in [c for c in clusters if c]:
            await schedd.remove(f"ClusterId == {cluster}", "bench_serve")


async def v1_section(
    args: argparse.Namespace,
    plain: httpx.AsyncClient,
    targets: list[tuple[str, str, int | list[int] | None]],
    access: PoolAccess,
    anonymous: AsyncSchedd,
) -> None:
    """restd's ``/v1`` queries, anonymous as restd's callers are, one request to each server
    (cedar, ``--compare``'s cedar, restd) and to each library alone in turn, ``--v1-reps``
    rounds (a quarter of that for the whole ads): the machine's drift lands on all alike.  Each
    line gives the median and p90 of the time to the last byte of the answer (the client's JSON
    parsing is outside it) and the CPU time per request of the process doing the work."""
    print(
        f"restd's /v1: servers ({args.v1_client} client), the cedar library and htcondor2, "
        f"interleaved (load {' '.join(f'{x:.1f}' for x in os.getloadavg())})"
    )
    reference = reference_floor()
    collector = access.collector(Caller.anonymous())
    library: dict[str, Callable[[], Awaitable[int]]] = {
        "/v1/jobs/DEFAULT": lambda: count_ads(anonymous.query_iter(None, [])),
        "/v1/jobs/DEFAULT?projection=clusterid,procid": lambda: count_ads(
            anonymous.query_iter(None, ["ClusterId", "ProcId"])
        ),
        "/v1/status?query=startd": lambda: count_ads(collector.query_iter("startd")),
    }
    if args.only == "status":
        library = {k: v for k, v in library.items() if "status" in k}
    # One keep-alive raw connection per server (--v1-client raw, the default): httpx's own
    # ~1 ms of Python per request would land on every server alike and shrink the ratios.
    raw = {
        name: RawHTTP(*_host_port(url), {}) for name, url, _ in targets if args.v1_client == "raw"
    }
    for path, lib in library.items():
        cases: list[tuple[str, Callable[[], Awaitable[object]], int | list[int] | None]] = []
        for name, url, target_pid in targets:

            async def get(url: str = url, path: str = path, name: str = name) -> bytes:
                if name in raw:
                    status, body = await raw[name].get(path)
                    if status != 200:
                        raise RuntimeError(f"{name}: HTTP {status} for {path}")
                    return body
                r = await plain.get(url + path)
                r.raise_for_status()
                return r.content

            cases.append((name, get, target_pid))
        cases.append(("cedar library alone", lib, None))
        if path in reference:
            call = reference[path]

            async def ref(call: Callable[[], int] = call) -> int:
                return call()

            cases.append(("htcondor2 alone", ref, None))
        small = "projection" in path or "status" in path
        reps = args.v1_reps if small else max(5, args.v1_reps // 4)
        times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        cpu = dict.fromkeys(times, 0.0)
        answers: dict[str, object] = {}
        bodies: dict[str, bytes] = {}
        for round_ in range(reps + 1):  # round 0 warms sessions and caches: not counted
            for name, work, target_pid in cases:
                before, start = process_cpu(target_pid), time.perf_counter()
                answer = await work()
                elapsed, used = time.perf_counter() - start, process_cpu(target_pid) - before
                answers[name] = len(_json(answer)) if isinstance(answer, bytes) else answer
                if isinstance(answer, bytes):
                    bodies[name] = answer
                if round_:
                    times[name].append(elapsed)
                    cpu[name] += used
        print(f"  {path}  ({reps} rounds; entries answered: {answers})")
        for name, t in times.items():
            p50, p90 = percentile(t, 0.5) * 1000, percentile(t, 0.9) * 1000
            print(
                f"    {name:<22} p50 {p50:8.2f} ms  p90 {p90:8.2f} ms  "
                f"cpu {cpu[name] * 1000 / len(t):7.2f} ms/req"
            )
        if args.compare and args.compare_name in cpu and cpu[args.compare_name]:
            other = args.compare_name
            print(f"    -> cedar: {cpu[other] / cpu['cedar']:.2f}x {other}'s CPU speed", end="")
            # the daemons stamp the time of each answer: left out of the comparison
            same = _untimed(bodies["cedar"]) == _untimed(bodies[other])
            print(f"; last bodies {'byte-identical' if same else 'DIFFER'} (but for the clock)")
        if "restd" in times:
            restd = percentile(times["restd"], 0.5)
            for name, _, _ in targets:
                if name != "restd":
                    print(
                        f"    -> {name}: {restd / percentile(times[name], 0.5):.2f}x restd's speed"
                    )
    for conn in raw.values():
        await conn.aclose()
    if not any(name == "restd" for name, _, _ in targets):
        print("  (restd not given: --restd URL)")
    print(f"  (load {' '.join(f'{x:.1f}' for x in os.getloadavg())})")


def _host_port(url: str) -> tuple[str, int]:
    """``http://host:port`` -> (host, port)."""
    parsed = urllib.parse.urlsplit(url)
    return parsed.hostname or "127.0.0.1", parsed.port or 80


def _json(body: bytes) -> list[object]:
    """A /v1 list (a value that was not UTF-8 on the wire is written back as received)."""
    data: list[object] = json.loads(body.decode("utf-8", "replace"))
    return data


def _untimed(body: bytes) -> bytes:
    """A /v1 body without the values the daemons stamp with the time they answer."""
    return re.sub(rb'"(servertime|mycurrenttime|lastheardfrom)": \d+', rb'"\1": 0', body)


async def count_ads(ads: AsyncIterator[object]) -> int:
    return len([ad async for ad in ads])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--stream-jobs", type=int, default=0)
    parser.add_argument("--port", type=int, default=18639)
    parser.add_argument("--restd", help="restd's base URL on the same pool")
    parser.add_argument("--restd-pid", type=int, help="restd's process id (for its CPU time)")
    parser.add_argument("--replicas", type=int, default=1, help="cedar serve processes")
    parser.add_argument("--v1-reps", type=int, default=20, help="rounds of a small /v1 case")
    parser.add_argument(
        "--v1-client",
        choices=["raw", "httpx"],
        default="raw",
        help="the /v1 client: a raw keep-alive HTTP/1.1 client (default) or httpx",
    )
    parser.add_argument(
        "--only",
        choices=["v1", "status"],
        help="run only this part (v1: restd's /v1; status: its /v1/status?query=startd alone)",
    )
    parser.add_argument(
        "--compare", metavar="DIR", help="also serve /v1 from this checkout (e.g. /work/main)"
    )
    parser.add_argument("--compare-name", default="main", help="its name in the output")
    parser.add_argument(
        "--one-job-only", action="store_true", help="measure the one-job GET only, then stop"
    )
    parser.add_argument(
        "--other",
        metavar="DIR",
        help="also run cedar serve from the checkout DIR (e.g. /work/main) in the one-job GET "
        "(--replicas processes of it too: the same code's CPU differs by ~0.2 ms a request from "
        "one process to another, so compare over two or more)",
    )
    parser.add_argument(
        "--one-job-requests",
        type=int,
        default=200,
        help="requests of each kind in the interleaved one-job GET (5 rounds at least)",
    )
    trio.run(main, parser.parse_args())
