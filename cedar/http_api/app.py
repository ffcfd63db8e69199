"""The ASGI application: ``create_app(settings)``, the process's routes outside ``/api/v1``
(health, metrics, the OpenAPI document and its docs page), error bodies and CORS.

Other front ends mount into the returned app: ``app.mount("/mcp", ...)`` for the MCP server,
``app.mount("/", ...)`` (after everything else) for the web page; ``app.state.services`` is the
shared :class:`~cedar.http_api.context.Services`.
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from cedar.errors import CedarError
from cedar.http_api import models as m
from cedar.http_api.context import Services, services
from cedar.service_core import PoolAccess, ServiceSettings, status_of
from cedar.service_core.metadata import WELL_KNOWN, protected_resource, www_authenticate

API_DESCRIPTION = """\
HTCondor over HTTP, from cedar (pure-Python CEDAR).  Send `Authorization: Bearer <token>` (an
IDTOKEN or a SciToken the pool accepts): it is the only credential used towards the daemons, so
the schedd authorizes you; without one you are an unauthenticated READ client.  ClassAds use
HTCondor's JSON mapping (`"/Expr(...)/"` strings for expressions).  `/v1` is htcondor-restd's
read-only API, unchanged.
"""


def error_response(request: Request, status: int, message: str, **extra: Any) -> JSONResponse:
    """The JSON error body (``{"message"}`` under restd's ``/v1``, else ``{"error","status"}``)."""
    headers = {}
    if status in (411, 413):  # the body is not read: end the connection after answering
        headers["Connection"] = "close"
    retry = extra.get("retry_after")
    if retry is not None:
        headers["Retry-After"] = str(max(1, int(retry + 0.999)))
    if status == 401:  # where to learn how to authenticate (RFC 9728 §5.1)
        sent = request.headers.get("authorization") is not None
        svc: Services | None = getattr(request.app.state, "services", None)
        resource = svc.resource(request) if svc else str(request.base_url).rstrip("/")
        headers["WWW-Authenticate"] = www_authenticate(resource, invalid=sent)
    if request.url.path.startswith("/v1/"):
        return JSONResponse({"message": message}, status_code=status, headers=headers)
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


def create_app(settings: ServiceSettings, access: PoolAccess | None = None) -> FastAPI:
    """The whole HTTP API for one pool."""
    from cedar.http_api.models import package_version

    __version__ = package_version()
    from cedar.http_api import api, evaluated, events, restd

    app = FastAPI(
        title="cedar serve",
        version=__version__,
        description=API_DESCRIPTION,
        openapi_url="/openapi.json",
        docs_url=None,  # FastAPI's pages load from a CDN; ours is in the package
        redoc_url=None,
    )
    app.state.services = Services.create(settings, access)
    app.include_router(events.router)  # before api's /jobs/{job}, which "events" would match
    app.include_router(evaluated.router)
    app.include_router(api.router)
    app.include_router(restd.router)

    @app.exception_handler(CedarError)
    async def cedar_error(request: Request, exc: CedarError) -> JSONResponse:
        status, message = status_of(exc)
        return error_response(
            request, status, message, retry_after=getattr(exc, "retry_after", None)
        )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return error_response(request, 400, f"invalid request: {where}: {first.get('msg', '')}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(request, exc.status_code, str(exc.detail))

    app.add_middleware(Counting)

    if settings.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["*"],
            allow_headers=["Authorization", "Content-Type"],
        )

    @app.get("/healthz", response_model=m.Health, tags=["health"])
    async def healthz() -> m.Health:
        """The process answers (no daemon is asked)."""
        return m.Health(status="ok")

    @app.get(
        "/readyz", response_model=m.Health, responses={503: {"model": m.Health}}, tags=["health"]
    )
    async def readyz(request: Request) -> Response:
        """The pool's collector answers an anonymous query (so requests can be served)."""
        problem = await pool_problem(services(request))
        if problem is not None:
            body = m.Health(status="unavailable", detail=problem)
            return JSONResponse(body.model_dump(), status_code=503)
        return JSONResponse(m.Health(status="ok").model_dump())

    @app.get(WELL_KNOWN, tags=["health"])
    async def resource_metadata(request: Request) -> JSONResponse:
        """OAuth 2.0 Protected Resource Metadata (RFC 9728): the pool's token issuers, the
        bearer method (the ``Authorization`` header) and the scopes, for clients that discover
        how to authenticate."""
        svc = services(request)
        document = protected_resource(svc.resource(request), svc.issuers, "HTCondor (cedar serve)")
        return JSONResponse(document, headers={"Cache-Control": "max-age=300"})

    @app.get("/metrics", response_class=PlainTextResponse, tags=["health"])
    async def metrics(request: Request) -> PlainTextResponse:
        """Prometheus text: requests by route and status, time spent, ads sent, callers, the
        pool's gauges (jobs by status, slots by state) and the round trips to the daemons (by
        daemon type and command, errors by kind: :mod:`cedar.http_api.metrics`)."""
        from cedar.http_api.metrics import DAEMON_CALLS, pool_lines

        svc = services(request)
        pool = await pool_lines(svc.access, svc.gauges, svc.settings.metrics_interval)
        text = prometheus(svc) + "\n".join([*pool, *DAEMON_CALLS.lines()]) + "\n"
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    async def docs() -> HTMLResponse:
        page = resources.files("cedar.http_api").joinpath("static/docs.html").read_text("utf-8")
        return HTMLResponse(page, headers=docs_headers(page))

    from cedar.http_api.iri import mount as mount_iri
    from cedar.http_api.web import mount as mount_web

    mount_iri(app, settings)  # the DOE IRI Facility API v2 (issue 35), before the web page's /

    mount_web(app, settings)  # the web page (issue 24): explicit paths, / and /web/...
    from cedar.http_api.newline import NewlineAfterJson

    app.add_middleware(NewlineAfterJson)  # outermost: every JSON answer ends with a newline
    return app


async def pool_problem(svc: Services) -> str | None:
    """Why the pool's collector does not answer an anonymous query, or None when it does: the
    one readiness rule, for ``/readyz`` and for ``cedar serve``'s word at start-up."""
    from cedar.service_core import Caller

    try:
        collector = svc.access.collector(Caller.anonymous())
        await collector.query("collector", projection=["Name"])
    except CedarError as exc:
        return status_of(exc)[1]
    return None


def docs_headers(page: str) -> dict[str, str]:
    """The web page's security headers for the docs page, whose one inline script and style
    are allowed by their hashes (and nothing else inline: an injected script does not run)."""
    import base64
    import hashlib
    import re

    from cedar.http_api.web.routes import SECURITY_HEADERS

    def hashes(tag: str) -> str:
        found = re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.DOTALL)
        digests = (hashlib.sha256(text.encode("utf-8")).digest() for text in found)
        return " ".join(f"'sha256-{base64.b64encode(d).decode('ascii')}'" for d in digests)

    policy = SECURITY_HEADERS["Content-Security-Policy"]
    policy += f"; script-src 'self' {hashes('script')}; style-src 'self' {hashes('style')}"
    return {**SECURITY_HEADERS, "Content-Security-Policy": policy}


