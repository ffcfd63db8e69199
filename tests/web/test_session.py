"""The web page's sign-in, session cookie, CSRF guard, forwarding and preview, through httpx
against a running ``cedar serve`` over a mock pool (alice and bob with their own IDTOKENs)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from cedar.config import Config
from cedar.http_api.web.session import COOKIE, WebSettings, csrf_ok, csrf_token, seal, unseal
from cedar.service_core import Caller
from tests.http_api.conftest import Api, RunningServer
from tests.http_api.conftest import api as api  # noqa: F401 (a fixture)
from tests.service_core.conftest import TokenPool
from tests.service_core.conftest import token_pool as token_pool  # noqa: F401 (a fixture)

#: A JWT's shape (the cookie code checks shape only; daemons check the signature).
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln"
SUBMIT = "executable = /bin/echo\narguments = hi\ntransfer_executable = false\nqueue 2\n"


def signed_in(url: str, token: str) -> tuple[httpx.Client, str]:
    """A client signed in through the form, and its page's CSRF token."""
    c = httpx.Client(base_url=url, timeout=30, headers={"Origin": url})
    form = c.get("/signin").text
    given = re.search(r'name="csrf" value="([^"]+)"', form)
    assert given is not None
    answer = c.post("/signin", data={"token": token, "csrf": given.group(1)})
    assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text
    page = c.get("/")
    assert page.status_code == 200
    csrf = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert csrf is not None
    return c, csrf.group(1)


@pytest.fixture(scope="module")
def alice(api: Api) -> Iterator[tuple[httpx.Client, str]]:  # noqa: F811
    c, csrf = signed_in(api.url, api.pool.alice)
    try:
        yield c, csrf
    finally:
        c.close()


# --------------------------------------------------------------------------- the cookie


def test_seal_and_unseal() -> None:
    web = WebSettings(key=b"k" * 32, lifetime=60)
    token = JWT
    value = seal(web, token, "alice@x", now=1000)
    assert token not in value
    opened = unseal(web, value, now=1010)
    assert opened is not None and opened.caller.token == token and opened.user == "alice@x"
    assert unseal(web, value, now=1061) is None  # expired
    assert unseal(WebSettings(key=b"o" * 32), value, now=1010) is None  # another key
    tampered = value[:-2] + ("A" if value[-2] != "A" else "B") + value[-1]
    assert unseal(web, tampered, now=1010) is None
    assert unseal(web, "garbage!", now=1010) is None and unseal(web, None) is None
    assert unseal(web, "x" * 10000) is None


def test_replicas_with_one_secret_share_sessions(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"0123456789abcdef-shared")
    config = Config.from_text(f"CEDAR_SERVE_WEB_SECRET_FILE = {secret}\n")
    one = WebSettings.from_config(config, tls=True)
    two = WebSettings.from_config(config, tls=True)
    assert unseal(two, seal(one, JWT, "u")) is not None
    caller = Caller(token="t", kind="idtoken", key="token:1")
    assert csrf_ok(two, caller, csrf_token(one, caller))
    assert not csrf_ok(two, Caller(key="token:2"), csrf_token(one, caller))
    # without the knob each process has its own random key
    assert unseal(WebSettings.from_config(Config(), tls=False), seal(one, JWT, "u")) is None
    secret.write_bytes(b"short")
    with pytest.raises(Exception, match="under 16 bytes"):
        WebSettings.from_config(config, tls=True)


def test_sign_in_sets_a_sealed_httponly_strict_cookie(api: Api) -> None:  # noqa: F811
    c = httpx.Client(base_url=api.url, headers={"Origin": api.url})
    assert c.get("/").status_code == 303  # not signed in: to the form
    form = c.get("/signin")
    assert "Content-Security-Policy" in form.headers
    given = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert given is not None
    answer = c.post("/signin", data={"token": api.pool.alice, "csrf": given.group(1)})
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie and "Secure" not in cookie  # no TLS here
    assert api.pool.alice not in cookie
    assert "alice@" in c.get("/").text


