"""``cedar serve`` against the real pool, through httpx and a running server: identities from
the daemons (IDTOKEN, SciToken, another user, anonymous, a foreign token), the job routes, two
users kept apart, a real job's sandbox round trip checked file by file, hostile input, and restd's
``/v1`` against the library."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx
import pytest

from cedar.auth.signing_key import SigningKey
from cedar.auth.token import create_token
from cedar.config import Config
from cedar.service_core import ServiceSettings
from tests.http_api.conftest import RunningServer, client
from tests.live_pool.conftest import readable


@dataclass
class Live:
    server: RunningServer
    testuser: httpx.Client
    other: httpx.Client
    anonymous: httpx.Client
    foreign_token: str = field(repr=False)
    scitoken: str | None = field(repr=False)


def _token_file(directory: str | None) -> str | None:
    if not readable(directory) or directory is None:
        return None
    for name in sorted(os.listdir(directory)):
        text = Path(directory, name).read_text().strip()
        if text:
            return text
    return None


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    token = _token_file(os.environ.get("CEDAR_LIVE_TOKEN_DIR"))
    key_path = os.environ.get("CEDAR_LIVE_SIGNING_KEY")
    if token is None or not readable(key_path) or key_path is None:
        pytest.skip("needs the pool's token directory and signing key (run as root)")
    domain = os.environ.get("CEDAR_LIVE_TRUST_DOMAIN", "minicondor")
    other = create_token(
        SigningKey.load(key_path, "POOL"), issuer=domain, subject=f"other@{domain}"
    )
    foreign = create_token(SigningKey.generate("POOL"), issuer=domain, subject=f"testuser@{domain}")
    sci_file = os.environ.get("CEDAR_LIVE_SCITOKEN_FILE")
    scitoken = Path(sci_file).read_text().strip() if readable(sci_file) and sci_file else None
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    settings = replace(
        ServiceSettings.from_config(config),
        collector=os.environ["CEDAR_LIVE_COLLECTOR"],
        rate=0,
        max_upload=1 << 20,
    )
    server = RunningServer(settings).start()
    try:
        with (
            client(server.url, token) as testuser,
            client(server.url, other) as other_client,
            client(server.url) as anonymous,
        ):
            yield Live(server, testuser, other_client, anonymous, foreign, scitoken)
    finally:
        server.stop()


def submit(c: httpx.Client, text: str, **extra: object) -> list[str]:
    answer = c.post("/api/v1/jobs", json={"submit_file": text, **extra})
    assert answer.status_code == 201, answer.text
    return list(answer.json()["job_ids"])


HELD = "executable = /bin/sleep\narguments = 600\ntransfer_executable = false\nhold = true\n"


def test_whoami_from_the_daemons(live: Live) -> None:
    me = live.testuser.get("/api/v1/whoami").json()
    assert me == {"authenticated": True, "user": "testuser@minicondor", "method": "TOKEN"}
    assert live.other.get("/api/v1/whoami").json()["user"] == "other@minicondor"
    assert live.anonymous.get("/api/v1/whoami").json()["authenticated"] is False
    with client(live.server.url, live.foreign_token) as foreign:
        answer = foreign.get("/api/v1/whoami")
    assert answer.status_code == 401 and "the daemon did not accept" in answer.json()["error"]


def test_scitoken_caller(live: Live) -> None:
    if live.scitoken is None:
        pytest.skip("the pool has no SciTokens (CEDAR_LIVE_SCITOKEN_FILE)")
    with client(live.server.url, live.scitoken) as sci:
        me = sci.get("/api/v1/whoami").json()
        assert me["user"] == "testuser@minicondor" and me["method"] == "SCITOKENS"
        (job,) = submit(sci, HELD + "queue")
        assert sci.get(f"/api/v1/jobs/{job}").json()["User"] == "testuser@minicondor"
        assert sci.delete(f"/api/v1/jobs/{job}").json()["succeeded"] == 1


def test_job_routes_and_two_users(live: Live) -> None:
    jobs = submit(live.testuser, HELD + "queue 3")
    cluster = jobs[0].split(".")[0]
    one = live.testuser.get(f"/api/v1/jobs/{jobs[0]}").json()
    assert one["Owner"] == "testuser" and one["JobStatus"] == 5
    page = live.testuser.get(
        "/api/v1/jobs", params={"constraint": f"ClusterId == {cluster}", "limit": 2}
    ).json()
    assert page["total_returned"] == 2 and page["has_more"]
    rest = live.testuser.get(
        "/api/v1/jobs",
        params={"constraint": f"ClusterId == {cluster}", "page_token": page["next_page_token"]},
    ).json()
    ids = [f"{j['ClusterId']}.{j['ProcId']}" for j in page["jobs"] + rest["jobs"]]
    assert ids == jobs and not rest["has_more"]
    edit = live.testuser.patch(
        f"/api/v1/jobs/{jobs[0]}", json={"attributes": {"Tag": "x", "Tries": 2}}
    )
    assert edit.status_code == 200, edit.text
    ad = live.testuser.get(f"/api/v1/jobs/{jobs[0]}", params={"projection": "Tag,Tries"}).json()
    assert ad["Tag"] == "x" and ad["Tries"] == 2
    # the other user sees none of them and can touch none of them
    assert live.other.get("/api/v1/jobs", params={"limit": 0}).json()["jobs"] == []
    assert live.other.get(f"/api/v1/jobs/{jobs[0]}").status_code == 404
    # (404: not in the caller's scope; 403: the schedd refuses WRITE to this identity at all)
    assert live.other.post(f"/api/v1/jobs/{jobs[0]}/release").status_code in (403, 404)
    assert live.other.delete(f"/api/v1/jobs/{jobs[0]}").status_code in (403, 404)
    edit = live.other.patch(f"/api/v1/jobs/{jobs[0]}", json={"attributes": {"A": 1}})
    assert edit.status_code == 404
    bulk = live.other.post("/api/v1/jobs/remove", json={"constraint": f"ClusterId == {cluster}"})
    assert bulk.status_code == 403 or bulk.json()["succeeded"] == 0
    still = live.testuser.get("/api/v1/jobs", params={"constraint": f"ClusterId == {cluster}"})
    assert [j["JobStatus"] for j in still.json()["jobs"]] == [5, 5, 5]
    assert "A" not in live.testuser.get(f"/api/v1/jobs/{jobs[0]}").json()
    # the schedd authorizes: the other user is not in ALLOW_WRITE
    refused = live.other.post("/api/v1/jobs", json={"submit_file": HELD + "queue"})
    assert refused.status_code == 403, refused.text
    released = live.testuser.post(f"/api/v1/jobs/{jobs[0]}/release", json={"reason": "go"})
    assert released.json()["results"] == [{"job_id": jobs[0], "result": "success"}]
    held = live.testuser.post("/api/v1/jobs/hold", json={"constraint": f"ClusterId == {cluster}"})
    # 25.13.2 answers "success" for the jobs that were held already too (the mock says 1)
    assert {r["job_id"] for r in held.json()["results"]} == set(jobs)
    removed = live.testuser.post(
        "/api/v1/jobs/remove", json={"constraint": f"ClusterId == {cluster}"}
    ).json()
    assert removed["succeeded"] == 3 and {r["job_id"] for r in removed["results"]} == set(jobs)
    archive = live.testuser.get(
        "/api/v1/jobs/archive", params={"constraint": f"ClusterId == {cluster}", "limit": 10}
    )
    assert archive.status_code == 200


SPOOLED = """\
executable = analyse.sh
transfer_input_files = data
output = analysis.out
error = analysis.err
log = job.log
should_transfer_files = YES
queue
"""


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_sandbox_round_trip_with_a_real_job(live: Live) -> None:
    payload = os.urandom(5000)
    files = {
        "analyse.sh": b"#!/bin/sh\necho hello from the job\ncp data/b.bin copy.bin\n"
        b"cat data/a.csv > out.csv\n",
        "data/a.csv": b"x,y\n1,2\n",
        "data/b.bin": payload,
    }
    (job,) = submit(live.testuser, SPOOLED, spool=True)
    upload = live.testuser.put(f"/api/v1/jobs/{job}/input", content=_tar(files))
    assert upload.status_code == 200, upload.text
    assert upload.json()["files"] == sorted(files)
    deadline = time.monotonic() + 120
    status = None
    while time.monotonic() < deadline:
        status = live.testuser.get(f"/api/v1/jobs/{job}", params={"projection": "JobStatus"})
        if status.json().get("JobStatus") == 4:
            break
        time.sleep(1)
    assert status is not None and status.json()["JobStatus"] == 4, status.text if status else ""
    events = live.testuser.get(f"/api/v1/jobs/{job}/events")
    assert events.status_code == 200, events.text
    kinds = [e["MyType"] for e in events.json()["events"]]
    assert (
        kinds[0] == "SubmitEvent" and kinds[-1] == "JobTerminatedEvent" and "ExecuteEvent" in kinds
    )
    assert events.json()["events"][-1]["ReturnValue"] == 0
    out = live.testuser.get(f"/api/v1/jobs/{job}/output")
    with tarfile.open(fileobj=io.BytesIO(out.content)) as archive:
        got = {m.name: archive.extractfile(m).read() for m in archive if m.isfile()}  # type: ignore[union-attr]
    assert got["analysis.out"] == b"hello from the job\n"
    assert got["out.csv"] == files["data/a.csv"]
    assert got["copy.bin"] == payload
    assert live.testuser.get(f"/api/v1/jobs/{job}/stdout").content == b"hello from the job\n"
    assert live.testuser.get(f"/api/v1/jobs/{job}/files/copy.bin").content == payload
    assert live.testuser.get(f"/api/v1/jobs/{job}/files/..%2F..%2Fetc%2Fpasswd").status_code == 400
    assert live.other.get(f"/api/v1/jobs/{job}/output").status_code == 404
    live.testuser.delete(f"/api/v1/jobs/{job}")


def test_hostile_input_on_the_real_pool(live: Live) -> None:
    (job,) = submit(live.testuser, SPOOLED, spool=True)
    try:
        dotdot = live.testuser.put(f"/api/v1/jobs/{job}/input", content=_tar({"../x": b"x"}))
        assert dotdot.status_code == 400
        big = live.testuser.put(f"/api/v1/jobs/{job}/input", content=_tar({"b": b"\0" * (2 << 20)}))
        assert big.status_code == 413
        escape = live.testuser.get("/api/v1/jobs", params={"constraint": "true) || (true"})
        assert escape.status_code == 400
        many = ",".join(f"A{i}" for i in range(5000))
        assert live.testuser.get("/api/v1/jobs", params={"projection": many}).status_code == 400
    finally:
        live.testuser.delete(f"/api/v1/jobs/{job}")


def test_restd_v1_matches_the_library(live: Live) -> None:
    import trio

    from cedar.commands import AsyncCollector

    jobs = submit(live.testuser, HELD + "queue 2")
    cluster = jobs[0].split(".")[0]
    try:
        # jobs need a token unless CEDAR_SERVE_ANONYMOUS_JOBS opens them (restd's way)
        assert live.anonymous.get(f"/v1/jobs/DEFAULT/{cluster}").status_code == 401
        listed = live.testuser.get(f"/v1/jobs/DEFAULT/{cluster}").json()
        assert sorted(e["jobid"] for e in listed) == jobs
        assert listed[0]["classad"]["owner"] == "testuser"
        one = live.testuser.get(f"/v1/jobs/DEFAULT/{cluster}/0").json()
        assert one["jobid"] == jobs[0] and one["classad"]["owner"] == "testuser"
        value = live.testuser.get(f"/v1/jobs/DEFAULT/{cluster}/0/owner").json()
        assert value == "testuser"
        startds = live.anonymous.get("/v1/status", params={"query": "startd"}).json()

        async def names() -> list[str]:
            ads = await AsyncCollector(os.environ["CEDAR_LIVE_COLLECTOR"]).query(
                "startd", projection=["Name"]
            )
            return sorted(str(ad["Name"]) for ad in ads)

        assert sorted(e["name"] for e in startds) == trio.run(names)
        assert all(e["type"] == "Machine" for e in startds)
        assert live.anonymous.get("/v1/config/COLLECTOR_HOST").status_code == 200
        # a running daemon's value (DC_CONFIG_VAL), as restd's ?daemon= gives it
        log = live.anonymous.get("/v1/config/SCHEDD_LOG", params={"daemon": "schedd"})
        assert log.status_code == 200 and log.json().endswith("SchedLog")
        slots = live.anonymous.get("/v1/config/NUM_CPUS", params={"daemon": "startd"})
        assert slots.status_code == 200
        missing = live.anonymous.get("/v1/config/NO_SUCH_KNOB_X", params={"daemon": "schedd"})
        assert missing.status_code == 404 and "message" in missing.json()
    finally:
        live.testuser.post("/api/v1/jobs/remove", json={"constraint": f"ClusterId == {cluster}"})


def test_tail_and_analysis_of_a_real_job(live: Live) -> None:
    text = (
        "executable = /bin/sh\narguments = \"-c 'echo hello tail; sleep 600'\"\n"
        "transfer_executable = false\nshould_transfer_files = YES\noutput = tail.out\nqueue"
    )
    (job,) = submit(live.testuser, text, iwd=os.environ.get("CEDAR_LIVE_IWD", "/tmp"))
    try:
        analysis = live.testuser.get(f"/api/v1/jobs/{job}/analysis")
        assert analysis.status_code == 200, analysis.text
        assert live.other.get(f"/api/v1/jobs/{job}/analysis").status_code == 404
        deadline = time.monotonic() + 300  # a loaded CI machine may take minutes to start it
        body = None
        while time.monotonic() < deadline:
            answer = live.testuser.get(f"/api/v1/jobs/{job}/tail", params={"offset": 0})
            if answer.status_code == 200 and "hello tail" in answer.text:
                body = answer.json()
                break
            assert answer.status_code in (409, 200), answer.text  # not running yet
            time.sleep(1)
        assert body is not None, "the job never ran or its stdout never showed"
        (piece,) = body["files"]
        assert piece["name"] == "stdout" and piece["offset"] == 0
        assert piece["text"].startswith("hello tail") and piece["next_offset"] == len(piece["text"])
        params = {"offset": 0, "follow": "true"}
        with live.testuser.stream("GET", f"/api/v1/jobs/{job}/tail", params=params) as events:
            assert events.headers["content-type"].startswith("text/event-stream")
            lines = events.iter_lines()
            assert next(lines) == "event: data"
            assert "hello tail" in next(lines)
        live.testuser.post(f"/api/v1/jobs/{job}/hold")
        assert live.testuser.get(f"/api/v1/jobs/{job}/tail").status_code == 409
    finally:
        live.testuser.delete(f"/api/v1/jobs/{job}")


def _skip_or_fail(reason: str) -> None:
    """Skip; under CI as root, where the pool is ours to configure, tests/conftest.py makes the
    skip a failure (as another user, e.g. test_as_testuser's run, it stays a skip)."""
    pytest.skip(reason)


def _condor_tool(name: str) -> str | None:
    tools = os.environ.get("CEDAR_LIVE_TOOLS")
    for directory in [tools, tools and str(Path(tools).parent / "sbin")]:
        if directory and os.access(Path(directory, name), os.X_OK):
            return str(Path(directory, name))
    return shutil.which(name)


def _reconfig(tool: str, condor_config: str) -> None:
    env = dict(os.environ, CONDOR_CONFIG=condor_config)
    done = subprocess.run([tool], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"condor_reconfig: {done.stdout}{done.stderr}"


@pytest.fixture()
def http_forwarding_id() -> Iterator[str]:
    """The pool's SHARED_PORT_HTTP_FORWARDING_ID: the configured one, or one this fixture sets
    (a file in the pool's LOCAL_CONFIG_DIR, then condor_reconfig as the pool's administrator;
    removed and reconfigured again afterwards).  The shared port reads it on reconfig: no
    restart is needed (observed, 25.13.2)."""
    condor_config = os.environ.get("CEDAR_LIVE_CONDOR_CONFIG")
    config = Config.load(condor_config=condor_config)
    configured = config.get("SHARED_PORT_HTTP_FORWARDING_ID")
    if configured:
        yield configured
        return
    directory = config.get("LOCAL_CONFIG_DIR")
    reconfig = _condor_tool("condor_reconfig")
    if not condor_config or not directory or not os.access(directory, os.W_OK):
        _skip_or_fail("the pool's LOCAL_CONFIG_DIR is not writable here (run as root)")
    if reconfig is None:
        _skip_or_fail("no condor_reconfig (CEDAR_LIVE_TOOLS)")
    assert condor_config and directory and reconfig
    sock_id = f"cedar_serve_test_{os.getpid()}"
    path = Path(directory, f"99-{sock_id}.conf")
    path.write_text(f"SHARED_PORT_HTTP_FORWARDING_ID = {sock_id}\n")
    try:
        _reconfig(reconfig, condor_config)
        yield sock_id
    finally:
        path.unlink(missing_ok=True)
        _reconfig(reconfig, condor_config)


def test_answering_on_the_pools_own_port(http_forwarding_id: str) -> None:
    """With SHARED_PORT_HTTP_FORWARDING_ID in the pool's configuration (25.7.2 and later),
    HTTP to the pool's port reaches cedar serve while CEDAR still reaches the daemons."""
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    settings = replace(
        ServiceSettings.from_config(config),
        collector=os.environ["CEDAR_LIVE_COLLECTOR"],
        shared_port_id=http_forwarding_id,
    )
    server = RunningServer(settings).start()
    try:
        pool = os.environ["CEDAR_LIVE_COLLECTOR"]
        # the shared port applies the reconfiguration on its own time: ask until it forwards
        deadline = time.monotonic() + 120
        while True:
            try:
                answer = httpx.get(f"http://{pool}/api/v1/version", timeout=10)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        assert answer.status_code == 200 and "condor_version" in answer.json()
        status = httpx.get(f"http://{pool}/v1/status", params={"query": "schedd"}, timeout=30)
        assert status.json()[0]["type"] == "Scheduler"
        # CEDAR on the same port still reaches the daemons
        assert httpx.get(f"{server.url}/readyz", timeout=30).status_code == 200
    finally:
        server.stop()


def test_protected_resource_metadata_names_the_pools_issuers(live: Live) -> None:
    """RFC 9728 from the pool's own configuration: the IDTOKENS issuer is its TRUST_DOMAIN, and
    with SciTokens the issuer its map file trusts is an authorization server; a 401 points to
    the document."""
    document = live.anonymous.get("/.well-known/oauth-protected-resource").json()
    assert document["htcondor_idtoken_issuer"] == os.environ.get(
        "CEDAR_LIVE_TRUST_DOMAIN", "minicondor"
    )
    assert document["resource"] == live.server.url and document["bearer_methods_supported"] == [
        "header"
    ]
    if live.scitoken is not None:
        issuer = json.loads(base64.urlsafe_b64decode(live.scitoken.split(".")[1] + "=="))["iss"]
        assert issuer in document["authorization_servers"]
    refused = live.anonymous.get("/api/v1/jobs")
    assert refused.status_code == 401
    where = f"{live.server.url}/.well-known/oauth-protected-resource"
    assert refused.headers["www-authenticate"] == f'Bearer resource_metadata="{where}"'
