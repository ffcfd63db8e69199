"""``cedar serve`` over a mock pool, through a real HTTP client against a running server."""

from __future__ import annotations

import io
import json
import re
import tarfile
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from tests.http_api.conftest import Api, RunningServer, client

SUBMIT = "executable = /bin/echo\narguments = hi\noutput = out.txt\nqueue {n}"
SPOOL_SUBMIT = """\
executable = analyse.sh
transfer_input_files = data
output = analysis.out
error = analysis.err
should_transfer_files = YES
queue
"""


def submit(c: httpx.Client, n: int = 1, **extra: object) -> list[str]:
    answer = c.post("/api/v1/jobs", json={"submit_file": SUBMIT.format(n=n), **extra})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert len(body["job_ids"]) == n
    return list(body["job_ids"])


def ids_of(body: dict[str, object]) -> list[str]:
    jobs = body["jobs"]
    assert isinstance(jobs, list)
    return [f"{j['ClusterId']}.{j['ProcId']}" for j in jobs]


# --------------------------------------------------------------------------- the document


def test_openapi_is_valid_31_and_lists_every_route(api: Api) -> None:
    from openapi_spec_validator import validate

    doc = api.anonymous.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    validate(doc)
    from cedar.http_api.app import create_app

    app = create_app(api.server.settings)
    routes = {
        (method.lower(), route.path)
        for route in app.routes
        if getattr(route, "include_in_schema", False)
        for method in getattr(route, "methods", ())
        if method != "HEAD"
    }
    documented = {(method, path) for path, item in doc["paths"].items() for method in item}
    missing = {(m, p.replace(":path", "")) for m, p in routes} - documented
    assert not missing, f"routes missing from /openapi.json: {sorted(missing)}"
    for needed in [
        ("get", "/api/v1/jobs"),
        ("post", "/api/v1/jobs"),
        ("get", "/api/v1/jobs/{job}"),
        ("patch", "/api/v1/jobs/{job}"),
        ("delete", "/api/v1/jobs/{job}"),
        ("post", "/api/v1/jobs/{job}/hold"),
        ("post", "/api/v1/jobs/{job}/release"),
        ("post", "/api/v1/jobs/hold"),
        ("post", "/api/v1/jobs/release"),
        ("put", "/api/v1/jobs/{job}/input"),
        ("post", "/api/v1/jobs/{job}/input/multipart"),
        ("get", "/api/v1/jobs/{job}/output"),
        ("get", "/api/v1/jobs/{job}/files/{name}"),
        ("get", "/api/v1/jobs/archive"),
        ("get", "/api/v1/whoami"),
        ("get", "/v1/jobs/{schedd}"),
        ("get", "/v1/status"),
        ("get", "/v1/config/{attr}"),
        ("get", "/metrics"),
    ]:
        assert needed in documented, needed
    # the bearer token is described, and a request body type is generated from its model
    submit_op = doc["paths"]["/api/v1/jobs"]["post"]
    assert "submit_file" in json.dumps(doc["components"]["schemas"]["SubmitRequest"])
    assert submit_op["responses"]["201"]


def test_docs_page_is_served_without_a_cdn(api: Api) -> None:
    page = api.anonymous.get("/docs")
    assert page.status_code == 200 and "/openapi.json" in page.text
    assert "https://" not in page.text and "http://" not in page.text


def test_health_version_metrics(api: Api) -> None:
    assert api.anonymous.get("/healthz").json()["status"] == "ok"
    assert api.anonymous.get("/readyz").json()["status"] == "ok"
    assert "condor_version" in api.anonymous.get("/api/v1/version").json()
    api.alice.get("/api/v1/whoami")
    text = api.anonymous.get("/metrics").text
    assert 'cedar_serve_requests_total{route="/api/v1/whoami",status="200"}' in text
    assert "cedar_serve_callers" in text


# --------------------------------------------------------------------------- identity


def test_whoami_is_the_daemons_answer(api: Api) -> None:
    alice = api.alice.get("/api/v1/whoami").json()
    assert alice["authenticated"] and alice["user"].startswith("alice@")
    assert alice["method"] == "TOKEN"
    assert api.anonymous.get("/api/v1/whoami").json() == {
        "authenticated": False,
        "user": None,
        "method": None,
    }


