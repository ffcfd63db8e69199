"""The CI skip rule of tests/conftest.py, run on a tiny suite in a subprocess.

Property: with ``CI`` set, every skip whose reason is not in ``CI_ALLOWED_SKIPS`` is reported as a
failure (a skip in setup, in the call, by a mark, or of a whole module), xfail and allowed skips
are untouched; without ``CI`` nothing changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

CONFTEST = Path(__file__).resolve().parent / "conftest.py"

SUITE = """
import pytest

def test_passes():
    pass

def test_skips_in_the_call():
    pytest.skip("the frobnicator is missing")

@pytest.mark.skipif(True, reason="never here")
def test_skipped_by_a_mark():
    pass

@pytest.fixture
def needs_thing():
    pytest.skip("no thing")

def test_skipped_in_setup(needs_thing):
    pass

def test_allowed_skip():
    pytest.skip("no IPv6 loopback on this host")

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert False
"""

MODULE_SKIP = """
import pytest
pytest.importorskip("cedar_no_such_module_anywhere")

def test_never_collected():
    pass
"""


def _outcomes(suite: Path, ci: bool) -> dict[str, str]:
    """Run the tiny suite under (or not under) CI: ``{test or module: outcome}``."""
    shutil.copy(CONFTEST, suite / "conftest.py")
    (suite / "test_suite.py").write_text(SUITE)
    (suite / "test_module_skip.py").write_text(MODULE_SKIP)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["CEDAR_LIVE_AUTOSTART"] = "0"
    if ci:
        env["CI"] = "true"
    report = suite / "report.xml"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}"]
        + ["--continue-on-collection-errors", "."],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.exists(), run.stdout + run.stderr
    outcomes: dict[str, str] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        skipped = case.find("skipped")
        if skipped is not None and skipped.get("type") == "pytest.xfail":
            kinds = ["xfail"]
        outcomes[case.get("name") or ""] = kinds[0] if kinds else "passed"
    return outcomes


def test_skips_fail_under_ci_unless_allowed(tmp_path: Path) -> None:
    outcomes = _outcomes(tmp_path, ci=True)
    assert outcomes["test_passes"] == "passed"
    for name in ("test_skips_in_the_call", "test_skipped_by_a_mark", "test_skipped_in_setup"):
        assert outcomes[name] in ("failure", "error"), outcomes  # setup failures are errors
    assert outcomes["test_allowed_skip"] == "skipped", outcomes
    assert outcomes["test_expected_failure"] == "xfail", outcomes
    module = [name for name in outcomes if "test_module_skip" in name]
    assert module and all(outcomes[name] == "error" for name in module), outcomes


def test_skips_stay_skips_outside_ci(tmp_path: Path) -> None:
    outcomes = _outcomes(tmp_path, ci=False)
    for name in (
        "test_skips_in_the_call",
        "test_skipped_by_a_mark",
        "test_skipped_in_setup",
        "test_allowed_skip",
    ):
        assert outcomes[name] == "skipped", outcomes
    module = [name for name in outcomes if "test_module_skip" in name]
    assert module and all(outcomes[name] == "skipped" for name in module), outcomes


@pytest.mark.parametrize(
    ("reason", "allowed"),
    [
        ("no IPv6 loopback on this host", True),
        ("capture captures/x.pcap is not available", False),
        ("no chromium, chromedriver (apt-get install -y chromium chromium-driver)", False),
    ],
)
def test_allowlist(reason: str, allowed: bool) -> None:
    from tests.conftest import ci_allows_skip

    assert ci_allows_skip(reason) is allowed


def test_skips_are_allowed_only_in_the_ordinary_user_rerun() -> None:
    """The as-testuser re-run (not root) may skip what needs root; the root run never may."""
    from tests.conftest import ci_allows_skip

    reason = "the pool's IDTOKEN is not readable by this user (root's, 0600)"
    assert ci_allows_skip(reason) is (os.geteuid() != 0)
