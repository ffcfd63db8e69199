"""compute: submit a ``JobSpec`` as one HTCondor job, report, filter, update and cancel jobs,
all as the caller (its token is the only credential; the schedd authorizes) and scoped to the
identity the schedd authenticated.

Every job runs from a directory of the caller's staging area (``directory``, relative to it;
a fresh ``jobs/<id>`` when none is given): its files are spooled as the input sandbox, and its
output is fetched back there when it is first reported finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from typing import Any

from starlette.responses import Response

from cedar.classad_wire.constraints import and_constraints
from cedar.classad_wire.expr import AttrRef, Binary, Expr, Literal
from cedar.errors import CedarError
from cedar.http_api.iri.call import Call, handler
from cedar.http_api.iri.facility import page
from cedar.http_api.iri.filesystem import staging_dir
from cedar.http_api.iri.mapping import (
    STATUS_ATTRS,
    editable,
    job_status,
    submit_description,
)
from cedar.http_api.iri.problem import Problem
from cedar.jobid import parse_job_id
from cedar.numbers import JobAction, JobStatus
from cedar.service_core import job_constraint, scoped_constraint, scoped_job
from cedar.submit_language import Submit

#: Finished jobs read from the history for one ``historical`` listing.
HISTORY_MATCH = 1000


def _job_id(text: str) -> tuple[int, int]:
    try:
        job = parse_job_id(text, need_proc=True)
    except CedarError:
        raise Problem(404, "no such job") from None
    return job.cluster, job.proc or 0


def _key(call: Call, cluster: int, proc: int) -> str:
    return f"{call.path['resource_id']}/{cluster}.{proc}"


def _job_json(call: Call, ad: Any, include_spec: bool) -> dict[str, Any]:
    cluster, proc = int(ad.get("ClusterId")), int(ad.get("ProcId"))
    answer: dict[str, Any] = {"id": f"{cluster}.{proc}", "status": job_status(ad)}
    if include_spec:
        record = call.store.get("job", _key(call, cluster, proc))
        answer["job_spec"] = record.body["spec"] if record else None
    return answer


async def _fetch_output(call: Call, ad: Any) -> None:
    """Bring a finished staged job's output back to its directory, once."""
    if ad.get("JobStatus") != JobStatus.COMPLETED:
        return
    key = _key(call, int(ad.get("ClusterId")), int(ad.get("ProcId")))
    record = call.store.get("job", key)
    if record is None or record.body.get("fetched"):
        return
    schedd = await call.services.access.schedd(call.caller)
    job = f"{ad.get('ClusterId')}.{ad.get('ProcId')}"
    await schedd.retrieve(job, record.body["directory"], max_bytes=call.state.settings.max_upload)
    call.store.put("job", key, record.owner, {**record.body, "fetched": True})


async def _find(call: Call, cluster: int, proc: int, historical: bool) -> Any:
    user = await call.user()
    schedd = await call.services.access.schedd(call.caller)
    ads = await schedd.query(scoped_job(cluster, proc, user), STATUS_ATTRS, 1)
    if ads:
        return ads[0]
    if historical:
        async for ad in schedd.history(scoped_job(cluster, proc, user), STATUS_ATTRS, 1):
            return ad
    raise Problem(404, f"no job {cluster}.{proc} of yours")


def _account(call: Call, spec: dict[str, Any]) -> str | None:
    header = call.request.headers.get("x-iri-facility-project")
    body = (spec.get("attributes") or {}).get("account")
    if header is not None and body is not None:
        raise Problem(
            400, "give the project in attributes.account or X-IRI-Facility-Project, not both"
        )
    return body if body is not None else header


def _inputs(directory: str, spec: dict[str, Any]) -> list[str]:
    """The top-level entries of the job's directory, sent as its input sandbox."""
    skip = {spec.get("stdout_path"), spec.get("stderr_path")}
    return sorted(n for n in os.listdir(directory) if n not in skip)


async def _submit(call: Call, spec: dict[str, Any], user: str) -> dict[str, Any]:
    account = _account(call, spec)
    directory = staging_dir(call, user, spec.get("directory") or f"jobs/{uuid.uuid4()}")
    lines = submit_description(spec, account=account, transfer_inputs=_inputs(directory, spec))
    schedd = await call.services.access.schedd(call.caller)
    result = await schedd.submit(Submit(lines), 1, submit_dir=directory, spool=True)
    job = f"{result.cluster}.{result.first_proc}"
    call.store.put(
        "job",
        f"{call.path['resource_id']}/{job}",
        user,
        {"spec": spec, "directory": directory, "fetched": False},
    )
    await schedd.spool(result)
    ads = await schedd.query(job_constraint(result.cluster, result.first_proc), STATUS_ATTRS, 1)
    status = job_status(ads[0]) if ads else {"state": "new"}
    return {"id": job, "status": status}


