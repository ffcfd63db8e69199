"""The IRI API against the mock pool: the official document and its operations, Problem
errors, facility and status, jobs (submit, status, update, cancel, Idempotency-Key), the staging
area with hostile paths, tasks, and the store outliving its process."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from cedar.http_api.iri.call import HANDLERS
from cedar.http_api.iri.spec import operations
from tests.http_api.iri.conftest import Iri

PACKAGED = Path(__file__).parents[3] / "cedar/http_api/iri/openapi_v2.json"
STAGING = "storage:staging"


def _schedd(iri: Iri) -> str:
    found = iri.alice.get("/api/v2/compute/resources").json()
    assert [r["resource_type"] for r in found] == ["urn:doe-iri:resource:compute"]
    return str(found[0]["id"])


def test_document_is_the_official_one_and_every_operation_has_a_handler(iri: Iri) -> None:
    served = iri.anonymous.get("/openapi.json").json()
    assert served == json.loads(PACKAGED.read_text())
    ids = {op.operation_id for op in operations()}
    assert len(ids) == 47 and ids <= set(HANDLERS)


def test_problems(iri: Iri) -> None:
    missing = iri.alice.get("/api/v2/nothing")
    assert missing.status_code == 404
    assert missing.json()["instance"] == "/iri/api/v2/nothing"
    assert set(missing.json()) == {"type", "status", "title", "detail", "instance"}
    wrong = iri.alice.delete("/api/v2/facility")
    assert (wrong.status_code, wrong.headers["allow"]) == (405, "GET")
    assert wrong.json()["status"] == 405
    anonymous = iri.anonymous.get("/api/v2/task")
    assert anonymous.status_code == 401 and "Bearer" in anonymous.headers["www-authenticate"]
    bad = iri.alice.get("/api/v2/status/resources", params={"limit": "many"})
    assert bad.status_code == 422 and "limit" in bad.json()["detail"]
    line_break = iri.alice.get("/api/v2/compute/status/a%0Ab/1.0")
    assert line_break.status_code == 404 and line_break.json()["status"] == 404


def test_facility_sites_and_resources(iri: Iri) -> None:
    facility = iri.anonymous.get("/api/v2/facility").json()
    assert facility["organization_name"] == "Test Lab"
    sites = iri.anonymous.get("/api/v2/facility/sites").json()
    assert facility["site_uris"] == [s["self_uri"] for s in sites]
    site = iri.anonymous.get(f"/api/v2/facility/sites/{sites[0]['id']}").json()
    assert site == sites[0]
    resources = {r["id"]: r for r in iri.anonymous.get("/api/v2/status/resources").json()}
    kinds = {rid.split(":")[0] for rid in resources}
    assert kinds == {"collector", "negotiator", "schedd", "slots", "storage"}
    status = {rid.split(":")[0]: r["current_status"] for rid, r in resources.items()}
    assert status == {
        "collector": "up", "negotiator": "up", "schedd": "up", "storage": "up",
        "slots": "down",  # this mock pool has no execute slots
    }  # fmt: skip
    one = iri.anonymous.get(f"/api/v2/status/resources/{_schedd(iri)}").json()
    assert one == resources[one["id"]]
    down = iri.anonymous.get("/api/v2/status/resources", params={"current_status": "down"})
    assert [r["id"] for r in down.json()] == ["slots:slots"]
    events = iri.anonymous.get("/api/v2/status/events").json()
    assert {e["resource_uri"].rsplit("/", 1)[1] for e in events} >= set(resources)


def test_job_submit_status_update_cancel(iri: Iri) -> None:
    schedd = _schedd(iri)
    spec = {
        "executable": "/bin/echo",
        "arguments": ["it's", 'a "test"'],
        "name": "iri-test",
        "resources": {"cpu_cores_per_process": 2, "memory": 3 << 20},
        "attributes": {"duration": 60, "custom_attributes": {"Flavor": "mint"}},
    }
    job = iri.alice.post(f"/api/v2/compute/job/{schedd}", json=spec).json()
    assert job["status"]["state"] in ("new", "queued")
    got = iri.alice.get(
        f"/api/v2/compute/status/{schedd}/{job['id']}", params={"include_spec": "true"}
    )
    assert got.json()["job_spec"] == spec
    assert iri.bob.get(f"/api/v2/compute/status/{schedd}/{job['id']}").status_code == 404
    listed = iri.alice.post(f"/api/v2/compute/status/{schedd}", json={"name": "iri-test"}).json()
    assert [j["id"] for j in listed] == [job["id"]]
    assert iri.bob.post(f"/api/v2/compute/status/{schedd}", json={}).json() == []
    cancel = iri.bob.delete(f"/api/v2/compute/cancel/{schedd}/{job['id']}")
    assert cancel.status_code == 404
    cancel = iri.alice.delete(f"/api/v2/compute/cancel/{schedd}/{job['id']}")
    assert cancel.status_code == 204


def test_specs_htcondor_cannot_honour_are_422(iri: Iri) -> None:
    schedd = _schedd(iri)
    for spec, word in [
        ({"executable": "/bin/true", "resources": {"node_count": 2}}, "node_count"),
        ({"executable": "/bin/true", "launcher": "srun"}, "launcher"),
        ({"executable": "/bin/true", "arguments": ["a\nb"]}, "line break"),
        ({"executable": "/bin/true", "attributes": {"custom_attributes": {"Owner": "x"}}}, "Owner"),
    ]:
        answer = iri.alice.post(f"/api/v2/compute/job/{schedd}", json=spec)
        assert answer.status_code == 422, spec
        assert word in answer.json()["detail"]


def test_unknown_resource_is_404_before_the_body(iri: Iri) -> None:
    answer = iri.alice.post("/api/v2/compute/job/schedd:nowhere", content=b"not json")
    assert answer.status_code == 404


def test_idempotency_key(iri: Iri) -> None:
    schedd = _schedd(iri)
    spec = {"executable": "/bin/sleep", "arguments": ["1"]}
    key = {"Idempotency-Key": "4f1c1b1e-0000-4000-8000-000000000001"}
    first = iri.alice.post(f"/api/v2/compute/job/{schedd}", json=spec, headers=key).json()
    again = iri.alice.post(f"/api/v2/compute/job/{schedd}", json=spec, headers=key).json()
    assert first == again
    other = iri.alice.post(
        f"/api/v2/compute/job/{schedd}", json={**spec, "arguments": ["2"]}, headers=key
    )
    assert other.status_code == 409
    theirs = iri.bob.post(f"/api/v2/compute/job/{schedd}", json=spec, headers=key).json()
    assert theirs["id"] != first["id"]  # a key is its caller's


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.lstat().st_mode) for p in root.rglob("*"))


def test_staging_area_refuses_every_escape(iri: Iri, tmp_path: Path) -> None:
    staging = iri.state / "staging"
    made = iri.alice.post(f"/api/v2/filesystem/mkdir/{STAGING}", json={"path": "inside"})
    assert made.status_code == 201
    outside = iri.state / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret").write_text("no")
    alice_root = next(p for p in staging.iterdir() if p.name.startswith("alice@"))
    os.symlink(outside, alice_root / "link")  # as if something else had made one
    before, outside_before = _tree(staging), _tree(outside)
    hostile = [
        "../outside/secret", "/etc/passwd", "inside/../../x", "link/secret", "link",
        "a\x00b", "x" * 300, "inside/" + "y/" * 2100,
    ]  # fmt: skip
    for path in hostile:
        for op, body in [
            ("ls", {"path": path}),
            ("view", {"path": path}),
            ("rm", {"path": path}),
            ("mkdir", {"path": path}),
            ("chmod", {"path": path, "mode": "777"}),
            ("mv", {"path": "inside", "target_path": path}),
            ("cp", {"path": path, "target_path": "copy"}),
        ]:
            answer = iri.alice.post(f"/api/v2/filesystem/{op}/{STAGING}", json=body)
            assert answer.status_code in (400, 422), (op, path, answer.text)
            assert answer.json()["status"] == answer.status_code
    upload = iri.alice.post(
        f"/api/v2/filesystem/upload/{STAGING}",
        params={"path": "../escape"},
        files={"file": ("f", b"x")},
    )
    assert upload.status_code == 400
    assert _tree(staging) == before and _tree(outside) == outside_before
    os.unlink(alice_root / "link")


def test_staging_operations_and_tasks(iri: Iri) -> None:
    up = iri.alice.post(
        f"/api/v2/filesystem/upload/{STAGING}",
        params={"path": "notes.txt"},
        files={"file": ("notes.txt", b"one\ntwo\nthree\n")},
    )
    assert up.status_code == 200
    task = iri.alice.get(up.json()["task_uri"].split("/iri", 1)[1]).json()
    assert task["status"] == "completed"
    assert iri.bob.get(f"/api/v2/task/{task['id']}").status_code == 404

    def result(op: str, body: dict[str, object]) -> object:
        answer = iri.alice.post(f"/api/v2/filesystem/{op}/{STAGING}", json=body)
        assert answer.status_code in (200, 201), answer.text
        found = iri.alice.get(f"/api/v2/task/{answer.json()['task_id']}").json()
        return found["result"]["output"]

    assert result("head", {"path": "notes.txt", "lines": 1}) == "one\n"
    assert result("tail", {"path": "notes.txt", "lines": 2}) == "two\nthree\n"
    assert result("view", {"path": "notes.txt", "offset": 4, "size": 3}) == "two"
    digest = result("checksum", {"path": "notes.txt"})
    assert isinstance(digest, dict) and len(digest["checksum"]) == 64
    result("cp", {"path": "notes.txt", "target_path": "copy.txt"})
    result("compress", {"path": "copy.txt", "target_path": "copy.tgz"})
    result("extract", {"path": "copy.tgz", "target_path": "unpacked"})
    names = {e["path"] for e in result("ls", {"path": ".", "recursive": True})}  # type: ignore[union-attr]
    assert {"notes.txt", "copy.txt", "copy.tgz", "unpacked/copy.txt"} <= names
    result("rm", {"path": "unpacked"})
    assert (
        iri.alice.post(
            f"/api/v2/filesystem/symlink/{STAGING}", json={"path": "a", "link_path": "b"}
        ).status_code
        == 403
    )  # noqa: E501
    tasks = iri.alice.get("/api/v2/task").json()
    assert task["id"] in {t["id"] for t in tasks}
    assert iri.alice.delete(f"/api/v2/task/{task['id']}").status_code == 200
    assert iri.alice.get(f"/api/v2/task/{task['id']}").status_code == 404


def test_bounded_bodies(iri: Iri) -> None:
    big = b'{"path": "' + b"x" * (2 << 20) + b'"}'
    answer = iri.alice.post(f"/api/v2/filesystem/ls/{STAGING}", content=big)
    assert answer.status_code == 413
    staging = iri.state / "staging"
    iri.alice.post(f"/api/v2/filesystem/ls/{STAGING}", json={"path": "."})  # makes alice's area
    before = _tree(staging)
    upload = iri.alice.post(
        f"/api/v2/filesystem/upload/{STAGING}",
        params={"path": "big.bin"},
        files={"file": ("big.bin", b"\0" * (3 << 20))},
    )
    assert upload.status_code == 413 and upload.json()["status"] == 413
    assert _tree(staging) == before  # nothing of it kept

    def chunked() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'--b0\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n'
        for _ in range(48):
            yield b"\0" * (64 << 10)
        yield b"\r\n--b0--\r\n"

    upload = iri.alice.post(
        f"/api/v2/filesystem/upload/{STAGING}",
        params={"path": "big.bin"},
        content=chunked(),
        headers={"Content-Type": "multipart/form-data; boundary=b0"},
    )
    assert upload.status_code == 413 and upload.json()["status"] == 413
    assert _tree(staging) == before
    deep = b"[" * 200000 + b"]" * 200000  # under the limit, deeper than any parser's stack
    answer = iri.alice.post(f"/api/v2/filesystem/ls/{STAGING}", content=deep)
    assert answer.status_code == 422 and answer.json()["status"] == 422


def test_incident_and_event_queries(iri: Iri) -> None:
    """An outage recorded in the server's store, found back through each query parameter."""
    from cedar.http_api.iri.call import IriState
    from cedar.http_api.iri.resources import record_change
    from cedar.http_api.iri.settings import IriSettings
    from cedar.http_api.iri.store import Store

    store = Store(str(iri.state / "state.sqlite"))
    state = IriState(IriSettings(), store, services=None)  # type: ignore[arg-type]
    record_change(state, "schedd:gone", "gone", "up", "down", 1_000_000.0)  # 1970-01-12
    record_change(state, "schedd:gone", "gone", "down", "up", 1_000_600.0)
    store.close()

    def ids(path: str, **params: str) -> list[str]:
        answer = iri.anonymous.get(f"/api/v2/status/{path}", params=params)
        assert answer.status_code == 200, answer.text
        return [item["id"] for item in answer.json()]

    [incident] = ids("incidents", resource_id="schedd:gone")
    assert ids("incidents", resolution="completed", type="unplanned") == [incident]
    assert ids("incidents", time="1970-01-12T13:50:00Z") == [incident]
    assert ids("incidents", time="1970-01-12T14:00:00Z") == []
    assert ids("incidents", to="1970-01-12T13:46:39Z", resource_id="schedd:gone") == []
    assert ids("incidents", resolution="pending", resource_id="schedd:gone") == []
    events = ids("events", incident_id=incident)
    assert len(events) == 2
    assert ids("events", incident_id=incident, status="down") == events[:1]
    assert (
        ids("events", resource_id="schedd:gone", **{"from": "1970-01-12T13:50:00Z"}) == events[1:]
    )
    assert ids("events", incident_id=incident, limit="1", offset="1") == events[1:]
    one = iri.anonymous.get(f"/api/v2/status/incidents/{incident}").json()
    assert (one["start"], one["end"]) == ("1970-01-12T13:46:40Z", "1970-01-12T13:56:40Z")
    assert iri.anonymous.get("/api/v2/status/events/nothing").status_code == 404
