"""What a handler of the IRI API is given (:class:`Call`) and the table of handlers by
``operationId`` (filled by the ``@handler`` of each module)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from cedar.http_api.context import Services
from cedar.http_api.iri.problem import Problem
from cedar.http_api.iri.settings import IriSettings
from cedar.http_api.iri.spec import Operation
from cedar.http_api.iri.store import Store
from cedar.service_core import Caller


@dataclass
class IriState:
    """The IRI API of one process: knobs, the shared store, the process's services."""

    settings: IriSettings
    store: Store
    services: Services
    #: Monotonic time of the last observation of the daemons' ads (see ``status.observe``).
    observed: float = -1e9
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Call:
    """One request, checked against the document: its path and query values (typed), its body."""

    request: Request
    op: Operation
    state: IriState
    path: dict[str, str]
    query: dict[str, Any]
    caller: Caller
    body: Any = None
    #: ``scheme://host{prefix}``: the base of every ``*_uri`` in an answer.
    base: str = ""
    started: float = field(default_factory=time.time)

    @property
    def services(self) -> Services:
        return self.state.services

    @property
    def store(self) -> Store:
        return self.state.store

    def uri(self, path: str) -> str:
        """The absolute URI of ``/api/v2/<path>``."""
        return f"{self.base}/api/v2/{path}"

    async def user(self) -> str:
        """The ``user@domain`` the schedd authenticated the caller's token as (401 without one)."""
        if not self.caller.authenticated:
            raise Problem(401, "this needs 'Authorization: Bearer <IDTOKEN or SciToken>'")
        identity = await self.services.access.whoami(self.caller)
        if identity.user is None:
            raise Problem(401, "the token did not authenticate")
        return identity.user


Handler = Callable[[Call], Awaitable[Any]]

#: operationId -> (handler, kind of resource its ``resource_id`` must name, or None).
HANDLERS: dict[str, tuple[Handler, str | None]] = {}


def handler(operation_id: str, resource: str | None = None) -> Callable[[Handler], Handler]:
    """Register the handler of ``operation_id``; with ``resource`` (``compute``/``storage``), an
    unknown ``resource_id`` is a 404 before the body is read."""

    def register(function: Handler) -> Handler:
        HANDLERS[operation_id] = (function, resource)
        return function

    return register
