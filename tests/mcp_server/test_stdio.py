"""``cedar mcp`` over stdio, as an agent host starts it: a subprocess speaking JSON-RPC lines."""

from __future__ import annotations

import getpass
import json
import os
import select
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

import pytest
import trio
from mcp import Client, MCPDeprecationWarning, StdioServerParameters

from cedar.daemons.pool import MockPool
from cedar.mcp.tools import TOOLS
from tests.mcp_server.helpers import (
    ERAS,
    UNCALLED,
    every_tool,
    listed_tools_are_described,
    text,
)

SCRIPT = {"name": "run.sh", "content": "#!/bin/sh\necho hello\n", "executable": True}


def server_command(pool: MockPool, *extra: str) -> tuple[list[str], dict[str, str]]:
    """How a host would start ``cedar mcp`` for this pool (its own HTCondor configuration)."""
    env = {
        **os.environ,
        **pool.client_environment(),
        "_condor_SEC_CLIENT_AUTHENTICATION_METHODS": "FS",
    }
    env.pop("CEDAR_LIVE_COLLECTOR", None)
    command = [sys.executable, "-m", "cedar.cli.main", "mcp", "--pool", pool.host_port, *extra]
    return command, env


def test_the_sdk_client_drives_cedar_mcp_over_stdio(pool: MockPool) -> None:
    command, env = server_command(pool)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def main() -> dict[str, Any]:
        async with Client(params, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            who = await client.call_tool("whoami", {})
            submitted = await client.call_tool(
                "submit_job",
                {"description": "executable = run.sh\nqueue", "input_files": [SCRIPT]},
            )
            cluster = submitted.structured_content["cluster"]
            listed = await client.call_tool("query_jobs", {"constraint": f"ClusterId == {cluster}"})
            ad = await client.read_resource(f"condor://job/{cluster}.0")
            prompt = await client.get_prompt("what_went_wrong", {"job_id": f"{cluster}.0"})
            bad = await client.call_tool("query_jobs", {"constraint": "Owner =="})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.send_ping()
            return {
                "version": client.protocol_version,
                "tools": len(tools),
                "who": who,
                "listed": listed,
                "ad": ad.contents[0].text,  # type: ignore[union-attr]
                "prompt": prompt,
                "bad": bad,
            }

    out = trio.run(main)
    assert out["version"] == "2025-11-25"  # the newest revision of the initialize handshake
    assert out["tools"] == len(TOOLS)
    assert out["who"].structured_content["transport"] == "stdio"
    assert out["listed"].structured_content["count"] == 1
    assert '"ClusterId"' in out["ad"]
    assert out["bad"].is_error and text(out["bad"]).startswith("malformed constraint")


def test_every_tool_over_stdio(pool: MockPool) -> None:
    command, env = server_command(pool)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def main() -> dict[str, Any]:
        async with Client(params) as client:
            return await every_tool(client, getpass.getuser())

    seen = trio.run(main)
    assert set(seen) == set(TOOLS) - UNCALLED
    assert not [name for name, result in seen.items() if result.is_error]


@pytest.mark.parametrize("mode", sorted(ERAS))
def test_both_protocol_eras_over_stdio(pool: MockPool, mode: str) -> None:
    """auto: the client discovers the newest revision (2026-07-28); legacy: initialize."""
    command, env = server_command(pool)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def main() -> tuple[str | None, list[Any], bool]:
        async with Client(params, mode=mode) as client:
            tools = (await client.list_tools()).tools
            result = await client.call_tool("pool_summary", {})
            return client.protocol_version, tools, result.is_error

    version, tools, failed = trio.run(main)
    assert version == ERAS[mode] and not failed
    listed_tools_are_described(tools)


def test_stdout_carries_only_json_rpc_with_debug_logging(pool: MockPool) -> None:
    command, env = server_command(pool, "--debug")
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "whoami"}},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "query_jobs", "arguments": {"constraint": "(("}},
        },
        {"jsonrpc": "2.0", "id": 6, "method": "no/such/method"},
    ]
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 - a pipe could fill up with debug lines
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    lines: list[str] = []
    try:
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        deadline = time.monotonic() + 300  # generous: the server starts slowly under load
        answered: set[int] = set()
        while answered != {1, 2, 3, 4, 5, 6} and time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 1)
            if not ready:
                continue
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            answered.update([json.loads(line).get("id")] if '"id"' in line else [])
        process.stdin.close()  # the host goes away: the server ends
        rest = process.stdout.read()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    errors.seek(0)
    stderr = errors.read()
    errors.close()
    lines += rest.splitlines()
    messages = [json.loads(line) for line in lines if line.strip()]  # each line: one JSON doc
    assert all(line.strip() for line in lines)
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert set(by_id) == {1, 2, 3, 4, 5, 6}
    assert by_id[2]["result"] == {} or by_id[2]["result"].get("resultType") == "complete"
    assert by_id[4]["result"]["structuredContent"]["transport"] == "stdio"
    assert by_id[5]["result"]["isError"] is True
    assert by_id[6]["error"]["code"] == -32601
    assert process.returncode == 0
    assert "DEBUG" in stderr  # the debug log went where it belongs
