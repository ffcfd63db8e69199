"""The web page's routes: the pages (HTML from the package), sign-in and sign-out, a preview of
a submission, the static files, and ``/web/api/...``, which forwards to ``/api/v1/...`` with the
signed-in caller's token as the ``Authorization`` header.

Forwarding keeps one implementation of every job operation (the API's): the page's scripts call
``/web/api/...`` with the session cookie (which they cannot read) and a CSRF header; this module
checks both and hands the request, body and all, to the same ASGI app under ``/api/v1``.
"""

from __future__ import annotations

import html
import io
import json
import re
import tempfile
from dataclasses import replace
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any
from urllib.parse import quote, urlsplit

import trio
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from cedar.errors import CedarError
from cedar.http_api.context import services
from cedar.http_api.sandbox import write_file
from cedar.http_api.web.session import (
    COOKIE,
    Session,
    WebSettings,
    cookie_header,
    csrf_ok,
    csrf_token,
    seal,
    unseal,
)
from cedar.service_core import Caller, ServiceSettings, status_of
from cedar.submit_language import SubmitSettings

#: Pages: path -> (file in ``pages/``, title, nav key).
PAGES = {
    "/": ("batches.html", "My batches", "batches"),
    "/submit": ("submit.html", "Submit a batch", "submit"),
    "/archive": ("archive.html", "Archive", "archive"),
    "/pool": ("pool.html", "The pool", "pool"),
}
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
_STATIC_NAME = re.compile(r"[a-z0-9_-]+\.(js|css|png)\Z")
_JOB = re.compile(r"[0-9]{1,9}\.[0-9]{1,9}\Z")
#: Headers of a page: no framing, no referrer, nothing loaded from elsewhere.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
#: Request headers never forwarded to the API (the cookie and the page's own).
_DROPPED = {b"cookie", b"authorization", b"x-csrf-token", b"content-length"}
_SCOPE_KEYS = ("type", "asgi", "http_version", "scheme", "server", "client", "root_path")


def _read(name: str) -> str:
    return resources.files("cedar.http_api.web").joinpath(name).read_text("utf-8")


def web_settings(request: Request) -> WebSettings:
    found: WebSettings = request.app.state.web
    return found


def session_of(request: Request) -> Session | None:
    """The request's signed-in caller: the API's trusted proxy header when configured
    (``CEDAR_SERVE_PROXY_HEADER``: a token minted for the user the proxy names, from the proxy's
    addresses only), else the sealed cookie."""
    svc = services(request)
    header = svc.settings.proxy_header
    if svc.minter is not None and header:
        user = request.headers.get(header)
        peer = request.client.host if request.client else None
        if user is not None and peer in svc.settings.proxy_addresses:
            try:
                caller = svc.minter.caller(user)
            except CedarError:
                return None
            return Session(caller, f"{user.strip()}@{svc.minter.issuer}", 0, proxied=True)
    return unseal(web_settings(request), request.cookies.get(COOKIE))


def same_origin(request: Request) -> bool:
    """The browser says the request comes from our own pages (Origin, else Sec-Fetch-Site)."""
    origin = request.headers.get("origin")
    if origin:
        return urlsplit(origin).netloc == request.headers.get("host", "")
    return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")


def _page(
    request: Request, name: str, title: str, nav: str, session: Session | None, **values: str
) -> HTMLResponse:
    web = web_settings(request)
    links = []
    for path, (_, label, key) in PAGES.items():
        current = ' aria-current="page"' if key == nav else ""
        links.append(f'<li><a href="{path}"{current}>{html.escape(label)}</a></li>')
    body = Template(_read(f"pages/{name}")).safe_substitute(
        {k: html.escape(v) for k, v in values.items()}
    )
    csrf = csrf_token(web, session.csrf_subject) if session else ""
    page = Template(_read("pages/layout.html")).safe_substitute(
        title=html.escape(title),
        nav="\n".join(links) if session else "",
        user=html.escape(session.user) if session else "",
        csrf=csrf,
        signout="" if session is None or session.proxied else _SIGNOUT.format(csrf=csrf),
        body=body,
        page=nav,
    )
    return HTMLResponse(page, headers=SECURITY_HEADERS)


_SIGNOUT = (
    '<form method="post" action="/signout" class="inline">'
    '<input type="hidden" name="csrf" value="{csrf}">'
    '<button type="submit">Sign out</button></form>'
)


