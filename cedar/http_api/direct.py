"""Routes answered without FastAPI's per-request parameter solving.

FastAPI writes a route's OpenAPI entry from its handler's signature, and on every request reads
that signature again: each parameter solved and validated, the handler run through its
dependency machinery.  For the hottest reads (one job, the collector's status) that was
0.1-0.3 ms of CPU a request, measured: up to a tenth of a one-job GET's server time.  A handler
marked :func:`direct` takes only the request and plain string parameters (path parameters, and
query parameters with a default), which need none of it: its :class:`DirectAPIRoute` (the
routers' ``route_class``, FastAPI's own extension point) hands FastAPI a handler that reads
those strings from the request and calls it.  Everything else about the route (matching, its
order among the others, methods, errors, its OpenAPI entry) stays FastAPI's.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from fastapi import Request
from fastapi.routing import APIRoute
from starlette.responses import Response

__all__ = ["DirectAPIRoute", "direct"]

Handler = TypeVar("Handler", bound=Callable[..., Awaitable[Response]])

_MARK = "_cedar_direct"
#: What a plain string parameter may be annotated with.
_PLAIN = (str, str | None)  # (typing.Optional[str] compares equal to the second)


def direct(handler: Handler) -> Handler:
    """Mark a route handler to be answered directly by its :class:`DirectAPIRoute` (checked
    when the route is made)."""
    setattr(handler, _MARK, True)
    return handler


class DirectAPIRoute(APIRoute):
    """FastAPI's route, whose handler for a :func:`direct` endpoint reads the plain string
    parameters itself (everything else about the route is FastAPI's)."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        if getattr(self.endpoint, _MARK, False):
            _plain_parameters(self)  # refused when the app is made, not at a first request

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        if not getattr(self.endpoint, _MARK, False):
            return super().get_route_handler()
        read = _plain_parameters(self)
        handler = self.endpoint

        async def answer(request: Request) -> Response:
            response: Response = await handler(request, **read(request))
            return response

        return answer


def _plain_parameters(route: APIRoute) -> Callable[[Request], dict[str, str | None]]:
    """The reader of ``route``'s handler's parameters from a request; ``TypeError`` when the
    handler is not one that may be answered directly (a FastAPI feature would be lost)."""
    handler = route.endpoint
    where = f"{route.path}: {getattr(handler, '__qualname__', handler)}"
    if not inspect.iscoroutinefunction(handler):
        raise TypeError(f"{where}: a direct handler is a coroutine function")
    hints = typing.get_type_hints(handler, include_extras=True)
    returned = hints.get("return")
    if not (isinstance(returned, type) and issubclass(returned, Response)):
        raise TypeError(f"{where}: a direct handler returns a Response (nothing to serialize)")
    path_names = set(route.param_convertors)
    parameters = list(inspect.signature(handler).parameters.values())
    if not parameters or hints.get(parameters[0].name) is not Request:
        raise TypeError(f"{where}: a direct handler takes the request first")
    from_path: list[str] = []
    from_query: list[tuple[str, Any]] = []
    for parameter in parameters[1:]:
        name = parameter.name
        if parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            raise TypeError(f"{where}: {name}: only plain parameters")
        if hints.get(name) not in _PLAIN:
            raise TypeError(f"{where}: {name}: only str or str | None, with no metadata")
        if name in path_names:
            from_path.append(name)
        elif parameter.default is not None and not isinstance(parameter.default, str):
            # none (required) or FastAPI's Query(...)/Depends(...) as the default
            raise TypeError(f"{where}: {name}: a query parameter's default is a str or None")
        else:
            from_query.append((name, parameter.default))
    if set(from_path) != path_names:
        raise TypeError(f"{where}: every path parameter is the handler's")

    def read(request: Request) -> dict[str, str | None]:
        values: dict[str, str | None] = {name: request.path_params[name] for name in from_path}
        query = request.query_params
        for name, default in from_query:
            values[name] = query.get(name, default)
        return values

    return read
