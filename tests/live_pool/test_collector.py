"""Collector queries against a real pool, checked against ``condor_status -json``.

Needs ``CEDAR_LIVE_COLLECTOR``; the attribute-by-attribute comparison also needs
``CEDAR_LIVE_TOOLS`` (the directory holding HTCondor's ``condor_status``).  Only read-only
queries are made.  Values that change between two runs of condor_status (times, statistics) are
not compared; everything else must be identical, names included.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.commands import AsyncCollector, Collector
from cedar.numbers import AdType, DaemonType

#: (our ad type, condor_status 25 option, MyType of the ads): every query option it offers.
#: ``-startd`` is the startd's own daemon ad (MyType StartD) since 25.x; slots are ``-slots``.
#: There is no ``-accounting`` (that is condor_userprio); accounting ads come with ``-any``.
TYPES = [
    (AdType.SLOT, "-slots", "Machine"),
    (AdType.START_DAEMON, "-startd", "StartD"),
    (AdType.SCHEDD, "-schedd", "Scheduler"),
    (AdType.SUBMITTER, "-submitters", "Submitter"),
    (AdType.NEGOTIATOR, "-negotiator", "Negotiator"),
    (AdType.MASTER, "-master", "DaemonMaster"),
    (AdType.COLLECTOR, "-collector", "Collector"),
    (AdType.DEFRAG, "-defrag", "Defrag"),
    (AdType.GRID, "-grid", "Grid"),
    (AdType.GENERIC, "-generic", None),
    (AdType.STORAGE, "-storage", "Storage"),
    (AdType.LICENSE, "-license", "License"),
    (AdType.ANY, "-any", None),
]


@pytest.fixture(scope="module")
def collector() -> Collector:
    timeout = float(os.environ.get("CEDAR_LIVE_TIMEOUT", "20"))
    security = ClientSecurity(SecurityConfig(negotiation="NEVER"))
    return Collector(os.environ["CEDAR_LIVE_COLLECTOR"], security=security, timeout=timeout)


def _condor_status(option: str) -> list[dict[str, Any]]:
    tools = os.environ.get("CEDAR_LIVE_TOOLS")
    if not tools:
        pytest.skip("CEDAR_LIVE_TOOLS is not set (see tests/live_pool/README.md)")
    command = [str(Path(tools) / "condor_status"), "-pool", os.environ["CEDAR_LIVE_COLLECTOR"],
               option, "-json"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    text = result.stdout.strip()
    return json.loads(text) if text else []


def _key(ad: dict[str, Any]) -> tuple[str, str]:
    return str(ad.get("MyType")), str(ad.get("Name"))


def _by_key(ads: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {_key(ad): {k.lower(): v for k, v in ad.items()} for ad in ads}


def _compared(
    collector: Collector, ad_type: AdType, option: str
) -> tuple[set[tuple[str, str]], set[tuple[str, str]], dict[tuple[str, str], list[str]]]:
    """Our keys, condor_status's (before and after ours, when they agree), and per ad the
    attributes stable across both condor_status runs that we lack or report differently."""
    before = _by_key(_condor_status(option))
    ours = _by_key([json.loads(ad.to_json()) for ad in collector.query(ad_type)])
    after = _by_key(_condor_status(option))
    theirs = set(before) if set(before) == set(after) else set(before) | {("changed", "")}
    wrong = {}
    for key, ad in ours.items():
        if key not in before or key not in after:
            continue
        stable = {n for n, v in before[key].items() if after[key].get(n) == v}
        bad = sorted(n for n in stable if n not in ad or ad[n] != before[key][n])
        if bad:
            wrong[key] = bad
    return set(ours), theirs, wrong


@pytest.mark.parametrize(("ad_type", "option", "my_type"), TYPES, ids=[t[1] for t in TYPES])
def test_every_type_matches_condor_status(
    collector: Collector, ad_type: AdType, option: str, my_type: str | None
) -> None:
    # An ad may come or go between the runs (a submitter ad once the last job left, a probe
    # invalidated) and a value may move and come back (a load average): run again, a few times.
    for _ in range(5):
        keys, their_keys, wrong = _compared(collector, ad_type, option)
        if keys == their_keys and not wrong:
            break
    assert keys == their_keys
    assert not wrong
    if my_type is not None:
        assert all(key[0] == my_type for key in keys)


def test_every_type_answers(collector: Collector) -> None:
    """Without the tools: each type is answered and carries its MyType.

    A pool started a moment ago may not have advertised every daemon yet (the master's ad comes
    after its first update interval), so the types every pool has are waited for, bounded."""
    for ad_type, _option, my_type in TYPES:
        ads = collector.query(ad_type)
        if ad_type in (AdType.SLOT, AdType.START_DAEMON, AdType.SCHEDD, AdType.MASTER):
            deadline = time.monotonic() + 120
            while not ads and time.monotonic() < deadline:
                time.sleep(1)
                ads = collector.query(ad_type)
            assert ads, ad_type
        if my_type is not None:
            assert all(ad.get("MyType") == my_type for ad in ads), ad_type


def test_constraint_projection_limit_and_locate(collector: Collector) -> None:
    slots = collector.query(AdType.SLOT, "SlotID >= 1", ["Name", "SlotID"], limit=1)
    assert len(slots) == 1 and {n.lower() for n in slots[0]} <= {"name", "slotid"}
    assert collector.query(AdType.SLOT, "TARGET.SlotID >= 1") == []  # spec 05 §2.3
    (schedd,) = collector.query(AdType.SCHEDD, projection=["Name"], limit=1)
    location = collector.locate(DaemonType.SCHEDD, schedd["Name"])
    assert location.address.startswith("<") and location.version
    assert [loc.name for loc in collector.locate_all(DaemonType.SCHEDD)]


def test_async_client_agrees(collector: Collector) -> None:
    async def names() -> list[str]:
        client = AsyncCollector(os.environ["CEDAR_LIVE_COLLECTOR"], security=collector.security)
        return sorted(str(ad["Name"]) for ad in await client.query(AdType.MASTER))

    assert trio.run(names) == sorted(str(ad["Name"]) for ad in collector.query(AdType.MASTER))
