"""One service core under every mouth (issue 37, point 1): the same job asked through REST
``/api/v1``, restd ``/v1`` and MCP, by its owner, by another user and by an admin, reveals
the same attributes, and no private attribute (``ClaimId``, ``Capability``, ...) planted in the
schedd's ads reaches any of them unless the settings say so.

The web page's API (``/web/api/...``, a signed-in browser's cookie) re-enters ``/api/v1`` with
the session's token, and is asked the same here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from cedar.classad_wire import ClassAd
from cedar.service_core import Caller, PoolAccess
from cedar.service_core.settings import DEFAULT_PRIVATE_ATTRS
from tests.http_api.conftest import Api, serving
from tests.http_api.test_api import submit
from tests.service_core.conftest import TokenPool

pytest.importorskip("mcp", reason="the mcp extra is not installed")

SECRET = "s3cr3t-planted-value"


@pytest.fixture(autouse=True)
def leaky_schedd(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mock schedd sends private attributes, as an older or differently configured daemon
    would (25.13.2's strips them itself: measured), so the services' own redaction is tested."""
    import cedar.daemons.schedd as schedd

    original = schedd.put_classad

    def leaky(*args: Any, **kwargs: Any) -> Any:
        kwargs["exclude_private"] = False
        return original(*args, **kwargs)

    monkeypatch.setattr(schedd, "put_classad", leaky)


def _plant(api: Api, job: str) -> None:
    """Every default private attribute, in the job's cluster ad as the schedd holds it."""
    cluster = int(job.split(".")[0])
    queue = api.pool.pool.schedd.queue
    planted = "".join(f'{name} = "{SECRET}-{name}"\n' for name in DEFAULT_PRIVATE_ATTRS)
    with queue.lock:
        ad = queue.clusters[cluster]
        queue.clusters[cluster] = ClassAd.from_raw_text(ad.print_old() + planted)


def _mcp_get_job(api: Api, token: str, job: str, admins: frozenset[str]) -> dict[str, Any]:
    """``get_job`` and ``query_jobs`` through the MCP server, as the token's holder."""
    from mcp import Client

    from cedar.mcp import McpSettings, build_server, pool_access

    settings = McpSettings(
        pool=api.pool.pool.host_port, schedd_address=api.pool.pool.schedd_address, admins=admins
    )
    security = PoolAccess(api.server.settings).security(Caller.from_token(token))
    server = build_server(settings, pool_access(settings, security))

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            one = await client.call_tool("get_job", {"job_id": job})
            listed = await client.call_tool(
                "query_jobs", {"constraint": f"ClusterId == {job.split('.')[0]}"}
            )
            return {
                "one": None if one.is_error else one.structured_content,
                "listed": listed.structured_content,
                "text": json.dumps([one.model_dump(mode="json"), listed.model_dump(mode="json")]),
            }

    result: dict[str, Any] = trio.run(main)
    return result


def _untimed(body: Any) -> Any:
    """An answer without the schedd's per-query clock (``ServerTime``)."""
    return {k: v for k, v in body.items() if k != "ServerTime"} if isinstance(body, dict) else body


