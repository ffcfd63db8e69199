"""``cedar serve`` with the IRI API mounted at ``/iri``, over the mock pool with IDTOKENs for
alice and bob, its state (SQLite, staging areas) in a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest

from cedar.config import Config
from tests.http_api.conftest import RunningServer, client
from tests.service_core.conftest import TokenPool, token_pool  # noqa: F401 (a fixture)


@dataclass
class Iri:
    server: RunningServer
    pool: TokenPool
    state: Path
    anonymous: httpx.Client
    alice: httpx.Client
    bob: httpx.Client


def iri_config(state: Path, **knobs: str) -> Config:
    values = {"CEDAR_SERVE_IRI_STATE_DIR": str(state), "CEDAR_SERVE_IRI_POLL": "0", **knobs}
    return Config(settings=values)


@pytest.fixture(scope="module")
def iri(token_pool: TokenPool, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Iri]:  # noqa: F811
    state = tmp_path_factory.mktemp("iri-state")
    settings = replace(
        token_pool.settings,
        schedd=token_pool.pool.schedd_address,
        config=iri_config(
            state, CEDAR_SERVE_IRI_ORGANIZATION="Test Lab", CEDAR_SERVE_IRI_MAX_UPLOAD=str(1 << 20)
        ),
    )
    server = RunningServer(settings).start()
    base = server.url + "/iri"
    try:
        with (
            client(base) as anonymous,
            client(base, token_pool.alice) as alice,
            client(base, token_pool.bob) as bob,
        ):
            yield Iri(server, token_pool, state, anonymous, alice, bob)
    finally:
        server.stop()
