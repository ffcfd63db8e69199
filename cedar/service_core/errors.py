"""How a cedar error becomes an HTTP-style status with a reason (shared by every service).

One table, so the REST API, the MCP server and the web page answer the same failure the same
way: a denial is 403, a credential the daemon refused is 401, a bad constraint 400, a missing
job 404, a daemon that cannot be reached 502, one that does not answer in time 504.
"""

from __future__ import annotations

from cedar.auth.token import TokenError
from cedar.commands.errors import (
    HistoryError,
    JobNotFound,
    JobNotRunning,
    PeekFileError,
    PeekRefused,
)
from cedar.errors import (
    AuthenticationError,
    CedarConnectionError,
    CedarError,
    CedarTimeout,
    ClassAdError,
    InvalidArgument,
    PermissionDenied,
    ResultLimitExceeded,
)


class BadCredential(InvalidArgument):
    """The ``Authorization`` header is not a usable bearer token (answered with 401)."""


class ServiceError(CedarError):
    """A failure a service answers with ``status`` and a one-line ``message``."""

    def __init__(self, status: int, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


class NotFound(ServiceError, LookupError):
    """No such job, file or daemon."""

    def __init__(self, message: str) -> None:
        super().__init__(404, message)


class RateLimited(ServiceError):
    """The caller is over its request rate; try again after ``retry_after`` seconds."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(429, "too many requests", retry_after=retry_after)


def status_of(exc: BaseException) -> tuple[int, str]:
    """The status and reason for an exception a service call raised."""
    if isinstance(exc, ServiceError):
        return exc.status, exc.message
    if isinstance(exc, BadCredential):
        return 401, str(exc)
    if isinstance(exc, (JobNotFound, PeekFileError)):
        return 404, str(exc)
    if isinstance(exc, JobNotRunning):
        return 409, str(exc)
    if isinstance(exc, PeekRefused):
        return 403, str(exc)
    if isinstance(exc, HistoryError):
        return 400 if exc.code is not None else 502, str(exc)
    if isinstance(exc, PermissionDenied):
        return 403, f"the daemon refused: {exc}"
    if isinstance(exc, (AuthenticationError, TokenError)):
        return 401, f"the daemon did not accept the credential: {exc}"
    if isinstance(exc, ResultLimitExceeded):
        return 413, str(exc)
    if isinstance(exc, (ClassAdError, InvalidArgument)):
        return 400, str(exc)
    if isinstance(exc, CedarTimeout):
        return 504, f"the daemon did not answer in time: {exc}"
    if isinstance(exc, CedarConnectionError):
        return 502, f"cannot reach the daemon: {exc}"
    if isinstance(exc, CedarError):
        return 502, str(exc)
    return 500, "internal error"
