"""The IRI API's lasting state: the store in SQLite and PostgreSQL behind one interface, an
outage recorded as events and one incident, and two replicas sharing PostgreSQL (an
Idempotency-Key honoured across them, a task of one seen on the other, a restart losing
nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from cedar.http_api.iri.call import IriState
from cedar.http_api.iri.resources import record_change
from cedar.http_api.iri.settings import IriSettings
from cedar.http_api.iri.store import Store
from tests.http_api.conftest import RunningServer, client
from tests.http_api.iri.conftest import iri_config
from tests.http_api.iri.postgres import postgres_cluster
from tests.service_core.conftest import TokenPool, token_pool  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


#: Every kind of document the API stores (and the tests' own ``t``).
KINDS = ("t", "task", "idempotency", "job", "resource", "transition")
KINDS += ("event", "incident", "open_incident")


def _emptied(url: str) -> Store:
    """The store at ``url`` with nothing in it (the module's cluster is shared by its tests)."""
    found = Store(url)
    for kind in KINDS:
        for record in found.list(kind):
            found.delete(kind, record.id)
    return found


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        url = str(tmp_path / "state.sqlite")
    else:
        url = request.getfixturevalue("postgres")
    found = _emptied(url)
    yield found
    found.close()


def test_store_claims_once_and_outlives_its_connection(store: Store) -> None:
    assert store.add("t", "a", "alice", {"n": 1})
    assert not store.add("t", "a", "bob", {"n": 2})  # the one atomic claim
    store.put("t", "b", "bob", {"n": 3})
    store.put("t", "b", "bob", {"n": 4})
    again = Store(store.url)
    try:
        assert [(r.id, r.owner, r.body) for r in again.list("t")] == [
            ("a", "alice", {"n": 1}),
            ("b", "bob", {"n": 4}),
        ]
        assert [r.id for r in again.list("t", "bob")] == ["b"]
        assert again.delete("t", "a") and not again.delete("t", "a")
        assert store.get("t", "a") is None
    finally:
        again.close()
    assert "@" not in repr(store) and "/" not in repr(store)


def test_an_outage_is_events_and_one_incident(store: Store) -> None:
    state = IriState(IriSettings(), store, services=None)  # type: ignore[arg-type]
    record_change(state, "schedd:x", "x", None, "up", 1000.0)
    record_change(state, "schedd:x", "x", "up", "down", 2000.0)
    record_change(state, "schedd:x", "x", "down", "degraded", 2500.0)
    [incident] = store.list("incident")
    assert (incident.body["end"], incident.body["resolution"]) == (None, "unresolved")
    record_change(state, "schedd:x", "x", "degraded", "up", 3000.0)
    [incident] = store.list("incident")
    body = incident.body
    assert (body["start"], body["end"], body["resolution"]) == (2000.0, 3000.0, "completed")
    events = sorted(store.list("event"), key=lambda r: r.body["occurred_at"])
    assert [e.body["status"] for e in events] == ["up", "down", "degraded", "up"]
    assert [e.body["incident_id"] for e in events] == [None] + [incident.id] * 3
    assert body["event_ids"] == [e.id for e in events[1:]]
    record_change(state, "schedd:x", "x", "up", "down", 4000.0)
    assert len(store.list("incident")) == 2  # a new outage, a new incident


def test_replicas_share_postgresql(
    token_pool: TokenPool,  # noqa: F811
    postgres: str,
    tmp_path: Path,
) -> None:
    _emptied(postgres).close()
    config = iri_config(
        tmp_path,
        CEDAR_SERVE_IRI_DATABASE=postgres,
        CEDAR_SERVE_IRI_STAGING_ROOT=str(tmp_path / "s"),
    )
    settings = replace(token_pool.settings, schedd=token_pool.pool.schedd_address, config=config)
    first = RunningServer(settings).start()
    second = RunningServer(settings).start()
    try:
        with (
            client(first.url + "/iri", token_pool.alice) as one,
            client(second.url + "/iri", token_pool.alice) as two,
        ):
            schedd = one.get("/api/v2/compute/resources").json()[0]["id"]
            spec = {"executable": "/bin/sleep", "arguments": ["5"]}
            key = {"Idempotency-Key": "0b5e0b5e-0000-4000-8000-00000000beef"}
            job = one.post(f"/api/v2/compute/job/{schedd}", json=spec, headers=key).json()
            assert two.post(f"/api/v2/compute/job/{schedd}", json=spec, headers=key).json() == job
            other = two.post(
                f"/api/v2/compute/job/{schedd}", json={**spec, "name": "x"}, headers=key
            )
            assert other.status_code == 409
            task = one.post("/api/v2/filesystem/mkdir/storage:staging", json={"path": "d"}).json()
            seen = two.get(f"/api/v2/task/{task['task_id']}").json()
            assert seen["status"] == "completed"
            events = two.get("/api/v2/status/events").json()
            resources = [e["resource_uri"].rsplit("/", 1)[1] for e in events]
            assert len(resources) == len(set(resources)) == 5  # each first sight once
    finally:
        first.stop()
    third = RunningServer(settings).start()  # a restart: a new process, the same database
    try:
        with client(third.url + "/iri", token_pool.alice) as three:
            assert three.get(f"/api/v2/task/{task['task_id']}").json() == seen
            again = three.post(f"/api/v2/compute/job/{schedd}", json=spec, headers=key).json()
            assert again == job
            got = three.get(f"/api/v2/compute/status/{schedd}/{job['id']}?include_spec=true")
            assert got.json()["job_spec"] == spec
    finally:
        third.stop()
        second.stop()
