"""Live-pool fixtures: configured from environment variables (see README.md), skipped otherwise."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

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


_REPO = Path(__file__).resolve().parents[2]
KDC_SH = Path(os.environ.get("CEDAR_HTCONDOR") or _REPO.parent / "shared" / "htcondor") / "kdc.sh"


def _exports(text: str) -> dict[str, str]:
    return dict(re.findall(r"^export (\w+)=(.*)$", text, re.M))


@pytest.fixture(scope="session")
def krb5() -> Iterator[dict[str, str]]:
    """An environment with the realm's ``KRB5_CONFIG``, ``KRB5CCNAME`` and ``CEDAR_LIVE_KRB5_*``
    (kdc.sh's), starting the KDC in the live pool's directory unless one is named already."""
    if os.geteuid() != 0:  # the as-testuser re-run: kdc.sh and su need root (each ran as root)
        pytest.skip("the Kerberos live tests need root (kdc.sh, su testuser)")
    if os.environ.get("CEDAR_LIVE_KRB5_CCACHE"):
        yield dict(os.environ)
        return
    config = os.environ.get("CEDAR_LIVE_CONDOR_CONFIG") or os.environ.get("CONDOR_CONFIG", "")
    pool_dir = Path(config).parent.parent if config else None
    if pool_dir is None or not (pool_dir / "etc").is_dir() or not KDC_SH.exists():
        pytest.skip("no minicondor pool directory or kdc.sh to start a KDC in")
    if shutil.which("krb5kdc", path="/usr/sbin:/usr/bin:/sbin") is None:
        pytest.skip("no MIT KDC: apt-get install -y krb5-kdc krb5-admin-server krb5-user")
    started = subprocess.run(
        [str(KDC_SH), "start", str(pool_dir)], capture_output=True, text=True, timeout=120
    )
    assert started.returncode == 0, started.stderr[-2000:]
    try:  # for the tests' processes only: os.environ keeps no ticket cache for later tests
        yield {**os.environ, **_exports(started.stdout)}
    finally:  # the KDC only: the pool keeps its KERBEROS settings (kdc.sh's README)
        subprocess.run([str(KDC_SH), "stop", str(pool_dir)], capture_output=True, timeout=120)
