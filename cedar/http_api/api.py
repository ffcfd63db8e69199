"""``/api/v1``: the jobs, history, collector and daemon routes (the Go server's shapes).

Each route checks its input, calls the library once as the caller (the caller's token is the
only credential; the schedd authorizes) and shapes the answer with the one ClassAd<->JSON
mapping.  Job views are scoped to the identity the daemon authenticated, by parsed trees.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, Literal

import trio
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse
from starlette.background import BackgroundTask
from starlette.responses import FileResponse

from cedar.classad_wire import ClassAd
from cedar.classad_wire import expr as cx
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.jsonfmt import ad_from_json_object
from cedar.commands._async.command import run_command_async
from cedar.commands.filetransfer import expand_inputs
from cedar.commands.schedd import RESULT_NAMES, ActResult
from cedar.commands.spool import spool_protocol
from cedar.errors import CedarError, InvalidArgument
from cedar.http_api import adjson
from cedar.http_api import models as m
from cedar.http_api.context import Services, caller_of, services, services_dep
from cedar.http_api.direct import DirectAPIRoute, direct
from cedar.http_api.sandbox import TooLarge, extract_tar, pack_tar, resolve_file, write_file
from cedar.http_api.streaming import PipelinedResponse
from cedar.jobid import parse_job_id
from cedar.numbers import Command, JobAction
from cedar.service_core import (
    Caller,
    NotFound,
    ServiceError,
    job_constraint,
    scoped_constraint,
    scoped_job,
    status_of,
    typed_values,
)
from cedar.service_core.adjson import ad_dict, ad_json_bytes, primed
from cedar.submit_language import Submit
from cedar.version import VERSION_STRING

router = APIRouter(prefix="/api/v1", route_class=DirectAPIRoute)

CHUNK = 1 << 16  #: bytes of JSON gathered before one send of a streamed listing
_PAGE_TOKEN = re.compile(r"([0-9]{1,9})\.([0-9]{1,9})\Z")

CallerDep = Annotated[Caller, Depends(caller_of)]
ServicesDep = Annotated[Services, Depends(services_dep)]
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": m.ErrorBody} for code in (400, 401, 403, 404, 413, 429, 502, 504)
}


def job_id(text: str) -> tuple[int, int]:
    """``cluster.proc`` (the one job-id shape of the API)."""
    job = parse_job_id(text, need_proc=True)
    return job.cluster, job.proc or 0


def _after(cluster: int, proc: int) -> str:
    return f"ClusterId > {cluster} || (ClusterId == {cluster} && ProcId > {proc})"


def _upto(cluster: int, proc: int) -> str:
    return f"ClusterId < {cluster} || (ClusterId == {cluster} && ProcId <= {proc})"


def _and(*parts: str | Expr | None) -> Expr | None:
    from cedar.classad_wire.constraints import and_constraints

    return and_constraints(parts)  # a tree: the client sends it without parsing it again


async def one_job(svc: Services, caller: Caller, job: str, projection: list[str]) -> ClassAd:
    """The caller's job ``job`` (404 when absent or not the caller's)."""
    cluster, proc = job_id(job)
    user = await svc.scope_user(caller)
    schedd = await svc.access.schedd(caller)
    ads = await schedd.query(scoped_job(cluster, proc, user), projection, 1)  # stops the scan
    if not ads:
        raise NotFound(f"no job {cluster}.{proc} of yours")
    return ads[0]


# --------------------------------------------------------------------------- listing


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
        match = _PAGE_TOKEN.match(page_token)
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
    if since is not None and not _PAGE_TOKEN.match(since) and not since.isdigit():
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


@router.get("/jobs/{job}", response_model=m.JobAd, responses=ERRORS, summary="One job's ad")
@direct
async def get_job(request: Request, job: str, projection: str | None = None) -> Response:
    # Answered directly (cedar.http_api.direct): FastAPI's parameter solving cost up to a tenth.
    svc = services(request)
    caller = await caller_of(request)
    ad = await one_job(svc, caller, job, svc.projection(projection))
    return Response(ad_json_bytes(ad, svc.settings.private_attrs), media_type="application/json")


# --------------------------------------------------------------------------- submit and edit


@router.post(
    "/jobs", status_code=201, response_model=m.SubmitResponse, responses=ERRORS, summary="Submit"
)
async def submit_jobs(
    svc: ServicesDep, caller: CallerDep, body: m.SubmitRequest
) -> m.SubmitResponse:
    """Submit a description; with ``spool`` the jobs wait on hold for their input sandbox."""
    await svc.scope_user(caller)  # the token must authenticate; the schedd authorizes
    schedd = await svc.access.schedd(caller)
    description = Submit(body.submit_file)
    if body.spool:
        # The files are not here (they come with PUT .../input): the description is read in an
        # empty directory where a relative executable is only a placeholder.
        with tempfile.TemporaryDirectory(prefix="cedar-serve-submit-") as staging:
            executable = description.get("executable")
            if executable and "$" not in executable and not executable.startswith("/"):
                write_file(Path(staging), executable, io.BytesIO(b""), [0], 0)
            result = await schedd.submit(description, body.count, submit_dir=staging, spool=True)
    else:
        iwd = body.iwd or tempfile.gettempdir()
        result = await schedd.submit(description, body.count, submit_dir=iwd)
    ids = [f"{result.cluster}.{result.first_proc + i}" for i in range(result.num_procs)]
    warning = getattr(result, "warning", None)
    return m.SubmitResponse(
        cluster_id=result.cluster,
        job_ids=ids,
        spooled=body.spool,
        warnings=[warning] if isinstance(warning, str) and warning else [],
    )


@router.patch("/jobs/{job}", response_model=m.EditResponse, responses=ERRORS, summary="Edit a job")
async def edit_job(
    svc: ServicesDep, caller: CallerDep, job: str, body: m.EditRequest
) -> m.EditResponse:
    """Set attributes, typed by the ClassAd JSON mapping (the same one every answer uses)."""
    values = typed_values(body.attributes)
    await one_job(svc, caller, job, ["ClusterId"])
    schedd = await svc.access.schedd(caller)
    for name, text in values.items():
        await schedd.edit(job, name, text)
    return m.EditResponse(jobs_changed=1, attributes=list(values))


@router.post(
    "/jobs/edit", response_model=m.EditResponse, responses=ERRORS, summary="Edit jobs by constraint"
)
async def edit_jobs(svc: ServicesDep, caller: CallerDep, body: m.BulkEditRequest) -> m.EditResponse:
    values = typed_values(body.attributes)
    user = await svc.scope_user(caller)
    scoped = scoped_constraint(svc.constraint(body.constraint), user)
    if scoped is None:
        raise InvalidArgument("a constraint is required")
    schedd = await svc.access.schedd(caller)
    count = 0
    for name, text in values.items():
        count = await schedd.edit(scoped, name, text)
    return m.EditResponse(jobs_changed=count, attributes=list(values))


# --------------------------------------------------------------------------- actions


def _action_response(action: JobAction, result: ActResult) -> m.ActionResponse:
    results = [
        m.JobResult(job_id=job, result=RESULT_NAMES.get(code, str(code)))
        for job, code in sorted(result.jobs.items())
    ]
    return m.ActionResponse(action=action.name.lower(), succeeded=result.succeeded, results=results)


async def _act(
    svc: Services,
    caller: Caller,
    action: JobAction,
    constraint: str | Expr | None,
    reason: str | None,
) -> m.ActionResponse:
    user = await svc.scope_user(caller)
    scoped = scoped_constraint(constraint, user)
    if scoped is None:
        raise InvalidArgument("a constraint is required")
    schedd = await svc.access.schedd(caller)
    result = await schedd.act(action, scoped, reason, long=True)
    return _action_response(action, result)


async def _act_one(
    svc: Services, caller: Caller, action: JobAction, job: str, reason: str | None
) -> m.ActionResponse:
    cluster, proc = job_id(job)
    answer = await _act(svc, caller, action, job_constraint(cluster, proc), reason)
    if not answer.results:
        raise NotFound(f"no job {cluster}.{proc} of yours")
    return answer


#: The actions on jobs, by the word in their paths.
ACTIONS = {"hold": JobAction.Hold, "release": JobAction.Release, "remove": JobAction.Remove}


def _one_job_route(action: JobAction) -> Any:
    """The handler of ``POST /jobs/{id}/<action>`` (one for each action, for the OpenAPI
    document; the work is :func:`_act_one`)."""

    async def act_on_job(
        svc: ServicesDep, caller: CallerDep, job: str, body: m.ActionRequest | None = None
    ) -> m.ActionResponse:
        return await _act_one(svc, caller, action, job, body.reason if body else None)

    return act_on_job


def _bulk_route(action: JobAction) -> Any:
    """The handler of ``POST /jobs/<action>`` with a constraint (scoped to the caller)."""

    async def act_on_jobs(
        svc: ServicesDep, caller: CallerDep, body: m.BulkActionRequest
    ) -> m.ActionResponse:
        return await _act(svc, caller, action, svc.constraint(body.constraint), body.reason)

    return act_on_jobs


for _word in ("hold", "release"):
    router.add_api_route(
        f"/jobs/{{job}}/{_word}",
        _one_job_route(ACTIONS[_word]),
        methods=["POST"],
        response_model=m.ActionResponse,
        responses=ERRORS,
        name=f"{_word}_job",
        summary=f"{_word.capitalize()} one job",
    )


@router.delete("/jobs/{job}", response_model=m.ActionResponse, responses=ERRORS)
async def remove_job(
    svc: ServicesDep, caller: CallerDep, job: str, reason: str | None = None
) -> m.ActionResponse:
    """Remove one job (``reason`` is a query parameter: a DELETE has no body)."""
    return await _act_one(svc, caller, JobAction.Remove, job, reason)


for _word, _action in ACTIONS.items():
    router.add_api_route(
        f"/jobs/{_word}",
        _bulk_route(_action),
        methods=["POST"],
        response_model=m.ActionResponse,
        responses=ERRORS,
        name=f"{_word}_jobs",
        summary=f"{_word.capitalize()} your jobs matching a constraint",
    )


# --------------------------------------------------------------------------- sandboxes


async def _receive_body(request: Request, limit: int, sink: Any) -> int:
    """Copy the request body to ``sink`` (a file), stopping at ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLarge(limit)
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise TooLarge(limit)
        sink.write(chunk)
    sink.seek(0)
    return total


