"""Attacks on the service core's identity (issue 37, point 6), each reproduced.

- an expired token kept its identity for ``whoami_ttl`` (60 s) after its ``exp``;
- differently corrupted tokens each cost the schedd a handshake and were never limited.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import trio

from cedar.auth.signing_key import SigningKeyStore
from cedar.auth.token import create_token
from cedar.errors import AuthenticationError
from cedar.service_core import Caller, PoolAccess, RateLimited
from cedar.service_core.access import CLIENT_ADDRESS
from tests.service_core.conftest import TokenPool

#: The service's fixed wall clock, near the token's ``exp`` (1 January 2100, so the daemon,
#: on the real clock, still accepts the token): no test depends on today's date.
NOW = 4102444800.0 - 60


def _token(pool: TokenPool, user: str, *, expires: float) -> str:
    store = pool.pool.policy.options["signing_keys"]
    assert isinstance(store, SigningKeyStore)
    key = store.get("POOL")
    assert key is not None
    domain = pool.pool.policy.trust_domain or pool.pool.policy.uid_domain
    # issued long ago and valid for the daemon's real clock; only the service's clock is fixed
    return create_token(
        key, issuer=domain, subject=f"{user}@{domain}", extra_claims={"exp": int(expires)}
    )


class _Counting(PoolAccess):
    """Counts the handshakes the pool is asked for."""

    pings = 0

    async def ping(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        type(self).pings += 1
        return await super().ping(*args, **kwargs)  # type: ignore[arg-type]


def test_an_expired_token_is_refused_at_its_exp_not_a_ttl_later(token_pool: TokenPool) -> None:
    clock = [NOW]
    access = PoolAccess(replace(token_pool.settings, whoami_ttl=3600), clock=lambda: clock[0])
    exp = NOW + 30
    caller = Caller.from_token(_token(token_pool, "carol", expires=exp))
    assert caller.expires == exp

    async def main() -> None:
        identity = await access.whoami(caller)
        assert identity.user is not None and identity.user.startswith("carol@")
        clock[0] = exp - 1
        assert await access.whoami(caller) is identity  # still valid: the cached identity
        clock[0] = exp
        with pytest.raises(AuthenticationError, match="expired"):
            await access.whoami(caller)

    trio.run(main)


def test_corrupted_tokens_cost_the_pool_a_few_handshakes_then_429(
    token_pool: TokenPool,
) -> None:
    _Counting.pings = 0
    access = _Counting(replace(token_pool.settings, failure_burst=5, failure_rate=0.001))
    head, payload, signature = token_pool.alice.split(".")

    async def main() -> list[str]:
        outcomes = []
        CLIENT_ADDRESS.set("192.0.2.7")
        for n in range(40):
            corrupted = f"{head}.{payload}.{signature[:-6]}{n:06d}"
            try:
                await access.whoami(Caller.from_token(corrupted))
            except AuthenticationError:
                outcomes.append("401")
            except RateLimited:
                outcomes.append("429")
        # the same refused token again: refused without a handshake
        try:
            await access.whoami(Caller.from_token(f"{head}.{payload}.{signature[:-6]}000000"))
        except AuthenticationError:
            outcomes.append("401-again")
        # another client address is not limited by this one's failures
        CLIENT_ADDRESS.set("192.0.2.8")
        alice = await access.whoami(Caller.from_token(token_pool.alice))
        assert alice.user is not None and alice.user.startswith("alice@")
        return outcomes

    outcomes = trio.run(main)
    assert outcomes[:5] == ["401"] * 5
    assert outcomes[5:40] == ["429"] * 35
    assert outcomes[40] == "401-again"
    assert _Counting.pings == 5 + 1  # five refused tokens, then alice
