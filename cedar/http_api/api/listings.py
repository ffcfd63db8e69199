"""``/api/v1`` listings of jobs: the queue in pages or one stream, and the schedd's histories
(jobs, epochs, transfers), all written as JSON from the received bytes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Literal

from fastapi import Query, Request
from fastapi.responses import Response, StreamingResponse

from cedar.classad_wire.expr import Expr
from cedar.errors import InvalidArgument
from cedar.http_api import adjson
from cedar.http_api import models as m
from cedar.http_api.api.common import CHUNK, ERRORS, PAGE_TOKEN, CallerDep, ServicesDep, new_router
from cedar.http_api.context import Services
from cedar.http_api.streaming import PipelinedResponse
from cedar.service_core import Caller, scoped_constraint
from cedar.service_core.adjson import primed

router = new_router()


def _after(cluster: int, proc: int) -> str:
    return f"ClusterId > {cluster} || (ClusterId == {cluster} && ProcId > {proc})"


def _upto(cluster: int, proc: int) -> str:
    return f"ClusterId < {cluster} || (ClusterId == {cluster} && ProcId <= {proc})"


def _and(*parts: str | Expr | None) -> Expr | None:
    from cedar.classad_wire.constraints import and_constraints

    return and_constraints(parts)  # a tree: the client sends it without parsing it again


@router.get(
    "/jobs",
    response_model=m.JobList,
    responses={**ERRORS, 200: {"content": {"application/x-ndjson": {}}}},
    summary="List your jobs (paged, streamed)",
)
async def list_jobs(
    request: Request,
    svc: ServicesDep,
    caller: CallerDep,
    constraint: str | None = None,
    projection: Annotated[str | None, Query(description="a,b,c")] = None,
    limit: Annotated[int | None, Query(ge=0, description="jobs per page; 0 = all")] = None,
    page_token: str | None = None,
    format: Literal["json", "jsonl"] = "json",
) -> Response:
    """Jobs ordered by id in pages (``next_page_token`` continues), or with ``limit=0`` every
    match in the schedd's order in one stream; ``format=jsonl`` gives one ad per line."""
    names = svc.projection(projection)
    text = svc.constraint(constraint)
    user = await svc.scope_user(caller)
    size = svc.settings.page_size if limit is None else limit
    if size > svc.settings.max_page_size:
        raise InvalidArgument(
            f"limit {size} is over the largest page, {svc.settings.max_page_size}"
        )
    after: str | None = None
    if page_token:
        match = PAGE_TOKEN.match(page_token)
        if match is None:
            raise InvalidArgument("invalid page_token")
        after = _after(int(match.group(1)), int(match.group(2)))
    scoped = scoped_constraint(_and(text, after), user)
    schedd = await svc.access.schedd(
        caller, max_results=svc.settings.max_page_size * 4 + 1, stream=True
    )
    has_more, last = False, None
    if size:
        # The schedd sends jobs in its own order: find the page's ids first (two numbers a
        # job), then fetch exactly those ads.
        ids = sorted(
            [
                (ad["ClusterId"], ad["ProcId"])
                async for ad in schedd.query_iter(scoped, ["ClusterId", "ProcId"])
                if isinstance(ad.get("ClusterId"), int) and isinstance(ad.get("ProcId"), int)
            ]
        )
        has_more = len(ids) > size
        if not ids:
            return _job_stream(svc, None, [], format, has_more=False, token=None)
        last = ids[min(size, len(ids)) - 1]
        scoped = scoped_constraint(_and(text, after, _upto(*last)), user)
    token = f"{last[0]}.{last[1]}" if has_more and last else None
    chunks = adjson.json_chunks(schedd, scoped, names, svc.settings.private_attrs, chunk_size=CHUNK)
    return _job_stream(svc, await primed(chunks), names, format, has_more, token)