async def _spool_directory(
    svc: Services, caller: Caller, job: str, root: Path, names: list[str]
) -> m.UploadResponse:
    cluster, proc = job_id(job)
    ad = await one_job(svc, caller, job, ["ClusterId", "ProcId", "HoldReasonCode"])
    if ad.get("HoldReasonCode") != 16:
        raise ServiceError(409, f"job {job} is not waiting for its input (submit with spool)")
    tops = sorted({Path(n).parts[0] for n in names})
    items = expand_inputs(tops, root)
    address = await svc.access.schedd_address(caller)
    work = [(cluster, proc, items)]
    await run_command_async(
        address,
        Command.SPOOL_JOB_FILES_WITH_PERMS,
        lambda session: spool_protocol(session, work),
        security=svc.access.security(caller),
        timeout=svc.settings.timeout * 4,
    )
    size = sum(os.path.getsize(root / n) for n in names)
    return m.UploadResponse(job_id=job, files=sorted(names), bytes=size)


@router.put(
    "/jobs/{job}/input",
    response_model=m.UploadResponse,
    responses=ERRORS,
    openapi_extra={
        "requestBody": {"content": {"application/x-tar": {"schema": {"type": "string"}}}}
    },
    summary="Upload the input sandbox (tar)",
)
async def upload_tar(
    request: Request, svc: ServicesDep, caller: CallerDep, job: str
) -> m.UploadResponse:
    """A tar (optionally compressed) of the job's input files, for a job submitted with spool."""
    job_id(job)
    limit = svc.settings.max_upload
    with tempfile.TemporaryDirectory(prefix="cedar-serve-in-") as directory:
        root = Path(directory, "sandbox")
        root.mkdir()
        with tempfile.TemporaryFile(dir=directory) as raw:
            await _receive_body(request, limit, raw)
            names = await trio.to_thread.run_sync(extract_tar, raw, root, limit)
        if not names:
            raise InvalidArgument("the archive holds no files")
        return await _spool_directory(svc, caller, job, root, names)


