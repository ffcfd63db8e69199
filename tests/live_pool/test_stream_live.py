"""The streamed listing on the real pool: ``/api/v1/jobs`` transcodes the schedd's messages to
JSON with no ad made (once their shape recurs), and must give the bytes the ad writer gives
for the same ads read by the library (AES-GCM session, the 25.x schedd's repeated
``JobStatus``, lower-cased or not, redacted)."""

from __future__ import annotations

import os
import re
from dataclasses import replace

import pytest
import trio

from cedar.config import Config
from cedar.service_core import Caller, PoolAccess, ServiceSettings
from tests.http_api.conftest import RunningServer, client
from tests.live_pool.conftest import readable
from tests.live_pool.test_serve_live import HELD, _token_file

#: The schedd's clock when it answered, in every job ad: differs between two queries.
_CLOCK = re.compile(rb'"ServerTime": [0-9]+,?')


def test_listing_is_the_ad_writers_bytes_on_the_real_pool() -> None:
    from cedar.http_api.adjson import ad_json_bytes

    token = _token_file(os.environ.get("CEDAR_LIVE_TOKEN_DIR"))
    if token is None or not readable(os.environ.get("CEDAR_LIVE_TOKEN_DIR")):
        pytest.skip("needs the pool's token directory (run as root)")
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    settings = replace(
        ServiceSettings.from_config(config), collector=os.environ["CEDAR_LIVE_COLLECTOR"], rate=0
    )
    server = RunningServer(settings).start()
    try:
        with client(server.url, token) as http:
            answer = http.post("/api/v1/jobs", json={"submit_file": HELD + "queue 300"})
            assert answer.status_code == 201, answer.text
            cluster = answer.json()["cluster_id"]
            constraint = f"ClusterId == {cluster}"
            try:
                params = {"constraint": constraint, "limit": 0, "format": "jsonl"}
                listed = http.get("/api/v1/jobs", params=params).content

                async def library() -> list[bytes]:
                    schedd = await PoolAccess(settings).schedd(Caller.from_token(token))
                    ads = await schedd.query(constraint)
                    return [ad_json_bytes(ad, settings.private_attrs) for ad in ads]

                expected = b"".join(data + b"\n" for data in trio.run(library))
            finally:
                http.post("/api/v1/jobs/remove", json={"constraint": constraint})
    finally:
        server.stop()
    assert listed.count(b"\n") == 300
    assert _CLOCK.sub(b"", listed) == _CLOCK.sub(b"", expected)
