"""Streamed answers whose next chunk is made while the previous one is being sent.

A listing's server work (decoding the schedd's ads, writing JSON) is CPU; sending a chunk may
wait for the client or the kernel.  With one task the two alternate, and every wait on the
client is time the schedd's stream is not read.  Here a producer task turns the body into
chunks while the sender sends, with at most ``AHEAD`` chunks between them: memory stays bounded
by a few chunks, and a slow reader still stalls the producer (and so the schedd's stream).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import trio
from starlette.responses import StreamingResponse
from starlette.types import Send

#: Chunks made ahead of the one being sent.
AHEAD = 2


class PipelinedResponse(StreamingResponse):
    """A :class:`StreamingResponse` whose body is produced in its own task, ``AHEAD`` chunks
    ahead of the sender (the body must yield ``bytes``)."""

    async def stream_response(self, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        chunks_in, chunks_out = trio.open_memory_channel[bytes](AHEAD)
        # Errors are carried out of the nursery by hand so that they reach Starlette and
        # Hypercorn as themselves, not wrapped in an exception group; the sender's first (when
        # the client is gone, the producer's own error is only a consequence).
        made_failure: list[Exception] = []
        send_failure: list[Exception] = []

        async def produce() -> None:
            body = self.body_iterator
            with chunks_in:
                async with contextlib.AsyncExitStack() as stack:
                    if isinstance(body, AsyncIterator) and hasattr(body, "aclose"):
                        stack.push_async_callback(body.aclose)  # closed here, in its own task
                    try:
                        async for chunk in body:
                            if isinstance(chunk, str):
                                chunk = chunk.encode(self.charset)
                            await chunks_in.send(bytes(chunk))
                    except Exception as exc:
                        made_failure.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(produce)
            try:
                with chunks_out:
                    async for chunk in chunks_out:
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except Exception as exc:  # the client went away: stop the producer
                send_failure.append(exc)
                nursery.cancel_scope.cancel()
        for failure in send_failure + made_failure:
            raise failure
        await send({"type": "http.response.body", "body": b"", "more_body": False})
