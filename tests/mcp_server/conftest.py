"""A mock pool (collector + schedd, jobs simulated) and MCP servers in front of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from cedar.auth.client_config import ClientSecurity, SecurityConfig  # noqa: E402
from cedar.auth.policy import Requirement  # noqa: E402
from cedar.config import Config, set_default_config  # noqa: E402
from cedar.daemons.pool import MockPool  # noqa: E402
from tests.mcp_server.helpers import keep_marked_jobs_idle  # noqa: E402


def claimtobe(user: str) -> ClientSecurity:
    """A client that claims to be ``user`` (the mock pool accepts CLAIMTOBE): two users in one
    process."""
    return ClientSecurity(
        SecurityConfig(
            methods=["CLAIMTOBE"],
            encryption=Requirement.REQUIRED,
            integrity=Requirement.REQUIRED,
            options={"SEC_CLAIMTOBE_USER": user},
        )
    )


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    set_default_config(Config())
    with MockPool(simulate=True, tick=0.1, run_time=0.3).run_in_thread() as running:
        keep_marked_jobs_idle(running)
        yield running
