"""The IRI API of ``cedar serve`` against the real pool, as testuser (its IDTOKEN): a JobSpec
runs and condor_q/condor_history show what it asked for; held, completed (0 and non-zero),
canceled and idle jobs report their JobState; an idle job is updated; a staged input reaches the
job and its output comes back; Schemathesis finds nothing with the official document; stopping
the schedd makes its resource down with an event and an incident, starting it closes it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from cedar.config import Config
from cedar.service_core import ServiceSettings
from tests.http_api.conftest import RunningServer, client
from tests.live_pool.conftest import readable
from tests.live_pool.test_serve_live import _token_file

pytestmark = pytest.mark.live
STAGING = "storage:staging"


@dataclass
class Live:
    server: RunningServer
    api: httpx.Client
    token: str
    schedd: str
    state: Path


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    token = _token_file(os.environ.get("CEDAR_LIVE_TOKEN_DIR"))
    if token is None or not readable(os.environ.get("CEDAR_LIVE_CONDOR_CONFIG")):
        pytest.skip("needs the pool's token directory and configuration (run as root)")
    state = tmp_path_factory.mktemp("iri-live")
    state.chmod(0o755)
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    config.set("CEDAR_SERVE_IRI_STATE_DIR", str(state))
    config.set("CEDAR_SERVE_IRI_POLL", "0")
    settings = replace(
        ServiceSettings.from_config(config),
        collector=os.environ["CEDAR_LIVE_COLLECTOR"],
        rate=0,
        config=config,
    )
    server = RunningServer(settings).start()
    try:
        with client(server.url + "/iri", token) as api:
            schedd = api.get("/api/v2/compute/resources").json()[0]["id"]
            yield Live(server, api, token, schedd, state)
    finally:
        server.stop()
        _tool("condor_rm", "-constraint", "IriJob =?= true", check=False)


def _tool(name: str, *args: str, check: bool = True) -> str:
    tools = os.environ.get("CEDAR_LIVE_TOOLS", "")
    program = os.path.join(tools, name)
    if not os.path.exists(program):  # condor_on/condor_off are in sbin
        program = os.path.join(os.path.dirname(tools), "sbin", name)
    env = {**os.environ, "CONDOR_CONFIG": os.environ.get("CEDAR_LIVE_CONDOR_CONFIG", "")}
    done = subprocess.run([program, *args], capture_output=True, text=True, env=env, timeout=60)
    if check:
        assert done.returncode == 0, done.stderr
    return done.stdout


def _submit(live: Live, spec: dict[str, Any]) -> str:
    answer = live.api.post(f"/api/v2/compute/job/{live.schedd}", json=spec)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["id"])


def _status(live: Live, job: str) -> dict[str, Any]:
    answer = live.api.get(f"/api/v2/compute/status/{live.schedd}/{job}?historical=true")
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()["status"]
    return found


def _until(live: Live, job: str, states: set[str], seconds: float = 120) -> dict[str, Any]:
    end = time.monotonic() + seconds
    while True:
        status = _status(live, job)
        if status["state"] in states or time.monotonic() > end:
            return status
        time.sleep(1)


def test_jobspec_runs_and_the_tools_show_it(live: Live) -> None:
    job = _submit(
        live,
        {
            "executable": "/bin/sh",
            "arguments": ["-c", 'echo "$0"', 'it\'s "quoted"'],
            "name": "iri-live",
            "directory": "first",
            "stdout_path": "out.txt",
            "resources": {"cpu_cores_per_process": 1, "memory": 64 << 20},
            "attributes": {"duration": 600, "custom_attributes": {"Flavor": "mint"}},
        },
    )
    queued = _tool("condor_q", job, "-af", "Flavor", "AllowedExecuteDuration", "RequestMemory")
    assert queued.split() == ["mint", "600", "64"]
    status = _until(live, job, {"completed", "failed"})
    assert (status["state"], status["exit_code"]) == ("completed", 0)
    assert _task_output(live, "view", {"path": "first/out.txt"}) == 'it\'s "quoted"\n'
    end = time.monotonic() + 60  # the schedd lets the job go once its output is fetched
    while not (shown := _tool("condor_history", job, "-af", "JobBatchName", "Flavor", "ExitCode")):
        assert time.monotonic() < end, "the job never reached the history"
        time.sleep(1)
    assert shown.split() == ["iri-live", "mint", "0"]


def test_job_states(live: Live) -> None:
    failed = _submit(live, {"executable": "/bin/sh", "arguments": ["-c", "exit 3"]})
    idle = _submit(live, {"executable": "/bin/true", "resources": {"memory": 1 << 50}})
    held = _submit(live, {"executable": "/bin/sleep", "arguments": ["300"]})
    canceled = _submit(live, {"executable": "/bin/sleep", "arguments": ["300"]})
    _until(live, held, {"queued", "active"})
    _tool("condor_hold", "-reason", "iri test hold", held)
    status = _until(live, held, {"held"})
    assert (status["state"], status["message"]) == ("held", "iri test hold (by user condor)")
    assert live.api.delete(f"/api/v2/compute/cancel/{live.schedd}/{canceled}").status_code == 204
    assert _until(live, canceled, {"canceled"})["state"] == "canceled"
    status = _until(live, failed, {"completed", "failed"})
    assert (status["state"], status["exit_code"]) == ("failed", 3)
    assert _status(live, idle)["state"] == "queued"
    update = live.api.put(
        f"/api/v2/compute/job/{live.schedd}/{idle}",
        json={
            "executable": "/bin/true",
            "resources": {"memory": 1 << 50, "cpu_cores_per_process": 2},
        },
    )
    assert update.status_code == 200, update.text
    assert _tool("condor_q", idle, "-af", "RequestCpus").split() == ["2"]
    moved = live.api.put(
        f"/api/v2/compute/job/{live.schedd}/{idle}", json={"executable": "/bin/ls"}
    )
    assert moved.status_code == 422


def _task_output(live: Live, op: str, body: dict[str, Any]) -> Any:
    answer = live.api.post(f"/api/v2/filesystem/{op}/{STAGING}", json=body)
    assert answer.status_code in (200, 201), answer.text
    return live.api.get(f"/api/v2/task/{answer.json()['task_id']}").json()["result"]["output"]


def test_staged_input_in_output_back(live: Live) -> None:
    _task_output(live, "mkdir", {"path": "run1"})
    upload = live.api.post(
        f"/api/v2/filesystem/upload/{STAGING}",
        params={"path": "run1/in.txt"},
        files={"file": ("in.txt", b"staged input\n")},
    )
    assert upload.status_code == 200, upload.text
    job = _submit(
        live,
        {
            "executable": "/bin/sh",
            "arguments": ["-c", "tr a-z A-Z < in.txt > out.txt"],
            "directory": "run1",
        },
    )
    assert _until(live, job, {"completed", "failed"})["state"] == "completed"
    assert _task_output(live, "view", {"path": "run1/out.txt"}) == "STAGED INPUT\n"


def test_schemathesis_finds_nothing(live: Live, tmp_path: Path) -> None:
    """The official document (as served, unchanged), a fixed seed, bounded examples (run in a
    temporary directory: Schemathesis keeps a cache where it runs)."""
    done = subprocess.run(
        [
            sys.executable, "-m", "schemathesis.cli", "run",
            f"{live.server.url}/iri/openapi.json", "--url", f"{live.server.url}/iri",
            "-H", f"Authorization: Bearer {live.token}",
            "--seed", "1", "-n", "5", "--workers", "1", "--no-color",
        ],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-6000:]
    assert "Tested: 47" in done.stdout


def test_a_stopped_schedd_is_an_outage(live: Live) -> None:
    """Last: the schedd is stopped, then started again before the test ends."""
    rid = live.schedd
    assert live.api.get(f"/api/v2/status/resources/{rid}").json()["current_status"] == "up"
    _tool("condor_off", "-schedd")
    try:
        end = time.monotonic() + 60
        while live.api.get(f"/api/v2/status/resources/{rid}").json()["current_status"] != "down":
            assert time.monotonic() < end, "the schedd's resource never went down"
            time.sleep(1)
        [incident] = live.api.get("/api/v2/status/incidents", params={"resource_id": rid}).json()
        assert (incident["resolution"], incident["end"]) == ("unresolved", None)
        events = live.api.get("/api/v2/status/events", params={"resource_id": rid}).json()
        assert events[-1]["status"] == "down" and events[-1]["incident_uri"] == incident["self_uri"]
    finally:
        _tool("condor_on", "-schedd")
    end = time.monotonic() + 120
    while live.api.get(f"/api/v2/status/resources/{rid}").json()["current_status"] != "up":
        assert time.monotonic() < end, "the schedd's resource never came back"
        time.sleep(2)
    closed = live.api.get(f"/api/v2/status/incidents/{incident['id']}").json()
    assert closed["resolution"] == "completed" and closed["end"] is not None