@router.post(
    "/jobs/{job}/input/multipart",
    response_model=m.UploadResponse,
    responses=ERRORS,
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "files": {
                                "type": "array",
                                "items": {
                                    "type": "string",
                                    "contentMediaType": "application/octet-stream",
                                },
                            }
                        },
                    }
                }
            }
        }
    },
    summary="Upload the input sandbox (multipart)",
)
async def upload_multipart(
    request: Request, svc: ServicesDep, caller: CallerDep, job: str
) -> m.UploadResponse:
    """Each file part is one input file, named by its filename (relative, inside the sandbox)."""
    job_id(job)
    limit = svc.settings.max_upload
    declared = request.headers.get("content-length")
    if declared is None or not declared.isdigit():
        # the form parser would spool a body of any size before we could count it
        raise ServiceError(411, "a multipart upload needs a Content-Length")
    if int(declared) > limit:
        raise TooLarge(limit)
    with tempfile.TemporaryDirectory(prefix="cedar-serve-in-") as directory:
        root = Path(directory, "sandbox")
        root.mkdir()
        budget = [0]
        names: list[str] = []
        async with request.form(max_files=1000, max_fields=100) as form:
            for _, value in form.multi_items():
                if isinstance(value, str) or not value.filename:
                    continue
                names.append(write_file(root, value.filename, value.file, budget, limit))
        if not names:
            raise InvalidArgument("no file parts in the upload")
        return await _spool_directory(svc, caller, job, root, names)


