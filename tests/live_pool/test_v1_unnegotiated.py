"""restd's ``/v1`` for an anonymous caller on the real pool: its reads start unnegotiated (no
handshake, no session, no key) and the answers are the bytes the negotiated anonymous path
gives; the daemons' refusal of an unnegotiated read is in ``tests/commands`` (mock pool)."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
import trio

from cedar.auth.client_config import SecurityConfig
from cedar.commands import AsyncSchedd
from cedar.commands.base import resolve_address
from cedar.config import Config
from cedar.http_api.app import create_app
from cedar.numbers import Command
from cedar.service_core import Caller, PoolAccess, ServiceSettings
from tests.live_pool.conftest import readable

HELD = "executable = /bin/sleep\narguments = 600\ntransfer_executable = false\nhold = true\n"
#: Stamped by the schedd with the clock as it answers (two queries may straddle a second).
SERVER_TIME = re.compile(rb'"servertime": ?\d+')  # the one-job form is compact


class NegotiatedAccess(PoolAccess):
    """The pool as before this change: an anonymous caller's reads negotiate a session."""

    def security_config(self, caller: Caller) -> SecurityConfig:
        config = super().security_config(caller)
        return dataclasses.replace(config, unnegotiated_reads=False)


def test_anonymous_v1_answers_unnegotiated_with_the_same_bytes() -> None:
    token_dir = os.environ.get("CEDAR_LIVE_TOKEN_DIR")
    if not readable(token_dir) or token_dir is None:
        pytest.skip("needs the pool's token directory (run as root)")
    token = next(
        text
        for name in sorted(os.listdir(token_dir))
        if (text := Path(token_dir, name).read_text().strip())
    )
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    settings = replace(
        ServiceSettings.from_config(config),
        collector=os.environ["CEDAR_LIVE_COLLECTOR"],
        rate=0,
        anonymous_jobs=True,  # restd's open /v1 job routes, which the deployment must ask for
    )
    fast, before = PoolAccess(settings), NegotiatedAccess(settings)
    anonymous = Caller.anonymous()

    async def main() -> None:
        owner: AsyncSchedd = await fast.schedd(Caller.from_token(token))
        cluster = (await owner.submit(HELD + "queue 3", submit_dir="/tmp")).cluster
        try:
            paths = [
                f"/v1/jobs/DEFAULT/{cluster}",
                f"/v1/jobs/DEFAULT/{cluster}?projection=clusterid,procid,owner",
                f"/v1/jobs/DEFAULT/{cluster}/1",
                f"/v1/grouped_jobs/DEFAULT/procid/{cluster}?projection=owner",
                "/v1/status?query=startd&projection=name,cpus,arch",
                "/v1/status?query=schedd&projection=name",
            ]
            bodies: list[list[bytes]] = []
            first: list[httpx.Response] = []
            for access in (fast, before):
                app = create_app(settings, access=access)
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://v1") as c:
                    answers = [await c.get(path) for path in paths]
                assert all(r.status_code == 200 for r in answers), [r.text for r in answers]
                bodies.append([SERVER_TIME.sub(b"T", r.content) for r in answers])
                first = first or answers
            assert bodies[0] == bodies[1]
            listed = first[0].json()
            assert sorted(e["jobid"] for e in listed) == [f"{cluster}.{p}" for p in range(3)]
            assert listed[0]["classad"]["owner"] == "testuser"
            # the fast path took no handshake: no session, nothing refused
            security = fast.security(anonymous)
            assert len(security.sessions) == 0
            schedd = await fast.schedd(anonymous)
            assert security.raw_allowed(await schedd.locate(), Command.QUERY_JOB_ADS)
            collector = str(resolve_address(os.environ["CEDAR_LIVE_COLLECTOR"]))
            assert security.raw_allowed(collector, Command.QUERY_STARTD_ADS)
            assert len(before.security(anonymous).sessions) >= 2  # schedd and collector
        finally:
            await owner.remove(f"ClusterId == {cluster}", "test_v1_unnegotiated")

    trio.run(main)
