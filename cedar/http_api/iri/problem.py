"""RFC 9457 ``Problem`` bodies, the IRI API's only error shape (the spec's ``Problem`` schema:
``type``, ``status``, ``title``, ``detail``, ``instance``)."""

from __future__ import annotations

from http import HTTPStatus

from starlette.responses import JSONResponse

from cedar.errors import CedarError
from cedar.service_core import status_of

#: Media type of a Problem (RFC 9457 section 3); the spec declares ``application/json``, so
#: that is what is sent (a client validating against the document expects it).
MEDIA_TYPE = "application/json"


class Problem(CedarError):
    """A failure answered with ``status`` and a Problem body saying ``detail``."""

    def __init__(self, status: int, detail: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def title(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def problem_response(
    status: int, detail: str, instance: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The Problem body of one failure (``instance`` is the request's path)."""
    extra = dict(headers or {})
    if status == 401:
        extra.setdefault("WWW-Authenticate", 'Bearer realm="cedar"')
    if status == 413:  # the rest of the body is not read: the connection ends after this
        extra["Connection"] = "close"
    body = {
        "type": "about:blank",
        "status": status,
        "title": title(status),
        "detail": detail,
        "instance": instance,
    }
    return JSONResponse(body, status_code=status, headers=extra, media_type=MEDIA_TYPE)


def from_exception(exc: BaseException, instance: str) -> JSONResponse:
    """The Problem of any failure a handler raised (cedar's errors through the one table)."""
    if isinstance(exc, Problem):
        return problem_response(exc.status, exc.detail, instance, exc.headers)
    status, message = status_of(exc)
    headers = {}
    retry = getattr(exc, "retry_after", None)
    if retry is not None:
        headers["Retry-After"] = str(max(1, int(retry + 0.999)))
    if status in (429, 502):
        # The spec declares neither: a daemon out of reach, or a caller over its request rate,
        # is the service unavailable (with Retry-After for the latter).
        status = 503
    if status not in ANSWERED:
        status = 500
    return problem_response(status, message, instance, headers)


#: The error statuses every operation of the document declares, and the one it does not that
#: a bound needs: 413 (a body over the limit).
ANSWERED = frozenset({400, 401, 403, 404, 405, 409, 413, 422, 500, 501, 503, 504})