def test_sign_in_refusals(api: Api) -> None:  # noqa: F811
    c = httpx.Client(base_url=api.url, headers={"Origin": api.url})
    given = re.search(r'name="csrf" value="([^"]+)"', c.get("/signin").text)
    assert given is not None
    bad_csrf = c.post("/signin", data={"token": api.pool.alice, "csrf": "nope"})
    assert bad_csrf.status_code == 403 and "set-cookie" not in bad_csrf.headers
    cross = c.post(
        "/signin",
        data={"token": api.pool.alice, "csrf": given.group(1)},
        headers={"Origin": "https://evil.example"},
    )
    assert cross.status_code == 403 and "set-cookie" not in cross.headers
    foreign = c.post("/signin", data={"token": api.pool.foreign, "csrf": given.group(1)})
    assert foreign.status_code == 401 and "did not accept" in foreign.text
    junk = c.post("/signin", data={"token": "not a token", "csrf": given.group(1)})
    assert junk.status_code == 401
    forged = httpx.Client(base_url=api.url, cookies={COOKIE: "AAAA" * 30})
    assert forged.get("/web/api/whoami").status_code == 401
    assert forged.get("/").status_code == 303


# --------------------------------------------------------------------------- forwarding, CSRF


def test_forwarding_uses_the_session_token(api: Api, alice: tuple[httpx.Client, str]) -> None:  # noqa: F811
    c, _ = alice
    me = c.get("/web/api/whoami").json()
    assert me["authenticated"] and me["user"].startswith("alice@")


