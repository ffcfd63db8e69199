"""A mock pool with IDTOKENs for two users, shared by the service and serve tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from cedar.auth.signing_key import SigningKeyStore
from cedar.auth.token import create_token
from cedar.config import Config
from cedar.daemons.pool import MockPool
from cedar.service_core import ServiceSettings


@dataclass
class TokenPool:
    pool: MockPool
    alice: str
    bob: str
    foreign: str  # signed by a key the pool does not have
    settings: ServiceSettings


def mint(pool: MockPool, user: str) -> str:
    store = pool.policy.options["signing_keys"]
    assert isinstance(store, SigningKeyStore)
    key = store.get("POOL")
    assert key is not None
    domain = pool.policy.trust_domain or pool.policy.uid_domain
    return create_token(key, issuer=domain, subject=f"{user}@{domain}")


@pytest.fixture(scope="module")
def token_pool() -> Iterator[TokenPool]:
    from cedar.auth.signing_key import SigningKey

    pool = MockPool.for_setup("tokens", simulate=False)
    with pool.run_in_thread():
        domain = pool.policy.trust_domain or pool.policy.uid_domain
        foreign = create_token(
            SigningKey.generate("POOL"), issuer=domain, subject=f"alice@{domain}"
        )
        settings = ServiceSettings(collector=pool.address, config=Config(), rate=0)
        yield TokenPool(pool, mint(pool, "alice"), mint(pool, "bob"), foreign, settings)