@pytest.mark.parametrize("who", ["owner", "other", "admin"])
def test_every_mouth_redacts_and_scopes_alike(token_pool: TokenPool, who: str) -> None:
    policy = token_pool.pool.policy
    domain = policy.trust_domain or policy.uid_domain
    admins = frozenset({f"bob@{domain}"}) if who == "admin" else frozenset()
    with serving(token_pool, admins=admins) as api:  # one admin rule for every mouth
        job = submit(api.alice, 1)[0]
        _plant(api, job)
        cluster, proc = job.split(".")
        token = {"owner": token_pool.alice, "other": token_pool.bob, "admin": token_pool.bob}[who]
        client = {"owner": api.alice, "other": api.bob, "admin": api.bob}[who]

        from tests.web.test_session import signed_in

        browser, _ = signed_in(api.url, token)
        try:
            web = browser.get(f"/web/api/jobs/{job}")
            web_list = browser.get(
                "/web/api/jobs", params={"constraint": f"ClusterId == {cluster}"}
            )
        finally:
            browser.close()
        rest = client.get(f"/api/v1/jobs/{job}")
        rest_list = client.get("/api/v1/jobs", params={"constraint": f"ClusterId == {cluster}"})
        restd = client.get(f"/v1/jobs/DEFAULT/{cluster}/{proc}")
        restd_list = client.get(f"/v1/jobs/DEFAULT/{cluster}")
        mcp = _mcp_get_job(api, token, job, admins)

        bodies = (rest.text, rest_list.text, restd.text, restd_list.text, mcp["text"], web.text)
        for body in (*bodies, web_list.text):
            assert SECRET not in body  # for anyone, through every mouth
        # the web page's API answers what /api/v1 answers
        assert web.status_code == rest.status_code
        assert _untimed(web.json()) == _untimed(rest.json())
        if who == "owner":
            assert rest.json()["ClaimId"] == "<REDACTED>"
        # what each mouth reveals of the job: the owner and an admin (and restd, as restd)
        # see it with the private attributes masked; another user sees nothing of it through
        # the scoped mouths (REST, the web page and MCP)
        if who == "other":
            assert rest.status_code == 404
            assert "ClusterId" not in rest_list.text or f'"ClusterId": {cluster}' not in (
                rest_list.text
            )
            assert mcp["one"] is None and mcp["listed"]["jobs"] == []
        else:
            assert rest.status_code == 200 and rest.json()["Capability"] == "<REDACTED>"
            assert [j["ClusterId"] for j in rest_list.json()["jobs"]] == [int(cluster)]
            assert mcp["one"] is not None and mcp["one"]["job"]["TransferKey"] == "<REDACTED>"
            assert [j["ClusterId"] for j in mcp["listed"]["jobs"]] == [int(cluster)]
        # restd's /v1 is restd's: not owner-scoped, masked all the same
        assert restd.status_code == 200 and restd.json()["classad"]["claimid"] == "<REDACTED>"
        assert all(e["classad"]["capability"] == "<REDACTED>" for e in restd_list.json())


def test_settings_decide_what_is_private(token_pool: TokenPool) -> None:
    """An operator who empties the list sees the attributes: the redaction is the settings'."""
    with serving(token_pool, private_attrs=("TransferKey",)) as api:
        job = submit(api.alice, 1)[0]
        _plant(api, job)
        shown = api.alice.get(f"/api/v1/jobs/{job}").json()
        assert shown["ClaimId"] == f"{SECRET}-ClaimId"
        assert shown["TransferKey"] == "<REDACTED>"


#: The one mapping's writers (:mod:`cedar.classad_wire.jsonfmt`): only the core may call them.
_WRITERS = {"ad_to_json", "ad_to_json_compact", "ad_to_json_compact_bytes", "columns_json_bytes"}


def test_only_the_core_maps_ads_to_json() -> None:
    """No route, tool or page maps an ad to JSON but through :mod:`cedar.service_core.adjson` (the
    redaction is there): a module of ``cedar/http_api``, ``cedar/mcp`` or the web page that
    imports a writer of the mapping itself, or calls an ad's own ``to_json``/``to_dict``, fails
    here.  (What each mouth returns is checked at run time above and in the MCP leak test.)"""
    import ast
    from pathlib import Path

    import cedar

    root = Path(cedar.__file__).parent
    found: list[str] = []
    for folder in ("serve", "mcp_server"):
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            where = path.relative_to(root)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "cedar.classad_wire.jsonfmt":
                    found += [f"{where}: {a.name}" for a in node.names if a.name in _WRITERS]
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("to_json", "to_dict")
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in ("ad", "ads", "job", "slot", "found", "one")
                ):
                    found.append(f"{where}:{node.lineno}: {node.func.value.id}.{node.func.attr}()")
    assert found == []


def test_mcp_has_no_caller_or_pool_access_of_its_own() -> None:
    """One Caller, one PoolAccess: MCP's old import path names the core's classes."""
    import cedar.mcp as mcp_server
    from cedar.mcp import access

    assert access.Caller is Caller and access.PoolAccess is PoolAccess
    assert mcp_server.PoolAccess is PoolAccess
