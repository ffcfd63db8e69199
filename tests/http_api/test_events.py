"""``GET /api/v1/jobs/events``: the caller's jobs' status changes as server-sent events,
scoped to the caller, resumable with ``Last-Event-ID`` (issue 37, point 4)."""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any

import httpx

from tests.http_api.conftest import client, serving
from tests.http_api.test_api import submit
from tests.service_core.conftest import TokenPool


class Listener:
    """Reads one event stream in a thread, keeping the events (bounded by the stream's end)."""

    def __init__(self, c: httpx.Client, headers: dict[str, str] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._run, args=(c, headers or {}), daemon=True)
        self.thread.start()

    def _run(self, c: httpx.Client, headers: dict[str, str]) -> None:
        # the test closing the client ends the stream
        with contextlib.suppress(httpx.HTTPError, RuntimeError):
            self._read(c, headers)

    def _read(self, c: httpx.Client, headers: dict[str, str]) -> None:
        event: dict[str, Any] = {}
        with c.stream("GET", "/api/v1/jobs/events", headers=headers) as answer:
            for line in answer.iter_lines():
                if line.startswith("id: "):
                    event["id"] = line[4:]
                elif line.startswith("event: "):
                    event["event"] = line[7:]
                elif line.startswith("data: "):
                    event.update(json.loads(line[6:]))
                elif not line and "event" in event:
                    with self.changed:
                        self.events.append(event)
                        self.changed.notify_all()
                    event = {}

    def wait_for(self, job: str, name: str) -> dict[str, Any]:
        """The first event about ``job`` whose status name (or kind) is ``name``."""
        with self.changed:
            for _ in range(600):  # bounded: the stream itself ends after stream_timeout
                for event in self.events:
                    if event.get("job_id") == job and name in (
                        event["event"],
                        event["status_name"],
                    ):
                        return event
                self.changed.wait(0.5)
        raise AssertionError(f"no {name} event for {job}: {self.events}")


def test_job_events_are_scoped_and_resumable(token_pool: TokenPool) -> None:
    with serving(token_pool, events_interval=0.1, stream_timeout=60) as api:
        job = submit(api.alice, 1)[0]
        others = submit(api.bob, 1)[0]
        with client(api.url, token_pool.alice) as c, client(api.url, token_pool.bob) as b:
            alice, bob = Listener(c), Listener(b)
            idle = alice.wait_for(job, "idle")
            assert idle["event"] == "status" and idle["status"] == 1
            assert (
                api.alice.post(f"/api/v1/jobs/{job}/hold", json={"reason": "t"}).status_code == 200
            )
            held = alice.wait_for(job, "held")
            bob.wait_for(others, "idle")
            gone = api.alice.delete(f"/api/v1/jobs/{job}", params={"reason": "no longer needed"})
            assert gone.status_code == 200
            removed = alice.wait_for(job, "removed")  # told from the history, not just "left"
            assert all(event.get("job_id") != job for event in bob.events)  # scoped
            assert all(event.get("job_id") != others for event in alice.events)
        # resumed after the held event: the job's idle and held events are not sent again
        with client(api.url, token_pool.bob) as b:
            again = Listener(b, {"Last-Event-ID": bob.wait_for(others, "idle")["id"]})
            resumed = submit(api.bob, 1)[0]
            again.wait_for(resumed, "idle")
            assert all(event.get("job_id") != others for event in again.events)
        assert held["id"].endswith(f":{job}:5")
        assert removed["event"] == "removed" and removed["status"] == 3
        assert removed["remove_reason"].startswith("no longer needed"), removed
        bad = api.alice.get("/api/v1/jobs/events", headers={"Last-Event-ID": "nonsense"})
        assert bad.status_code == 400
        assert api.anonymous.get("/api/v1/jobs/events").status_code == 401


def test_a_departure_is_told_by_its_history_record() -> None:
    from cedar.classad_wire import ClassAd
    from cedar.http_api.events import departure_event

    def told(record: ClassAd | None) -> dict[str, Any]:
        lines = departure_event("7.0", record, 100).decode().splitlines()
        body: dict[str, Any] = json.loads(lines[2][len("data: ") :])
        return {"event": lines[1][len("event: ") :], "id": lines[0][len("id: ") :], **body}

    done = told(ClassAd({"JobStatus": 4, "EnteredCurrentStatus": 150, "ExitCode": 3}))
    assert done["event"] == "completed" and done["exit_code"] == 3 and done["id"] == "150:7.0:4"
    killed = ClassAd({"JobStatus": 4, "ExitBySignal": True, "ExitSignal": 9})
    assert told(killed)["exit_signal"] == 9 and "exit_code" not in told(killed)
    removed = told(ClassAd({"JobStatus": 3, "RemoveReason": "by hand"}))
    assert removed["event"] == "removed" and removed["remove_reason"] == "by hand"
    assert told(None)["event"] == "left" and told(None)["id"] == "100:7.0:None"
