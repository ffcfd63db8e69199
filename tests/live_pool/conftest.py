"""Live-pool fixtures: configured from environment variables (see README.md), skipped otherwise."""

from __future__ import annotations

import os

import pytest

from cedar.conformance import Target


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test here is ``live`` and skips without ``CEDAR_LIVE_COLLECTOR``."""
    here = os.path.dirname(__file__)
    skip = pytest.mark.skip(
        reason="CEDAR_LIVE_COLLECTOR is not set (see tests/live_pool/README.md)"
    )
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.live)
            if not os.environ.get("CEDAR_LIVE_COLLECTOR"):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def live_collector() -> str:
    """The collector's address."""
    return os.environ["CEDAR_LIVE_COLLECTOR"]


def readable(path: str | None) -> bool:
    """Whether this user can read ``path`` and, for a directory, its files (tokens are 0600)."""
    if not path or not os.access(path, os.R_OK):
        return False
    if os.path.isdir(path):
        return all(os.access(os.path.join(path, n), os.R_OK) for n in os.listdir(path))
    return True


@pytest.fixture(scope="session")
def live_target() -> Target:
    """The pool as `cedar conformance` sees it, with every credential this user can read."""
    token_dir = os.environ.get("CEDAR_LIVE_TOKEN_DIR")
    scitoken = os.environ.get("CEDAR_LIVE_SCITOKEN_FILE")
    return Target(
        os.environ["CEDAR_LIVE_COLLECTOR"],
        token_dir=token_dir if readable(token_dir) else None,
        scitoken_file=scitoken if readable(scitoken) else None,
        ssl_cafile=os.environ.get("CEDAR_LIVE_SSL_CAFILE"),
        iwd=os.environ.get("CEDAR_LIVE_IWD") or "/tmp",
        fs=False if os.environ.get("CEDAR_LIVE_NO_FS") else None,
        timeout=float(os.environ.get("CEDAR_LIVE_TIMEOUT", "20")),
    )


@pytest.fixture(scope="session")
def live_token_dir() -> str | None:
    """``CEDAR_LIVE_TOKEN_DIR`` when this user can read it (the pool's is root's, 0600)."""
    token_dir = os.environ.get("CEDAR_LIVE_TOKEN_DIR")
    return token_dir if readable(token_dir) else None