async def warm_up(app: FastAPI) -> None:
    """Answer one ``GET /healthz`` in the process, before any client: Starlette builds its
    middleware stack and FastAPI its route tables on the first request (~0.1 s measured), which
    should not be a client's first answer after a start.  Not counted in the metrics."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/healthz",
        "raw_path": b"/healthz",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"warm-up")],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
        "state": {},
    }
    answer: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.append(message["status"])

    await app(scope, receive, send)
    svc: Services = app.state.services
    svc.requests.clear()
    svc.latency_sum.clear()
    if answer != [200]:
        raise RuntimeError(f"cedar serve: the warm-up request was answered {answer}")


class Counting:
    """Counts requests by route and status, and the time spent answering (for ``/metrics``).

    A plain ASGI middleware: Starlette's ``@app.middleware("http")`` runs the rest of the app
    in another task and relays every message through a memory stream, which cost more per
    request than the rest of a one-job GET's own work.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Read before calling on: a mounted sub-application (the MCP server, the web page) sets
        # scope["app"] to itself in this same dict.
        svc: Services = scope["app"].state.services
        start = time.perf_counter()
        status = [500]
        counted = [False]

        def count() -> None:
            if not counted[0]:
                counted[0] = True
                path = getattr(scope.get("route"), "path", "other")
                svc.requests[(path, status[0])] += 1
                svc.latency_sum[path] = svc.latency_sum.get(path, 0.0) + time.perf_counter() - start

        async def counted_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                count()  # before the last byte leaves: a client's next request sees it counted
            await send(message)

        try:
            await self.app(scope, receive, counted_send)
        finally:
            count()


def _label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus(svc: Services) -> str:
    """The process's counters in the Prometheus text format."""
    lines = [
        "# HELP cedar_serve_requests_total HTTP requests by route and status.",
        "# TYPE cedar_serve_requests_total counter",
    ]
    for (path, status), value in sorted(svc.requests.items()):
        lines.append(
            f'cedar_serve_requests_total{{route="{_label(path)}",status="{status}"}} {value}'
        )
    lines += [
        "# HELP cedar_serve_request_seconds_total Time spent answering, by route.",
        "# TYPE cedar_serve_request_seconds_total counter",
    ]
    for path, seconds in sorted(svc.latency_sum.items()):
        lines.append(f'cedar_serve_request_seconds_total{{route="{_label(path)}"}} {seconds:.6f}')
    lines += [
        "# HELP cedar_serve_ads_sent_total Job ads streamed to clients.",
        "# TYPE cedar_serve_ads_sent_total counter",
        f"cedar_serve_ads_sent_total {svc.ads_sent}",
        "# HELP cedar_serve_callers Tokens with cached sessions now.",
        "# TYPE cedar_serve_callers gauge",
        f"cedar_serve_callers {svc.access.callers()}",
        "# HELP cedar_serve_start_time_seconds When this process started.",
        "# TYPE cedar_serve_start_time_seconds gauge",
        f"cedar_serve_start_time_seconds {svc.started:.0f}",
    ]
    return "\n".join(lines) + "\n"