def test_token_for_another_pool_is_401_with_a_reason(api: Api) -> None:
    with client(api.url, api.pool.foreign) as foreign:
        answer = foreign.get("/api/v1/whoami")
    assert answer.status_code == 401
    assert "key the server does not have" in answer.json()["error"]
    assert api.pool.foreign not in answer.text


def test_malformed_authorization_is_401(api: Api) -> None:
    answer = api.anonymous.get("/api/v1/whoami", headers={"Authorization": "Basic eDp5"})
    assert answer.status_code == 401


def test_anonymous_caller_cannot_list_api_jobs(api: Api) -> None:
    answer = api.anonymous.get("/api/v1/jobs")
    assert answer.status_code == 401 and "Bearer" in answer.json()["error"]


def test_ping(api: Api) -> None:
    body = api.alice.get("/api/v1/ping", params={"level": "WRITE"}).json()
    assert body["authorized"] and body["user"].startswith("alice@") and body["encrypted"]
    assert api.anonymous.get("/api/v1/ping").json()["authorized"]
    assert api.alice.get("/api/v1/ping", params={"level": "NOPE"}).status_code == 400


# --------------------------------------------------------------------------- jobs


def test_submit_get_list_and_pages(api: Api) -> None:
    jobs = submit(api.alice, 5)
    one = api.alice.get(f"/api/v1/jobs/{jobs[0]}").json()
    assert one["Args"] == "hi" and one["User"].startswith("alice@")
    cluster = jobs[0].split(".")[0]
    seen: list[str] = []
    token = None
    for _ in range(5):
        params = {
            "constraint": f"ClusterId == {cluster}",
            "limit": 2,
            "projection": "ClusterId,ProcId",
        }
        if token:
            params["page_token"] = token
        body = api.alice.get("/api/v1/jobs", params=params).json()
        seen += ids_of(body)
        token = body["next_page_token"]
        assert body["has_more"] == (token is not None)
        if not token:
            break
    assert seen == jobs  # every job once, in id order
    lines = api.alice.get(
        "/api/v1/jobs",
        params={"constraint": f"ClusterId == {cluster}", "format": "jsonl", "limit": 0},
    ).text.splitlines()
    assert sorted(f"{json.loads(x)['ClusterId']}.{json.loads(x)['ProcId']}" for x in lines) == jobs


def test_two_users_never_see_or_touch_each_others_jobs(api: Api) -> None:
    (job,) = submit(api.alice)
    bob_jobs = submit(api.bob)
    listed = ids_of(api.bob.get("/api/v1/jobs", params={"limit": 0}).json())
    assert job not in listed and bob_jobs[0] in listed
    assert api.bob.get(f"/api/v1/jobs/{job}").status_code == 404
    assert api.bob.post(f"/api/v1/jobs/{job}/hold").status_code == 404
    assert api.bob.post(f"/api/v1/jobs/{job}/release").status_code == 404
    assert api.bob.delete(f"/api/v1/jobs/{job}").status_code == 404
    edit = api.bob.patch(f"/api/v1/jobs/{job}", json={"attributes": {"Mark": 1}})
    assert edit.status_code == 404
    # by constraint: bob's scope holds only bob's jobs, whatever the constraint says
    held = api.bob.post(
        "/api/v1/jobs/hold", json={"constraint": f"ClusterId == {job.split('.')[0]}"}
    )
    assert held.json()["succeeded"] == 0
    escape = api.bob.post("/api/v1/jobs/hold", json={"constraint": "true) || (true"})
    assert escape.status_code == 400
    bulk = api.bob.post("/api/v1/jobs/edit", json={"constraint": "true", "attributes": {"Mark": 2}})
    assert bulk.status_code == 200
    assert "Mark" not in api.alice.get(f"/api/v1/jobs/{job}").json()
    assert api.alice.get(f"/api/v1/jobs/{job}").json()["JobStatus"] != 5


