"""The ClassAd time functions in a fixed time zone (never the host's, never today's date).

A time that comes without an offset (a number, ``absTime()``, ``absTime(n)``) takes the local
zone's offset at that instant; ``getHours`` and its kin read the local clock; ``formatTime``
prints an absTime at its own offset, ``%z`` always ``+0000`` and ``%Z`` the zone's standard
name.  The expected values are what classad2 (25.13.2) returned under the same ``TZ``; a
cedar that took every zone for UTC passed under ``TZ=UTC`` and failed these.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from cedar.classad_wire import ClassAd

NEW_YEAR = 1798761630  # 2027-01-01 00:00:30 UTC
JUNE = 1781000000  # 2026-06-09 10:13:20 UTC

CASES = {
    "EST5": [
        ("formatTime(1796687999)", "Mon Dec  7 18:59:59 2026"),
        (f'formatTime({NEW_YEAR}, "%m/%d %e %H %Z %z")', "12/31 31 19 EST +0000"),
        ('formatTime(absTime("2027-01-01T00:00:30+01:00"), "%H %z %Z")', "00 +0000 EST"),
        (f"string(absTime({NEW_YEAR}))", "2026-12-31T19:00:30-05:00"),
        (f"string(absTime({NEW_YEAR}, 3600))", "2027-01-01T01:00:30+01:00"),
        (f"string(absTime({NEW_YEAR}.5))", "2026-12-31T19:00:30-05:00"),
        (f"splitTime({NEW_YEAR}).Hours", 19),
        (f"splitTime({NEW_YEAR}).Offset", -18000),
        ('splitTime(absTime("2027-01-01T00:00:30+01:00")).Hours', 0),
        (f"getYear(absTime({NEW_YEAR}))", 2026),
        (f"getMonth(absTime({NEW_YEAR}))", 12),
        (f"getDayOfMonth(absTime({NEW_YEAR}))", 31),
        (f"getDayOfYear(absTime({NEW_YEAR}))", 364),
        (f"getDayOfWeek(absTime({NEW_YEAR}))", 4),
        ('getHours(absTime("2027-01-01T00:00:30+01:00"))', 18),
        ("formatTime(0)", "Wed Dec 31 19:00:00 1969"),
    ],
    "JST-9": [
        (f'formatTime({NEW_YEAR}, "%H %Z")', "09 JST"),
        (f"string(absTime({NEW_YEAR}))", "2027-01-01T09:00:30+09:00"),
        (f"getHours(absTime({NEW_YEAR}))", 9),
        (f"getDayOfMonth(absTime({NEW_YEAR}))", 1),
    ],
    # a zone string with a daylight-saving rule (no tz database needed): summer is +02:00,
    # and %Z is still the standard name
    "CET-1CEST,M3.5.0,M10.5.0/3": [
        (f'formatTime({JUNE}, "%H %Z|%z")', "12 CET|+0000"),
        (f"string(absTime({JUNE}))", "2026-06-09T12:13:20+02:00"),
        (f"getHours(absTime({JUNE}))", 12),
    ],
    "UTC": [
        (f'formatTime({NEW_YEAR}, "%Z|%z")', "UTC|+0000"),
        (f"string(absTime({NEW_YEAR}))", "2027-01-01T00:00:30-00:00"),
        (f"getDayOfYear(absTime({NEW_YEAR}))", 0),
        ('getHours(absTime("2027-01-01T00:00:30+01:00"))', 23),
    ],
}


@pytest.fixture
def zone(request: pytest.FixtureRequest) -> Iterator[None]:
    saved = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    yield
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


@pytest.mark.parametrize(
    ("zone", "expression", "expected"),
    [(zone, e, v) for zone, cases in CASES.items() for e, v in cases],
    indirect=["zone"],
)
@pytest.mark.usefixtures("zone")
def test_times_in_the_local_zone(expression: str, expected: object) -> None:
    ad = ClassAd()
    ad.set_expr("X", expression)
    assert ad.eval("X") == expected
