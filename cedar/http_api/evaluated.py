"""``GET /api/v1/jobs/{job}/evaluated?attrs=A,B``: attributes of one of the caller's jobs (in
the queue, or else in the history) evaluated in the job's own ad, for people: the web page shows
``RequestDisk`` as a size, not as ``MAX({ 1024,(TransferInputSizeMB + 1) * 1.25 }) * 1024``.

A value that is not a number, string or boolean (undefined, error, a list or an ad) is ``null``;
the ad itself, with its expressions, stays what ``GET /api/v1/jobs/{job}`` answers. The private
attributes (``CEDAR_SERVE_PRIVATE_ATTRS``) are taken out of the ad before anything is evaluated,
so neither naming one nor an expression that refers to one reveals it: they are ``"<REDACTED>"``
as in every other answer, or undefined inside an expression.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from cedar.classad_wire import ClassAd
from cedar.errors import InvalidArgument
from cedar.http_api.api import job_id, one_job
from cedar.http_api.context import Services, caller_of, services
from cedar.service_core import Caller, NotFound, scoped_job
from cedar.service_core.scope import REDACTED

router = APIRouter(prefix="/api/v1")

#: At most this many names a request (each is evaluated in the whole ad).
MAX_NAMES = 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}\Z")


def plain(value: Any) -> int | float | str | bool | None:
    """A value JSON carries as itself, or None."""
    return value if isinstance(value, (bool, int, float, str)) else None


async def _job_ad(svc: Services, caller: Caller, job: str) -> ClassAd:
    """The caller's job from the queue, or its record in the history (404 when neither)."""
    try:
        return await one_job(svc, caller, job, [])
    except NotFound:
        pass
    cluster, proc = job_id(job)
    user = await svc.scope_user(caller)
    schedd = await svc.access.schedd(caller)
    async for ad in schedd.history(scoped_job(cluster, proc, user), [], 1):
        return ad
    raise NotFound(f"no job {cluster}.{proc} of yours")


@router.get("/jobs/{job}/evaluated", summary="Attributes of a job, evaluated", tags=["jobs"])
async def evaluated(
    request: Request, job: str, attrs: Annotated[str, Query(description="A,B,C")]
) -> dict[str, int | float | str | bool | None]:
    """Each named attribute of your job evaluated in its own ad (``null`` when it has no plain
    value)."""
    names = [name.strip() for name in attrs.split(",") if name.strip()]
    if not names or len(names) > MAX_NAMES or not all(_NAME.match(n) for n in names):
        raise InvalidArgument(f"attrs: 1 to {MAX_NAMES} attribute names, comma-separated")
    svc = services(request)
    ad = await _job_ad(svc, await caller_of(request), job)
    private = {name.lower() for name in svc.settings.private_attrs}
    for name in list(ad):
        if name.lower() in private:
            del ad[name]
    return {name: REDACTED if name.lower() in private else plain(ad.eval(name)) for name in names}