def _signin_token(web: WebSettings) -> str:
    """The sign-in form's CSRF token (there is no session yet)."""
    return csrf_token(web, Caller(key="signin"))


async def _signed_in_user(request: Request, session: Session) -> str:
    if session.user:
        return session.user
    identity = await services(request).identity(session.caller)
    return identity.user or ""


def mount(app: FastAPI, settings: ServiceSettings) -> None:
    """Add the web page's routes to ``app`` (explicit paths, so later mounts still work)."""
    app.state.web = WebSettings.from_config(settings.config, tls=bool(settings.tls_cert))

    async def page(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        name, title, nav = PAGES[request.url.path]
        user = await _signed_in_user(request, session)
        return _page(request, name, title, nav, replace(session, user=user))

    for path in PAGES:
        app.add_api_route(path, page, methods=["GET"], include_in_schema=False)

    @app.get("/job/{job}", include_in_schema=False)
    async def job_page(request: Request, job: str) -> Response:
        session = session_of(request)
        if session is None:
            return RedirectResponse("/signin", status_code=303)
        if not _JOB.match(job):
            return HTMLResponse("not a job id", status_code=404)
        user = await _signed_in_user(request, session)
        return _page(
            request,
            "job.html",
            f"Job {job}",
            "job",
            replace(session, user=user),
            job=job,
        )

    @app.get("/signin", include_in_schema=False)
    async def signin_form(request: Request) -> Response:
        return _signin(request, "")

    @app.post("/signin", include_in_schema=False)
    async def signin(request: Request) -> Response:
        web = web_settings(request)
        peer = request.client.host if request.client else "-"
        services(request).limiter.check(f"signin:{peer}")  # each attempt costs a handshake
        if not same_origin(request):
            return _signin(request, "This sign-in did not come from this site.", 403)
        async with request.form(max_files=0, max_fields=4, max_part_size=20000) as form:
            token = str(form.get("token") or "").strip()
            given = str(form.get("csrf") or "")
        if not csrf_ok(web, Caller(key="signin"), given):
            return _signin(request, "The form expired; please try again.", 403)
        try:
            caller = Caller.from_token(token)
            identity = await services(request).identity(caller)
        except CedarError as exc:
            return _signin(request, status_of(exc)[1], 401)
        if not identity.authenticated or not identity.user:
            return _signin(request, "The pool did not authenticate this token.", 401)
        answer = RedirectResponse("/", status_code=303)
        answer.headers["Set-Cookie"] = cookie_header(web, seal(web, token, identity.user))
        answer.headers["Cache-Control"] = "no-store"
        return answer

    @app.post("/signout", include_in_schema=False)
    async def signout(request: Request) -> Response:
        web = web_settings(request)
        session = session_of(request)
        answer = RedirectResponse("/signin", status_code=303)
        if session is not None:
            async with request.form(max_files=0, max_fields=4) as form:
                given = str(form.get("csrf") or "")
            if not same_origin(request) or not csrf_ok(web, session.csrf_subject, given):
                return JSONResponse({"error": "CSRF check failed", "status": 403}, 403)
            if session.sid:  # the cookie stops working everywhere, not only in this browser
                web.revocations.revoke(session.sid, session.expires)
        answer.headers["Set-Cookie"] = cookie_header(web, "", max_age=0)
        return answer

    @app.get("/web/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        if not _STATIC_NAME.match(name):
            return Response("not found", status_code=404)
        try:
            data = (
                resources.files("cedar.http_api.web").joinpath("static").joinpath(name).read_bytes()
            )
        except (FileNotFoundError, IsADirectoryError):
            return Response("not found", status_code=404)
        media = STATIC_TYPES["." + name.rsplit(".", 1)[1]]
        return Response(data, media_type=media, headers={"Cache-Control": "no-cache"})

    @app.get("/web/pool", include_in_schema=False)
    async def pool(request: Request) -> Response:
        """The pool's gauges and their recent readings (:mod:`cedar.http_api.metrics`), read at
        most once per ``CEDAR_SERVE_METRICS_INTERVAL`` whoever asks."""
        from cedar.http_api.metrics import refresh

        session = session_of(request)
        refused = _refuse(request, session)
        if refused is not None:
            return refused
        svc = services(request)
        await refresh(svc.access, svc.gauges, svc.settings.metrics_interval)
        body = dict(svc.gauges.to_json(), interval=svc.settings.metrics_interval)
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    @app.post("/web/preview", include_in_schema=False)
    async def preview(request: Request) -> Response:
        """The ads a description would make, without submitting (errors as text)."""
        session = session_of(request)
        refused = _refuse(request, session)
        if refused is not None:
            return refused
        body = bytearray()
        async for chunk in request.stream():  # counted as it arrives: never held past the limit
            body += chunk
            if len(body) > 1 << 20:
                return JSONResponse(
                    {"error": "description too large", "status": 413},
                    413,
                    headers={"Connection": "close"},
                )
        try:
            data = json.loads(body)
            text = str(data["submit_file"])
            spool = bool(data.get("spool", False))
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "expected {submit_file, spool}", "status": 400}, 400)
        svc = services(request)
        assert session is not None
        svc.limiter.check(session.caller.key)
        settings = svc.access.submit_settings
        # (a description may ask for up to MAX_PROCS jobs: built off the event loop)
        answer = await trio.to_thread.run_sync(build_preview, settings, text, spool)
        return JSONResponse(answer)

    async def forward(request: Request) -> Response:
        session = session_of(request)
        refused = _refuse(request, session)
        if refused is not None:
            return refused
        assert session is not None and session.caller.token is not None
        rest = request.url.path[len("/web/api/") :]
        if any(part in (".", "..") for part in rest.split("/")):
            return JSONResponse({"error": "not found", "status": 404}, 404)
        path = "/api/v1/" + rest
        scope = {k: request.scope[k] for k in _SCOPE_KEYS if k in request.scope}
        headers = [(k, v) for k, v in request.scope["headers"] if k.lower() not in _DROPPED]
        length = request.headers.get("content-length")
        if length is not None:
            headers.append((b"content-length", length.encode("latin-1")))
        headers.append((b"authorization", b"Bearer " + session.caller.token.encode("ascii")))
        scope.update(
            method=request.method,
            path=path,
            raw_path=quote(path).encode("ascii"),
            query_string=request.scope.get("query_string", b""),
            headers=headers,
        )
        return _Forward(request.app, scope)

    app.add_api_route(
        "/web/api/{rest:path}",
        forward,
        methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        include_in_schema=False,
    )


