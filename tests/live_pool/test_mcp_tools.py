"""The MCP tools of issue 37 point 3 against the real pool: an ad advertised as the caller and
found by ``condor_status -any``, the reference lookups, a job's event log, stdout and stderr,
the history summary and the bulk actions that count before they act."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import trio  # noqa: E402
from mcp import Client  # noqa: E402

from tests.live_pool.test_mcp import SCRIPT, _minted, _stdio_params, _wait_status  # noqa: E402


def _condor_status_any(name: str) -> str:
    tools = os.environ.get("CEDAR_LIVE_TOOLS")
    config = os.environ.get("CEDAR_LIVE_CONDOR_CONFIG")
    if not tools or not config:
        pytest.skip("CEDAR_LIVE_TOOLS and CEDAR_LIVE_CONDOR_CONFIG are needed")
    env = {**os.environ, "CONDOR_CONFIG": config}
    argv = [f"{tools}/condor_status", "-any", "-constraint", f'Name == "{name}"', "-af", "Purpose"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_advertise_ad_is_seen_by_condor_status(live_collector: str, tmp_path: Path) -> None:
    """As a daemon identity (DAEMON: ``condor@``, a token minted here) the ad is stored; the
    pool's user ``testuser`` is refused by the collector (the daemon decides)."""
    (tmp_path / "condor.token").write_text(_minted("condor"))
    params = _stdio_params(live_collector)
    params.env = {**(params.env or {}), "_condor_SEC_TOKEN_DIRECTORY": str(tmp_path)}
    ad = 'MyType = "CedarMcpLive"\nName = "cedar-mcp-live"\nPurpose = "live-test"'

    async def advertise(client_params: Any, invalidate: bool = False) -> Any:
        async with Client(client_params) as client:
            return await client.call_tool("advertise_ad", {"ad": ad, "invalidate": invalidate})

    sent = trio.run(advertise, params)
    assert not sent.is_error, sent.content
    try:
        assert _condor_status_any("cedar-mcp-live") == "live-test"
    finally:
        gone = trio.run(advertise, params, True)
    assert not gone.is_error, gone.content
    assert _condor_status_any("cedar-mcp-live") == ""
    refused = trio.run(advertise, _stdio_params(live_collector))
    assert refused.is_error and "DENIED" in str(refused.content)


