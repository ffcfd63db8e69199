"""``/api/v1`` routes on the caller's jobs: one job's ad, submit, edit, and the actions (hold,
release, remove) on one job or on the jobs a constraint selects."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from cedar.classad_wire.expr import Expr
from cedar.commands.schedd import RESULT_NAMES, ActResult
from cedar.errors import InvalidArgument
from cedar.http_api import models as m
from cedar.http_api.api.common import ERRORS, CallerDep, ServicesDep, job_id, new_router, one_job
from cedar.http_api.context import Services, caller_of, services
from cedar.http_api.direct import direct
from cedar.http_api.sandbox import write_file
from cedar.numbers import JobAction
from cedar.service_core import Caller, NotFound, job_constraint, scoped_constraint, typed_values
from cedar.service_core.adjson import ad_json_bytes
from cedar.submit_language import Submit

router = new_router()


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