@handler("launchJob", resource="compute")
async def launch_job(call: Call) -> Any:
    """Submit; with ``Idempotency-Key``, the same key and body answer the first submission
    again, the same key with another body (or while the first is in flight) is a 409."""
    user = await call.user()
    key = call.query.get("Idempotency-Key")
    if key is None:
        return await _submit(call, call.body, user)
    digest = hashlib.sha256(
        json.dumps([call.path["resource_id"], call.body], sort_keys=True).encode()
    ).hexdigest()
    kid = hashlib.sha256(f"{user}\0{key}".encode()).hexdigest()
    if not call.store.add("idempotency", kid, user, {"digest": digest, "answer": None}):
        found = call.store.get("idempotency", kid)
        if found is None or found.body["digest"] != digest:
            raise Problem(409, "this Idempotency-Key was used with another request body")
        if found.body["answer"] is None:
            raise Problem(409, "the request with this Idempotency-Key is still being served")
        return found.body["answer"]
    try:
        answer = await _submit(call, call.body, user)
    except BaseException:
        call.store.delete("idempotency", kid)
        raise
    call.store.put("idempotency", kid, user, {"digest": digest, "answer": answer})
    return answer


@handler("getJob", resource="compute")
async def get_job(call: Call) -> Any:
    cluster, proc = _job_id(call.path["job_id"])
    ad = await _find(call, cluster, proc, bool(call.query.get("historical")))
    await _fetch_output(call, ad)
    return _job_json(call, ad, bool(call.query.get("include_spec")))


def _filters(body: Any) -> tuple[set[str] | None, str | None, dict[str, Any]]:
    """``state`` (one JobState or a list), ``name`` (the batch name), and attribute equalities."""
    states: set[str] | None = None
    name: str | None = None
    equal: dict[str, Any] = {}
    for key, value in (body or {}).items():
        if key == "state":
            values = value if isinstance(value, list) else [value]
            if not all(isinstance(v, str) for v in values):
                raise Problem(422, "filter state: a JobState or a list of them")
            states = set(values)
        elif key == "name":
            if not isinstance(value, str):
                raise Problem(422, "filter name: a string")
            name = value
        elif isinstance(value, (str, int, float, bool)) and key.isidentifier():
            equal[key] = value
        else:
            raise Problem(422, f"filter {key[:60]!r}: an attribute name with a plain value")
    return states, name, equal


@handler("getJobs", resource="compute")
async def get_jobs(call: Call) -> Any:
    user = await call.user()
    states, name, equal = _filters(call.body)
    parts: list[Expr | None] = (
        [Binary("==", AttrRef("JobBatchName"), Literal(name))] if name else []
    )
    parts += [Binary("=?=", AttrRef(k), Literal(v)) for k, v in equal.items()]
    constraint = and_constraints(parts)
    schedd = await call.services.access.schedd(call.caller)
    ads = list(await schedd.query(scoped_constraint(constraint, user), STATUS_ATTRS))
    if call.query.get("historical"):
        scoped = scoped_constraint(constraint, user)
        ads += [ad async for ad in schedd.history(scoped, STATUS_ATTRS, HISTORY_MATCH)]
    include = bool(call.query.get("include_spec"))
    found = [_job_json(call, ad, include) for ad in ads]
    if states is not None:
        found = [j for j in found if j["status"]["state"] in states]
    return page(call, found)


@handler("updateJob", resource="compute")
async def update_job(call: Call) -> Any:
    """Change what qedit may change on an idle job: resources, duration, name, custom
    attributes.  Any other field that differs from the job's spec is a 422."""
    cluster, proc = _job_id(call.path["job_id"])
    ad = await _find(call, cluster, proc, False)
    if ad.get("JobStatus") != JobStatus.IDLE:
        raise Problem(409, f"job {cluster}.{proc} is not idle: only an idle job can be updated")
    record = call.store.get("job", _key(call, cluster, proc))
    old = record.body["spec"] if record else {}
    for field in ("executable", "arguments", "directory", "environment", "container",
                  "stdin_path", "stdout_path", "stderr_path"):  # fmt: skip
        if call.body.get(field) not in (None, [], {}) and call.body.get(field) != old.get(field):
            raise Problem(422, f"{field} cannot be changed once the job is submitted")
    schedd = await call.services.access.schedd(call.caller)
    for name, value in editable(call.body).items():
        await schedd.edit(f"{cluster}.{proc}", name, value)
    if record is not None:
        merged = {**old, **{k: v for k, v in call.body.items() if v is not None}}
        call.store.put("job", record.id, record.owner, {**record.body, "spec": merged})
    ad = await _find(call, cluster, proc, False)
    return _job_json(call, ad, False)


@handler("cancelJob", resource="compute")
async def cancel_job(call: Call) -> Any:
    cluster, proc = _job_id(call.path["job_id"])
    user = await call.user()
    schedd = await call.services.access.schedd(call.caller)
    scoped = scoped_job(cluster, proc, user)
    assert scoped is not None  # the job's id is always in it
    result = await schedd.act(JobAction.Remove, scoped, "canceled through the IRI API", long=True)
    if not result.jobs:
        raise Problem(404, f"no job {cluster}.{proc} of yours")
    return Response(status_code=204)
