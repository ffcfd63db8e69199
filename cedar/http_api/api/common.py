"""What every ``/api/v1`` route module shares: its router's shape, the caller and services
dependencies, the error responses, the job-id rule and the caller's one job."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from cedar.classad_wire import ClassAd
from cedar.http_api import models as m
from cedar.http_api.context import Services, caller_of, services_dep
from cedar.http_api.direct import DirectAPIRoute
from cedar.jobid import parse_job_id
from cedar.service_core import Caller, NotFound, scoped_job


def new_router() -> APIRouter:
    """A router of ``/api/v1`` routes (one a module; :mod:`cedar.http_api.api` joins them)."""
    return APIRouter(prefix="/api/v1", route_class=DirectAPIRoute)


CHUNK = 1 << 16  #: bytes of JSON gathered before one send of a streamed listing
PAGE_TOKEN = re.compile(r"([0-9]{1,9})\.([0-9]{1,9})\Z")

CallerDep = Annotated[Caller, Depends(caller_of)]
ServicesDep = Annotated[Services, Depends(services_dep)]
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": m.ErrorBody} for code in (400, 401, 403, 404, 413, 429, 502, 504)
}


def job_id(text: str) -> tuple[int, int]:
    """``cluster.proc`` (the one job-id shape of the API)."""
    job = parse_job_id(text, need_proc=True)
    return job.cluster, job.proc or 0


async def one_job(svc: Services, caller: Caller, job: str, projection: list[str]) -> ClassAd:
    """The caller's job ``job`` (404 when absent or not the caller's)."""
    cluster, proc = job_id(job)
    user = await svc.scope_user(caller)
    schedd = await svc.access.schedd(caller)
    ads = await schedd.query(scoped_job(cluster, proc, user), projection, 1)  # stops the scan
    if not ads:
        raise NotFound(f"no job {cluster}.{proc} of yours")
    return ads[0]


async def fetch_output(
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