def test_state_changes_need_the_csrf_header(api: Api, alice: tuple[httpx.Client, str]) -> None:  # noqa: F811
    c, csrf = alice
    body = {"submit_file": SUBMIT}
    assert c.post("/web/api/jobs", json=body).status_code == 403
    assert c.post("/web/api/jobs", json=body, headers={"X-CSRF-Token": "x"}).status_code == 403
    cross = c.post(
        "/web/api/jobs",
        json=body,
        headers={"X-CSRF-Token": csrf, "Origin": "https://evil.example"},
    )
    assert cross.status_code == 403
    ok = c.post("/web/api/jobs", json=body, headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 201, ok.text
    job = ok.json()["job_ids"][0]
    assert c.delete(f"/web/api/jobs/{job}").status_code == 403
    assert c.delete(f"/web/api/jobs/{job}", headers={"X-CSRF-Token": csrf}).status_code == 200
    # sign-out needs it too, and ends the session
    assert c.post("/signout", data={"csrf": "nope"}).status_code == 403


def test_a_second_user_sees_nothing_of_the_first(
    api: Api,  # noqa: F811
    alice: tuple[httpx.Client, str],
) -> None:
    c, csrf = alice
    made = c.post("/web/api/jobs", json={"submit_file": SUBMIT}, headers={"X-CSRF-Token": csrf})
    job = made.json()["job_ids"][0]
    bob, bob_csrf = signed_in(api.url, api.pool.bob)
    try:
        assert bob.get(f"/web/api/jobs/{job}").status_code == 404
        listed = bob.get("/web/api/jobs", params={"limit": 0}).json()["jobs"]
        assert all(not j["Owner"].startswith("alice") for j in listed)
        hold = bob.post(f"/web/api/jobs/{job}/hold", json={}, headers={"X-CSRF-Token": bob_csrf})
        assert hold.status_code == 404
        # alice's CSRF token is no use with bob's cookie
        stolen = bob.post(f"/web/api/jobs/{job}/hold", json={}, headers={"X-CSRF-Token": csrf})
        assert stolen.status_code == 403
    finally:
        bob.close()
    assert c.get(f"/web/api/jobs/{job}", params={"projection": "JobStatus"}).status_code == 200


def test_preview_shows_ads_or_the_error(api: Api, alice: tuple[httpx.Client, str]) -> None:  # noqa: F811
    c, csrf = alice
    headers = {"X-CSRF-Token": csrf}
    text = "executable = /bin/echo\narguments = $(w)\nqueue w from (\n a\n b\n c\n)\n"
    good = c.post("/web/preview", json={"submit_file": text}, headers=headers).json()
    assert good["count"] == 3 and [j["Args"] for j in good["jobs"]] == ['"a"', '"b"', '"c"']
    bad = c.post(
        "/web/preview", json={"submit_file": "universe = nosuch\nqueue\n"}, headers=headers
    ).json()
    assert "universe" in bad["error"].lower()
    assert c.post("/web/preview", json={"submit_file": text}).status_code == 403
    assert c.post("/web/preview", content=b"{", headers=headers).status_code == 400


def test_pages_and_static_files(api: Api, alice: tuple[httpx.Client, str]) -> None:  # noqa: F811
    c, _ = alice
    for path in ("/", "/submit", "/archive", "/job/1.0"):
        page = c.get(path)
        assert page.status_code == 200, path
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert "http://" not in page.text and "https://" not in page.text  # nothing from outside
    assert c.get("/job/../etc").status_code == 404
    assert c.get("/web/static/app.js").headers["content-type"].startswith("text/javascript")
    assert c.get("/web/static/..%2Fsession.py").status_code == 404
    assert c.get("/web/static/nothere.js").status_code == 404


def test_trusted_proxy_header(api: Api, tmp_path: Path) -> None:  # noqa: F811
    """The API's opt-in proxy header (CEDAR_SERVE_PROXY_HEADER) signs the page in too."""
    from cedar.auth.signing_key import SigningKeyStore

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
        headers = {"X-Remote-User": "carol", "Origin": server.url}
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as c:
            page = c.get("/")
            assert page.status_code == 200 and f"carol@{domain}" in page.text
            assert "Sign out" not in page.text  # the proxy owns the sign-in
            assert c.get("/web/api/whoami").json()["user"] == f"carol@{domain}"
            csrf = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
            assert csrf is not None
            body = {"submit_file": SUBMIT}
            assert c.post("/web/api/jobs", json=body).status_code == 403  # CSRF still needed
            made = c.post("/web/api/jobs", json=body, headers={"X-CSRF-Token": csrf.group(1)})
            assert made.status_code == 201, made.text
        with httpx.Client(base_url=server.url, headers={"X-Remote-User": "bad name"}) as bad:
            assert bad.get("/").status_code == 303
        with httpx.Client(base_url=server.url) as anonymous:
            assert anonymous.get("/").status_code == 303
    finally:
        server.stop()
    # off by default: the header means nothing to the page either
    with httpx.Client(base_url=api.url, headers={"X-Remote-User": "carol"}) as plain:
        assert plain.get("/").status_code == 303


def test_forwarding_stays_under_the_api(api: Api, alice: tuple[httpx.Client, str]) -> None:  # noqa: F811
    c, _ = alice
    for path in ("/web/api/%2E%2E/%2E%2E/healthz", "/web/api/jobs/%2e%2e/whoami"):
        assert c.get(path).status_code == 404, path
    assert c.get("/web/api/nosuchroute").status_code == 404
    # the cookie means nothing to the API itself (only a bearer token does)
    assert c.get("/api/v1/whoami").json()["authenticated"] is False


def test_the_cookie_is_secure_under_tls() -> None:
    from cedar.http_api.web.session import cookie_header

    web = WebSettings.from_config(Config(), tls=True)
    header = cookie_header(web, "v")
    assert "Secure" in header and "HttpOnly" in header and "SameSite=Strict" in header
    assert "Max-Age=0" in cookie_header(web, "", max_age=0)


def test_sign_out(api: Api) -> None:  # noqa: F811
    c, csrf = signed_in(api.url, api.pool.bob)
    try:
        answer = c.post("/signout", data={"csrf": csrf})
        assert answer.status_code == 303 and "Max-Age=0" in answer.headers["set-cookie"]
        assert c.get("/").status_code == 303
        assert c.get("/web/api/whoami").status_code == 401
    finally:
        c.close()


def test_signed_out_cookie_is_refused_by_every_replica(
    token_pool: TokenPool, tmp_path: Path
) -> None:  # noqa: F811
    """Attack (issue 37): a signed-out session's cookie, kept by whoever copied it, went on
    working until it expired (8 h).  Signing out revokes its id in the file every replica
    sharing the key reads: the copy is refused by this replica and by another."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"0123456789abcdef-shared")
    config = Config.from_text(f"CEDAR_SERVE_WEB_SECRET_FILE = {secret}\n")
    settings = replace(token_pool.settings, schedd=token_pool.pool.schedd_address, config=config)
    one, two = RunningServer(settings).start(), RunningServer(settings).start()
    try:
        c, csrf = signed_in(one.url, token_pool.bob)
        stolen = c.cookies[COOKIE]
        with httpx.Client(base_url=two.url, cookies={COOKIE: stolen}, timeout=30) as other:
            assert other.get("/web/api/whoami").status_code == 200  # replicas share sessions
            assert c.post("/signout", data={"csrf": csrf}).status_code == 303
            assert other.get("/web/api/whoami").status_code == 401
        with httpx.Client(base_url=one.url, cookies={COOKIE: stolen}, timeout=30) as same:
            assert same.get("/web/api/whoami").status_code == 401
        c.close()
        assert (tmp_path / "secret.revoked.sqlite").exists()
    finally:
        one.stop()
        two.stop()


def test_revocations_are_pruned_when_their_cookies_expire(tmp_path: Path) -> None:
    from cedar.http_api.web.session import Revocations

    table = Revocations(str(tmp_path / "r.sqlite"))
    table.revoke("a", expires=1000, now=900)
    assert table.revoked("a") and not table.revoked("b")
    table.revoke("b", expires=3000, now=2000)  # "a" expired at 1000: dropped
    assert not table.revoked("a") and table.revoked("b")
    assert Revocations(str(tmp_path / "r.sqlite")).revoked("b")  # another process reads it


def test_over_limit_uploads_are_413_and_log_no_traceback(
    api: Api,  # noqa: F811
    alice: tuple[httpx.Client, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Attack (issue 37): an over-limit upload left a traceback in the log.  Every way of
    sending one, through the API and through the page (whose preview read the whole body
    before counting it), is a 413 and logs nothing at ERROR."""
    import logging

    c, csrf = alice
    headers = {"X-CSRF-Token": csrf}

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(40):
            yield b"\0" * (64 << 10)

    caplog.set_level(logging.INFO)
    big = b"\0" * (2 << 20)
    answers = [
        c.post("/web/preview", content=chunks(), headers=headers).status_code,
        c.post("/web/preview", content=big, headers=headers).status_code,
        c.put("/web/api/jobs/1.0/input", content=big, headers=headers).status_code,
        c.put("/web/api/jobs/1.0/input", content=chunks(), headers=headers).status_code,
        api.alice.put("/api/v1/jobs/1.0/input", content=chunks()).status_code,
    ]
    assert answers == [413] * 5
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not logged, [r.getMessage()[:200] for r in logged]


# --------------------------------------------------------------------------- the pool page


def test_pool_data_needs_a_session_and_keeps_a_bounded_series(
    api: Api,  # noqa: F811
    alice: tuple[httpx.Client, str],
) -> None:
    import cedar.http_api.metrics as metrics

    assert httpx.get(api.url + "/web/pool").status_code == 401
    c, _ = alice
    assert c.get("/pool").status_code == 200 and 'href="/pool"' in c.get("/").text
    first = c.get("/web/pool").json()
    assert first["up"] is True and first["interval"] > 0
    assert set(first["jobs"]) >= {"Idle", "Running", "Held"}
    assert isinstance(first["slots"], dict)  # (this mock pool has no slots; the demo's has)
    assert all({"slots", "cpus", "memory"} <= set(r) for r in first["slots"].values())
    # read at most once an interval, whoever asks: the series grows by a reading, not a request
    again = c.get("/web/pool").json()
    assert len(again["history"]) == len(first["history"]) >= 1
    assert again["history"][-1] == first["history"][-1]
    # ... and stays bounded however long the server watches
    gauges = metrics.PoolGauges()
    for n in range(metrics.HISTORY + 5):
        gauges.history.append((n, {"Idle": n}))
    assert len(gauges.to_json()["history"]) == metrics.HISTORY
    assert gauges.to_json()["history"][0] == {"time": 5, "jobs": {"Idle": 5}}


def _first_events(c: httpx.Client) -> list[str]:
    """The job ids of the event stream's first round (up to its first keep-alive)."""
    jobs: list[str] = []
    with c.stream("GET", "/web/api/jobs/events") as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        for line in answer.iter_lines():
            if line.startswith("data: "):
                jobs.append(json.loads(line[len("data: ") :])["job_id"])
            elif line.startswith(": keep-alive"):
                break
    return jobs


def test_the_event_stream_is_forwarded_and_scoped_by_the_session(
    api: Api,  # noqa: F811
    alice: tuple[httpx.Client, str],
) -> None:
    assert httpx.get(api.url + "/web/api/jobs/events").status_code == 401
    c, csrf = alice
    made = c.post("/web/api/jobs", json={"submit_file": SUBMIT}, headers={"X-CSRF-Token": csrf})
    jobs = made.json()["job_ids"]
    assert set(jobs) <= set(_first_events(c))
    bob, _ = signed_in(api.url, api.pool.bob)
    try:
        assert not set(jobs) & set(_first_events(bob))
    finally:
        bob.close()
