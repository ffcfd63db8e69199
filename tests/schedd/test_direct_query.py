"""Direct daemon queries to the mock schedd (spec 05 §2.7): commands 6, 12 and 5."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cedar
from cedar.daemons.pool import MockPool
from tests.schedd.conftest import REFERENCE_TIMEOUT, reference_env


def test_schedd_answers_its_own_ad_ignoring_projection_and_limit(pool: MockPool) -> None:
    results = cedar.query_all(
        [pool.schedd_address], cedar.AdType.SCHEDD, projection=["Name"], limit=0
    )
    assert results[0].ok, results[0].error
    (ad,) = results[0].ads
    assert ad["Name"] == "mock-schedd" and ad["MyType"] == "Scheduler"
    assert ad["MyAddress"] == pool.schedd_address  # a full ad despite the projection


def test_requirements_filter_the_schedd_ad(pool: MockPool) -> None:
    (result,) = cedar.query_all([pool.schedd_address], cedar.AdType.SCHEDD, 'Name == "nope"')
    assert result.ok and result.ads == []


def test_submitter_ads_count_the_owners_jobs(pool: MockPool, tmp_path: Path) -> None:
    schedd = cedar.Schedd(pool.schedd_address)
    schedd.submit(cedar.Submit("executable = /bin/true\nqueue 2\n"), submit_dir=str(tmp_path))
    (result,) = cedar.query_all([pool.schedd_address], cedar.AdType.SUBMITTER)
    assert result.ok, result.error
    (ad,) = result.ads
    assert ad["MyType"] == "Submitter" and ad["IdleJobs"] == 2 and ad["ScheddName"] == "mock-schedd"


def test_slot_query_to_a_schedd_without_claims_is_empty(pool: MockPool) -> None:
    (result,) = cedar.query_all([pool.schedd_address], cedar.AdType.STARTD)
    assert result.ok and result.ads == []


@pytest.mark.reference
def test_reference_direct_query(pool: MockPool, reference_available: None, tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys, htcondor2
        collector = htcondor2.Collector(sys.argv[1])
        location = collector.locate(htcondor2.DaemonTypes.Schedd)
        ad = collector.directQuery(htcondor2.DaemonTypes.Schedd, location["Name"])
        print(ad["Name"], ad["MyType"], ad["MyAddress"])
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, pool.host_port],
        env=reference_env(tmp_path / "tool.log"),
        capture_output=True,
        text=True,
        timeout=REFERENCE_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["mock-schedd", "Scheduler", pool.schedd_address]
