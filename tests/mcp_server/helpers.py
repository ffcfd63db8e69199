"""Driving a cedar MCP server with the SDK's own client, in-process (both protocol eras)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio
from mcp import Client
from mcp.types import CallToolResult

from cedar.auth.client import ClientSecurity
from cedar.mcp_server import McpSettings, PoolAccess, build_server
from cedar.server.pool import MockPool


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
    server = build_server(config, PoolAccess(config, security))

    async def main() -> Any:
        async with Client(server, mode=mode) as client:
            return await work(client)

    return trio.run(main)


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


async def wait_status(client: Client, job_id: str, status: int, seconds: float = 10) -> None:
    """Until the job has ``status`` (the mock schedd runs jobs on its own clock)."""
    with trio.fail_after(seconds):
        while True:
            result = await client.call_tool(
                "get_job", {"job_id": job_id, "projection": ["JobStatus"]}
            )
            if not result.is_error and result.structured_content["job"]["JobStatus"] == status:
                return
            await trio.sleep(0.1)
