"""One service core on the real pool (issue 37, point 1): a running job of testuser asked
through REST ``/api/v1``, restd ``/v1`` and MCP by its owner, by another user and by an MCP
admin.  Each mouth reveals the same attributes of it (the one mapping), none shows a private
attribute unmasked, and the scoped mouths (REST, MCP) hide it from the other user."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import pytest
import trio

from cedar.service_core import Caller, PoolAccess
from cedar.service_core.settings import DEFAULT_PRIVATE_ATTRS
from tests.live_pool.test_serve_live import Live, live, submit  # noqa: F401 (a fixture)

pytestmark = pytest.mark.live
pytest.importorskip("mcp", reason="the mcp extra is not installed")

RUNNING = "executable = /bin/sleep\narguments = 600\ntransfer_executable = false\nqueue\n"


def _mcp(running: Live, caller_token: str, job: str, admins: frozenset[str]) -> dict[str, Any]:
    from mcp import Client

    from cedar.mcp import McpSettings
    from cedar.mcp.server import CedarMcp

    settings = McpSettings(pool=running.server.settings.collector, admins=admins)
    # the caller of MCP over HTTP: the bearer token, identified as REST identifies it (READ),
    # scoped by the core's one rule (the admins are the core's settings)
    access = PoolAccess(replace(running.server.settings, admins=admins))
    mcp = CedarMcp(settings, access)
    mcp.caller = lambda ctx: Caller.from_token(caller_token)  # type: ignore[method-assign]
    server = mcp.build()

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            one = await client.call_tool("get_job", {"job_id": job})
            return {
                "job": None if one.is_error else one.structured_content["job"],
                "error": one.content[0].text if one.is_error else None,  # type: ignore[union-attr]
                "text": json.dumps(one.model_dump(mode="json")),
            }

    result: dict[str, Any] = trio.run(main)
    return result


def _token(c: Any) -> str:
    return str(c.headers["authorization"]).split(" ", 1)[1]


def _names(ad: dict[str, Any]) -> set[str]:
    return {name.lower() for name in ad} - {"servertime"}


def test_every_mouth_reveals_the_same_of_a_running_job(live: Live) -> None:  # noqa: F811
    job = submit(live.testuser, RUNNING)[0]
    cluster, proc = job.split(".")
    try:
        deadline = time.monotonic() + 120  # a bound, not a timing: the negotiator's cycle
        while time.monotonic() < deadline:
            status = live.testuser.get(f"/api/v1/jobs/{job}", params={"projection": "JobStatus"})
            if status.json().get("JobStatus") == 2:
                break
            time.sleep(1)
        # the same attributes through every mouth (the one mapping), ServerTime apart; a job
        # that has just started gains attributes for a while, so the three are read again
        # until one round agrees (bounded)
        for _ in range(30):
            rest = live.testuser.get(f"/api/v1/jobs/{job}").json()
            restd = live.testuser.get(f"/v1/jobs/DEFAULT/{cluster}/{proc}").json()["classad"]
            owner = _mcp(live, _token(live.testuser), job, frozenset())
            assert owner["job"] is not None, owner["error"]
            if _names(rest) == _names(restd) == _names(owner["job"]):
                break
            time.sleep(1)
        assert _names(rest) == _names(restd) == _names(owner["job"])
        # no private attribute unmasked, for anyone
        for ad in (rest, restd, owner["job"]):
            for name in DEFAULT_PRIVATE_ATTRS:
                assert ad.get(name, ad.get(name.lower(), "<REDACTED>")) == "<REDACTED>"
        # another user: the scoped mouths hide the job, restd's /v1 (as restd) shows it masked
        assert live.other.get(f"/api/v1/jobs/{job}").status_code == 404
        other = _mcp(live, _token(live.other), job, frozenset())
        assert other["job"] is None and "authenticate" not in other["error"], other["error"]
        assert job in other["error"]  # not found in the caller's scope, not refused
        seen_by_other = live.other.get(f"/v1/jobs/DEFAULT/{cluster}/{proc}").json()["classad"]
        assert "<REDACTED>" not in json.dumps(seen_by_other) or all(
            seen_by_other.get(n.lower(), "<REDACTED>") == "<REDACTED>"
            for n in DEFAULT_PRIVATE_ATTRS
        )
        # an MCP admin sees it, through the same mapping
        admin = _mcp(live, _token(live.other), job, frozenset({"other@minicondor"}))
        assert admin["job"] is not None and admin["job"]["ClusterId"] == int(cluster), (
            admin["error"],
            other["error"],
        )
    finally:
        live.testuser.delete(f"/api/v1/jobs/{job}")
