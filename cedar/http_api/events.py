"""``GET /api/v1/jobs/events``: the caller's jobs' status changes as server-sent events.

The schedd has no push for a client, so the queue is read (the caller's scope and constraint,
four attributes a job) every ``CEDAR_SERVE_EVENTS_INTERVAL`` seconds and each change is sent:
``event: status`` with ``{"job_id", "status", "status_name", "entered"}`` for a job that is new
or changed status. A job that left the queue is looked up in the schedd's history (one query a
reading for the jobs that left, by their ids and the caller's scope, at most :data:`MAX_LOOKUPS`
of them, the scan bounded by :data:`HISTORY_SCAN` records): ``event: completed`` with
``exit_code`` (or ``exit_signal``) or ``event: removed`` with ``remove_reason``; ``event: left``
when the history does not have it (yet, or at all). The event id is
``<EnteredCurrentStatus>:<job id>:<status>``; a client that reconnects with ``Last-Event-ID``
gets the changes entered from that second on, but the one it names (at least once: the schedd's
clock counts seconds, so another change of that same second may come again; none entered
meanwhile is lost). The stream ends after ``CEDAR_SERVE_STREAM_TIMEOUT`` (clients reconnect).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated

import trio
from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import StreamingResponse

from cedar.classad_wire import ClassAd
from cedar.commands import AsyncSchedd
from cedar.errors import CedarError, InvalidArgument
from cedar.http_api.context import Services, caller_of, services_dep
from cedar.jobid import JobId, ids_constraint
from cedar.numbers import JobStatus
from cedar.service_core import Caller, scoped_constraint, status_of
from cedar.service_core.adjson import plain_value

router = APIRouter(prefix="/api/v1")

EVENT_NAMES = ("ClusterId", "ProcId", "JobStatus", "EnteredCurrentStatus")
#: What a job that left the queue is told by, from its history record.
DEPARTURE_NAMES = (*EVENT_NAMES, "ExitCode", "ExitBySignal", "ExitSignal", "RemoveReason")
#: Jobs that left in one interval looked up in the history at most (the rest: ``left``).
MAX_LOOKUPS = 200
#: History records the schedd reads at most for one lookup (the newest first: jobs that just
#: left are found at once; a busy schedd's older records are not scanned).
HISTORY_SCAN = 10000


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


def _event(
    kind: str, job: str, status: object, entered: int, extra: dict[str, object] | None = None
) -> bytes:
    body = {
        "job_id": job,
        "status": status,
        "status_name": _status_name(status),
        "entered": entered,
        **(extra or {}),
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
                left = sorted(set(seen) - set(now))
                records = await departures(schedd, left[:MAX_LOOKUPS], user) if left else {}
                for job in left:
                    yield departure_event(job, records.get(job), seen[job][1])
                seen, first = now, False
                yield b": keep-alive\n\n"
                await trio.sleep(svc.settings.events_interval)

    return body()


async def departures(schedd: AsyncSchedd, jobs: list[str], user: str | None) -> dict[str, ClassAd]:
    """The history records of ``jobs`` (``C.P``) in the caller's scope, by job id; none where
    the history cannot be read (the jobs are then told as ``left``)."""
    ids = [JobId(int(c), int(p)) for c, _, p in (job.partition(".") for job in jobs)]
    constraint = scoped_constraint(ids_constraint(ids), user)
    found: dict[str, ClassAd] = {}
    query = schedd.history(constraint, DEPARTURE_NAMES, len(ids), scan_limit=HISTORY_SCAN)
    try:
        async for ad in query:
            found[f"{ad.get('ClusterId')}.{ad.get('ProcId')}"] = ad
    except CedarError:
        pass
    return found


def departure_event(job: str, record: ClassAd | None, last_seen: int) -> bytes:
    """``completed`` or ``removed`` from a history record, ``left`` without one."""
    status = None if record is None else record.get("JobStatus")
    moment = None if record is None else record.get("EnteredCurrentStatus")
    entered = moment if isinstance(moment, int) else last_seen
    if record is not None and status == JobStatus.COMPLETED:
        signal = record.get("ExitSignal") if record.get("ExitBySignal") is True else None
        extra: dict[str, object] = {"exit_code": plain_value(record.get("ExitCode"))}
        if signal is not None:
            extra = {"exit_signal": plain_value(signal)}
        return _event("completed", job, status, entered, extra)
    if record is not None and status == JobStatus.REMOVED:
        extra = {"remove_reason": plain_value(record.get("RemoveReason"))}
        return _event("removed", job, status, entered, extra)
    return _event("left", job, None, last_seen)


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
    """A ``text/event-stream`` of ``status``, ``completed``, ``removed`` and ``left`` events
    (see the module doc)."""
    stream = await job_events(svc, caller, constraint, last_event_id)
    return StreamingResponse(
        stream, media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )
