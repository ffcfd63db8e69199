"""The service core: callers, per-token credentials, whoami from the daemon, scoping, limits."""

from __future__ import annotations

import pytest
import trio

from cedar.classad_wire import ClassAd, unparse
from cedar.errors import AuthenticationError, ClassAdParseError
from cedar.service_core import (
    BadCredential,
    Caller,
    PoolAccess,
    RateLimited,
    RateLimiter,
    redact,
    scoped_constraint,
    status_of,
)
from tests.service_core.conftest import TokenPool


def test_caller_never_shows_its_token(token_pool: TokenPool) -> None:
    caller = Caller.from_authorization(f"Bearer {token_pool.alice}")
    assert caller.kind == "idtoken" and caller.authenticated
    for text in (repr(caller), str(caller), caller.key):
        assert token_pool.alice not in text
        assert token_pool.alice.split(".")[2] not in text


@pytest.mark.parametrize(
    "header", ["Basic abc", "Bearer", "Bearer not-a-jwt", "Bearer a.b.c", "Bearer " + "x" * 20000]
)
def test_bad_authorization_headers_are_401(header: str) -> None:
    with pytest.raises(BadCredential) as info:
        Caller.from_authorization(header)
    assert status_of(info.value)[0] == 401


def test_no_header_is_anonymous() -> None:
    assert not Caller.from_authorization(None).authenticated
    assert Caller.from_authorization("  ").key == "anonymous"


def test_scitoken_is_recognised_by_its_claims() -> None:
    import jwt

    sci = jwt.encode({"sub": "u", "scope": "condor:/READ", "ver": "scitoken:2.0"}, "k" * 32)
    assert Caller.from_token(sci).kind == "scitoken"


def test_security_carries_only_the_callers_token(token_pool: TokenPool) -> None:
    access = PoolAccess(token_pool.settings)
    alice = Caller.from_token(token_pool.alice)
    config = access.security_config(alice)
    assert config.methods == ["TOKEN"]
    assert config.options["token"] == token_pool.alice
    assert "FS" not in config.methods and "scitoken" not in config.options
    assert token_pool.alice not in repr(config)
    anonymous = access.security_config(Caller.anonymous())
    assert anonymous.methods == [] and "token" not in anonymous.options
    # each token has its own session cache, and the table is bounded
    assert access.security(alice) is access.security(alice)
    assert access.security(alice) is not access.security(Caller.from_token(token_pool.bob))


def test_caller_table_is_bounded(token_pool: TokenPool) -> None:
    from dataclasses import replace

    access = PoolAccess(replace(token_pool.settings, max_callers=2))
    for token in (token_pool.alice, token_pool.bob, token_pool.foreign):
        access.security(Caller.from_token(token))
    assert access.callers() == 2


def test_whoami_is_what_the_daemon_authenticated(token_pool: TokenPool) -> None:
    access = PoolAccess(token_pool.settings)

    async def main() -> None:
        alice = await access.whoami(Caller.from_token(token_pool.alice))
        assert alice.authenticated and alice.user is not None
        assert alice.user.startswith("alice@") and alice.method == "TOKEN"
        bob = await access.whoami(Caller.from_token(token_pool.bob))
        assert bob.user is not None and bob.user.startswith("bob@")
        anonymous = await access.whoami(Caller.anonymous())
        assert not anonymous.authenticated and anonymous.scope_user is None
        with pytest.raises(AuthenticationError) as info:
            await access.whoami(Caller.from_token(token_pool.foreign))
        assert status_of(info.value)[0] == 401
        assert token_pool.foreign not in str(info.value)

    trio.run(main)


def test_scope_cannot_be_escaped() -> None:
    def scoped(constraint: str | None, user: str | None) -> str | None:
        tree = scoped_constraint(constraint, user)  # a tree, sent as it is
        return None if tree is None else unparse(tree, old=True)

    assert scoped("JobStatus == 2", "a@d") == '(User == "a@d") && (JobStatus == 2)'
    assert scoped(None, "a@d") == '(User == "a@d")'
    assert scoped("true", None) == "true"
    with pytest.raises(ClassAdParseError) as info:
        scoped_constraint("true) || (true", "a@d")
    assert status_of(info.value)[0] == 400
    # a user name cannot inject either: it is a literal, quoted by the printer
    assert scoped(None, 'x" || true || "') == '(User == "x\\" || true || \\"")'


def test_redact() -> None:
    ad = ClassAd({"ClaimId": "secret", "Owner": "a"})
    redact(ad, ["ClaimId", "Missing"])
    assert ad["ClaimId"] == "<REDACTED>" and ad["Owner"] == "a" and "Missing" not in ad


def test_rate_limiter() -> None:
    now = [0.0]
    limiter = RateLimiter(1.0, 2, clock=lambda: now[0], max_keys=2)
    limiter.check("a")
    limiter.check("a")
    with pytest.raises(RateLimited) as info:
        limiter.check("a")
    assert info.value.status == 429 and info.value.retry_after is not None
    limiter.check("b")  # another caller has its own bucket
    now[0] = 1.0
    limiter.check("a")  # refilled
    limiter.check("c")
    assert len(limiter._buckets) == 2


def _fake_jwt(subject: str) -> str:
    import base64
    import json

    def part(value: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'HS256'})}.{part({'sub': subject})}.c2ln"


def test_a_token_gives_one_remembered_caller(token_pool: TokenPool) -> None:
    from cedar.service_core.caller import KNOWN_TOKENS

    alice = Caller.from_token(token_pool.alice)
    assert Caller.from_authorization(f"Bearer  {token_pool.alice} ") is alice
    assert Caller.from_token(token_pool.bob) is not alice
    assert Caller.from_token(token_pool.bob).key != alice.key
    # refused tokens are refused every time (nothing about them is kept)
    for _ in range(2):
        with pytest.raises(BadCredential):
            Caller.from_token("a.b.c")
        with pytest.raises(BadCredential):
            Caller.from_token("x" * 20000)
    # the memory is bounded: after KNOWN_TOKENS other tokens, alice's caller is made anew
    for n in range(KNOWN_TOKENS):
        Caller.from_token(_fake_jwt(f"user{n}"))
    again = Caller.from_token(token_pool.alice)
    assert again is not alice and again == alice


def test_a_subclass_of_caller_gets_its_own_type(token_pool: TokenPool) -> None:
    class Special(Caller):
        pass

    special = Special.from_token(token_pool.alice)
    assert type(special) is Special and special.key == Caller.from_token(token_pool.alice).key


def test_scoped_job_is_one_tree_per_job_and_user() -> None:
    from cedar.service_core import job_constraint, scoped_job
    from cedar.service_core.scope import owner_scope, scope_and

    mine = scoped_job(12, 3, "alice@pool")
    assert scoped_job(12, 3, "alice@pool") is mine  # found again by identity
    # the job's id first: the schedd evaluates it on every job, and it fails sooner than User
    assert unparse(mine) == '(ClusterId == 12 && ProcId == 3) && (User == "alice@pool")'
    assert mine == scope_and(job_constraint(12, 3), owner_scope("alice@pool"))
    assert scoped_job(12, 3, "bob@pool") != mine and scoped_job(12, 4, "alice@pool") != mine
    anyone = scoped_job(12, 3, None)  # no scope: anyone's job
    assert anyone == scoped_constraint(job_constraint(12, 3), None)
    assert "User" not in unparse(anyone) and "User" in unparse(mine)


def test_kept_answers_are_per_caller_expire_and_are_bounded(
    token_pool: TokenPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    import cedar.service_core.access as access_module

    now = [1000.0]
    monkeypatch.setattr(access_module, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    access = PoolAccess(token_pool.settings)
    anonymous, alice = Caller.anonymous(), Caller.from_token(token_pool.alice)
    access.keep_answer(anonymous, "q", b"anonymous answer")
    assert access.recent_answer(anonymous, "q", 5.0) == b"anonymous answer"
    assert access.recent_answer(anonymous, "q", 0.0) is None  # 0: never reused
    assert access.recent_answer(alice, "q", 5.0) is None  # never another caller's
    assert access.recent_answer(anonymous, "other", 5.0) is None
    now[0] += 5.0
    assert access.recent_answer(anonymous, "q", 5.0) is None  # too old: dropped
    access.keep_answer(alice, "q", b"alice's")
    access.forget(alice)
    assert access.recent_answer(alice, "q", 5.0) is None
    big = b"x" * (access_module.KEPT_ANSWER_BYTES // 4)
    for n in range(5):
        access.keep_answer(anonymous, n, big)
    assert access.recent_answer(anonymous, 0, 5.0) is None  # the oldest made room
    assert access.recent_answer(anonymous, 4, 5.0) == big
    access.keep_answer(anonymous, "huge", big + b"x")
    assert access.recent_answer(anonymous, "huge", 5.0) is None  # too large to keep
