"""Actions on every job a constraint matches (``remove_jobs``, ``hold_jobs``,
``release_jobs``, ``edit_jobs``): scoped like a listing, bounded by ``max_jobs``, and a count
only until ``confirm`` is given (one protocol: count, then act).  Rows of the one table in
:mod:`cedar.mcp.tools`."""

from __future__ import annotations

from cedar.classad_wire.constraints import parse_constraint
from cedar.classad_wire.expr import Expr
from cedar.commands.schedd import RESULT_NAMES
from cedar.mcp.schemas import (
    BulkArgs,
    BulkEditArgs,
    BulkResult,
    PerJob,
    Result,
)
from cedar.mcp.toolbase import ToolCall, ToolFailure, checked_constraint
from cedar.numbers import JobAction
from cedar.service_core.values import check_editable


async def matching_ids(call: ToolCall, text: str) -> list[str]:
    """Ids of the caller's jobs matching a constraint (scoped like a listing); refused when
    more than ``max_jobs`` match."""
    constraint = await call.scoped(checked_constraint(text))
    schedd = await call.schedd()
    limit = call.settings.max_jobs
    ads = await schedd.query(constraint, ["ClusterId", "ProcId"], limit + 1)
    if len(ads) > limit:
        raise ToolFailure(f"more than {limit} jobs match; narrow the constraint")
    return [f"{ad['ClusterId']}.{ad['ProcId']}" for ad in ads]


async def _act_on_ids(
    call: ToolCall, action: JobAction, ids: list[str], reason: str | None
) -> list[PerJob]:
    """One ACT_ON_JOBS for the ids; each job's answer."""
    if not ids:
        return []
    verb = action.name.lower()
    await call.progress(0, len(ids), verb)
    schedd = await call.schedd()
    reason = reason or f"via cedar mcp by {(await call.identity()).user}"
    outcome = await schedd.act(action, ids, reason, long=True)
    results = []
    for job_id in ids:
        code = outcome.jobs.get(job_id, 0)
        results.append(
            PerJob(job_id=job_id, result=RESULT_NAMES.get(code, str(code)), succeeded=code == 1)
        )
    await call.progress(len(ids), len(ids), f"{verb} done")
    return results


def _dry_run(ids: list[str], verb: str) -> tuple[Result, str]:
    result = BulkResult(matched=len(ids), confirmed=False, changed=0, hints=["query_jobs"])
    return result, f"{len(ids)} job(s) match; nothing done: call again with confirm=true to {verb}"


async def _bulk(call: ToolCall, action: JobAction, args: BulkArgs) -> tuple[Result, str]:
    ids = await matching_ids(call, args.constraint)
    verb = action.name.lower()
    if not args.confirm:
        return _dry_run(ids, verb)
    results = await _act_on_ids(call, action, ids, args.reason)
    changed = sum(r.succeeded for r in results)
    result = BulkResult(matched=len(ids), confirmed=True, changed=changed, results=results)
    return result, f"{verb}: {changed} of {len(ids)} matching job(s)"


async def remove_jobs(call: ToolCall, args: BulkArgs) -> tuple[Result, str]:
    return await _bulk(call, JobAction.Remove, args)


async def hold_jobs(call: ToolCall, args: BulkArgs) -> tuple[Result, str]:
    return await _bulk(call, JobAction.Hold, args)


async def release_jobs(call: ToolCall, args: BulkArgs) -> tuple[Result, str]:
    return await _bulk(call, JobAction.Release, args)


def value_tree(text: str) -> Expr:
    """A new attribute value, parsed by the one constraint rule (an expression)."""
    try:
        value = parse_constraint(text)
    except ValueError as exc:
        raise ToolFailure(str(exc).replace("constraint", "value", 1)) from None
    if value is None:
        raise ToolFailure("the new value is empty")
    return value


async def edit_jobs(call: ToolCall, args: BulkEditArgs) -> tuple[Result, str]:
    check_editable([args.attribute])  # the services' one deny-list
    value = value_tree(args.value)
    ids = await matching_ids(call, args.constraint)
    if not args.confirm:
        return _dry_run(ids, f"set {args.attribute}")
    changed = await (await call.schedd()).edit(ids, args.attribute, value) if ids else 0
    result = BulkResult(matched=len(ids), confirmed=True, changed=changed, hints=["query_jobs"])
    return result, f"set {args.attribute} = {args.value} on {changed} of {len(ids)} job(s)"
