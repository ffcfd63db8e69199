"""Where one ``GET /v1/status?query=startd`` spends its time inside ``cedar serve``.

Runs ``cedar serve`` (this checkout, or ``--checkout DIR``) in a child process with
``perf_counter_ns`` probes around each stage of a request: the request's bytes read by Hypercorn,
the ASGI app entered, each FastAPI dependency, the route, ``svc.projection`` / ``svc.constraint``
/ ``svc.access.collector``, the connect (name resolution included), the query sent, the first
answer bytes, the last ad, the entries written, the response sent.  Then it makes ``--requests``
anonymous requests (after a warm-up) and prints the median time from the bytes' arrival to each
probe, and between consecutive probes.  Probes cost ~1 us each; the stages are what matters.

    python bench/trace_status.py [--requests 200] [--checkout /work/main] [--path /v1/status?...]

Needs the live pool's environment (``CEDAR_LIVE_CONDOR_CONFIG``, as ``bench_serve.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

MARKS: list[tuple[str, int]] = []
#: Collections during the current request, and their nanoseconds.
GC = [0, 0]


def mark(label: str) -> None:
    MARKS.append((label, time.perf_counter_ns()))


def _wrap_async(owner: Any, name: str, label: str) -> None:
    original = getattr(owner, name)

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        mark(label + " >")
        try:
            return await original(*args, **kwargs)
        finally:
            mark(label + " <")

    setattr(owner, name, wrapped)


def _wrap_sync(owner: Any, name: str, label: str) -> None:
    original = getattr(owner, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        mark(label + " >")
        try:
            return original(*args, **kwargs)
        finally:
            mark(label + " <")

    setattr(owner, name, wrapped)


def _wrap_first(owner: Any, name: str, label: str) -> None:
    """An async method of which only the first call after the route started is marked."""
    original = getattr(owner, name)

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        seen = any(m[0] == label + " <" for m in MARKS)
        if not seen:
            mark(label + " >")
        result = await original(*args, **kwargs)
        if not seen:
            mark(label + " <")
        return result

    setattr(owner, name, wrapped)


def install(app: Any) -> Any:
    """The probes; returns the app wrapped by the outermost one."""
    import trio
    from hypercorn.protocol.h11 import H11Protocol

    import cedar.http_api.restd as restd
    from cedar.http_api.context import Services
    from cedar.service_core.access import PoolAccess
    from cedar.stream import drivers

    original_handle = H11Protocol.handle

    async def handle(self: Any, event: Any) -> None:
        if type(event).__name__ == "RawData" and event.data:
            MARKS.clear()
            GC[:] = [0, 0]
            mark("bytes read")
        await original_handle(self, event)

    H11Protocol.handle = handle  # type: ignore[method-assign]
    from hypercorn.trio.tcp_server import TCPServer

    original_protocol_send = TCPServer.protocol_send

    async def protocol_send(self: Any, event: Any) -> None:
        kind = type(event).__name__
        if kind == "RawData":
            kind = f"{kind} {'head' if event.data.startswith(b'HTTP/') else len(event.data)}"
        mark(f"hypercorn {kind} >")
        await original_protocol_send(self, event)
        mark(f"hypercorn {kind} <")

    TCPServer.protocol_send = protocol_send  # type: ignore[method-assign]
    _wrap_sync(Services, "projection", "svc.projection")
    _wrap_sync(Services, "constraint", "svc.constraint")
    _wrap_sync(PoolAccess, "collector", "access.collector")
    _wrap_async(drivers.TrioChannel, "connect", "TrioChannel.connect")
    _wrap_async(trio, "open_tcp_stream", "trio.open_tcp_stream")
    _wrap_async(trio.socket, "getaddrinfo", "getaddrinfo")
    if hasattr(drivers, "_open_trio_stream"):
        _wrap_async(drivers, "_open_trio_stream", "connect(ip)")
    _wrap_first(drivers.TrioChannel, "_write", "first send")
    _wrap_first(drivers.TrioChannel, "_receive", "first receive")
    _wrap_async(restd, "_status_ads", "query+decode")
    original_entry: Callable[..., bytes] = restd.status_entry_bytes

    def entry(*args: Any) -> bytes:
        if not any(m[0] == "entries >" for m in MARKS):
            mark("entries >")
        return original_entry(*args)

    restd.status_entry_bytes = entry
    import gc

    import fastapi.routing

    _wrap_async(fastapi.routing, "solve_dependencies", "FastAPI dependencies")
    _wrap_async(fastapi.routing, "run_endpoint_function", "route")
    gc_started = [0]

    def gc_probe(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter_ns()
        else:
            GC[0] += 1
            GC[1] += time.perf_counter_ns() - gc_started[0]

    gc.callbacks.append(gc_probe)

    async def outer(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        mark("app >")

        async def sent(message: Any) -> None:
            if message["type"] == "http.response.start":
                mark("response start")
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                mark("response sent")
                if scope["path"] == "/v1/status":
                    start = MARKS[0][1] if MARKS else 0
                    print(
                        json.dumps(
                            {
                                "marks": [(lab, (t - start) / 1000) for lab, t in MARKS],
                                "gc": [GC[0], GC[1] / 1000],
                            }
                        ),
                        file=sys.stderr,
                        flush=True,
                    )

        await app(scope, receive, sent)

    return outer


def serve(port: int, profile: str | None) -> None:
    """The child: ``cedar serve`` with the probes in."""
    import trio
    from bench_serve import pool_settings
    from hypercorn.trio import serve as hypercorn_serve

    from cedar.http_api.app import create_app
    from cedar.http_api.server import hypercorn_config

    settings = dataclasses.replace(pool_settings(), port=port, rate=0.0)
    app = install(create_app(settings))
    if not profile:
        trio.run(hypercorn_serve, app, hypercorn_config(settings))
        return
    import cProfile
    import signal

    profiler = cProfile.Profile()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    profiler.enable()
    try:
        trio.run(hypercorn_serve, app, hypercorn_config(settings))
    except KeyboardInterrupt:
        pass
    finally:
        profiler.disable()
        profiler.dump_stats(profile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--port", type=int, default=18690)
    parser.add_argument("--checkout", help="run the server from this checkout (e.g. /work/main)")
    parser.add_argument("--path", default="/v1/status?query=startd")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the server into FILE")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.port, args.profile)
        return
    import httpx

    env = dict(os.environ)
    if args.checkout:
        env["PYTHONPATH"] = args.checkout + os.pathsep + env.get("PYTHONPATH", "")
    log = open(f"/tmp/trace_status.{os.getpid()}.log", "w+")  # noqa: SIM115
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve", "--port", str(args.port)]
        + (["--profile", os.path.abspath(args.profile)] if args.profile else []),
        env=env,
        stderr=log,
        cwd=args.checkout or None,
    )
    try:
        url = f"http://127.0.0.1:{args.port}"
        for _ in range(100):
            try:
                httpx.get(url + "/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        with httpx.Client(base_url=url) as client:
            for _ in range(10):
                client.get(args.path).raise_for_status()
            walls = []
            log.seek(0, 2)
            start_at = log.tell()
            for _ in range(args.requests):
                t = time.perf_counter()
                client.get(args.path).raise_for_status()
                walls.append(time.perf_counter() - t)
                time.sleep(0.005)
        time.sleep(0.2)
    finally:
        child.terminate()
        child.wait()
    log.seek(start_at)
    lines = [json.loads(line) for line in log if line.startswith("{")]
    runs = [line["marks"] for line in lines]
    collections = sum(line["gc"][0] for line in lines)
    gc_us = sum(line["gc"][1] for line in lines)
    print(f"{len(runs)} requests; client wall p50 {statistics.median(walls) * 1000:.2f} ms")
    print(f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"garbage collections: {collections} ({gc_us / max(1, len(runs)):.0f} us per request)")
    labels: list[str] = []
    for run in runs:
        for label, _ in run:
            if label not in labels:
                labels.append(label)
    at: dict[str, float] = {}
    for label in labels:
        firsts = [next(t for la, t in run if la == label) for run in runs if label in dict(run)]
        at[label] = statistics.median(firsts)
    previous = 0.0
    print(f"  {'probe':<28} {'since bytes (us)':>16} {'step (us)':>10}")
    for label in sorted(labels, key=lambda lab: at[lab]):
        print(f"  {label:<28} {at[label]:16.0f} {at[label] - previous:10.0f}")
        previous = at[label]


if __name__ == "__main__":
    main()
