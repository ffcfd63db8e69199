"""``GET /api/v1/jobs/events``: the caller's jobs' status changes as server-sent events.

The schedd has no push for a client, so the queue is read (the caller's scope and constraint,
four attributes a job) every ``CEDAR_SERVE_EVENTS_INTERVAL`` seconds and each change is sent:
``event: status`` with ``{"job_id", "status", "status_name", "entered"}`` for a job that is new
or changed status, ``event: left`` for one that left the queue (completed and removed jobs
go to the history).  The event id is ``<EnteredCurrentStatus>:<job id>:<status>``; a client
that reconnects with ``Last-Event-ID`` gets the changes entered from that second on, but the
one it names (at least once: the schedd's clock counts seconds, so another change of that
same second may come again; none entered meanwhile is lost).  The stream ends after
``CEDAR_SERVE_STREAM_TIMEOUT`` (clients reconnect).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated

import trio
from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import StreamingResponse

from cedar.errors import CedarError, InvalidArgument
from cedar.numbers import JobStatus
from cedar.serve.context import Services, caller_of, services_dep
from cedar.service import Caller, scoped_constraint, status_of

router = APIRouter(prefix="/api/v1")

EVENT_NAMES = ("ClusterId", "ProcId", "JobStatus", "EnteredCurrentStatus")


def _since(last_event_id: str | None) -> tuple[int, str] | None:
    """The moment and the id a ``Last-Event-ID`` names, or None."""
    if last_event_id is None or not last_event_id.strip():
        return None
    given = last_event_id.strip()
    head = given.split(":", 1)[0]
    if not head.isdigit() or len(given) > 64:
        raise InvalidArgument("Last-Event-ID is not one this server sent")
    return int(head), given


def _status_name(code: object) -> str:
    try:
        return JobStatus(code).name.lower() if isinstance(code, int) else "unknown"
    except ValueError:
        return "unknown"


def _event_id(job: str, status: object, entered: int) -> str:
    return f"{entered}:{job}:{status}"


def _event(kind: str, job: str, status: object, entered: int) -> bytes:
    body = {
        "job_id": job,
        "status": status,
        "status_name": _status_name(status),
        "entered": entered,
    }
    event_id = _event_id(job, status, entered)
    return f"id: {event_id}\nevent: {kind}\ndata: {json.dumps(body)}\n\n".encode()


async def job_events(
    svc: Services, caller: Caller, constraint: str | None, last_event_id: str | None
) -> AsyncIterator[bytes]:
    """The stream's bytes (the scope, constraint and id checked before it starts)."""
    since = _since(last_event_id)
    user = await svc.scope_user(caller)
    scoped = scoped_constraint(svc.constraint(constraint), user)
    schedd = await svc.access.schedd(caller)

    async def body() -> AsyncIterator[bytes]:
        seen: dict[str, tuple[object, int]] = {}
        first = True
        with trio.move_on_after(svc.settings.stream_timeout):
            while True:
                try:
                    ads = await schedd.query(scoped, EVENT_NAMES)
                except CedarError as exc:
                    status, message = status_of(exc)
                    failed = json.dumps({"error": message, "status": status})
                    yield f"event: error\ndata: {failed}\n\n".encode()
                    return
                now: dict[str, tuple[object, int]] = {}
                for ad in ads:
                    job = f"{ad.get('ClusterId')}.{ad.get('ProcId')}"
                    moment = ad.get("EnteredCurrentStatus")
                    now[job] = (ad.get("JobStatus"), moment if isinstance(moment, int) else 0)
                for job, (code, entered) in sorted(now.items(), key=lambda item: item[1][1]):
                    if (
                        first
                        and since is not None
                        and (entered < since[0] or _event_id(job, code, entered) == since[1])
                    ):
                        continue  # the client saw it before it reconnected
                    if seen.get(job) != (code, entered):
                        yield _event("status", job, code, entered)
                for job in sorted(set(seen) - set(now)):
                    yield _event("left", job, None, seen[job][1])
                seen, first = now, False
                yield b": keep-alive\n\n"
                await trio.sleep(svc.settings.events_interval)

    return body()


CallerDep = Annotated[Caller, Depends(caller_of)]
ServicesDep = Annotated[Services, Depends(services_dep)]


@router.get(
    "/jobs/events",
    summary="Your jobs' status changes (server-sent events, resumable with Last-Event-ID)",
    response_class=StreamingResponse,
)
async def events(
    svc: ServicesDep,
    caller: CallerDep,
    constraint: Annotated[str | None, Query(description="and-ed with your scope")] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    """A ``text/event-stream`` of ``status`` and ``left`` events (see the module doc)."""
    stream = await job_events(svc, caller, constraint, last_event_id)
    return StreamingResponse(
        stream, media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )
