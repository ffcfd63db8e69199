"""``GET /api/v1/jobs/events`` on the real pool (issue 37, point 5): a job's submit, run and
completion as they happen, then ``completed`` with its exit code, told from the schedd's
history once it left the queue; a removed job's ``removed`` with its reason."""

from __future__ import annotations

import os
from typing import Any

from tests.http_api.conftest import client
from tests.http_api.test_events import Listener
from tests.live_pool.test_serve_live import Live, live, submit  # noqa: F401 (a fixture)

EXITS = (
    "executable = /bin/sh\narguments = \"-c 'sleep 2; exit 3'\"\n"
    "transfer_executable = false\nshould_transfer_files = YES\nqueue"
)
WAITS = "executable = /bin/sleep\narguments = 600\ntransfer_executable = false\nhold = true\nqueue"


def _departure(listener: Listener, job: str, kind: str) -> dict[str, Any]:
    """The ``kind`` event (not a status event of that name) about ``job``."""
    with listener.changed:
        for _ in range(600):  # bounded: the stream itself ends after stream_timeout
            for event in listener.events:
                if event.get("job_id") == job and event["event"] == kind:
                    return event
            listener.changed.wait(0.5)
    raise AssertionError(f"no {kind} event for {job}: {listener.events}")


def test_submit_run_complete_and_remove_as_events(live: Live) -> None:  # noqa: F811
    token = live.testuser.headers["authorization"].split(" ", 1)[1]
    iwd = os.environ.get("CEDAR_LIVE_IWD", "/tmp")
    with client(live.server.url, token) as c:
        listener = Listener(c)
        (job,) = submit(live.testuser, EXITS, iwd=iwd)
        (held,) = submit(live.testuser, WAITS, iwd=iwd)
        idle = listener.wait_for(job, "idle")
        running = listener.wait_for(job, "running")
        completed = _departure(listener, job, "completed")
        listener.wait_for(held, "held")
        gone = live.testuser.delete(f"/api/v1/jobs/{held}", params={"reason": "live test"})
        assert gone.status_code == 200, gone.text
        removed = _departure(listener, held, "removed")
    assert idle["event"] == "status" and running["event"] == "status"
    assert idle["entered"] <= running["entered"] <= completed["entered"]
    # the completion, from the history record of a job that left the queue
    assert completed["status"] == 4 and completed["exit_code"] == 3, completed
    assert removed["event"] == "removed" and removed["status"] == 3
    assert removed["remove_reason"].startswith("live test"), removed
    assert not [e for e in listener.events if e["event"] == "left"]
