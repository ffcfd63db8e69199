"""``cedar mcp --http``: streamable HTTP through Hypercorn's Trio worker, bearer tokens passed
through to the daemons, RFC 9728 metadata, and owner scoping per token."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cedar.auth.signing_key import SigningKeyStore
from cedar.auth.token import create_token
from cedar.config import Config, set_default_config
from cedar.mcp_server import McpSettings
from cedar.mcp_server.http import serve_http
from cedar.mcp_server.tools import TOOLS
from cedar.server.pool import MockPool
from tests.loopback import held_port
from tests.mcp_server.helpers import UNCALLED, every_tool, keep_marked_jobs_idle, text

SCRIPT = {"name": "run.sh", "content": "#!/bin/sh\necho hi\n", "executable": True}
AUTH_SERVER = "https://issuer.example"


@pytest.fixture(scope="module")
def token_pool() -> Iterator[tuple[MockPool, dict[str, str]]]:
    """A mock pool that takes IDTOKENs only, and tokens of alice, bob and the admin root."""
    set_default_config(Config())
    pool = MockPool.for_setup("tokens", simulate=True, tick=0.1, run_time=0.3)
    store = pool.policy.options["signing_keys"]
    assert isinstance(store, SigningKeyStore)
    key = store.get("POOL")
    assert key is not None
    domain = pool.policy.trust_domain or pool.policy.uid_domain
    tokens = {
        user: create_token(key, issuer=domain, subject=f"{user}@{domain}", lifetime=3600)
        for user in ("alice", "bob", "boss", "carol")
    }
    keep_marked_jobs_idle(pool)
    with pool.run_in_thread():
        yield pool, tokens


def with_http_server(pool: MockPool, work: Any, **settings: Any) -> Any:
    """Serve ``cedar mcp --http`` for the pool on a held port (its metadata names the port, so
    it must be known before the bind) while ``work(url)`` runs."""
    config = McpSettings(pool=pool.host_port, authorization_servers=(AUTH_SERVER,), **settings)

    async def main(port: int) -> Any:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(
                lambda task_status: serve_http(config, "127.0.0.1", port, task_status=task_status)
            )
            assert binds == [f"http://127.0.0.1:{port}"]
            try:
                with trio.fail_after(300):  # a bound for a hang, generous under load
                    return await work(f"http://127.0.0.1:{port}")
            finally:
                nursery.cancel_scope.cancel()

    with held_port() as port:
        return trio.run(main, port)


def client_for(url: str, token: str | None, **kwargs: Any) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    return Client(streamable_http_client(f"{url}/mcp", http_client=http), **kwargs)


def test_two_users_tokens_over_http_show_the_scoping(
    token_pool: tuple[MockPool, dict[str, str]],
) -> None:
    pool, tokens = token_pool

    async def work(url: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with client_for(url, tokens["alice"]) as alice:
            out["alice_who"] = await alice.call_tool("whoami", {})
            steps: list[str | None] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                steps.append(message)

            sub = await alice.call_tool(
                "submit_job",
                {"description": "executable = run.sh\nqueue", "input_files": [SCRIPT]},
                progress_callback=on_progress,
            )
            out["progress"] = steps
            assert not sub.is_error, text(sub)
            out["job"] = f"{sub.structured_content['cluster']}.0"
            out["alice_list"] = await alice.call_tool("query_jobs", {})
            out["tools"] = len((await alice.list_tools()).tools)
            out["resource"] = await alice.read_resource(f"condor://job/{out['job']}")
            out["prompt"] = await alice.get_prompt("why_is_my_job_idle", {"job_id": out["job"]})
        async with client_for(url, tokens["bob"], mode="legacy") as bob:
            out["bob_who"] = await bob.call_tool("whoami", {})
            out["bob_list"] = await bob.call_tool("query_jobs", {"constraint": "true"})
            out["bob_get"] = await bob.call_tool("get_job", {"job_id": out["job"]})
            out["bob_remove"] = await bob.call_tool("remove_job", {"job_id": out["job"]})
        async with client_for(url, tokens["boss"]) as boss:
            out["boss_list"] = await boss.call_tool("query_jobs", {})
        return out

    out = with_http_server(pool, work, admins=frozenset({"boss"}))
    assert out["alice_who"].structured_content["identity"].startswith("alice@")
    assert out["alice_who"].structured_content["transport"] == "http"
    assert out["bob_who"].structured_content["identity"].startswith("bob@")
    assert out["tools"] == len(TOOLS)
    ids = lambda r: {f"{j['ClusterId']}.{j['ProcId']}" for j in r.structured_content["jobs"]}  # noqa: E731
    assert out["job"] in ids(out["alice_list"])
    assert out["job"] not in ids(out["bob_list"])
    assert out["bob_get"].is_error and out["bob_remove"].is_error
    assert out["job"] in ids(out["boss_list"])  # the admin named in the settings sees all
    assert out["progress"][0] == "submitting" and out["progress"][-1] == "submitted"
    assert '"Owner": "alice"' in out["resource"].contents[0].text


def test_every_tool_over_http(token_pool: tuple[MockPool, dict[str, str]]) -> None:
    pool, tokens = token_pool

    async def work(url: str) -> dict[str, Any]:
        async with client_for(url, tokens["carol"]) as carol:
            return await every_tool(carol, "carol")

    seen = with_http_server(pool, work)
    assert set(seen) == set(TOOLS) - UNCALLED
    assert not [name for name, result in seen.items() if result.is_error]


def test_no_or_bad_token_is_401_naming_the_metadata(
    token_pool: tuple[MockPool, dict[str, str]],
) -> None:
    pool, _ = token_pool
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}

    async def work(url: str) -> dict[str, Any]:
        async with httpx2.AsyncClient(timeout=30) as http:
            none = await http.post(f"{url}/mcp", json=initialize, headers=headers)
            forged = await http.post(
                f"{url}/mcp",
                json=initialize,
                headers={**headers, "Authorization": "Bearer not.a.token"},
            )
            metadata = await http.get(f"{url}/.well-known/oauth-protected-resource/mcp")
        return {"none": none, "forged": forged, "metadata": metadata}

    out = with_http_server(pool, work)
    for case in ("none", "forged"):
        response = out[case]
        assert response.status_code == 401, case
        assert "resource_metadata=" in response.headers["www-authenticate"], case
    document = out["metadata"].json()
    assert document["authorization_servers"] == [AUTH_SERVER]
    assert document["resource"].endswith("/mcp")
