"""``cedar q``'s id windows against the real schedd: its cluster-ads-only answer
(``IncludeClusterAd`` + ``NoProcAds``) plans the windows, and the windowed ``-long``/``-json``/
``-xml`` output is condor_q's, byte for byte (the schedd's ``ServerTime`` aside).

The queue of the listing test is small, so the windows are made tiny (2 then 3 jobs) in the
cedar process, and planned from this test's own clusters only (``CEDAR_TEST_CLUSTERS``): the
pool may hold other jobs (40 000 of a benchmark), and tiny windows over all of them would be
thousands of queries.  The windows still tile the whole id space (the first open below, the last
open above) and each is ANDed with the constraint, as in real use.  At 40 000 jobs the same
comparison was made by hand with the real window sizes (README, condor-style-output).
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from steady import agree
from test_cli_condor_q import _env
from test_cli_differential_listing import queue  # noqa: F401 - the fixture

#: cedar q with tiny windows cut among the clusters in ``CEDAR_TEST_CLUSTERS`` only; reports
#: on stderr how many window queries it made.
WINDOWED = """
import os, sys
from cedar.cli import qorder
qorder.FIRST_WINDOW, qorder.LARGEST_WINDOW, qorder.SMALL_QUEUE = 2, 3, 0
ours = {int(cluster) for cluster in os.environ["CEDAR_TEST_CLUSTERS"].split()}
all_counts = qorder.cluster_counts
def our_counts(ads):
    return {c: n for c, n in all_counts(ads).items() if c in ours}
qorder.cluster_counts = our_counts
real = qorder.in_windows
count = []
def counting(*args, **kwargs):
    for query in real(*args, **kwargs):
        count.append(1)
        yield query
qorder.in_windows = counting
from cedar.cli.main import main
status = main(sys.argv[1:])
sys.stderr.write(f"WINDOWS {len(count)}\\n")
sys.exit(status)
"""


def _normal(text: str) -> list[str]:
    return [line for line in text.splitlines() if "ServerTime" not in line]


@pytest.mark.parametrize("form", ["-long", "-json", "-xml"])
def test_windowed_whole_ads_are_condor_qs(queue: list[int], form: str) -> None:  # noqa: F811
    env = _env()
    env["CEDAR_TEST_CLUSTERS"] = " ".join(map(str, queue))
    constraint = " || ".join(f"ClusterId == {cluster}" for cluster in queue)
    tool = shutil.which("condor_q", path=env["PATH"])
    assert tool is not None

    errors: list[str] = []  # our stderr, which reports the windows: the last run's is last

    def ours() -> tuple[int, list[str]]:
        done = subprocess.run(
            [sys.executable, "-c", WINDOWED, "q", "-all", form, "-constraint", constraint],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        errors.append(done.stderr)
        return done.returncode, _normal(done.stdout)

    def theirs() -> tuple[int, list[str]]:
        done = subprocess.run(
            [tool, "-all", form, "-constraint", constraint],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        return done.returncode, _normal(done.stdout)

    # the idle jobs' LastRejMatchTime moves with each negotiation cycle: bracket our run
    (our_status, our_lines), (their_status, their_lines) = agree(ours, theirs)
    assert our_status == their_status == 0, errors[-1]
    windows = int(errors[-1].rsplit("WINDOWS ", 1)[1].split()[0])
    assert windows >= 3  # the schedd's cluster ads cut 7 jobs in 3 clusters into windows
    assert our_lines == their_lines
    assert len(our_lines) > 20
