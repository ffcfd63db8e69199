"""``GET /api/v1/jobs/{id}`` takes its caller and services in the handler (no FastAPI
dependencies) and reuses one constraint tree per job and user: the same checks as every other
route still apply, in the same order, and the document still shows only its own parameters."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.http_api.conftest import Api, RunningServer, client

SUBMIT = "executable = /bin/echo\narguments = hi\nhold = true\nqueue 1"


def _submit(api: Api) -> str:
    answer = api.alice.post("/api/v1/jobs", json={"submit_file": SUBMIT})
    assert answer.status_code == 201, answer.text
    job: str = answer.json()["job_ids"][0]
    return job


def test_the_document_shows_the_routes_own_parameters(api: Api) -> None:
    operation = api.anonymous.get("/openapi.json").json()["paths"]["/api/v1/jobs/{job}"]["get"]
    names = {(p["name"], p["in"]) for p in operation["parameters"]}
    assert names == {("job", "path"), ("projection", "query")}
    assert operation["responses"]["200"]["content"]["application/json"]["schema"]["type"] == (
        "object"
    )
    assert {"400", "401", "404", "429"} <= set(operation["responses"])


def test_scope_is_per_user_when_the_same_job_is_asked_again(api: Api) -> None:
    job = _submit(api)
    for _ in range(2):  # the second round finds each user's tree remembered
        mine = api.alice.get(f"/api/v1/jobs/{job}")
        assert mine.status_code == 200 and mine.json()["Owner"] == "alice"
        assert api.bob.get(f"/api/v1/jobs/{job}").status_code == 404
    projected = api.alice.get(f"/api/v1/jobs/{job}", params={"projection": "JobStatus"}).json()
    assert projected["JobStatus"] == 5 and "Cmd" not in projected


def test_callers_are_checked_before_the_job_id(api: Api) -> None:
    job = _submit(api)
    assert api.anonymous.get(f"/api/v1/jobs/{job}").status_code == 401
    bad = api.anonymous.get(f"/api/v1/jobs/{job}", headers={"Authorization": "Bearer a.b.c"})
    assert bad.status_code == 401
    # a malformed header is refused even with a malformed id: the caller comes first
    both = api.anonymous.get("/api/v1/jobs/x.y", headers={"Authorization": "Basic eDp5"})
    assert both.status_code == 401
    with client(api.url, api.pool.foreign) as foreign:
        assert foreign.get(f"/api/v1/jobs/{job}").status_code == 401
    assert api.alice.get("/api/v1/jobs/x.y").status_code == 400


def test_one_job_get_is_rate_limited(api: Api) -> None:
    job = _submit(api)
    server = RunningServer(replace(api.server.settings, rate=0.5, burst=2)).start()
    try:
        with client(server.url, api.pool.alice) as alice:
            codes = [alice.get(f"/api/v1/jobs/{job}") for _ in range(4)]
    finally:
        server.stop()
    assert [r.status_code for r in codes[:2]] == [200, 200]
    limited = [r for r in codes if r.status_code == 429]
    assert limited and int(limited[0].headers["Retry-After"]) >= 1


def test_one_job_get_is_counted_in_the_metrics(api: Api) -> None:
    job = _submit(api)
    api.alice.get(f"/api/v1/jobs/{job}")
    text = api.anonymous.get("/metrics").text
    assert 'cedar_serve_requests_total{route="/api/v1/jobs/{job}",status="200"}' in text


def test_the_schedd_is_asked_for_one_job_at_most(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedd stops scanning its queue at the job (``LimitResults = 1``), and the job's id
    is tested before its owner on each job it scans."""
    from cedar.classad_wire import unparse
    from cedar.commands import AsyncSchedd

    job = _submit(api)
    asked: list[tuple[str, int]] = []
    query = AsyncSchedd.query

    async def recorded(
        self: AsyncSchedd, constraint: Any = None, projection: Any = (), limit: int = -1, **kw: Any
    ) -> Any:
        asked.append((unparse(constraint), limit))
        return await query(self, constraint, projection, limit, **kw)

    monkeypatch.setattr(AsyncSchedd, "query", recorded)
    assert api.alice.get(f"/api/v1/jobs/{job}").json()["Owner"] == "alice"
    cluster, proc = job.split(".")
    ((constraint, limit),) = asked
    assert limit == 1
    assert constraint.startswith(
        f'(ClusterId == {cluster} && ProcId == {proc}) && (User == "alice@'
    )