def test_edit_with_typed_values(api: Api) -> None:
    (job,) = submit(api.alice)
    values = {"S": "text", "N": 3, "R": 2.5, "B": True, "U": None, "E": "/Expr(N + 1)/"}
    answer = api.alice.patch(f"/api/v1/jobs/{job}", json={"attributes": values})
    assert answer.status_code == 200, answer.text
    ad = api.alice.get(f"/api/v1/jobs/{job}", params={"projection": "S,N,R,B,U,E"}).json()
    assert ad["S"] == "text" and ad["N"] == 3 and ad["R"] == 2.5 and ad["B"] is True
    assert ad["E"] == "/Expr(N + 1)/"
    bad = api.alice.patch(f"/api/v1/jobs/{job}", json={"attributes": {"E": "/Expr(1 +)/"}})
    assert bad.status_code == 400


def test_hold_release_remove_with_per_job_results(api: Api) -> None:
    jobs = submit(api.alice, 3)
    held = api.alice.post(f"/api/v1/jobs/{jobs[0]}/hold", json={"reason": "test"}).json()
    assert held == {
        "action": "hold",
        "succeeded": 1,
        "results": [{"job_id": jobs[0], "result": "success"}],
    }
    ad = api.alice.get(
        f"/api/v1/jobs/{jobs[0]}", params={"projection": "JobStatus,HoldReason"}
    ).json()
    assert ad["JobStatus"] == 5 and ad["HoldReason"].startswith("test")
    released = api.alice.post(f"/api/v1/jobs/{jobs[0]}/release").json()
    assert released["succeeded"] == 1
    cluster = jobs[0].split(".")[0]
    bulk = api.alice.post(
        "/api/v1/jobs/hold", json={"constraint": f"ClusterId == {cluster}"}
    ).json()
    assert bulk["succeeded"] == 3 and {r["job_id"] for r in bulk["results"]} == set(jobs)
    removed = api.alice.delete(f"/api/v1/jobs/{jobs[2]}").json()
    assert removed["results"] == [{"job_id": jobs[2], "result": "success"}]
    gone = api.alice.post("/api/v1/jobs/remove", json={"constraint": f"ClusterId == {cluster}"})
    assert gone.json()["succeeded"] == 2
    history = api.alice.get(
        "/api/v1/jobs/archive",
        params={"constraint": f"ClusterId == {cluster}", "projection": "ProcId"},
    ).json()
    assert sorted(j["ProcId"] for j in history["jobs"]) == [0, 1, 2]
    assert (
        api.bob.get(
            "/api/v1/jobs/archive", params={"constraint": f"ClusterId == {cluster}"}
        ).json()["jobs"]
        == []
    )


@pytest.mark.parametrize("bad", ["1", "x.y", "1.2.3", "-1.0"])
def test_bad_job_ids_are_400(api: Api, bad: str) -> None:
    assert api.alice.get(f"/api/v1/jobs/{bad}").status_code == 400


def test_huge_projection_and_constraint_are_400(api: Api) -> None:
    names = ",".join(f"A{i}" for i in range(5000))
    assert api.alice.get("/api/v1/jobs", params={"projection": names}).status_code == 400
    assert api.alice.get("/api/v1/jobs", params={"projection": "a;b"}).status_code == 400
    long = " || ".join(["true"] * 5000)
    assert api.alice.get("/api/v1/jobs", params={"constraint": long}).status_code == 400
    assert api.alice.get("/api/v1/jobs", params={"limit": 10**9}).status_code == 400


# --------------------------------------------------------------------------- sandboxes


def tar_of(members: dict[str, bytes], extra: list[tarfile.TarInfo] = ()) -> bytes:  # type: ignore[assignment]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            archive.addfile(info, io.BytesIO(data))
        for info in extra:
            archive.addfile(info)
    return buffer.getvalue()


def spooled_job(api: Api) -> str:
    answer = api.alice.post("/api/v1/jobs", json={"submit_file": SPOOL_SUBMIT, "spool": True})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["job_ids"][0])


