"""``/api/v1`` sandboxes: a spooled job's input uploaded (tar or multipart), its output
downloaded (tar, one file, stdout, stderr)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import trio
from fastapi import Request
from fastapi.responses import Response
from starlette.background import BackgroundTask
from starlette.responses import FileResponse

from cedar.commands._async.command import run_command_async
from cedar.commands.filetransfer import expand_inputs
from cedar.commands.spool import spool_protocol
from cedar.errors import InvalidArgument
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
from cedar.http_api.context import Services
from cedar.http_api.sandbox import TooLarge, extract_tar, pack_tar, resolve_file, write_file
from cedar.numbers import Command
from cedar.service_core import Caller, NotFound, ServiceError

router = new_router()


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


@router.get(
    "/jobs/{job}/output",
    responses={**ERRORS, 200: {"content": {"application/x-tar": {}}}},
    response_class=Response,
    summary="Download the output sandbox (tar)",
)
async def download_tar(svc: ServicesDep, caller: CallerDep, job: str) -> Response:
    _, root, directory = await fetch_output(svc, caller, job)
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
    _, root, directory = await fetch_output(svc, caller, job)
    return _file_response(root, directory, name)


async def _stream_file(svc: Services, caller: Caller, job: str, attr: str) -> Response:
    ad, root, directory = await fetch_output(svc, caller, job)
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
