"""Handlers answered directly (``cedar.http_api.direct``) get the very parameters FastAPI would
solve for them, are documented alike, and only handlers that lose nothing by it can be."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

import httpx
import pytest
import trio
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import Response

from cedar.http_api import api as api_routes
from cedar.http_api import restd as restd_routes
from cedar.http_api.direct import DirectAPIRoute, direct

#: The marked handlers of cedar serve, with their routes.
MARKED = {
    route.endpoint: route
    for router in (api_routes.router, restd_routes.router)
    for route in router.routes
    if isinstance(route, DirectAPIRoute) and "answer" in route.get_route_handler().__qualname__
}


def test_the_hot_reads_are_the_handlers_answered_directly() -> None:
    assert set(MARKED) == {api_routes.get_job, restd_routes.status, restd_routes.status_named}
    assert {route.path for route in MARKED.values()} == {
        "/api/v1/jobs/{job}",
        "/v1/status",
        "/v1/status/{name}",
    }
    # every other route of the two routers keeps FastAPI's own handler
    others = [
        route
        for router in (api_routes.router, restd_routes.router)
        for route in router.routes
        if isinstance(route, DirectAPIRoute) and route.endpoint not in MARKED
    ]
    assert others and not any("answer" in r.get_route_handler().__qualname__ for r in others)


def _recorder(handler: Callable[..., Any], seen: list[dict[str, Any]]) -> Callable[..., Any]:
    """A handler with ``handler``'s signature (annotations resolved) that records its
    parameters but the request."""
    hints = typing.get_type_hints(handler, include_extras=True)
    signature = inspect.signature(handler)
    parameters = [p.replace(annotation=hints[p.name]) for p in signature.parameters.values()]

    async def record(request: Request, **values: Any) -> Response:
        seen.append(values)
        return Response("ok")

    record.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=Response
    )
    record.__annotations__ = {**{p.name: p.annotation for p in parameters}, "return": Response}
    return record


def _two_apps(route: DirectAPIRoute, seen: list[dict[str, Any]]) -> tuple[FastAPI, FastAPI]:
    """The handler's recorder on its path, answered directly and by FastAPI."""
    apps = []
    for route_class in (DirectAPIRoute, APIRouter().route_class):
        router = APIRouter(route_class=route_class)
        router.get(route.path)(direct(_recorder(route.endpoint, seen)))
        app = FastAPI()
        app.include_router(router)
        apps.append(app)
    return apps[0], apps[1]


QUERIES = [
    "",
    "projection=JobStatus,Owner&query=schedd&constraint=true",
    "projection=&query=&constraint=",
    "projection=a&projection=b&query=startd&query=schedd",
    "projection=%20a%2Cb%20&constraint=Name%20%3D%3D%20%22x%22",
    "constraint=a+b&query=%C3%A9",
    "unknown=1&Projection=upper",
    "projection",
    "query=%FF",
]


@pytest.mark.parametrize("endpoint", sorted(MARKED, key=lambda e: e.__name__))
def test_direct_parameters_are_the_ones_fastapi_solves(endpoint: Callable[..., Any]) -> None:
    route = MARKED[endpoint]
    seen: list[dict[str, Any]] = []
    directly, by_fastapi = _two_apps(route, seen)
    path = route.path.replace("{job}", "12.3").replace("{name}", "a%20b%C3%A9")

    async def ask(app: FastAPI) -> list[dict[str, Any]]:
        seen.clear()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            for query in QUERIES:
                answer = await http.get(f"{path}?{query}" if query else path)
                assert answer.status_code == 200, answer.text
        return list(seen)

    direct_seen, fastapi_seen = trio.run(ask, directly), trio.run(ask, by_fastapi)
    assert direct_seen == fastapi_seen
    assert len(direct_seen) == len(QUERIES)
    # and the documents of the two are one
    assert directly.openapi() == by_fastapi.openapi()


async def _plain(request: Request, name: str, flag: str = "x") -> Response:
    return Response(f"{name}:{flag}")


async def _optional(request: Request, flag: str | None = None) -> Response:
    return Response(str(flag))


async def _number(request: Request, count: int) -> Response:
    return Response(str(count))


async def _annotated(request: Request, name: Annotated[str, Query(max_length=3)] = "x") -> Response:
    return Response(name)


async def _required(request: Request, name: str) -> Response:
    return Response(name)


async def _depends(request: Request, name: str = Depends(lambda: "x")) -> Response:  # noqa: B008
    return Response(name)


async def _serialized(request: Request) -> dict[str, str]:
    return {}


async def _no_request(name: str) -> Response:
    return Response(name)


def _sync(request: Request) -> Response:
    return Response("")


@pytest.mark.parametrize(
    ("path", "handler", "refused"),
    [
        ("/p/{name}", _plain, None),
        ("/p", _optional, None),
        ("/p/{count}", _number, "str or str | None"),
        ("/p", _annotated, "str or str | None"),
        ("/p", _required, "default"),
        ("/p", _depends, "default"),
        ("/p", _serialized, "returns a Response"),
        ("/p/{name}", _no_request, "request first"),
        ("/p", _sync, "coroutine"),
    ],
)
def test_only_handlers_that_lose_nothing_are_answered_directly(
    path: str, handler: Any, refused: str | None
) -> None:
    router = APIRouter(route_class=DirectAPIRoute)
    if refused is not None:  # refused as the route is made, not at its first request
        with pytest.raises(TypeError, match=refused):
            router.get(path)(direct(handler))
        return
    router.get(path)(direct(handler))
    app = FastAPI()
    app.include_router(router)

    async def run() -> list[str]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            url = path.replace("{name}", "a")
            return [(await http.get(f"{url}{q}")).text for q in ("", "?flag=y", "?flag=")]

    expected = {"/p/{name}": ["a:x", "a:y", "a:"], "/p": ["None", "y", ""]}[path]
    assert trio.run(run) == expected