def complete(api: Api, job: str) -> None:
    queue = api.pool.pool.schedd.queue
    deadline = time.monotonic() + 120  # generous for a loaded CI machine
    while time.monotonic() < deadline:
        status = api.alice.get(f"/api/v1/jobs/{job}", params={"projection": "JobStatus"}).json()
        if status["JobStatus"] == 1:
            break
        time.sleep(0.05)
    now = time.time()
    for offset in (0.0, 0.0, queue.run_time):
        queue.step(now + offset)


def test_sandbox_round_trip_tar(api: Api) -> None:
    job = spooled_job(api)
    files = {
        "analyse.sh": b"#!/bin/sh\nwc -l data/*\n",
        "data/a.csv": b"x,y\n1,2\n",
        "data/b.bin": bytes(range(256)) * 16,
    }
    answer = api.alice.put(f"/api/v1/jobs/{job}/input", content=tar_of(files))
    assert answer.status_code == 200, answer.text
    assert answer.json()["files"] == sorted(files)
    complete(api, job)
    out = api.alice.get(f"/api/v1/jobs/{job}/output")
    assert out.status_code == 200 and out.headers["content-type"] == "application/x-tar"
    with tarfile.open(fileobj=io.BytesIO(out.content)) as archive:
        names = archive.getnames()
        stdout = archive.extractfile("analysis.out")
        assert stdout is not None
        manifest = stdout.read().decode()
    assert "analysis.out" in names
    for name, data in files.items():  # the job saw every file, with its size
        assert f"{name} {len(data)}" in manifest, manifest
    assert api.alice.get(f"/api/v1/jobs/{job}/stdout").text == manifest
    assert api.alice.get(f"/api/v1/jobs/{job}/files/analysis.out").text == manifest
    assert api.alice.get(f"/api/v1/jobs/{job}/files/nothere").status_code == 404
    assert api.bob.get(f"/api/v1/jobs/{job}/output").status_code == 404


def test_sandbox_multipart(api: Api) -> None:
    job = spooled_job(api)
    parts = [
        ("files", ("analyse.sh", b"#!/bin/sh\n")),
        ("files", ("data/x.txt", b"hello\n")),
    ]
    answer = api.alice.post(f"/api/v1/jobs/{job}/input/multipart", files=parts)
    assert answer.status_code == 200, answer.text
    assert answer.json()["files"] == ["analyse.sh", "data/x.txt"]


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


@pytest.mark.parametrize(
    "archive",
    [
        tar_of({"../escape.txt": b"x"}),
        tar_of({"/etc/escape.txt": b"x"}),
        tar_of({"a/../../escape.txt": b"x"}),
        tar_of({}, [_link("link", "/etc/passwd", tarfile.SYMTYPE)]),
        tar_of({"f": b"x"}, [_link("hard", "/etc/passwd", tarfile.LNKTYPE)]),
        tar_of({}, [_link("dev", "", tarfile.CHRTYPE)]),
        b"this is not a tar archive at all" * 40,
    ],
    ids=["dotdot", "absolute", "nested-dotdot", "symlink", "hardlink", "device", "garbage"],
)
def test_hostile_tar_is_refused(api: Api, archive: bytes) -> None:
    job = spooled_job(api)
    answer = api.alice.put(f"/api/v1/jobs/{job}/input", content=archive)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]


@pytest.mark.parametrize("name", ["../x", "/etc/x", "a/../../x", "a\\..\\x"])
def test_hostile_multipart_names_are_refused(api: Api, name: str) -> None:
    job = spooled_job(api)
    answer = api.alice.post(f"/api/v1/jobs/{job}/input/multipart", files=[("f", (name, b"x"))])
    assert answer.status_code == 400, answer.text


def test_oversize_upload_is_413(api: Api) -> None:
    job = spooled_job(api)
    big = tar_of({"big.bin": b"\0" * (2 << 20)})
    assert api.alice.put(f"/api/v1/jobs/{job}/input", content=big).status_code == 413

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(40):
            yield b"\0" * (64 << 10)

    assert api.alice.put(f"/api/v1/jobs/{job}/input", content=chunks()).status_code == 413
    parts = [("f", ("big.bin", b"\0" * (2 << 20)))]
    assert api.alice.post(f"/api/v1/jobs/{job}/input/multipart", files=parts).status_code == 413
    chunked = api.alice.post(
        f"/api/v1/jobs/{job}/input/multipart",
        content=chunks(),
        headers={"Content-Type": "multipart/form-data; boundary=x"},
    )
    assert chunked.status_code == 411


