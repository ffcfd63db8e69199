"""The round trips a new session saves, accepted by the real daemons.

A read-only query sends its first method mask along with M1; through a TCP proxy (where FS
cannot work: the collector sees another endpoint than the one we reached) the client answers
FS's directory with ``-1`` at once and sends its next mask without waiting for the verdict.  A
25.13.2 collector accepts both: the query works, and the session is the one the next method
gives (CLAIMTOBE here), directly and through ``bench/latency_proxy.py``.  That the messages
really leave early is tested in memory (``tests/auth/test_pipelining.py``); this proves the
real collector accepts them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.auth.session import Session
from cedar.commands import Collector
from cedar.numbers import AdType

PROXY = Path(__file__).resolve().parents[2] / "bench" / "latency_proxy.py"
QUERY_SCHEDD_ADS = 6


@pytest.fixture
def proxy(live_collector: str) -> Iterator[str]:
    """A TCP proxy (no added delay) in front of the collector: ``host:port`` to connect to."""
    process = subprocess.Popen(
        [sys.executable, str(PROXY), live_collector, "--delay", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield f"127.0.0.1:{process.stdout.readline().strip()}"
    finally:
        process.terminate()
        process.wait(10)


def _security() -> ClientSecurity:
    return ClientSecurity(
        SecurityConfig(
            methods=["FS", "CLAIMTOBE"],
            authentication="PREFERRED",
            options={"SEC_CLAIMTOBE_USER": "testuser"},
        )
    )


def _session(security: ClientSecurity, address: str) -> Session:
    for target in (address, f"<{address}>"):
        session = security.sessions.lookup(target, QUERY_SCHEDD_ADS)
        if session is not None:
            return session
    raise AssertionError(f"no session cached for {address}")


def test_early_mask_direct_gets_fs(live_collector: str) -> None:
    security = _security()
    ads = Collector(live_collector, security=security).query(AdType.SCHEDD)
    assert ads and all(ad.get("MyType") == "Scheduler" for ad in ads)
    assert _session(security, live_collector).method == "FS"


def test_through_a_proxy_fs_is_refused_early_and_the_next_method_serves(
    proxy: str,
) -> None:
    security = _security()
    collector = Collector(proxy, security=security)
    ads = collector.query(AdType.SCHEDD)
    assert ads and all(ad.get("MyType") == "Scheduler" for ad in ads)
    session = _session(security, proxy)
    assert session.method == "CLAIMTOBE"
    assert collector.query(AdType.SCHEDD)  # and the session resumes through the proxy
