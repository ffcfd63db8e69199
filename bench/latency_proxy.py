"""A TCP proxy that adds a fixed delay to every byte in each direction (models a WAN link).

``python bench/latency_proxy.py UPSTREAM_HOST:PORT --delay 0.020`` listens on a free loopback
port, prints it, and forwards each connection to the upstream address; every chunk read is
written out ``delay`` seconds after it arrived (order kept, bandwidth not limited).  Used by
``bench_live.py`` for B3; it runs until killed.
"""

from __future__ import annotations

import argparse
import sys

import trio


async def _pump(source: trio.SocketStream, sink: trio.SocketStream, delay: float) -> None:
    """Copy ``source`` to ``sink``, each chunk ``delay`` seconds late."""
    send, receive = trio.open_memory_channel[tuple[float, bytes]](1000)

    async def reader() -> None:
        async with send:
            try:
                while data := await source.receive_some(65536):
                    await send.send((trio.current_time() + delay, data))
            except trio.BrokenResourceError:
                pass

    async def writer() -> None:
        async with receive:
            try:
                async for due, data in receive:
                    await trio.sleep_until(due)
                    await sink.send_all(data)
                await sink.send_eof()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        nursery.start_soon(writer)


async def _serve(upstream: tuple[str, int], delay: float) -> None:
    async def handle(client: trio.SocketStream) -> None:
        try:
            server = await trio.open_tcp_stream(*upstream)
        except OSError:
            await client.aclose()
            return
        async with client, server, trio.open_nursery() as nursery:
            nursery.start_soon(_pump, client, server, delay)
            nursery.start_soon(_pump, server, client, delay)

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    print(listeners[0].socket.getsockname()[1], flush=True)
    await trio.serve_listeners(handle, listeners)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("upstream", help="HOST:PORT to forward to")
    parser.add_argument("--delay", type=float, default=0.020, help="seconds per direction")
    args = parser.parse_args()
    host, _, port = args.upstream.rpartition(":")
    try:
        trio.run(_serve, (host, int(port)), args.delay)
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
