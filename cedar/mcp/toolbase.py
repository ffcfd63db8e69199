"""What every tool handler shares: the call (pool, caller, progress), the table's row, the
refusal, and the helpers that find a job and map an ad through the one mapping."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from cedar.classad_wire import ClassAd
from cedar.classad_wire.constraints import parse_constraint
from cedar.classad_wire.expr import Expr
from cedar.commands import AsyncCollector, AsyncSchedd
from cedar.commands.filetransfer import ProgressCallback, TransferProgress
from cedar.jobid import match_job_id
from cedar.mcp.access import KeptOutputs
from cedar.mcp.schemas import Args, Result
from cedar.mcp.settings import McpSettings
from cedar.numbers import JobStatus
from cedar.service_core import Caller, Identity, PoolAccess
from cedar.service_core.adjson import ad_dict

Progress = Callable[[float, "float | None", "str | None"], Awaitable[None]]


class ToolFailure(Exception):
    """A tool's refusal, said in one line to the agent."""


@dataclass
class ToolCall:
    """What a handler works with: the service core's pool access and caller (identity, scope,
    clients carrying the caller's credentials), the MCP settings, and a progress reporter."""

    access: PoolAccess
    caller: Caller
    progress: Progress
    settings: McpSettings
    outputs: KeptOutputs

    async def schedd(self) -> AsyncSchedd:
        """The schedd as the caller, a listing bounded by ``max_jobs`` (+1 to tell "more")."""
        return await self.access.schedd(self.caller, max_results=self.settings.max_jobs + 1)

    def collector(self) -> AsyncCollector:
        """The collector as the caller."""
        return self.access.collector(self.caller)

    async def identity(self) -> Identity:
        """What the schedd authenticated the caller as."""
        return await self.access.whoami(self.caller)

    async def scoped(self, *parts: str | Expr | None) -> Expr | None:
        """``parts`` within the caller's scope (the core's one rule)."""
        return await self.access.scoped(self.caller, *parts)


Handler = Callable[[ToolCall, Any], Awaitable[tuple[Result, str]]]


@dataclass(frozen=True)
class ToolSpec:
    """One row of the table."""

    name: str
    title: str
    description: str
    handler: Handler
    args: type[Args]
    result: type[Result]
    read_only: bool
    destructive: bool
    idempotent: bool

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (generated from the model)."""
        return self.args.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        """The JSON schema of ``structuredContent`` (generated from the model)."""
        return self.result.model_json_schema(mode="serialization")


# --------------------------------------------------------------------------- helpers


@asynccontextmanager
async def transfer_progress(call: ToolCall, label: str) -> AsyncIterator[ProgressCallback]:
    """A file-transfer progress callback whose latest step is sent as a progress notification
    every quarter second (bounded: only the latest step is kept, whatever thread reports it)."""
    latest: list[TransferProgress] = []

    def callback(step: TransferProgress) -> None:
        latest[:] = [step]

    async def pump() -> None:
        sent: TransferProgress | None = None
        while True:
            await anyio.sleep(0.25)
            step = latest[0] if latest else None
            if step is not None and step is not sent:
                sent = step
                total = float(step.total_size) if step.total_size > 0 else None
                await call.progress(float(step.total_done), total, f"{label} {step.name}")

    failed: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(pump)
        try:
            yield callback
        except Exception as exc:  # raised below, not wrapped in the task group's ExceptionGroup
            failed = exc
        finally:
            group.cancel_scope.cancel()
    if failed is not None:
        raise failed


def ad_json(call: ToolCall, ad: ClassAd) -> dict[str, Any]:
    """An ad as a JSON object: the service core's mapping
    (:func:`cedar.service_core.adjson.ad_dict`), private attributes redacted for every caller,
    as every other mouth does."""
    return ad_dict(ad, call.access.settings.private_attrs)


def job_id_of(text: str) -> tuple[int, int]:
    """``cluster.proc`` from the one job-id grammar (:mod:`cedar.jobid`)."""
    job = match_job_id(text)
    if job is None or job.proc is None:
        raise ToolFailure(f"{text[:40]!r} is not a job id (cluster.proc)")
    return job.cluster, job.proc


def status_name(value: object) -> str:
    """``idle``, ``running``, ... for a JobStatus value."""
    try:
        return JobStatus(int(value)).name.lower()  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return "unknown"


def checked_constraint(text: str | None) -> Expr | None:
    """A user's constraint parsed by the one rule (refused with its own message)."""
    return parse_constraint(text)  # refused here with its own message; the tree is handed on


def projection_of(names: list[str] | None, *always: str) -> list[str]:
    """The attributes asked for plus ``always``; empty (all) when none are asked for."""
    return [*always, *names] if names else []


async def find_job(
    call: ToolCall, job_id: str, projection: list[str] | None = None, *, archive: bool = False
) -> ClassAd:
    """The job's ad if the caller may see it; "no job" otherwise (scoped like a listing).
    With ``archive``, a job that left the queue is looked up in the schedd's history."""
    cluster, proc = job_id_of(job_id)
    constraint = await call.access.scoped_job(call.caller, cluster, proc)
    schedd = await call.schedd()
    wanted = projection_of(projection, "ClusterId", "ProcId")
    ads = await schedd.query(constraint, wanted, 1)
    if not ads and archive:
        ads = [ad async for ad in schedd.history(constraint, wanted, 1)]
    if not ads:
        where = "in the queue or its history" if archive else "in the queue"
        raise ToolFailure(f"no job {job_id} {where} (among the jobs you may see)")
    return ads[0]


def write_inputs(directory: Path, files: list[Any], limit: int) -> list[str]:
    """Write the inline input files; refuse paths and oversize input."""
    total = 0
    names: list[str] = []
    for item in files:
        name = item.name
        if "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
            raise ToolFailure(f"input file name {name!r} must be a plain file name")
        if item.encoding == "base64":
            try:
                data = base64.b64decode(item.content, validate=True)
            except ValueError:
                raise ToolFailure(f"input file {name!r} is not valid base64") from None
        else:
            data = item.content.encode("utf-8")
        total += len(data)
        if total > limit:
            raise ToolFailure(f"input files exceed {limit} bytes; stage larger data otherwise")
        path = directory / name
        path.write_bytes(data)
        if item.executable:
            os.chmod(path, 0o755)
        names.append(name)
    return names


def write_placeholder(directory: Path, executable: object) -> None:
    """An empty stand-in for a deferred job's executable: submit checks that it exists (as
    condor_submit does); the real one is sent by upload_job_input."""
    if isinstance(executable, str) and "/" not in executable and "$" not in executable:
        (directory / executable).touch(exist_ok=True)
