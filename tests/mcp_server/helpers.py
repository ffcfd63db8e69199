"""Driving a cedar MCP server with the SDK's own client, in-process (both protocol eras)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio
from mcp import Client
from mcp.types import CallToolResult

from cedar.auth.client_config import ClientSecurity
from cedar.daemons.pool import MockPool
from cedar.mcp import McpSettings, build_server, pool_access
from cedar.mcp.tools import TOOLS


def settings_for(pool: MockPool, **kwargs: Any) -> McpSettings:
    return McpSettings(pool=pool.host_port, **kwargs)


def run_client(
    pool: MockPool,
    security: ClientSecurity,
    work: Callable[[Client], Awaitable[Any]],
    *,
    mode: str = "auto",
    **settings: Any,
) -> Any:
    """Run ``work(client)`` against an in-process server acting as ``security``'s user."""
    config = settings_for(pool, **settings)
    server = build_server(config, pool_access(config, security))

    async def main() -> Any:
        async with Client(server, mode=mode) as client:
            return await work(client)

    return trio.run(main)


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


async def wait_status(client: Client, job_id: str, status: int, seconds: float = 120) -> None:
    """Until the job has ``status`` (the mock schedd runs jobs on its own clock)."""
    with trio.fail_after(seconds):
        while True:
            result = await client.call_tool(
                "get_job", {"job_id": job_id, "projection": ["JobStatus"]}
            )
            if not result.is_error and result.structured_content["job"]["JobStatus"] == status:
                return
            await trio.sleep(0.1)


SCRIPT = {"name": "run.sh", "content": "#!/bin/sh\necho hello\n", "executable": True}
#: Proc 1 is edited, held and released during the session, so it must not run (and complete)
#: meanwhile, as a 0.3 s mock run would on a loaded machine: its ``StayIdle`` keeps it idle
#: (:func:`keep_marked_jobs_idle`; a real pool ignores the attribute, its jobs run for longer).
DESCRIPTION = (
    "executable = run.sh\noutput = out.txt\nerror = err.txt\nlog = events.log\n"
    "+StayIdle = $(ProcId) == 1\nqueue 2"
)


#: The mock schedd writes no event log: the job's log is sent as an input file, and comes
#: back with the output as the job's ``log`` (a real pool's is in tests/live_pool).


#: Tools a whole session (:func:`every_tool`) leaves out: advertise_ad needs the pool's DAEMON
#: level, which only some callers have (tests/mcp_server/test_tools.py tests it on its own).
UNCALLED = {"advertise_ad"}


def keep_marked_jobs_idle(pool: MockPool) -> None:
    """The mock schedd starts no job whose ``StayIdle`` is true."""
    pool.schedd.queue.can_start = lambda ad: ad.eval("StayIdle") is not True


