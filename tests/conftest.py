"""Suite-wide settings: hypothesis under CI, and the real HTCondor pool the live tests run against.

Under CI (``CI`` set, as .ci/run's environment does) hypothesis is derandomized, so a run is
repeatable and a differential test cannot fail on an example a previous run never tried; on a
developer machine it keeps exploring new examples (where new disagreements with the reference
are found).  Neither has hypothesis's per-example deadline: slowness is not a failure.

The live pool: when no ``CEDAR_LIVE_COLLECTOR`` is given, the HTCondor release is beside the
checkout (``../shared/htcondor``, or ``CEDAR_HTCONDOR``) and we are root, the session starts a
real pool with ``tools/live_pool.sh`` before collecting, exports its ``CEDAR_LIVE_*`` environment
(so ``tests/live_pool/`` and every subprocess see it) and stops it at the end. So the README's one
test command runs the live suite too, and ``.ci/run`` is exactly that command.
``CEDAR_LIVE_AUTOSTART=0`` turns this off. The header of the run says what happened and why.

Under CI a skipped test is a failed test (:func:`pytest_runtest_makereport`): CI has everything a
test may need (the reference wheel, the real pool, Chromium), so a skip there means something is
broken and nobody would see it. Only the reasons in :data:`CI_ALLOWED_SKIPS`, each with why it
truly cannot be had in CI, stay skips. The unit runs of ``.ci/run`` on other Pythons do not
collect ``tests/live_pool`` at all (``--ignore``), so those tests are not skips there.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Generator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.pools import start_minicondor, stop_minicondor

# No example may fail for being slow: hypothesis's per-example deadline (200 ms) and its
# "too slow" health check are timing thresholds, which a loaded CI machine trips without any
# bug (a test that sets its own keeps it).
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("suite"), derandomize=True,
                          database=None, print_blob=True)  # fmt: skip
settings.load_profile("ci" if os.environ.get("CI") else "suite")

REPO = Path(__file__).resolve().parent.parent
LIVE_POOL_SCRIPT = REPO / "tools" / "live_pool.sh"
_live_pool: dict[str, str] = {}  # "dir" of the pool we started, or "why" it was not started


def _htcondor_release() -> Path:
    return Path(os.environ.get("CEDAR_HTCONDOR") or REPO.parent / "shared" / "htcondor")


def _start_live_pool() -> None:
    """Start the real pool and export its environment, or record why not."""
    if os.environ.get("CEDAR_LIVE_COLLECTOR"):
        _live_pool["why"] = (
            f"using the pool at {os.environ['CEDAR_LIVE_COLLECTOR']} from the environment"
        )
        return
    if os.environ.get("CEDAR_LIVE_AUTOSTART", "1") == "0":
        _live_pool["why"] = "SKIPPED: CEDAR_LIVE_AUTOSTART=0; tests/live_pool/ will skip"
        return
    if not (_htcondor_release() / "minicondor.sh").exists():
        _live_pool["why"] = (
            f"SKIPPED: no HTCondor release at {_htcondor_release()} (set CEDAR_HTCONDOR to one);"
            " tests/live_pool/ will skip"
        )
        return
    if os.geteuid() != 0:
        _live_pool["why"] = "SKIPPED: starting the pool needs root; tests/live_pool/ will skip"
        return
    pool_dir = tempfile.mkdtemp(prefix="cedar-live-pool.")
    given = os.environ.get("MINICONDOR_PORT")  # several suites may run at once: else a free one
    try:
        started, _port = start_minicondor(
            [str(LIVE_POOL_SCRIPT)],
            Path(pool_dir),
            os.environ,
            port=int(given) if given else None,
        )
    except RuntimeError as exc:
        shutil.rmtree(pool_dir, ignore_errors=True)
        raise pytest.UsageError(
            f"tools/live_pool.sh could not start the real pool: {exc}"
        ) from None
    if started.returncode != 0:
        shutil.rmtree(pool_dir, ignore_errors=True)
        raise pytest.UsageError(
            f"tools/live_pool.sh could not start the real pool:\n{started.stderr[-3000:]}"
        )
    _live_pool["dir"] = pool_dir
    # The script prints `export K=V` lines (PATH refers to $PATH): let a shell evaluate them.
    shown = subprocess.run(
        ["bash", "-c", 'eval "$1" && env -0', "live-pool-env", started.stdout],
        capture_output=True,
        check=True,
    ).stdout
    for entry in shown.split(b"\0"):
        name, _, value = entry.decode().partition("=")
        if name and os.environ.get(name) != value:
            os.environ[name] = value
    notes = [line for line in started.stderr.splitlines() if "SciTokens" in line]
    _live_pool["why"] = (
        f"started in {pool_dir} at {os.environ.get('CEDAR_LIVE_COLLECTOR')}; "
        "tests/live_pool/ runs against it" + (f" ({notes[-1]})" if notes else "")
    )


def _selects_live_tests(config: pytest.Config) -> bool:
    """Whether the paths this run collects include tests/live_pool (no pool for other runs)."""
    live = REPO / "tests" / "live_pool"
    base = Path(config.invocation_params.dir)
    for arg in config.args or ["."]:
        path = (base / arg.split("::")[0]).resolve()
        if path == live or live in path.parents or path in live.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    if _selects_live_tests(config):
        _start_live_pool()
    else:
        _live_pool["why"] = "not started: this run selects no test of tests/live_pool/"


def pytest_unconfigure(config: pytest.Config) -> None:
    pool_dir = _live_pool.pop("dir", None)
    if pool_dir:
        stop_minicondor([str(LIVE_POOL_SCRIPT)], Path(pool_dir), os.environ)
        shutil.rmtree(pool_dir, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> str:
    return f"live pool: {_live_pool.get('why', 'not configured')}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(f"live pool: {_live_pool.get('why', 'not configured')}")


# --------------------------------------------------------------------------- skips under CI


def _reference_wheel_missing() -> bool:
    """Whether the reference distribution is not installed at all (pip had no wheel for this
    Python: .ci/run then installs the test extra without it and says so)."""
    try:
        importlib.metadata.distribution("htcondor")
    except importlib.metadata.PackageNotFoundError:
        return True
    return False


#: The only skips CI accepts: (pattern searched in the skip reason, condition that must hold now,
#: why it cannot be had in CI). Anything else that skips under ``CI`` fails the run.
CI_ALLOWED_SKIPS: list[tuple[str, Callable[[], bool], str]] = [
    (
        # .ci/run's fallback for a Python pip has no `htcondor` wheel for: the reference cannot
        # be installed there. When the wheel IS installed, a reference skip is a failure.
        r"htcondor2|classad2|reference",
        _reference_wheel_missing,
        "the reference wheel has no build for this Python",
    ),
    (
        # A container may have no ::1 at all; nothing a test run can do brings it.
        r"no IPv6 loopback",
        lambda: True,
        "the host has no IPv6 loopback",
    ),
    (
        # CI runs as root (.ci/run); tests/live_pool/test_as_testuser.py re-runs the live suite
        # as `testuser` (su keeps CI set) to check FS as an ordinary user. There every test that
        # needs root (the pool's 0600 token and key, su, the programs venv...) skips: each ran
        # as root in the parent run, which fails on its skips. A CI run that is not root is
        # therefore that re-run, and only it.
        r"",
        lambda: os.geteuid() != 0,
        "the as-testuser re-run of the live suite cannot do what needs root",
    ),
]


def _skip_reason(longrepr: object) -> str:
    """The text of a skip report (pytest keeps ``(path, line, "Skipped: why")``)."""
    text = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def ci_allows_skip(reason: str) -> bool:
    """Whether a skip with ``reason`` is one :data:`CI_ALLOWED_SKIPS` accepts right now."""
    return any(re.search(pattern, reason) and holds() for pattern, holds, _ in CI_ALLOWED_SKIPS)


def _fail_skip_under_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not os.environ.get("CI") or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report.longrepr)
    if ci_allows_skip(reason):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"skipped under CI, which must run every test: {reason}\n"
        "(make what it needs available in CI, or add the reason to CI_ALLOWED_SKIPS in "
        "tests/conftest.py with why it truly cannot be had there)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    """Under CI, a test that skips (in setup, call or by a mark) fails unless allowed."""
    outcome = yield
    _fail_skip_under_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, None]:
    """Under CI, a module that skips itself (``importorskip`` at the top) fails unless allowed."""
    outcome = yield
    _fail_skip_under_ci(outcome.get_result())
