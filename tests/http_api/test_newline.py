"""Every JSON answer of cedar serve ends a line (restd's do; curl outputs stay apart)."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from cedar.http_api.newline import NewlineAfterJson


async def _json(request: object) -> Response:
    return JSONResponse({"a": 1})


async def _problem(request: object) -> Response:
    return Response(b'{"title":"x"}', media_type="application/problem+json", status_code=404)


async def _lines(request: object) -> Response:
    async def chunks():  # type: ignore[no-untyped-def]
        yield b'{"a": 1}\n'
        yield b'{"a": 2}\n'

    return StreamingResponse(chunks(), media_type="application/x-ndjson")


async def _streamed_json(request: object) -> Response:
    async def chunks():  # type: ignore[no-untyped-def]
        yield b'{"jobs": ['
        yield b"]}"

    return StreamingResponse(chunks(), media_type="application/json")


async def _text(request: object) -> Response:
    return Response(b"plain", media_type="text/plain")


APP = NewlineAfterJson(
    Starlette(
        routes=[
            Route("/json", _json),
            Route("/problem", _problem),
            Route("/lines", _lines),
            Route("/streamed", _streamed_json),
            Route("/text", _text),
        ]
    )
)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/json", b'{"a":1}\n'),
        ("/problem", b'{"title":"x"}\n'),
        ("/streamed", b'{"jobs": []}\n'),
        ("/lines", b'{"a": 1}\n{"a": 2}\n'),  # JSON Lines end each line already
        ("/text", b"plain"),
    ],
)
def test_json_answers_end_a_line(path: str, body: bytes) -> None:
    with TestClient(APP) as client:
        answer = client.get(path)
    assert answer.content == body
    if "content-length" in answer.headers:
        assert int(answer.headers["content-length"]) == len(body)
