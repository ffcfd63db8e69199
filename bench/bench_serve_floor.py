"""The floors under issue 22's speed targets for ``cedar serve``, measured side by side in one run.

A target can only be met if what it cannot avoid leaves room for it.  This measures, on this
machine and this pool, what no server code of ours can avoid:

* **HTTP floor** (target: the API adds <= 2 ms p50 to a one-job GET).  The same minimal
  keep-alive client (``bench_serve.RawHTTP``) at one connection against, in their own processes:
  a bare Trio socket server answering a fixed HTTP response (no HTTP library: the kernel, the
  event loop and two system calls), Hypercorn's Trio worker serving a trivial ASGI app that sends a
  fixed ~2 KB JSON body, the same body from a FastAPI route (with a path parameter, as
  ``/api/v1/jobs/{id}``), Hypercorn's asyncio worker with the trivial app (for comparison only:
  the issue mandates Trio), the bare socket server and a FastAPI route each making the
  library's one-job query and answering the ad's JSON (the least API over the library), and
  ``cedar serve``'s real one-job GET; beside them the library's one-job query in this process.
  What Hypercorn + trivial app adds over the bare socket server is the price of the mandated
  stack alone; what the least API adds over the library's query is the floor of target (a);
  what the bare socket server with the query adds is the part no HTTP library can remove (a
  third process on the path).
* **Daemon floor** (target: ``/v1`` at least 2x faster than htcondor-restd).  The time from
  sending the query to the last byte of the daemon's answer, read as raw bytes with only the
  packet headers looked at (cedar's wire pieces make the connection, the security handshake and
  the request), for the 2 000-job projection ``ClusterId ProcId``, the 2 000 whole ads, and the
  collector's startd ads; the same with connecting and the handshake; the same query by the cedar
  library (decoding) and by ``htcondor2`` alone; and restd's own HTTP answer when ``--restd`` is
  given.  If the daemon alone takes more than half restd's time, no client can be 2x faster.

Run as root with the pool's environment (``tools/live_pool.sh``)::

    . /tmp/pool.env
    python bench/bench_serve_floor.py [--jobs 2000] [--rounds 5] [--requests 100] \\
        [--restd http://127.0.0.1:9680 --restd-pid PID]

Cases are interleaved in ``--rounds`` rounds so the machine's load drifts over all of them
alike; each line pools every round's latencies (p50, p99) and gives the CPU time per request of
the process doing the work (a server's from ``/proc``; this process's for the clients run
here).  Jobs it submits (held, owned by the token's user) are removed at the end.  Numbers on a
shared, loaded machine are noisy: compare within one run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import struct
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from bench_serve import (
    RawHTTP,
    fill,
    percentile,
    pool_settings,
    pool_token,
    process_cpu,
    start_server,
)

#: A fixed JSON body of about 2 KB (a one-job GET answers 2-3 KB).
BODY = json.dumps({f"Attribute{i:03d}": f"value number {i:05d}" for i in range(60)}).encode()
RESPONSE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    + f"content-length: {len(BODY)}\r\n\r\n".encode()
    + BODY
)


# --------------------------------------------------------------------------- the servers


async def trivial_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app that answers every request with :data:`BODY` (and handles lifespan)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(BODY))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": BODY})


def fastapi_app() -> Any:
    """The same body from a FastAPI route with a path parameter."""
    from fastapi import FastAPI, Response

    app = FastAPI()

    @app.get("/api/v1/jobs/{job}")
    async def one(job: str) -> Response:
        return Response(BODY, media_type="application/json")

    return app


def one_job_reader() -> Callable[[str], Awaitable[bytes]]:
    """``job id -> the ad's JSON``, by the library's one-job query as the token's user (from the
    pool's environment)."""
    from cedar.http_api.adjson import ad_json_bytes
    from cedar.service_core import Caller, PoolAccess

    access = PoolAccess(pool_settings())
    caller = Caller.from_token(pool_token())

    async def read(job: str) -> bytes:
        cluster, _, proc = job.partition(".")
        schedd = await access.schedd(caller)
        # the route's query: one ad at most (the schedd stops its scan at the job)
        ads = await schedd.query(f"ClusterId == {int(cluster)} && ProcId == {int(proc)}", (), 1)
        return ad_json_bytes(ads[0])

    return read


