"""The IRI sub-application: every operation of the official document routed to its handler,
its inputs checked against the document first, every failure a Problem body.

It is a plain ASGI application (not a FastAPI one): its OpenAPI document is the official file
as it is, not one generated from handlers, and its routes are that document's paths.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from urllib.parse import unquote

import trio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from cedar.http_api.context import caller_of
from cedar.http_api.iri import account, compute, facility, filesystem, status, tasks
from cedar.http_api.iri.call import HANDLERS, Call, IriState
from cedar.http_api.iri.problem import Problem, from_exception, problem_response
from cedar.http_api.iri.spec import (
    Operation,
    check,
    coerce,
    document_bytes,
    is_array,
    operations,
)

#: The handler modules (imported for their ``@handler`` registrations).
MODULES = (account, compute, facility, filesystem, status, tasks)


class IriApp:
    """``{prefix}/openapi.json`` and ``{prefix}/api/v2/...``, in front of the rest of the app.

    A middleware rather than a Starlette ``Mount``: a mount's path pattern does not match a
    path with a line break (``%0A`` in an id), which then fell through to the main app's 404,
    not a Problem."""

    def __init__(self, app: Any, state: IriState) -> None:
        self.app = app
        self.state = state
        self.prefix = state.settings.prefix.rstrip("/")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(self.prefix + "/"):
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        root = scope.get("root_path", "") + self.prefix
        path = path[len(self.prefix) :]
        try:
            response = await self.dispatch(request, path or "/", root)
        except Exception as exc:  # every failure is a Problem
            response = from_exception(exc, scope["path"])
        await response(scope, receive, send)

    async def dispatch(self, request: Request, path: str, root: str) -> Response:
        if path == "/openapi.json" and request.method in ("GET", "HEAD"):
            return Response(document_bytes(), media_type="application/json")
        matched = [(op, m) for op in operations() if (m := op.pattern.match(path))]
        if not matched:
            raise Problem(404, "no such path in the IRI API")
        chosen = next(((op, m) for op, m in matched if op.method == request.method), None)
        if chosen is None:
            allowed = ", ".join(sorted({op.method for op, _ in matched}))
            raise Problem(405, f"use {allowed}", headers={"Allow": allowed})
        op, match = chosen
        call = await self._call(
            request, op, {k: unquote(v) for k, v in match.groupdict().items()}, root
        )
        function, kind = HANDLERS[op.operation_id]
        if kind is not None:
            await facility.resource(call, call.path["resource_id"], kind)
        if op.body is not None and op.body["media"] == "application/json":
            call.body = await self._json_body(request, op)
        result = await function(call)
        if isinstance(result, Response):
            return result
        return JSONResponse(result, status_code=op.status)

    async def _call(self, request: Request, op: Operation, path: dict[str, str], root: str) -> Call:
        caller = await caller_of(request)
        if op.secured and not caller.authenticated:
            raise Problem(401, "this needs 'Authorization: Bearer <IDTOKEN or SciToken>'")
        query: dict[str, Any] = {}
        for parameter in op.parameters:
            name, where, schema = parameter["name"], parameter["in"], parameter.get("schema", {})
            if where == "path":
                value: Any = path.get(name, "")
                if "\0" in value or len(value) > 1024:
                    raise Problem(404, f"no such {name}")
            elif where == "query":
                texts = request.query_params.getlist(name)
                if not texts:
                    if parameter.get("required"):
                        raise Problem(422, f"query parameter {name} is required")
                    continue
                value = coerce(schema, texts if is_array(schema) else texts[-1])
                query[name] = value
            elif where == "header":
                value = request.headers.get(name)
                if value is None:
                    continue
                query[name] = value
            else:
                continue
            check(schema, value, name)
        base = f"{request.url.scheme}://{request.url.netloc}{root}"
        return Call(request, op, self.state, path, query, caller, base=base)

    async def _json_body(self, request: Request, op: Operation) -> Any:
        limit = self.state.settings.max_body
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > limit:
                raise Problem(413, f"request body over {limit} bytes")
        assert op.body is not None
        if not data.strip():
            if op.body_required:
                raise Problem(422, "a JSON request body is required")
            return None
        try:
            body = json.loads(data)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            raise Problem(422, "the request body is not JSON") from None
        check(op.body["schema"], body, "body")
        return body


def check_document() -> None:
    """Every operation of the document has a handler (a test and the start-up call it)."""
    missing = [op.operation_id for op in operations() if op.operation_id not in HANDLERS]
    if missing:
        raise RuntimeError(f"IRI operations without a handler: {missing}")


async def watch(state: IriState, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Observe the pool every ``poll`` seconds, so outages are recorded without requests."""
    from cedar.http_api.iri.resources import observe

    task_status.started()
    while True:
        with contextlib.suppress(Exception):  # the next round tries again
            await observe(state, force=True)
        await trio.sleep(max(1.0, state.settings.poll))


__all__ = ["IriApp", "check_document", "problem_response", "watch"]