async def every_tool(client: Client, user: str, on_progress: Any = None) -> dict[str, Any]:
    """Call every tool once (a whole session), read the resources; the results by tool."""
    seen: dict[str, Any] = {}

    async def call(name: str, args: dict[str, Any], **kw: Any) -> Any:
        result = await client.call_tool(name, args, **kw)
        seen[name] = result
        return result

    who = await call("whoami", {})
    assert who.structured_content["identity"].startswith(f"{user}@")
    sub = await call(
        "submit_job",
        {"description": DESCRIPTION, "input_files": [SCRIPT]},
        progress_callback=on_progress,
    )
    assert not sub.is_error, text(sub)
    cluster = sub.structured_content["cluster"]
    assert sub.structured_content["job_ids"] == [f"{cluster}.0", f"{cluster}.1"]
    listed = await call("query_jobs", {"constraint": f"ClusterId == {cluster}"})
    assert listed.structured_content["count"] == 2
    assert {j["Owner"] for j in listed.structured_content["jobs"]} == {user}
    job = f"{cluster}.0"
    got = await call("get_job", {"job_id": job, "projection": ["RequestMemory"]})
    assert got.structured_content["job"]["ClusterId"] == cluster
    edited = await call(
        "edit_job", {"job_id": f"{cluster}.1", "attribute": "RequestMemory", "value": "2048"}
    )
    assert edited.structured_content["jobs_changed"] == 1, text(edited)
    held = await call("hold_job", {"job_id": f"{cluster}.1", "reason": "testing"})
    assert held.structured_content["result"] == "success", text(held)
    released = await call("release_job", {"job_id": f"{cluster}.1"})
    assert released.structured_content["succeeded"], text(released)
    await bulk_actions(call, cluster)
    await deferred_input(call, client)
    await reference_lookups(call)
    analysis = await call("analyze_job_match", {"job_id": job})
    assert not analysis.is_error and analysis.structured_content["text"]
    await call("pool_summary", {})
    described = await call("describe_attribute", {"name": "requestmemory"})
    assert described.structured_content["submit_command"] == "request_memory"
    await wait_status(client, job, 4)
    output = await call("get_job_output", {"job_id": job})
    assert not output.is_error, text(output)
    files = {f["name"]: f for f in output.structured_content["files"]}
    assert "run.sh" in files["out.txt"]["content"]  # the mock writes what it received
    log = await call("get_job_log", {"job_id": job})
    assert not log.is_error, text(log)
    kinds = [e["MyType"] for e in log.structured_content["events"]]
    # the mock schedd writes a spooled job's user log as the shadow does
    assert kinds == ["SubmitEvent", "ExecuteEvent", "JobTerminatedEvent"], kinds
    out = await call("get_job_stdout", {"job_id": job})
    assert "run.sh" in "\n".join(out.structured_content["lines"]), text(out)
    err = await call("get_job_stderr", {"job_id": job})
    assert err.structured_content["stream"] == "stderr", text(err)
    tail = await call("tail_job", {"job_id": job, "lines": 1})
    assert not tail.is_error, text(tail)
    assert len(tail.structured_content["lines"]) == 1
    archive = await call("query_job_archive", {"constraint": f"ClusterId == {cluster}"})
    assert not archive.is_error, text(archive)
    history = await call("summarize_history", {"window_hours": 1})
    assert not history.is_error, text(history)
    assert history.structured_content["as_of"] > 0
    removed = await call("remove_job", {"job_id": f"{cluster}.1"})
    assert removed.structured_content["succeeded"], text(removed)
    second = await call(
        "submit_job", {"description": "executable = run.sh\nqueue 3", "input_files": [SCRIPT]}
    )
    other = second.structured_content["cluster"]
    counted = await call("remove_jobs", {"constraint": f"ClusterId == {other}"})
    assert counted.structured_content["confirmed"] is False, text(counted)  # a count, no more
    assert counted.structured_content["matched"] == 3 and not counted.structured_content["results"]
    bulk = await call("remove_jobs", {"constraint": f"ClusterId == {other}", "confirm": True})
    assert bulk.structured_content["matched"] == 3, text(bulk)
    assert bulk.structured_content["changed"] == 3, text(bulk)
    assert [r["succeeded"] for r in bulk.structured_content["results"]] == [True] * 3
    epochs = await call("query_job_epochs", {"job_id": job})
    assert epochs.structured_content["count"] == 1, text(epochs)  # it ran once
    assert epochs.structured_content["records"][0]["ProcId"] == 0
    transfers = await call("query_transfer_history", {"job_id": job})
    assert not transfers.is_error, text(transfers)  # no URL plugin: no record
    ad = await client.read_resource(f"condor://job/{cluster}.0")
    assert f'"ClusterId": {cluster}' in ad.contents[0].text  # type: ignore[union-attr]
    summary = await client.read_resource("condor://pool/summary")
    assert "slots_total" in summary.contents[0].text  # type: ignore[union-attr]
    schedd = await client.read_resource("condor://schedd/ad")
    assert '"MyType": "Scheduler"' in schedd.contents[0].text  # type: ignore[union-attr]
    prompts = (await client.list_prompts()).prompts
    for prompt in prompts:
        got = await client.get_prompt(prompt.name, {"job_id": job, "table": "a,b\n1,2",
                                                     "executable": "run.sh"})  # fmt: skip
        assert got.messages, prompt.name
    assert len(prompts) == 3
    return seen