def query_app() -> Any:
    """A FastAPI route doing the library's one-job query and answering the ad's JSON: the least
    an API over the library can do."""
    from fastapi import FastAPI, Response

    read = one_job_reader()
    app = FastAPI()

    @app.get("/api/v1/jobs/{job}")
    async def one(job: str) -> Response:
        return Response(await read(job), media_type="application/json")

    return app


def hypercorn_settings(port: int) -> Any:
    """cedar serve's own Hypercorn settings (``cedar.http_api.server.hypercorn_config``)."""
    from cedar.http_api.server import hypercorn_config
    from cedar.service_core import ServiceSettings

    return hypercorn_config(ServiceSettings(host="127.0.0.1", port=port))


async def socket_server(port: int, query: bool = False) -> None:
    """HTTP/1.1 keep-alive with no HTTP library: read to the blank line, send a fixed answer
    (``query``: the JSON of the job the path names, by the library's one-job query)."""
    read = one_job_reader() if query else None

    async def handle(stream: trio.SocketStream) -> None:
        buffer = b""
        try:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = await stream.receive_some(1 << 16)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                if read is None:
                    await stream.send_all(RESPONSE)
                    continue
                body = await read(head.split(b" ", 2)[1].rsplit(b"/", 1)[1].decode())
                length = f"content-length: {len(body)}\r\n\r\n".encode()
                await stream.send_all(RESPONSE[: RESPONSE.index(b"content-length")] + length + body)
        except trio.BrokenResourceError:
            return

    await trio.serve_tcp(handle, port, host="127.0.0.1")


def run_server(kind: str, port: int) -> None:
    """Serve ``kind`` on ``port`` until killed (run in a child process)."""
    if kind in ("socket", "socketquery"):
        trio.run(socket_server, port, kind == "socketquery")
    elif kind == "asyncio":
        import asyncio

        from hypercorn.asyncio import serve as asyncio_serve

        asyncio.run(asyncio_serve(trivial_app, hypercorn_settings(port)))  # type: ignore[arg-type]
    else:
        from hypercorn.trio import serve as trio_serve

        app = {"trivial": trivial_app, "fastapi": fastapi_app, "query": query_app}[kind]
        if kind != "trivial":
            app = app()
        trio.run(trio_serve, app, hypercorn_settings(port))