def _refuse(request: Request, session: Session | None) -> Response | None:
    """401 without a session; 403 for a state-changing request without the CSRF header."""
    if session is None:
        return JSONResponse({"error": "not signed in", "status": 401}, 401)
    if request.method not in ("GET", "HEAD"):
        given = request.headers.get("x-csrf-token")
        if not same_origin(request) or not csrf_ok(
            web_settings(request), session.csrf_subject, given
        ):
            return JSONResponse({"error": "CSRF check failed", "status": 403}, 403)
    return None


class _Forward(Response):
    """A response that is the app's own answer to the rewritten request (streamed through)."""

    def __init__(self, app: Any, scope: dict[str, Any]) -> None:
        super().__init__()
        self._app = app
        self._scope = scope

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self._app(self._scope, receive, send)


def _signin(request: Request, error: str, status: int = 200) -> HTMLResponse:
    web = web_settings(request)
    message = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    answer = _page(
        request, "signin.html", "Sign in", "signin", None, csrf=_signin_token(web), error=""
    )
    text = bytes(answer.body).decode().replace("<!--error-->", message)
    return HTMLResponse(text, status_code=status, headers=SECURITY_HEADERS)


def build_preview(settings: SubmitSettings, text: str, spool: bool) -> dict[str, Any]:
    """``{"jobs": [{attr: wire text}] (the first 100), "count", "warnings"}`` or
    ``{"error": ...}``: what submitting ``text`` would send, without sending it."""
    from cedar.submit_language import Submit

    try:
        description = Submit(text)
        with tempfile.TemporaryDirectory(prefix="cedar-web-preview-") as staging:
            executable = description.get("executable")
            if spool and executable and "$" not in executable and not executable.startswith("/"):
                # as the API's spooled submit: the script comes with the input files
                write_file(Path(staging), executable, io.BytesIO(b""), [0], 0)
            built = description.build(1, settings=settings, submit_dir=staging, spool=spool)
    except CedarError as exc:
        return {"error": str(exc)}
    except (ValueError, OSError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    jobs = [built.job_ad(i) for i in range(min(built.num_procs, 100))]
    return {"jobs": jobs, "count": built.num_procs, "warnings": list(built.warnings)}