async def _fetch_output(
    svc: Services, caller: Caller, job: str, extra: list[str] | None = None
) -> tuple[ClassAd, Path, str]:
    """The job's output sandbox in a new temporary directory (removed by the caller)."""
    names = ["ClusterId", "ProcId", "Out", "Err", "JobStatus", *(extra or [])]
    ad = await one_job(svc, caller, job, names)
    schedd = await svc.access.schedd(caller)
    directory = tempfile.mkdtemp(prefix="cedar-serve-out-")
    root = Path(directory, "sandbox")
    root.mkdir()
    try:
        await schedd.retrieve(job, root, max_bytes=svc.settings.max_download)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return ad, root, directory


@router.get(
    "/jobs/{job}/output",
    responses={**ERRORS, 200: {"content": {"application/x-tar": {}}}},
    response_class=Response,
    summary="Download the output sandbox (tar)",
)
async def download_tar(svc: ServicesDep, caller: CallerDep, job: str) -> Response:
    _, root, directory = await _fetch_output(svc, caller, job)
    tar_path = Path(directory, "output.tar")
    with open(tar_path, "wb") as out:
        await trio.to_thread.run_sync(pack_tar, root, out)
    return FileResponse(
        tar_path,
        media_type="application/x-tar",
        filename=f"job-{job}-output.tar",
        background=BackgroundTask(shutil.rmtree, directory, True),
    )


def _file_response(root: Path, directory: str, name: str) -> Response:
    try:
        path = resolve_file(root, name)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return FileResponse(
        path,
        media_type="application/octet-stream",
        background=BackgroundTask(shutil.rmtree, directory, True),
    )


@router.get(
    "/jobs/{job}/files/{name:path}",
    responses={**ERRORS, 200: {"content": {"application/octet-stream": {}}}},
    response_class=Response,
    summary="Download one output file",
)
async def download_file(svc: ServicesDep, caller: CallerDep, job: str, name: str) -> Response:
    from cedar.http_api.sandbox import safe_relative

    safe_relative(name)  # refuse before fetching anything
    _, root, directory = await _fetch_output(svc, caller, job)
    return _file_response(root, directory, name)


async def _stream_file(svc: Services, caller: Caller, job: str, attr: str) -> Response:
    ad, root, directory = await _fetch_output(svc, caller, job)
    value = ad.get(attr)
    if not isinstance(value, str) or value in ("", "/dev/null"):
        shutil.rmtree(directory, ignore_errors=True)
        raise NotFound(f"job {job} has no {'stdout' if attr == 'Out' else 'stderr'} file")
    return _file_response(root, directory, os.path.basename(value))