@pytest.mark.parametrize("name", ["..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "a%2F..%2F..%2Fx"])
def test_file_names_escaping_the_sandbox_are_400(api: Api, name: str) -> None:
    answer = api.alice.get(f"{api.url}/api/v1/jobs/1.0/files/{name}")
    assert answer.status_code == 400, answer.text


def test_uploading_to_a_job_not_on_the_spooling_hold_is_409(api: Api) -> None:
    (job,) = submit(api.alice)
    answer = api.alice.put(f"/api/v1/jobs/{job}/input", content=tar_of({"a": b"x"}))
    assert answer.status_code == 409


# --------------------------------------------------------------------------- collector


def test_collector_ads_and_advertise(api: Api) -> None:
    body = api.anonymous.get(
        "/api/v1/collector/ads", params={"type": "schedd", "projection": "Name,MyAddress"}
    ).json()
    assert body["total_returned"] == 1 and body["ads"][0]["Name"] == "mock-schedd"
    named = api.anonymous.get("/api/v1/collector/ads", params={"type": "any", "name": "nope"})
    assert named.json()["total_returned"] == 0
    bad = api.anonymous.get("/api/v1/collector/ads", params={"type": "nosuchtype"})
    assert bad.status_code == 400
    ad = {"MyType": "Generic", "Name": "cedar-serve-test"}
    denied = api.bob.post("/api/v1/collector/ads", json={"ads": [ad]})
    assert denied.status_code == 403  # the collector authorizes: bob may not advertise


# --------------------------------------------------------------------------- limits


def test_rate_limit_answers_429_with_retry_after(api: Api) -> None:
    settings = replace(api.server.settings, rate=0.5, burst=2)
    server = RunningServer(settings).start()
    try:
        with client(server.url) as anonymous:
            codes = [anonymous.get("/api/v1/whoami") for _ in range(4)]
    finally:
        server.stop()
    limited = [r for r in codes if r.status_code == 429]
    assert limited and int(limited[0].headers["Retry-After"]) >= 1
    assert limited[0].json()["error"] == "too many requests"


def test_slow_client_does_not_block_others(api: Api) -> None:
    import socket

    slow = socket.create_connection(("127.0.0.1", api.server.port))
    try:
        slow.sendall(b"GET /api/v1/version HTTP/1.1\r\nHost: x\r\n")  # and never finishes
        assert api.anonymous.get("/api/v1/version").status_code == 200
    finally:
        slow.close()


def test_cors_is_off_by_default(api: Api) -> None:
    answer = api.anonymous.get("/healthz", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in answer.headers


# ------------------------------------------------------------- history sources, tail, analysis


def test_epochs_and_transfers(api: Api) -> None:
    for path in ("/api/v1/jobs/epochs", "/api/v1/jobs/transfers"):
        answer = api.alice.get(path, params={"limit": 5, "scan_limit": 1000})
        assert answer.status_code == 200, answer.text
        assert answer.json()["has_more"] is False
    backwards = api.alice.get("/api/v1/jobs/archive", params={"backwards": "false"})
    assert backwards.status_code == 200


def test_tail_of_a_job_not_running_is_refused(api: Api) -> None:
    (job,) = submit(api.alice)
    api.alice.post(f"/api/v1/jobs/{job}/hold")
    answer = api.alice.get(f"/api/v1/jobs/{job}/tail")
    # the mock schedd has no GET_JOB_CONNECT_INFO: it closes (403 with the reason); the real
    # schedd says the job is not running (409, tests/live_pool/test_serve_live.py)
    assert answer.status_code in (403, 409), answer.text
    assert answer.json()["error"]
    assert api.bob.get(f"/api/v1/jobs/{job}/tail").status_code == 404
    escape = api.alice.get(f"/api/v1/jobs/{job}/tail", params={"file": "../../etc/passwd"})
    assert escape.status_code == 400


def test_analysis_is_structured(api: Api) -> None:
    (job,) = submit(api.alice)
    answer = api.alice.get(f"/api/v1/jobs/{job}/analysis")
    assert answer.status_code == 200, answer.text
    assert isinstance(answer.json(), dict) and answer.json()
    assert api.bob.get(f"/api/v1/jobs/{job}/analysis").status_code == 404


# --------------------------------------------------------------------------- proxy minting


def test_opt_in_tokens_minted_for_a_trusted_proxy(api: Api, tmp_path: Path) -> None:
    from cedar.auth.signing_key import SigningKeyStore
    from cedar.config import Config

    store = api.pool.pool.policy.options["signing_keys"]
    assert isinstance(store, SigningKeyStore)
    key = store.get("POOL")
    assert key is not None
    key.save(tmp_path / "POOL")
    domain = api.pool.pool.policy.trust_domain or api.pool.pool.policy.uid_domain
    settings = replace(
        api.server.settings,
        proxy_header="X-Remote-User",
        proxy_addresses=("127.0.0.1",),
        signing_key_file=str(tmp_path / "POOL"),
        config=Config.from_text(f"TRUST_DOMAIN = {domain}\n"),
    )
    server = RunningServer(settings).start()
    try:
        with client(server.url) as proxy:
            me = proxy.get("/api/v1/whoami", headers={"X-Remote-User": "carol"}).json()
            assert me == {"authenticated": True, "user": f"carol@{domain}", "method": "TOKEN"}
            assert proxy.get("/api/v1/whoami").json()["authenticated"] is False
            bad = proxy.get("/api/v1/whoami", headers={"X-Remote-User": 'carol@evil" || true'})
            assert bad.status_code == 401
            # a caller's own token wins over the header
            with client(server.url, api.pool.bob) as bob:
                mine = bob.get("/api/v1/whoami", headers={"X-Remote-User": "carol"}).json()
                assert mine["user"].startswith("bob@")
    finally:
        server.stop()
    # off by default: the header means nothing
    plain = api.anonymous.get("/api/v1/whoami", headers={"X-Remote-User": "carol"}).json()
    assert plain["authenticated"] is False


def test_replicas_share_nothing(api: Api) -> None:
    """Two processes' worth of servers on one pool: a page token from one continues on the
    other, and a caller's identity is learnt again from the daemon (nothing to share)."""
    jobs = submit(api.alice, 4)
    cluster = jobs[0].split(".")[0]
    other = RunningServer(api.server.settings).start()
    try:
        with client(other.url, api.pool.alice) as alice_elsewhere:
            params = {"constraint": f"ClusterId == {cluster}", "limit": 2}
            first = api.alice.get("/api/v1/jobs", params=params).json()
            rest = alice_elsewhere.get(
                "/api/v1/jobs", params={**params, "page_token": first["next_page_token"]}
            ).json()
            assert ids_of(first) + ids_of(rest) == jobs
            assert alice_elsewhere.get("/api/v1/whoami").json()["user"].startswith("alice@")
    finally:
        other.stop()


def test_typed_values_are_the_services_one_rule() -> None:
    from cedar.service_core import typed_values

    assert typed_values({"S": "a b", "N": 1, "B": False, "U": None, "E": "/Expr(N + 1)/"}) == {
        "S": '"a b"',
        "N": "1",
        "B": "false",
        "U": "undefined",
        "E": "N + 1",
    }


def test_metrics_count_requests_to_a_mounted_application(api: Api) -> None:
    """A mounted sub-application (as the MCP server is under ``cedar serve``) sets
    ``scope["app"]`` to itself; the request counter still finds the process's services."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def hello(request: object) -> PlainTextResponse:
        return PlainTextResponse("hello")

    inner = Starlette(routes=[Route("/hello", hello)])
    settings = replace(api.server.settings, rate=0)
    server = RunningServer(settings, mount=lambda app: app.mount("/sub", inner)).start()
    try:
        with client(server.url) as anonymous:
            for _ in range(2):
                answer = anonymous.get("/sub/hello")
                assert answer.status_code == 200 and answer.text == "hello"
            text = anonymous.get("/metrics").text
        counted = [line for line in text.splitlines() if 'status="200"} 2' in line]
        assert any("hello" in line or "/sub" in line for line in counted), text
    finally:
        server.stop()


EVERY_TYPE_SUBMIT = r"""executable = /bin/echo
arguments = hi
+IntValue = -42
+RealValue = 2.5
+StringValue = "tab\tquote\"backslash\\ café ☃"
+BoolValue = true
+UndefinedValue = undefined
+ErrorValue = error
+ExprValue = RequestMemory * 2 + (RequestDisk > 0 ? 1 : 0)
+ListValue = { 1, "two", { 3.0 } }
+RecordValue = [ A = 1; B = [ C = "d" ] ]
+PctValue = "100%s done %d"
queue 3
"""


@pytest.mark.parametrize("format", ["jsonl", "json"])
def test_listing_bytes_are_the_ad_writers(api: Api, format: str) -> None:
    """A streamed listing (written from the ads' received bytes) is, byte for byte, what the ad
    writer (``ad_json``) makes of the same ads read by the library: every value type, unicode,
    escapes, ``%`` in a value, and the private attributes redacted."""
    import trio

    from cedar.http_api.adjson import ad_json
    from cedar.service_core import Caller, PoolAccess

    answer = api.alice.post("/api/v1/jobs", json={"submit_file": EVERY_TYPE_SUBMIT})
    assert answer.status_code == 201, answer.text
    cluster = answer.json()["cluster_id"]
    names = "ClusterId,ProcId,Owner,Args,IntValue,RealValue,StringValue,BoolValue"
    names += ",UndefinedValue,ErrorValue,ExprValue,ListValue,RecordValue,PctValue,ClaimId"
    constraint = f"ClusterId == {cluster}"
    params = {"constraint": constraint, "format": format, "limit": 0, "projection": names}
    body = api.alice.get("/api/v1/jobs", params=params).content

    async def library() -> list[bytes]:
        access = PoolAccess(api.server.settings)
        schedd = await access.schedd(Caller.from_token(api.pool.alice))
        ads = await schedd.query(constraint, names.split(","))
        private = api.server.settings.private_attrs
        return [ad_json(ad, private).encode() for ad in ads]

    # The mock schedd stamps every ad with its clock (ServerTime): the two queries may fall
    # either side of a second's edge, so that one value is left out of the comparison.
    def timeless(data: bytes) -> bytes:
        return re.sub(rb', ?"ServerTime": ?\d+', b"", data)

    ads = [timeless(ad) for ad in trio.run(library)]
    body = timeless(body)
    assert len(ads) == 3
    if format == "jsonl":
        assert body == b"".join(ad + b"\n" for ad in ads)
    else:
        tail = b'], "total_returned": 3, "has_more": false, "next_page_token": null}'
        assert body == b'{"jobs": [' + b",".join(ads) + tail + b"\n"  # JSON ends a line
    first = json.loads(ads[0])
    assert first["StringValue"].endswith("café ☃") and first["ListValue"] == [1, "two", [3.0]]
    assert first["RecordValue"] == {"A": 1, "B": {"C": "d"}}
    assert first["PctValue"] == "100%s done %d"
    assert first["ExprValue"].startswith("/Expr(") and first["UndefinedValue"] is None


def test_the_first_request_is_answered_before_any_client_and_not_counted() -> None:
    """``warm_up`` (run by ``serve`` before it listens): the framework's first-request work is
    done, and the metrics show no request of its own."""
    import trio

    from cedar.http_api.app import create_app, warm_up
    from cedar.service_core import ServiceSettings

    app = create_app(ServiceSettings())
    assert app.middleware_stack is None  # built by the first request
    trio.run(warm_up, app)
    assert app.middleware_stack is not None
    assert not app.state.services.requests and not app.state.services.latency_sum