def start_floor_server(kind: str, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with __import__("socket").create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the {kind} server did not start")


# --------------------------------------------------------------------------- measuring


class Case:
    """One measured thing: latencies and CPU gathered over the rounds."""

    def __init__(self, label: str, work: Callable[[], Awaitable[object]], pid: int | None):
        self.label, self.work, self.pid = label, work, pid
        self.latencies: list[float] = []
        self.cpu = 0.0
        self.extra: list[float] = []

    async def run(self, requests: int) -> None:
        cpu = process_cpu(self.pid)
        for _ in range(requests):
            start = time.perf_counter()
            extra = await self.work()
            self.latencies.append(time.perf_counter() - start)
            if isinstance(extra, float):
                self.extra.append(extra)
        self.cpu += process_cpu(self.pid) - cpu

    def line(self) -> str:
        n = len(self.latencies)
        p50, p99 = percentile(self.latencies, 0.5) * 1000, percentile(self.latencies, 0.99) * 1000
        text = f"  {self.label:<44} n={n:<4} p50 {p50:8.2f} ms  p99 {p99:8.2f} ms"
        if self.extra:
            text += f"  (answer alone p50 {percentile(self.extra, 0.5) * 1000:7.2f} ms)"
        return text + f"  cpu {self.cpu * 1000 / max(1, n):6.2f} ms/req"

    @property
    def p50(self) -> float:
        return percentile(self.latencies, 0.5) * 1000


async def run_cases(cases: list[Case], rounds: int, requests: int) -> None:
    for case in cases:  # warm every path once (sessions, imports, route caches)
        await case.work()
    for _ in range(rounds):
        for case in cases:
            await case.run(requests)
    for case in cases:
        print(case.line(), flush=True)


# --------------------------------------------------------------------------- the daemon's answer


def answer_body(messages: int | None, timing: list[float], raw: bool) -> Any:
    """A command body that sends the request and reads the whole answer without decoding it:
    ``messages`` whole messages (a schedd query: one per job plus the summary), or (None) the
    first whole message (a collector query answers in one).  ``raw``: read bytes from the socket
    looking only at packet headers (a clear session); otherwise let cedar's connection cut (and
    decrypt) each message, but decode nothing.  ``timing`` gets the seconds from the send to the
    last byte."""
    from cedar.classad_wire import put_classad
    from cedar.stream.protocol import Receive, ReceiveRaw, Send

    def make(request: Any) -> Any:
        def body(session: Any) -> Any:
            if raw and session.encrypted:
                raise SystemExit("the answer is encrypted: the raw read needs a clear session")
            writer = session.payload_writer()
            put_classad(writer, request)
            start = time.perf_counter()
            yield Send(writer)
            wanted = 1 if messages is None else messages
            ended = 0
            header = b""  # a packet header cut between two reads
            skip = 0  # payload bytes of the current packet still to come
            last = False  # the current packet ends its message
            while ended < wanted:
                if not raw:
                    yield Receive()
                    ended += 1
                    continue
                data = yield ReceiveRaw(1 << 20)
                pos, size = 0, len(data)
                while pos < size and ended < wanted:
                    if skip:
                        taken = min(skip, size - pos)
                        skip -= taken
                        pos += taken
                    else:
                        more = data[pos : pos + 5 - len(header)]
                        header += more
                        pos += len(more)
                        if len(header) < 5:
                            break
                        flag, skip = struct.unpack(">BI", header)
                        header, last = b"", bool(flag)
                    if last and not skip and not header:
                        ended += 1
                        last = False
                if pos != size:
                    raise SystemExit("bytes after the expected end of the answer")
            timing.append(time.perf_counter() - start)
            return ended

        return body

    return make


async def main(args: argparse.Namespace) -> None:
    import httpx

    from cedar.auth.client_config import ClientSecurity
    from cedar.auth.policy import Requirement
    from cedar.auth.session import ClientSessionCache
    from cedar.commands import AsyncSchedd, run_command_async
    from cedar.commands.collector import collector_query
    from cedar.commands.schedd import job_query_command, shared_query_request
    from cedar.service_core import Caller, PoolAccess

    token = pool_token()
    access = PoolAccess(pool_settings())
    caller, anonymous_caller = Caller.from_token(token), Caller.anonymous()
    schedd = await access.schedd(caller, stream=True)
    anonymous: AsyncSchedd = await access.schedd(anonymous_caller, stream=True)
    present = len(await anonymous.query(None, ["ClusterId"]))
    clusters = await fill(schedd, args.jobs - present) if present < args.jobs else []
    jobs = len(await anonymous.query(None, ["ClusterId"]))
    first = (await anonymous.query(None, ["ClusterId"], 1))[0]["ClusterId"]
    print(f"queue: {jobs} jobs; load average {os.getloadavg()}", flush=True)

    kinds = ["socket", "trivial", "fastapi", "asyncio", "socketquery", "query"]
    ports = {kind: args.port + i for i, kind in enumerate(kinds)}
    servers = {kind: start_floor_server(kind, port) for kind, port in ports.items()}
    api = start_server(args.port + len(kinds))
    headers = {"Authorization": f"Bearer {token}"}
    clients = {kind: RawHTTP("127.0.0.1", port, {}) for kind, port in ports.items()}
    api_client = RawHTTP("127.0.0.1", args.port + len(kinds), headers)
    try:
        print(f"HTTP floor: one keep-alive client, {args.rounds} rounds x {args.requests} requests")

        def getter(client: RawHTTP, path: str) -> Callable[[], Awaitable[object]]:
            async def get() -> None:
                status, _ = await client.get(path)
                assert status == 200, status

            return get

        one = f"/api/v1/jobs/{first}.0"
        labels = {
            "socket": "bare Trio socket server (fixed answer)",
            "trivial": "Hypercorn trio + trivial ASGI app (2 KB)",
            "fastapi": "Hypercorn trio + FastAPI route (2 KB)",
            "asyncio": "Hypercorn asyncio + trivial ASGI app",
            "socketquery": "bare Trio socket server + the library query",
            "query": "Hypercorn trio + FastAPI + the library query",
        }
        http_cases = [Case(labels[k], getter(clients[k], one), servers[k].pid) for k in kinds]
        http_cases.append(
            Case("cedar serve GET /api/v1/jobs/{id}", getter(api_client, one), api.pid)
        )

        async def library_one() -> None:
            ads = await schedd.query(f"ClusterId == {first} && ProcId == 0", (), 1)
            assert len(ads) == 1

        http_cases.append(Case("library one-job query (this process)", library_one, None))
        await run_cases(http_cases, args.rounds, args.requests)
        base = http_cases[0].p50
        for case in http_cases[1:4]:
            print(f"    -> {case.label}: +{case.p50 - base:.2f} ms p50 over the bare socket server")
        library_p50 = http_cases[-1].p50
        print(
            f"    -> over the library's one-job query: a bare socket server doing it adds "
            f"{http_cases[4].p50 - library_p50:+.2f} ms p50, the least API (FastAPI + the "
            f"query) {http_cases[5].p50 - library_p50:+.2f} ms, cedar serve "
            f"{http_cases[6].p50 - library_p50:+.2f} ms; Hypercorn trio + trivial app alone "
            f"answers in {http_cases[1].p50:.2f} ms p50"
        )

        print(f"daemon floor: {args.rounds} rounds x {args.v1_requests} requests")
        security = access.security(anonymous_caller)
        clear = ClientSecurity(
            dataclasses.replace(
                access.security_config(anonymous_caller),
                encryption=Requirement.NEVER,
                integrity=Requirement.NEVER,
                crypto_methods=[],
            ),
            ClientSessionCache(8),
        )
        schedd_address = await anonymous.locate()
        collector_address = os.environ["CEDAR_LIVE_COLLECTOR"]
        queries: list[tuple[str, str, int, Any, int | None]] = [
            (
                "/v1/jobs/DEFAULT?projection=clusterid,procid",
                schedd_address,
                job_query_command(False),
                shared_query_request(None, ("ClusterId", "ProcId")),
                jobs + 1,
            ),
            (
                "/v1/jobs/DEFAULT",
                schedd_address,
                job_query_command(False),
                shared_query_request(None, ()),
                jobs + 1,
            ),
            (
                "/v1/status?query=startd",
                collector_address,
                *collector_query("startd", None, None, None, None, None),
                None,
            ),
        ]
        reference = reference_clients()
        collector = access.collector(anonymous_caller)
        library: dict[str, Callable[[], Awaitable[object]]] = {
            queries[0][0]: lambda: anonymous.query(None, ["ClusterId", "ProcId"]),
            queries[1][0]: lambda: anonymous.query(None, []),
            queries[2][0]: lambda: collector.query("startd"),
        }
        floors: list[tuple[str, Case, Case | None]] = []
        async with httpx.AsyncClient(timeout=120) as plain:
            for path, address, command, request, messages in queries:
                cases = []
                for how, use, is_raw, unnegotiated in (
                    ("daemon's answer, raw read (clear session)", clear, True, False),
                    ("  same, unnegotiated start (no session)", clear, True, True),
                    ("  messages cut, not decoded (cedar's session)", security, False, False),
                ):
                    timing: list[float] = []
                    body = answer_body(messages, timing, is_raw)(request)

                    async def read(
                        address: str = address,
                        command: int = command,
                        body: Any = body,
                        timing: list[float] = timing,
                        use: Any = use,
                        unnegotiated: bool = unnegotiated,
                    ) -> float:
                        await run_command_async(
                            address,
                            command,
                            body,
                            security=use,
                            timeout=60,
                            raw=True if unnegotiated else None,
                        )
                        return timing[-1]

                    cases.append(Case(how, read, None))
                print(f" {path}")
                cases.append(Case("  cedar library alone (decoding)", library[path], None))
                if path in reference:
                    cases.append(Case("  htcondor2 alone", reference[path], None))
                restd: Case | None = None
                if args.restd:

                    async def get(path: str = path) -> None:
                        r = await plain.get(args.restd + path)
                        r.raise_for_status()

                    restd = Case("  restd over HTTP", get, args.restd_pid)
                    cases.append(restd)
                await run_cases(cases, args.rounds, args.v1_requests)
                floors.append((path, cases[0], restd))
        for path, floor, restd in floors:
            answer = percentile(floor.extra, 0.5) * 1000
            if restd is None:
                print(
                    f"    -> {path}: the daemon's answer {answer:.2f} ms p50 "
                    f"({floor.p50:.2f} with the handshake)"
                )
                continue
            half = restd.p50 / 2
            verdict = "no client can be 2x faster" if floor.p50 > half else "room left"
            print(
                f"    -> {path}: daemon {answer:.2f} ms (with the handshake {floor.p50:.2f}) vs "
                f"half restd's {half:.2f} ms: {verdict}"
            )
    finally:
        for client in [*clients.values(), api_client]:
            await client.aclose()
        for process in [*servers.values(), api]:
            process.terminate()
            process.wait(10)
        for cluster in clusters:
            await schedd.remove(f"ClusterId == {cluster}", "bench_serve_floor")


def reference_clients() -> dict[str, Callable[[], Awaitable[object]]]:
    """The same queries by ``htcondor2`` (anonymous READ, as restd's callers); empty without
    it."""
    try:
        import htcondor2
    except ImportError:
        return {}
    collector = htcondor2.Collector(os.environ["CEDAR_LIVE_COLLECTOR"])
    schedd = htcondor2.Schedd(collector.locate(htcondor2.DaemonTypes.Schedd))

    def wrap(work: Callable[[], object]) -> Callable[[], Awaitable[object]]:
        async def call() -> None:
            work()

        return call

    return {
        "/v1/jobs/DEFAULT": wrap(lambda: schedd.query()),
        "/v1/jobs/DEFAULT?projection=clusterid,procid": wrap(
            lambda: schedd.query(projection=["ClusterId", "ProcId"])
        ),
        "/v1/status?query=startd": wrap(lambda: collector.query(htcondor2.AdTypes.Startd)),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2000, help="jobs in the queue (filled up)")
    parser.add_argument("--port", type=int, default=18750, help="first of eight ports used")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=100, help="per HTTP case and round")
    parser.add_argument("--v1-requests", type=int, default=4, help="per daemon case and round")
    parser.add_argument("--restd", help="restd's base URL on the same pool")
    parser.add_argument("--restd-pid", type=int, help="restd's process id (for its CPU time)")
    parser.add_argument(
        "--serve", choices=["socket", "trivial", "fastapi", "asyncio", "socketquery", "query"]
    )
    options = parser.parse_args()
    if options.serve:
        run_server(options.serve, options.port)
    else:
        trio.run(main, options)