def _job_stream(
    svc: Services,
    lists: AsyncIterator[list[bytes]] | None,
    names: list[str],
    format: str,
    has_more: bool,
    token: str | None,
) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        # Ads come as lists of their JSON (the schedd's query writes it from the received bytes,
        # about CHUNK bytes a list) and are sent in chunks of about CHUNK bytes: one ASGI send
        # per ad would cost more than the ad's encoding.  Each send waits for the client (flow
        # control), so a slow reader holds a chunk or two here and the schedd's stream waits.
        count = 0
        json_list = format == "json"
        parts: list[bytes] = [b'{"jobs": ['] if json_list else []
        size = 0
        if lists is not None:
            append = parts.append
            async for items in lists:
                data = (b"," if json_list else b"\n").join(items)
                if json_list:
                    if count:
                        append(b",")
                    append(data)
                else:
                    append(data)
                    append(b"\n")
                size += len(data)
                count += len(items)
                if size >= CHUNK:
                    yield b"".join(parts)
                    parts.clear()
                    size = 0
        svc.ads_sent += count
        if json_list:
            tail = {"total_returned": count, "has_more": has_more, "next_page_token": token}
            parts.append(("], " + json.dumps(tail)[1:]).encode())
        if parts:
            yield b"".join(parts)

    media = "application/json" if format == "json" else "application/x-ndjson"
    headers = {"X-Next-Page-Token": token} if token else {}
    return PipelinedResponse(body(), media_type=media, headers=headers)


async def _history(
    svc: Services,
    caller: Caller,
    source: str,
    constraint: str | None,
    projection: str | None,
    limit: int,
    since: str | None,
    scan_limit: int | None,
    backwards: bool,
    format: str,
) -> Response:
    names = svc.projection(projection)
    text = svc.constraint(constraint)
    user = await svc.scope_user(caller)
    if since is not None and not PAGE_TOKEN.match(since) and not since.isdigit():
        svc.constraint(since)
    schedd = await svc.access.schedd(caller, stream=True)
    query = schedd.history(
        scoped_constraint(text, user),
        names,
        limit if limit else -1,
        since=since,
        scan_limit=scan_limit,
        forwards=not backwards,
        source=source,
    )
    lists = adjson.json_lists(query, svc.settings.private_attrs)
    return _job_stream(svc, await primed(lists), names, format, False, None)


SinceQuery = Annotated[
    str | None, Query(description="stop at this job id (C or C.P) or expression")
]
ScanQuery = Annotated[int | None, Query(ge=1, description="examine at most this many records")]
BackwardsQuery = Annotated[bool, Query(description="newest first (false: oldest first)")]


@router.get("/jobs/archive", response_model=m.JobList, responses=ERRORS, summary="Job history")
async def job_history(
    svc: ServicesDep,
    caller: CallerDep,
    constraint: str | None = None,
    projection: str | None = None,
    limit: Annotated[int, Query(ge=0)] = 100,
    since: SinceQuery = None,
    scan_limit: ScanQuery = None,
    backwards: BackwardsQuery = True,
    format: Literal["json", "jsonl"] = "json",
) -> Response:
    """Your completed and removed jobs (the schedd's history), streamed."""
    return await _history(
        svc, caller, "jobs", constraint, projection, limit, since, scan_limit, backwards, format
    )


@router.get("/jobs/epochs", response_model=m.JobList, responses=ERRORS, summary="Job epochs")
async def job_epochs(
    svc: ServicesDep,
    caller: CallerDep,
    constraint: str | None = None,
    projection: str | None = None,
    limit: Annotated[int, Query(ge=0)] = 100,
    since: SinceQuery = None,
    scan_limit: ScanQuery = None,
    backwards: BackwardsQuery = True,
    format: Literal["json", "jsonl"] = "json",
) -> Response:
    """One record per run of your jobs (the schedd's epoch history)."""
    return await _history(
        svc, caller, "epochs", constraint, projection, limit, since, scan_limit, backwards, format
    )


@router.get(
    "/jobs/transfers", response_model=m.JobList, responses=ERRORS, summary="Transfer records"
)
async def job_transfers(
    svc: ServicesDep,
    caller: CallerDep,
    constraint: str | None = None,
    projection: str | None = None,
    limit: Annotated[int, Query(ge=0)] = 100,
    since: SinceQuery = None,
    scan_limit: ScanQuery = None,
    backwards: BackwardsQuery = True,
    format: Literal["json", "jsonl"] = "json",
) -> Response:
    """Your jobs' file-transfer records (the schedd's transfer history)."""
    return await _history(
        svc, caller, "transfer", constraint, projection, limit, since, scan_limit, backwards, format
    )
