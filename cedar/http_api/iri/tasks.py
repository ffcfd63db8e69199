"""Tasks: each filesystem operation runs as a task, recorded in the store (so any replica
answers ``GET /task/{id}``), owned by the identity that asked."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from cedar.errors import CedarError
from cedar.http_api.iri.call import Call, handler
from cedar.http_api.iri.problem import Problem
from cedar.service_core import status_of


def _task_json(record_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": record_id,
        "status": body["status"],
        "result": body.get("result"),
        "command": body.get("command"),
    }


async def run_task(
    call: Call, command: str, args: dict[str, Any], work: Callable[[], Awaitable[Any]]
) -> dict[str, Any]:
    """Record a task for ``command``, run ``work`` and record how it ended; the answer is the
    spec's ``TaskSubmitResponse``."""
    user = await call.user()
    task_id = str(uuid.uuid4())
    body: dict[str, Any] = {
        "status": "active",
        "result": None,
        "command": {"router": call.op.path.split("/")[3], "command": command, "args": args},
    }
    call.store.add("task", task_id, user, body)
    try:
        result = await work()
    except (Problem, CedarError) as exc:
        code, detail = (exc.status, exc.detail) if isinstance(exc, Problem) else status_of(exc)
        body = {**body, "status": "failed", "result": {"status": code, "detail": detail}}
        call.store.put("task", task_id, user, body)
        raise
    body = {**body, "status": "completed", "result": {"output": result}}
    call.store.put("task", task_id, user, body)
    return {"task_id": task_id, "task_uri": call.uri(f"task/{task_id}")}


async def _own(call: Call) -> tuple[str, dict[str, Any]]:
    user = await call.user()
    record = call.store.get("task", call.path["task_id"])
    if record is None or record.owner != user:
        raise Problem(404, "no such task of yours")
    return record.id, record.body


@handler("getTasks")
async def get_tasks(call: Call) -> Any:
    user = await call.user()
    return [_task_json(r.id, r.body) for r in call.store.list("task", user)]


@handler("getTask")
async def get_task(call: Call) -> Any:
    return _task_json(*await _own(call))


@handler("deleteTask")
async def delete_task(call: Call) -> Any:
    """Forget a task.  Each operation runs to its end before its answer, so there is nothing
    left to cancel: the record goes."""
    task_id, _ = await _own(call)
    call.store.delete("task", task_id)
    return f"task {task_id} deleted"
