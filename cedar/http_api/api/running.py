"""``/api/v1`` views of a job as it runs and after: the tail of its files (or their stream of
server-sent events), the match analysis, the event log."""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import AsyncIterator
from typing import Annotated, Any

import trio
from fastapi import Query
from fastapi.responses import Response, StreamingResponse

from cedar.errors import CedarError
from cedar.http_api import models as m
from cedar.http_api.api.common import (
    ERRORS,
    CallerDep,
    ServicesDep,
    fetch_output,
    job_id,
    new_router,
    one_job,
)
from cedar.http_api.sandbox import resolve_file
from cedar.service_core import NotFound, job_constraint, scoped_constraint, status_of
from cedar.service_core.adjson import primed

router = new_router()


def _tail_file(piece: Any) -> m.TailFile:
    return m.TailFile(
        name=piece.name,
        offset=piece.offset,
        next_offset=piece.next_offset,
        text=piece.data.decode("utf-8", "replace"),
        data_base64=base64.b64encode(piece.data).decode("ascii"),
    )


@router.get(
    "/jobs/{job}/tail",
    response_model=m.TailResponse,
    responses={**ERRORS, 409: {"model": m.ErrorBody}, 200: {"content": {"text/event-stream": {}}}},
    summary="Tail a running job's stdout, stderr or output file",
)
async def tail_job(
    svc: ServicesDep,
    caller: CallerDep,
    job: str,
    file: Annotated[str, Query(description="stdout, stderr or an output file name")] = "stdout",
    offset: Annotated[int, Query(ge=-1, description="-1: the last bytes")] = -1,
    max_bytes: Annotated[int, Query(ge=1, le=1 << 20)] = 4096,
    follow: Annotated[bool, Query(description="stream new bytes (server-sent events)")] = False,
) -> Response:
    """Bytes of the file from ``offset`` (pass ``next_offset`` back to read on); with
    ``follow`` a ``text/event-stream`` of ``data`` events until the job stops running."""
    await one_job(svc, caller, job, ["ClusterId"])
    if file not in ("stdout", "stderr"):
        from cedar.http_api.sandbox import safe_relative

        safe_relative(file)
    stdout, stderr = file == "stdout", file == "stderr"
    names = () if stdout or stderr else (file,)
    schedd = await svc.access.schedd(caller, stream=follow)
    offsets = {file: offset}
    if not follow:
        result = await schedd.peek(job, stdout, stderr, names, offsets, max_bytes)
        answer = m.TailResponse(
            files=[_tail_file(p) for p in result.files], missing=list(result.missing)
        )
        return Response(answer.model_dump_json(), media_type="application/json")
    pieces = await primed(schedd.follow(job, stdout, stderr, names, offsets, max_bytes, wait=True))

    async def events() -> AsyncIterator[bytes]:
        try:
            async for piece in pieces:
                yield f"event: data\ndata: {_tail_file(piece).model_dump_json()}\n\n".encode()
        except CedarError as exc:
            status, message = status_of(exc)
            body = json.dumps({"error": message, "status": status})
            yield f"event: error\ndata: {body}\n\n".encode()
        yield b"event: end\ndata: {}\n\n"

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )


@router.get(
    "/jobs/{job}/analysis",
    response_model=dict[str, Any],
    responses=ERRORS,
    summary="Match analysis: why the job does (not) run",
)
async def analyze(svc: ServicesDep, caller: CallerDep, job: str) -> Response:
    """``condor_q -better-analyze``'s result as data (cedar.analysis's structured result)."""
    from cedar.analysis import analyze_job
    from cedar.analysis.fetch import fetch_inputs

    cluster, proc = job_id(job)
    user = await svc.scope_user(caller)
    schedd = await svc.access.schedd(caller, stream=True)
    collector = svc.access.collector(caller)
    inputs = await fetch_inputs(
        schedd, collector, scoped_constraint(job_constraint(cluster, proc), user)
    )
    if not inputs.jobs:
        raise NotFound(f"no job {cluster}.{proc} of yours")
    result = analyze_job(
        inputs.jobs[0], inputs.slots, analyze_summary=inputs.analyze, schedd_ad=inputs.schedd_ad
    )
    return Response(json.dumps(result.to_json()), media_type="application/json")


@router.get(
    "/jobs/{job}/events",
    response_model=m.EventList,
    responses=ERRORS,
    summary="The job's event log (user log), parsed",
)
async def job_events(svc: ServicesDep, caller: CallerDep, job: str) -> m.EventList:
    """The events of the job's ``log`` file from its output sandbox, each as an ad (``MyType``
    is the event's name, e.g. ``ExecuteEvent``)."""
    from cedar.compat.eventlog import event_dicts

    ad, root, directory = await fetch_output(svc, caller, job, ["UserLog"])
    try:
        log_name = ad.get("UserLog")
        if not isinstance(log_name, str) or not log_name:
            raise NotFound(f"job {job} has no event log (submit with 'log = <file>')")
        path = resolve_file(root, os.path.basename(log_name))

        def read() -> list[dict[str, Any]]:
            with open(path, encoding="utf-8", errors="replace") as log:
                return event_dicts(log)

        return m.EventList(events=await trio.to_thread.run_sync(read))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
