"""``cedar q -jobads FILE``: condor_q's view of a file of job ads, with no schedd (the layout
observed with condor_q 25.13.2; tests/live_pool/test_cli_differential_listing.py compares the
two tools on the real pool's ads)."""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path

from cedar.cli.main import main

ADS = """\
ClusterId = 7
ProcId = 0
JobStatus = 2
Owner = "alice"
QDate = {qdate}
ShadowBday = {started}
JobCurrentStartDate = {started}
ServerTime = {now}
Cmd = "/bin/sleep"
Args = "600"
JobPrio = 0
ImageSize = 2048
RemoteHost = "slot1@vm"

this line is no assignment
ClusterId = 7
ProcId = 1
JobStatus = 5
Owner = "alice"
QDate = {qdate}
ServerTime = {now}
HoldReasonCode = 1
HoldReasonSubCode = 0
HoldReason = "via condor_hold"
EnteredCurrentStatus = {qdate}
Cmd = "/bin/sleep"
Args = "600"
JobPrio = 0
ImageSize = 0

ClusterId = (
"""


def cedar_q(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main(["q", *argv], out=out)
    return status, out.getvalue(), err.getvalue()


def test_the_files_jobs_in_condor_qs_views(tmp_path: Path) -> None:
    qdate = int(time.mktime((2026, 11, 27, 10, 49, 0, 0, 0, -1)))
    path = tmp_path / "ads.txt"
    path.write_text(ADS.format(qdate=qdate, started=qdate + 60, now=qdate + 569))
    status, out, _ = cedar_q("-jobads", str(path), "-nobatch")
    stamp = time.strftime("%m/%d/%y %H:%M:%S", time.localtime(qdate + 569))
    total = "Total for query: 2 jobs; 0 completed, 0 removed, 0 idle, 1 running, 1 held, "
    assert (status, out) == (
        0,
        f"\n\n-- Jobads: {path} @ {stamp}\n"
        " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD\n"
        "   7.0   alice          11/27 10:49   0+00:08:29 R  0    2.0 sleep 600\n"
        "   7.1   alice          11/27 10:49   0+00:00:00 H  0    0.0 sleep 600\n"
        "\n" + (total + "0 suspended ").ljust(138) + "\n\n",
    )
    status, out, _ = cedar_q("-jobads", str(path), "-constraint", "JobStatus == 5", "-af", "ProcId")
    assert (status, out) == (0, "1\n")
    status, out, _ = cedar_q("-jobads", str(path), "-hold-codes")
    assert out.endswith(
        f"alice             1/0           1 {'7.1':<13} 11/27 10:49 via condor_hold\n"
    )


def test_a_missing_file_fails_with_condors_words(tmp_path: Path) -> None:
    status, out, err = cedar_q("-jobads", str(tmp_path / "missing"))
    assert (status, out) == (1, "")
    assert err == f"cedar q: Can't open file of ClassAds: {tmp_path / 'missing'}\n"


def test_a_file_of_endless_lines_fails_without_filling_memory(tmp_path: Path) -> None:
    """``/dev/zero`` has no line end: refused after 1 MiB, not read into memory."""
    status, out, err = cedar_q("-jobads", "/dev/zero")
    assert (status, out) == (1, "")
    assert err == "cedar q: /dev/zero: line 1 is over 1 MiB\n"
    path = tmp_path / "long.txt"
    path.write_text("ClusterId = 1\n" + "x" * (2 << 20))
    status, _, err = cedar_q("-jobads", str(path))
    assert status == 1 and err.endswith(": line 2 is over 1 MiB\n")
