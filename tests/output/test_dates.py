"""Every date the tables print, with the time zone and the instants fixed (never today's date).

The expected texts are what condor_q, condor_history and condor_status 25.13.2 printed for ads
with the same times under the same ``TZ`` (``docs/dates.md``): the table columns are
``%2d/%-2d %02d:%02d`` (``12/7  23:59``, `` 1/1  00:00``), the banners zero-padded, the
analysis C's ``ctime()``.  Single-digit days and months, each side of midnight and of New Year.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Iterator

import pytest

from cedar.analysis import analyze_job
from cedar.analysis.text import match_history
from cedar.classad_wire import ClassAd
from cedar.cli.history import daemon_row, table_lines
from cedar.output import (
    STATUS_TABLES,
    batch_lines,
    factory_lines,
    hold_code_lines,
    jobads_banner,
    q_view,
    schedd_banner,
)
from cedar.output.dates import banner_date, ctime, short_date


def utc(text: str) -> int:
    """The instant of ``YYYY-MM-DD HH:MM:SS`` UTC."""
    return calendar.timegm(time.strptime(text, "%Y-%m-%d %H:%M:%S"))


NEW_YEAR = utc("2027-01-01 00:00:30")
OLD_YEAR = utc("2026-12-31 23:59:30")
SEVENTH_LATE = utc("2026-12-07 23:59:59")
EIGHTH_EARLY = utc("2026-12-08 00:00:00")
SEVENTEENTH = utc("2026-12-17 18:40:05")
JANUARY_SEVENTH = utc("2026-01-07 09:05:00")

#: instant -> the table column, the banner and ctime() in UTC (as the tools printed them).
CASES = [
    (NEW_YEAR, " 1/1  00:00", "01/01/27 00:00:30", "Fri Jan  1 00:00:30 2027"),
    (OLD_YEAR, "12/31 23:59", "12/31/26 23:59:30", "Thu Dec 31 23:59:30 2026"),
    (SEVENTH_LATE, "12/7  23:59", "12/07/26 23:59:59", "Mon Dec  7 23:59:59 2026"),
    (EIGHTH_EARLY, "12/8  00:00", "12/08/26 00:00:00", "Tue Dec  8 00:00:00 2026"),
    (SEVENTEENTH, "12/17 18:40", "12/17/26 18:40:05", "Thu Dec 17 18:40:05 2026"),
    (JANUARY_SEVENTH, " 1/7  09:05", "01/07/26 09:05:00", "Wed Jan  7 09:05:00 2026"),
]


def _set_zone(zone: str | None) -> None:
    import os

    if zone is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = zone
    time.tzset()


@pytest.fixture
def zone() -> Iterator[None]:
    """UTC for the test, the process's own zone again afterwards."""
    import os

    saved = os.environ.get("TZ")
    _set_zone("UTC")
    yield
    _set_zone(saved)


@pytest.mark.usefixtures("zone")
@pytest.mark.parametrize(("stamp", "column", "banner", "c_time"), CASES)
def test_the_three_formats(stamp: int, column: str, banner: str, c_time: str) -> None:
    assert short_date(stamp) == column
    assert banner_date(stamp) == banner
    assert ctime(stamp) == c_time


@pytest.mark.usefixtures("zone")
def test_local_time_crosses_midnight_and_new_year() -> None:
    """The tools print local time: New Year's first minute in UTC is still the old year five
    hours west (a POSIX zone string: no tz database needed)."""
    _set_zone("EST5")
    assert short_date(NEW_YEAR) == "12/31 19:00"
    assert banner_date(NEW_YEAR) == "12/31/26 19:00:30"
    assert ctime(NEW_YEAR) == "Thu Dec 31 19:00:30 2026"
    _set_zone("JST-9")
    assert short_date(OLD_YEAR) == " 1/1  08:59"


def _job(proc: int, stamp: int, status: int = 5) -> ClassAd:
    ad = ClassAd()
    ad.update(
        {
            "ClusterId": 1,
            "ProcId": proc,
            "JobStatus": status,
            "Owner": "testuser",
            "QDate": stamp,
            "EnteredCurrentStatus": stamp,
            "CompletionDate": stamp,
            "HoldReasonCode": 15,
            "HoldReason": "submitted on hold at user's request",
            "Cmd": "/bin/sleep",
            "Args": "600",
            "RemoteWallClockTime": 0.0,
        }  # fmt: skip
    )
    return ad


@pytest.mark.usefixtures("zone")
@pytest.mark.parametrize(("stamp", "column", "banner", "c_time"), CASES)
def test_every_table_prints_the_column(stamp: int, column: str, banner: str, c_time: str) -> None:
    """condor_q's batch, -nobatch, -run, -hold, -hold-codes and -factory tables, the banners,
    condor_history's table and -daemon, condor_status -negotiator, -better-analyze's match
    times: each one with the fixed instant (lines as the real tools printed them)."""
    ad = _job(0, stamp)
    assert list(batch_lines([ad]))[1] == (
        f"testuser ID: 1       {column}      _      _      _      1      1 1.0\n"
    )
    nobatch = list(q_view("nobatch").lines([ad], now=stamp))[1]
    assert nobatch.startswith(f"   1.0   testuser       {column}   0+00:00:00 H ")
    running = _job(0, stamp, status=2)
    assert list(q_view("run").lines([running], now=stamp))[1].startswith(
        f"   1.0   testuser       {column} "
    )
    assert list(q_view("hold").lines([ad], now=stamp))[1] == (
        f"   1.0   testuser       {column}   15     submitted on hold at user's request\n"
    )
    assert f" 1.0           {column} submitted" in list(hold_code_lines([ad]))[1]
    assert f" testuser       {column} " in list(factory_lines([ad]))[1]
    assert schedd_banner("vm", "<127.0.0.1:9618?a=b>", stamp).endswith(f"?... @ {banner}\n")
    assert jobads_banner("ads", stamp) == f"\n\n-- Jobads: ads @ {banner}\n"

    history = _job(0, stamp, status=4)
    assert list(table_lines([history]))[1] == (
        f"1.0          testuser       {column}   0+00:00:00 C  {column} sleep 600\n"
    )
    record = ClassAd()
    record["RecordWriteDate"] = stamp
    assert daemon_row(record).startswith(f"{column} ")

    negotiator = ClassAd()
    negotiator.update({"Name": "vm", "LastNegotiationCycleEnd0": stamp})
    assert (
        STATUS_TABLES["negotiator"]
        .render([negotiator])
        .splitlines()[2]
        .startswith(f"vm            {column} ")
    )

    job = _job(0, stamp, status=1)
    job.update({"LastMatchTime": stamp, "Requirements": True})
    text = match_history(analyze_job(job, []))
    assert text.startswith(f"Last successful match: {c_time}\n")


@pytest.mark.usefixtures("zone")
def test_no_date_is_not_1970() -> None:
    """An unset QDate prints ``???`` in condor_q's tables, blank in condor_history's."""
    ad = _job(0, 0)
    assert "        ??? " in list(q_view("nobatch").lines([ad], now=0))[1]
    del ad["QDate"]
    assert " [?????????] " in list(table_lines([ad]))[1]