@router.get(
    "/jobs/{job}/stdout",
    responses={**ERRORS, 200: {"content": {"application/octet-stream": {}}}},
    response_class=Response,
)
async def job_stdout(svc: ServicesDep, caller: CallerDep, job: str) -> Response:
    return await _stream_file(svc, caller, job, "Out")


@router.get(
    "/jobs/{job}/stderr",
    responses={**ERRORS, 200: {"content": {"application/octet-stream": {}}}},
    response_class=Response,
)
async def job_stderr(svc: ServicesDep, caller: CallerDep, job: str) -> Response:
    return await _stream_file(svc, caller, job, "Err")


# --------------------------------------------------------------------------- collector


@router.get("/collector/ads", response_model=m.AdList, responses=ERRORS, summary="Collector ads")
async def collector_ads(
    svc: ServicesDep,
    caller: CallerDep,
    type: str = "any",
    name: str | None = None,
    constraint: str | None = None,
    projection: str | None = None,
    limit: Annotated[int | None, Query(ge=1)] = None,
) -> m.AdList:
    names = svc.projection(projection)
    text = _and_expr(svc.constraint(constraint), None)  # the collector client takes text
    if name is not None:
        text = _and_expr(text, cx.Binary("==", cx.AttrRef("Name"), cx.Literal(name)))
    collector = svc.access.collector(caller)
    private = svc.settings.private_attrs
    ads = [
        ad_dict(ad, private) async for ad in collector.query_iter(type, text, names or None, limit)
    ]
    return m.AdList(ads=ads, total_returned=len(ads))


def _and_expr(text: str | Expr | None, node: Any) -> str | None:
    from cedar.classad_wire.constraints import constraint_text

    return constraint_text([node, text])


@router.post(
    "/collector/ads", response_model=m.AdvertiseResponse, responses=ERRORS, summary="Advertise"
)
async def advertise(
    svc: ServicesDep, caller: CallerDep, body: m.AdvertiseRequest
) -> m.AdvertiseResponse:
    """Send ads to the collector with the caller's token (the collector authorizes)."""
    await svc.identity(caller)
    ads = [ad_from_json_object(ad) for ad in body.ads]
    await svc.access.collector(caller).advertise(ads, body.command)
    return m.AdvertiseResponse(advertised=len(ads))


# --------------------------------------------------------------------------- daemons


@router.get(
    "/whoami", response_model=m.WhoAmI, responses=ERRORS, summary="Who the schedd says you are"
)
async def whoami(svc: ServicesDep, caller: CallerDep) -> m.WhoAmI:
    identity = await svc.identity(caller)
    return m.WhoAmI(
        authenticated=identity.authenticated, user=identity.user, method=identity.method
    )


@router.get("/ping", response_model=m.PingResponse, responses=ERRORS)
async def ping(
    svc: ServicesDep,
    caller: CallerDep,
    daemon: Literal["schedd", "collector"] = "schedd",
    level: str = "READ",
) -> m.PingResponse:
    """DC_SEC_QUERY: whether you are authorized at ``level``, and as whom, by which method."""
    if daemon == "schedd":
        address = await svc.access.schedd_address(caller)
    else:
        address = svc.access.collector(caller).addresses[0]
    result = await svc.access.ping(caller, level, address)
    return m.PingResponse(
        daemon=daemon,
        address=address,
        level=result.level,
        authorized=result.authorized,
        user=result.user,
        method=result.method,
        encrypted=result.encrypted,
        remote_version=result.remote_version,
        error=result.error,
    )


@router.get("/version", response_model=m.VersionResponse)
async def version() -> m.VersionResponse:
    from cedar.http_api.models import package_version

    __version__ = package_version()

    return m.VersionResponse(cedar=__version__, condor_version=VERSION_STRING)


# --------------------------------------------------------------------------- tail and analysis


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
        inputs.jobs[0],
        inputs.slots,
        analyze_summary=inputs.analyze,
        schedd_ad=inputs.schedd_ad,
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

    ad, root, directory = await _fetch_output(svc, caller, job, ["UserLog"])
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
