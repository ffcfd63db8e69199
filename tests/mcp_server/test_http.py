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
from cedar.daemons.pool import MockPool
from cedar.mcp import McpSettings
from cedar.mcp.http import serve_http
from cedar.mcp.tools import TOOLS
from tests.loopback import held_port
from tests.mcp_server.helpers import (
    ERAS,
    UNCALLED,
    every_tool,
    keep_marked_jobs_idle,
    listed_tools_are_described,
    text,
)

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
        return {"none": none, "forged": forged, "metadata": metadata, "url": url}

    out = with_http_server(pool, work)
    for case in ("none", "forged"):
        response = out[case]
        assert response.status_code == 401, case
        where = out["url"] + "/.well-known/oauth-protected-resource/mcp"
        assert f'resource_metadata="{where}"' in response.headers["www-authenticate"], case
    document = out["metadata"].json()  # the service core's document (RFC 9728 §2)
    assert document["authorization_servers"] == [AUTH_SERVER]
    assert document["resource"] == out["url"] + "/mcp"
    assert document["bearer_methods_supported"] == ["header"]
    assert "condor:/WRITE" in document["scopes_supported"]


@pytest.mark.parametrize("mode", sorted(ERAS))
def test_both_protocol_eras_over_http(
    token_pool: tuple[MockPool, dict[str, str]], mode: str
) -> None:
    """The SDK's client in each era (2026-07-28: ``server/discover`` and stateless requests;
    2025-11-25: ``initialize`` and a session) lists every tool, described, and calls one."""
    pool, tokens = token_pool

    async def work(url: str) -> tuple[str | None, list[Any], Any]:
        async with client_for(url, tokens["carol"], mode=mode) as carol:
            tools = (await carol.list_tools()).tools
            return carol.protocol_version, tools, await carol.call_tool("whoami", {})

    version, tools, who = with_http_server(pool, work)
    assert version == ERAS[mode]
    listed_tools_are_described(tools)
    assert who.structured_content["identity"].startswith("carol@")


def test_the_2026_revision_by_raw_json_rpc(token_pool: tuple[MockPool, dict[str, str]]) -> None:
    """What the 2026-07-28 text asks, by hand: ``server/discover`` names the revision, and
    each request stands alone (no ``initialize``, no session id), carrying its revision in
    ``_meta`` and in the ``MCP-Protocol-Version`` header, its method (and a tool call its
    tool's name) in ``Mcp-Method`` (``Mcp-Name``), checked against the body."""
    pool, tokens = token_pool
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {tokens['alice']}",
        "MCP-Protocol-Version": "2026-07-28",
    }

    def request(ident: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": ident,
            "method": method,
            "params": {**(params or {}), "_meta": meta},
        }

    async def work(url: str) -> list[Any]:
        async with httpx2.AsyncClient(timeout=60) as http:
            answers = []
            for ident, method, params in [
                (1, "server/discover", None),
                (2, "tools/list", None),
                (3, "tools/call", {"name": "whoami", "arguments": {}}),
            ]:
                routing = {"Mcp-Method": method}  # the revision's routing headers
                if params is not None:
                    routing["Mcp-Name"] = params["name"]
                one = await http.post(
                    f"{url}/mcp",
                    json=request(ident, method, params),
                    headers={**headers, **routing},
                )
                answers.append(one)
            return answers

    discover, listed, called = with_http_server(pool, work)
    for answer in (discover, listed, called):
        assert answer.status_code == 200, answer.text
        assert "mcp-session-id" not in answer.headers  # stateless: no session
    found = discover.json()["result"]
    # the SDK (2.3.0) names only the revisions of this handshake; 2025-11-25 is served through
    # initialize (the era test above)
    assert "2026-07-28" in found["supportedVersions"]
    assert found["capabilities"]["tools"] is not None
    assert len(listed.json()["result"]["tools"]) == len(TOOLS)
    assert called.json()["result"]["structuredContent"]["identity"].startswith("alice@")