def test_job_files_history_and_bulk_actions(live_collector: str) -> None:
    async def main() -> dict[str, Any]:
        async with Client(_stdio_params(live_collector)) as client:

            async def call(name: str, args: dict[str, Any]) -> Any:
                result = await client.call_tool(name, args)
                assert not result.is_error, (name, result.content)
                return result.structured_content

            seen: dict[str, Any] = {}
            for tool, name in [
                ("describe_knob", "SCHEDD_INTERVAL"),
                ("describe_job_attribute", "RequestMemory"),
                ("describe_submit_command", "should_transfer_files"),
                ("describe_machine_attribute", "Cpus"),
            ]:
                seen[tool] = await call(tool, {"name": name})
            seen["search"] = await call("search_reference", {"text": "request memory"})
            sub = await call(
                "submit_job",
                {
                    "description": "executable = run.sh\narguments = cedar-mcp\nlog = job.log\n"
                    "output = out.txt\nerror = err.txt\nrequest_memory = 64\nqueue",
                    "input_files": [SCRIPT],
                },
            )
            job = sub["job_ids"][0]
            await _wait_status(client, job, 4)
            seen["log"] = await call("get_job_log", {"job_id": job})
            seen["stdout"] = await call("get_job_stdout", {"job_id": job})
            seen["stderr"] = await call("get_job_stderr", {"job_id": job})
            seen["history"] = await call("summarize_history", {"scan_limit": 200})
            deferred = "executable = run.sh\narguments = later\noutput = out.txt\nqueue"
            sub = await call("submit_job", {"description": deferred, "defer_input": True})
            later = sub["job_ids"][0]
            seen["waiting"] = (await _wait_status(client, later, 5))["HoldReasonCode"]
            await call("upload_job_input", {"job_id": later, "input_files": [SCRIPT]})
            await _wait_status(client, later, 4)
            seen["later"] = await call("get_job_stdout", {"job_id": later})
            # (idle for good: no slot has 10 GB)
            description = "executable = run.sh\nrequest_memory = 10 GB\nqueue 2"
            idle = await call("submit_job", {"description": description, "input_files": [SCRIPT]})
            which = f"ClusterId == {idle['cluster']}"
            await _wait_status(client, f"{idle['cluster']}.1", 1)
            seen["dry"] = await call("hold_jobs", {"constraint": which})
            seen["still"] = await call("query_jobs", {"constraint": which + " && JobStatus == 1"})
            seen["hold"] = await call("hold_jobs", {"constraint": which, "confirm": True})
            seen["release"] = await call("release_jobs", {"constraint": which, "confirm": True})
            edit = {"constraint": which, "attribute": "JobBatchName", "value": '"bulk"'}
            seen["edit"] = await call("edit_jobs", {**edit, "confirm": True})
            seen["batch"] = await call(
                "query_jobs", {"constraint": which + ' && JobBatchName == "bulk"'}
            )
            seen["protected"] = await client.call_tool(
                "edit_jobs", {**edit, "attribute": "Owner", "confirm": True}
            )
            seen["remove_dry"] = await call("remove_jobs", {"constraint": which})
            seen["removed"] = await call("remove_jobs", {"constraint": which, "confirm": True})
            held = "executable = run.sh\nhold = true\nqueue"
            seen["held"] = await client.call_tool(
                "submit_job", {"description": held, "input_files": [SCRIPT]}
            )
            seen["on_hold"] = await call(
                "query_jobs", {"constraint": "JobStatus == 5 && HoldReasonCode == 15"}
            )
        return seen

    seen = trio.run(main)
    assert seen["describe_knob"]["ad"] == "config"
    assert seen["describe_job_attribute"]["submit_command"] == "request_memory"
    assert seen["describe_submit_command"]["name"] == "ShouldTransferFiles"
    assert "RequestMemory" in {m["name"] for m in seen["search"]["matches"]}
    kinds = [e["MyType"] for e in seen["log"]["events"]]
    assert kinds[0] == "SubmitEvent" and "JobTerminatedEvent" in kinds, kinds
    assert seen["stdout"]["lines"] == ["done by cedar-mcp"]
    assert seen["stderr"]["stream"] == "stderr"
    assert seen["waiting"] == 16 and seen["later"]["lines"] == ["done by later"]
    history = seen["history"]
    assert history["jobs"] >= 1 and history["by_status"].get("completed", 0) >= 1, history
    assert history["wall_time_seconds"]["count"] >= 1
    assert seen["dry"]["matched"] == 2 and not seen["dry"]["confirmed"]
    assert seen["still"]["count"] == 2  # the dry run held nothing
    assert seen["hold"]["changed"] == 2 and seen["release"]["changed"] == 2
    assert seen["edit"]["changed"] == 2 and seen["batch"]["count"] == 2
    assert seen["protected"].is_error and "Owner" in str(seen["protected"].content)
    # remove_jobs counts first, as the other bulk actions do
    assert seen["remove_dry"]["matched"] == 2 and not seen["remove_dry"]["confirmed"]
    assert seen["removed"]["changed"] == 2 and seen["removed"]["confirmed"]
    # hold = true: condor_submit -spool's refusal and what to do instead, nothing queued
    # (it was an "internal error (ExceptionGroup)" with a job left held in the queue)
    held = seen["held"]
    assert held.is_error and "Cannot set hold to 'true'" in held.content[0].text
    assert "defer_input=true" in held.content[0].text and seen["on_hold"]["count"] == 0
