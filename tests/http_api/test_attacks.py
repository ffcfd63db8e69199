"""Attacks on ``cedar serve`` from issue 37 (point 6), each reproduced against a running server
over the mock pool; each failed on the code before its fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.http_api.conftest import serving
from tests.service_core.conftest import TokenPool


def test_docs_page_has_the_pages_security_headers(token_pool: TokenPool) -> None:
    """``/docs`` was served without the CSP and frame headers the rest has; its inline script
    and style are allowed by hash, nothing else inline."""
    with serving(token_pool) as api:
        page = api.anonymous.get("/docs")
        web = api.anonymous.get("/signin")
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
    assert "script-src 'self' 'sha256-" in policy and "unsafe-inline" not in policy
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    for name in ("x-frame-options", "referrer-policy", "x-content-type-options"):
        assert page.headers[name] == web.headers[name]


@dataclass
class _Counted:
    pings: int = 0


def test_corrupted_tokens_are_429_after_a_few_and_cost_the_pool_nothing_more(
    token_pool: TokenPool,
) -> None:
    """300 requests, each with a differently corrupted signature, got 300 x 401 and each cost
    the schedd a handshake.  Now the client's failures are limited (``failure_burst``): the
    rest are 429 without a handshake, and a good token still works from another client."""
    from cedar.service_core import PoolAccess

    counted = _Counted()
    ping = PoolAccess.ping

    async def counting(self: PoolAccess, *args: object, **kwargs: object) -> object:
        counted.pings += 1
        return await ping(self, *args, **kwargs)  # type: ignore[arg-type]

    PoolAccess.ping = counting  # type: ignore[assignment,method-assign]
    try:
        with serving(token_pool, failure_burst=5, failure_rate=0.001) as api:
            head, payload, signature = token_pool.alice.split(".")
            statuses = []
            with httpx.Client(base_url=api.url, timeout=30) as attacker:
                for n in range(300):
                    corrupted = f"{head}.{payload}.{signature[:-6]}{n:06d}"
                    answer = attacker.get(
                        "/api/v1/whoami", headers={"Authorization": f"Bearer {corrupted}"}
                    )
                    statuses.append(answer.status_code)
                    assert corrupted not in answer.text
            pings_of_attack = counted.pings
    finally:
        PoolAccess.ping = ping  # type: ignore[method-assign]
    assert statuses[:5] == [401] * 5
    assert set(statuses[5:]) == {429}
    assert pings_of_attack == 5


def test_one_users_huge_attribute_does_not_break_anothers_listing(
    token_pool: TokenPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack (issue 37): a job with a 5 MiB attribute made the whole-queue ``/v1`` listing
    fail for everyone with 502 ("packet length ... larger than the 1 MiB limit"): the 25.13.2
    schedd sends such an ad in packets over 1 MiB (observed; its own condor_q fails on them
    too).  A client now takes packets up to its message limit; the mock schedd is made to send
    whole messages as one packet, as the real one did."""
    import cedar.stream.connection as connection
    from cedar.classad_wire import ClassAd
    from tests.http_api.test_api import submit

    monkeypatch.setattr(connection, "MAX_PACKET_PAYLOAD", 64 << 20)  # the sender's packets
    with serving(token_pool, anonymous_jobs=True) as api:
        big = submit(api.alice, 1)[0]
        small = submit(api.bob, 1)[0]
        queue = api.pool.pool.schedd.queue
        cluster = int(big.split(".")[0])
        with queue.lock:
            ad = queue.clusters[cluster]
            huge = "x" * (5 << 20)
            queue.clusters[cluster] = ClassAd.from_raw_text(ad.print_old() + f'Big = "{huge}"\n')
        for client in (api.bob, api.anonymous):
            listed = client.get("/v1/jobs/DEFAULT")
            assert listed.status_code == 200, listed.text[:200]
            ids = {entry["jobid"] for entry in listed.json()}
            assert {big, small} <= ids
        mine = api.bob.get("/api/v1/jobs")
        assert mine.status_code == 200 and small in {
            f"{j['ClusterId']}.{j['ProcId']}" for j in mine.json()["jobs"]
        }


def test_protected_attributes_are_refused_by_every_mouth(token_pool: TokenPool) -> None:
    """The seed talk's attack: an agent edited ``JobUniverse`` and crashed the schedd.  One
    deny-list (``cedar.service_core.values.PROTECTED_ATTRS``) refuses it through REST (one job and
    by constraint) and through MCP's ``edit_job``, any case, before the schedd is asked."""
    import trio
    from mcp import Client

    from cedar.mcp import McpSettings, build_server, pool_access
    from cedar.service_core import Caller, PoolAccess
    from tests.http_api.test_api import submit

    with serving(token_pool) as api:
        job = submit(api.alice, 1)[0]
        for name in ("JobUniverse", "jobuniverse", "Owner", "ClusterId", "JobStatus"):
            one = api.alice.patch(f"/api/v1/jobs/{job}", json={"attributes": {name: 5}})
            assert one.status_code == 400 and "cannot be edited" in one.text, one.text
        bulk = api.alice.post(
            "/api/v1/jobs/edit",
            json={"constraint": "true", "attributes": {"RequestMemory": 1, "User": "x"}},
        )
        assert bulk.status_code == 400 and "User" in bulk.text
        fine = api.alice.patch(f"/api/v1/jobs/{job}", json={"attributes": {"RequestMemory": 64}})
        assert fine.status_code == 200
        assert api.alice.get(f"/api/v1/jobs/{job}").json()["JobUniverse"] == 5  # vanilla, kept

        settings = McpSettings(pool=token_pool.pool.host_port)
        security = PoolAccess(api.server.settings).security(Caller.from_token(token_pool.alice))
        server = build_server(settings, pool_access(settings, security))

        async def main() -> Any:
            async with Client(server) as client:
                return await client.call_tool(
                    "edit_job", {"job_id": job, "attribute": "JobUniverse", "value": "1"}
                )

        result = trio.run(main)
        assert result.is_error and "cannot be edited" in result.content[0].text
