"""Every JSON answer of ``cedar serve`` ends with a newline, as restd's do: consecutive
``curl`` outputs at a prompt then stay on lines of their own, and ``/v1`` matches restd byte for
byte at the end too.

One ASGI middleware, outermost, instead of a newline in each of the many places an answer is
built (FastAPI's models, the direct routes, restd's pre-encoded bodies, the IRI API's Problems):
it adds one byte to the last body message of an ``application/json`` (or ``+json``) answer and
one to its ``Content-Length``. Streamed JSON Lines already end with one and are left alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Message, Receive, Send], Awaitable[None]]


def _is_json(content_type: bytes) -> bool:
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (
        media.startswith(b"application/") and media.endswith(b"+json")
    )


class NewlineAfterJson:
    """The middleware (``app.add_middleware(NewlineAfterJson)``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") == "HEAD":
            await self.app(scope, receive, send)
            return
        adding = False

        async def send_with_newline(message: Message) -> None:
            nonlocal adding
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                adding = any(
                    name.lower() == b"content-type" and _is_json(value) for name, value in headers
                ) and message.get("status", 200) not in (204, 304)
                if adding:
                    for i, (name, value) in enumerate(headers):
                        if name.lower() == b"content-length":
                            headers[i] = (name, str(int(value) + 1).encode())
                    message = {**message, "headers": headers}
            elif (
                message["type"] == "http.response.body" and adding and not message.get("more_body")
            ):
                message = {**message, "body": bytes(message.get("body", b"")) + b"\n"}
                adding = False
            await send(message)

        await self.app(scope, receive, send_with_newline)