async def bulk_actions(call: Any, cluster: int) -> None:
    """hold_jobs, release_jobs and edit_jobs on proc 1: a count first, then the change."""
    which = f"ClusterId == {cluster} && ProcId == 1"
    dry = await call("hold_jobs", {"constraint": which})
    assert dry.structured_content == {
        "hints": ["query_jobs"], "matched": 1, "confirmed": False, "changed": 0, "results": []
    }, text(dry)  # fmt: skip
    held = await call("hold_jobs", {"constraint": which, "confirm": True})
    assert held.structured_content["changed"] == 1, text(held)
    released = await call("release_jobs", {"constraint": which, "confirm": True})
    assert released.structured_content["results"][0]["result"] == "success", text(released)
    edit = {"constraint": which, "attribute": "RequestMemory", "value": "1024"}
    counted = await call("edit_jobs", edit)
    assert counted.structured_content["matched"] == 1, text(counted)
    assert not counted.structured_content["confirmed"]
    edited = await call("edit_jobs", {**edit, "confirm": True})
    assert edited.structured_content["changed"] == 1, text(edited)


async def reference_lookups(call: Any) -> None:
    """The reference tools know the three names issue 37 asks for."""
    knob = await call("describe_knob", {"name": "SCHEDD_INTERVAL"})
    assert knob.structured_content["ad"] == "config" and knob.structured_content["type"]
    job = await call("describe_job_attribute", {"name": "RequestMemory"})
    assert job.structured_content["submit_command"] == "request_memory", text(job)
    machine = await call("describe_machine_attribute", {"name": "Memory"})
    assert machine.structured_content["ad"] == "machine", text(machine)
    command = await call("describe_submit_command", {"name": "should_transfer_files"})
    assert command.structured_content["name"] == "ShouldTransferFiles", text(command)
    found = await call("search_reference", {"text": "memory"})
    names = {m["name"] for m in found.structured_content["matches"]}
    assert {"RequestMemory", "Memory"} <= names, names


async def deferred_input(call: Any, client: Client) -> None:
    """submit_job with defer_input leaves the job waiting; upload_job_input refuses a sandbox
    without a file the job names, then sends it, and the job runs."""
    description = "executable = run.sh\ntransfer_input_files = data.txt\nqueue"
    sub = await call("submit_job", {"description": description, "defer_input": True})
    assert not sub.is_error, text(sub)
    job = f"{sub.structured_content['cluster']}.0"
    assert sub.structured_content["hints"] == ["upload_job_input"]
    waiting = await client.call_tool("get_job", {"job_id": job})
    assert waiting.structured_content["job"]["HoldReasonCode"] == 16
    short = await client.call_tool("upload_job_input", {"job_id": job, "input_files": [SCRIPT]})
    assert short.is_error and "data.txt" in text(short), text(short)
    data = {"name": "data.txt", "content": "42\n"}
    sent = await call("upload_job_input", {"job_id": job, "input_files": [SCRIPT, data]})
    assert sorted(sent.structured_content["spooled_files"]) == ["data.txt", "run.sh"], text(sent)
    await wait_status(client, job, 4)
    again = await client.call_tool("upload_job_input", {"job_id": job, "input_files": [data]})
    assert again.is_error and "not waiting" in text(again)


#: The SDK client's modes and the revision each speaks.
ERAS = {"auto": "2026-07-28", "legacy": "2025-11-25"}


def listed_tools_are_described(tools: list[Any]) -> None:
    """At least the Go twin's 29 tools, each with both schemas and its annotations."""
    assert len(tools) >= 29 and {t.name for t in tools} == set(TOOLS)
    for tool in tools:
        assert tool.input_schema["type"] == "object", tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        hints = tool.annotations
        assert hints is not None and hints.read_only_hint is not None, tool.name
        assert hints.destructive_hint is not None and hints.idempotent_hint is not None
