"""A 20 000-slot query against a real collector: streamed, complete, in bounded memory.

Needs ``CEDAR_LIVE_COLLECTOR``, ``CEDAR_LIVE_TOOLS`` (``condor_advertise``/``condor_status``)
and, when the tools need it, ``CEDAR_LIVE_CONDOR_CONFIG``; run as root (advertising needs the
pool's DAEMON level).  The collector's answer (~100 MB) is one CEDAR message, larger than any
per-message limit: cedar must decode it ad by ad.  The slot ads are copies of a real one with
distinct names, invalidated again at the end.
"""

from __future__ import annotations

import os
import resource
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cedar.commands import Collector
from cedar.numbers import AdType

SLOTS = int(os.environ.get("CEDAR_LIVE_LARGE_SLOTS", "20000"))
DOMAIN = "cedar-live-large"
BATCH = 5000


def _tool(name: str, *args: str) -> str:
    tools = os.environ.get("CEDAR_LIVE_TOOLS")
    if not tools:
        pytest.skip("CEDAR_LIVE_TOOLS is not set (needed to advertise the slot ads)")
    env = dict(os.environ)
    if os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"):
        env["CONDOR_CONFIG"] = os.environ["CEDAR_LIVE_CONDOR_CONFIG"]
    found = [p for p in (Path(tools) / name, Path(tools).parent / "sbin" / name) if p.exists()]
    if not found:
        pytest.skip(f"{name} is not in CEDAR_LIVE_TOOLS (or its ../sbin)")
    done = subprocess.run(
        [str(found[0]), *args], env=env, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        pytest.skip(f"{name} failed (run as root on the pool host?): {done.stderr.strip()}")
    return done.stdout


def _advertise(command: str, text: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".ads", delete=False) as handle:
        handle.write(text)
    try:
        _tool("condor_advertise", *(["-multiple"] if command.startswith("UPDATE") else []),
              command, handle.name)  # fmt: skip
    finally:
        os.unlink(handle.name)


@pytest.fixture(scope="module")
def large_pool() -> Iterator[int]:
    """The collector filled with SLOTS extra slot ads; yields condor_status's slot count."""
    template = _tool("condor_status", "-long", "-limit", "1")
    if not template.strip():
        pytest.skip("the pool advertises no slot to copy")
    lines = [ln for ln in template.strip().splitlines() if ln and not ln.startswith("Name ")]
    body = "\n".join(lines)
    try:
        for first in range(0, SLOTS, BATCH):
            ads = (f'{body}\nName = "slot{i}@{DOMAIN}"' for i in range(first, first + BATCH))
            _advertise("UPDATE_STARTD_AD", "\n\n".join(ads) + "\n")
        yield len(_tool("condor_status", "-af", "Name").splitlines())
    finally:
        query = (
            f'MyType = "Query"\nTargetType = "Machine"\nRequirements = regexp("@{DOMAIN}$", Name)\n'
        )
        _advertise("INVALIDATE_STARTD_ADS", query)


def test_every_slot_of_a_large_pool_streams_in_bounded_memory(large_pool: int) -> None:
    assert large_pool >= SLOTS
    collector = Collector(os.environ["CEDAR_LIVE_COLLECTOR"])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    count = 0
    names = set()
    for ad in collector.query_iter(AdType.STARTD):
        count += 1
        name = ad["Name"]
        if name.endswith(f"@{DOMAIN}"):
            names.add(name)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert count == large_pool
    assert names == {f"slot{i}@{DOMAIN}" for i in range(SLOTS)}
    # The reply is ~100 MB; streaming keeps one piece and one ad (the names set is ~2 MB).
    assert grown_mb < 64, f"peak memory grew by {grown_mb:.0f} MB while streaming"


def test_a_large_clear_reply_gives_the_ads_an_encrypted_one_gives(large_pool: int) -> None:
    """No security at all (a raw command on a clear connection, as bench B1's floor case): the
    clear reader keeps each ad's match and makes values on first use; same ads, bounded memory."""
    from cedar.auth import ClientSecurity, SecurityConfig
    from cedar.auth.policy import Requirement

    never = Requirement.NEVER
    clear = ClientSecurity(
        SecurityConfig(authentication=never, encryption=never, integrity=never, negotiation=never)
    )
    address = os.environ["CEDAR_LIVE_COLLECTOR"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    names = []
    for ad in Collector(address, security=clear).query_iter(AdType.STARTD):
        names.append(ad["Name"])
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert len(names) == large_pool and len(set(names)) == large_pool
    assert grown_mb < 64, f"peak memory grew by {grown_mb:.0f} MB while streaming"
    # A sample, every value read through both paths.
    constraint = f'regexp("^slot1[0-9]@{DOMAIN}$", Name)'
    plain = Collector(address, security=clear).query(AdType.STARTD, constraint)
    secure = Collector(address).query(AdType.STARTD, constraint)
    assert len(plain) == len(secure) == 10
    by_name = {ad["Name"]: ad for ad in secure}
    for ad in plain:
        other = by_name[ad["Name"]]
        assert ad.raw_items() == other.raw_items()
        assert [ad[name] for name in ad] == [other[name] for name in other]
