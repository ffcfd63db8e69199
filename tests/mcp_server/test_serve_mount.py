"""The MCP server mounted in ``cedar serve`` at ``/mcp``, its lifespan run by the app's."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
import trio

from cedar.daemons.pool import MockPool
from cedar.mcp.tools import TOOLS
from tests.loopback import held_port
from tests.mcp_server.test_http import client_for, token_pool  # noqa: F401

pytest.importorskip("fastapi", reason="the serve extra is not installed")


def test_cedar_serve_mounts_mcp_with_its_lifespan(
    token_pool: tuple[MockPool, dict[str, str]],  # noqa: F811
) -> None:
    from cedar.http_api.server import serve
    from cedar.mcp.http import mount_in_serve
    from cedar.service_core import ServiceSettings

    pool, tokens = token_pool
    mounted: list[Any] = []

    def mount(app: Any) -> None:
        mounted.append(mount_in_serve(app))

    async def main(settings: ServiceSettings) -> dict[str, Any]:
        port = settings.port
        async with trio.open_nursery() as nursery:
            await nursery.start(
                lambda task_status: serve(
                    settings, announce=lambda _: None, mount=mount, task_status=task_status
                )
            )
            url = f"http://127.0.0.1:{port}"
            try:
                with trio.fail_after(300):  # a bound for a hang, generous under load
                    async with client_for(url, tokens["alice"]) as client:
                        who = await client.call_tool("whoami", {})
                        tools = (await client.list_tools()).tools
                    async with httpx2.AsyncClient(timeout=30) as http:
                        health = await http.get(f"{url}/healthz")
                        metadata = await http.get(f"{url}/.well-known/oauth-protected-resource/mcp")
                        anonymous = await http.post(f"{url}/mcp", json={})
                return {
                    "who": who,
                    "tools": tools,
                    "health": health.status_code,
                    "metadata": metadata.json(),
                    "anonymous": anonymous.status_code,
                }
            finally:
                nursery.cancel_scope.cancel()

    with held_port() as port:  # the metadata names the port: known before the bind
        settings = ServiceSettings(
            host="127.0.0.1", port=port, collector=pool.address, schedd=pool.schedd_address
        )
        out = trio.run(main, settings)
    assert mounted
    assert out["who"].structured_content["identity"].startswith("alice@")
    assert out["who"].structured_content["transport"] == "http"
    assert len(out["tools"]) == len(TOOLS)
    assert out["health"] == 200  # the REST API is still there
    assert out["metadata"]["resource"] == f"http://127.0.0.1:{port}/mcp"
    assert out["anonymous"] == 401


def test_an_ephemeral_port_mounts_no_mcp_without_a_resource_url() -> None:
    """The metadata must name a URL that reaches the server; port 0 is not known before the bind."""
    from cedar.config import Config
    from cedar.http_api.app import create_app
    from cedar.mcp.http import mount_in_serve, serve_http
    from cedar.mcp.settings import McpSettings
    from cedar.service_core import ServiceSettings

    def paths(app: Any) -> set[str]:
        return {getattr(route, "path", "") for route in app.router.routes}

    bare = ServiceSettings(host="127.0.0.1", port=0, config=Config())
    app = create_app(bare)
    assert mount_in_serve(app) is None
    assert "/mcp" not in paths(app)

    named = Config()
    named.set("CEDAR_MCP_RESOURCE_URL", "https://pool.example.org/mcp")
    app = create_app(ServiceSettings(host="127.0.0.1", port=0, config=named))
    http = mount_in_serve(app)
    assert http is not None and http.resource_url == "https://pool.example.org/mcp"
    assert "/mcp" in paths(app)

    from cedar.errors import ConfigError

    with pytest.raises(ConfigError, match="port 0 needs --resource-url"):
        trio.run(lambda: serve_http(McpSettings(), "127.0.0.1", 0))
