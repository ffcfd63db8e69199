"""Scalar value types of the ClassAd language that Python has no native equivalent for.

``Undefined`` and ``Error`` are singletons (identity comparison is the idiom); absolute and
relative times are small immutable records so that they survive a round trip through the wire
text unchanged (spec 02 §4 "Time literals", §6).
"""

from __future__ import annotations

import math
import re
import time
from typing import TYPE_CHECKING, Final

from cedar.record import Record

if TYPE_CHECKING:
    from datetime import datetime


class _Singleton:
    """Base of the two special values; they are falsy so ``if value:`` treats them as absent."""

    __slots__ = ()
    _name = ""

    def __repr__(self) -> str:
        return self._name

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return self._name

    def __copy__(self) -> _Singleton:
        return self

    def __deepcopy__(self, memo: object) -> _Singleton:
        return self


class UndefinedType(_Singleton):
    """Type of :data:`Undefined`: the value of a missing attribute."""

    __slots__ = ()
    _name = "Undefined"


class ErrorType(_Singleton):
    """Type of :data:`Error`: the value of an ill-typed expression."""

    __slots__ = ()
    _name = "Error"


Undefined: Final = UndefinedType()
Error: Final = ErrorType()


class AbsTime(Record, frozen=True):
    """An absolute time: Unix seconds (UTC) plus the offset east of UTC used for printing."""

    __slots__ = ("seconds", "offset")
    seconds: int
    offset: int

    def __init__(self, seconds: int, offset: int = 0) -> None:
        object.__setattr__(self, "seconds", seconds)
        object.__setattr__(self, "offset", offset)

    @classmethod
    def from_datetime(cls, value: datetime) -> AbsTime:
        """A datetime (naive = UTC) as an AbsTime keeping its UTC offset."""
        from datetime import (  # not at import: start-up (a listing never needs it)
            timedelta,
            timezone,
        )

        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        delta = value.utcoffset() or timedelta(0)
        return cls(int(value.timestamp()), int(delta.total_seconds()))

    def to_datetime(self) -> datetime:
        """The instant as an aware datetime in the stored offset."""
        from datetime import datetime, timedelta, timezone

        return datetime.fromtimestamp(self.seconds, timezone(timedelta(seconds=self.offset)))

    def __str__(self) -> str:
        return format_abstime(self)


class RelTime(Record, frozen=True):
    """A relative time (duration) in seconds."""

    __slots__ = ("seconds",)
    seconds: float

    def __init__(self, seconds: float) -> None:
        object.__setattr__(self, "seconds", seconds)

    def __str__(self) -> str:
        return format_reltime(self.seconds)


# --- absTime text ---------------------------------------------------------------------------

_OFFSET_RE = re.compile(r"([+-])(\d\d):?(\d\d)\Z")


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 for a proleptic Gregorian date (any year; month 1..12)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """Inverse of :func:`_days_from_civil`; works outside datetime's year range."""
    days += 719468
    era = (days if days >= 0 else days - 146096) // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, day


def _fields_to_utc(fields: list[int]) -> int:
    """Broken-down fields as if UTC, normalised like ``mktime`` (month 13 = next January)."""
    year, month, day, hour, minute, second = fields
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return (
        _days_from_civil(year, month, 1) * 86400
        + (day - 1) * 86400
        + hour * 3600
        + (minute * 60 + second)
    )


def parse_abstime(text: str) -> AbsTime | None:
    """The string of an ``absTime("...")`` literal, or None when the reference rejects it."""
    text = text.strip()
    offset: int | None = None
    if text[-1:] in ("Z", "z"):
        offset = 0
        text = text[:-1]
    else:
        match = _OFFSET_RE.search(text)
        if match and len(re.sub(r"\D", "", text[: match.start()])) >= 4:
            sign = -1 if match.group(1) == "-" else 1
            offset = sign * (int(match.group(2)) * 3600 + int(match.group(3)) * 60)
            text = text[: match.start()]
    digits = re.sub(r"\D", "", text)
    if len(digits) < 4 or (len(digits) - 4) % 2 or len(digits) > 14:
        return None
    fields = [int(digits[:4])] + [int(digits[i : i + 2]) for i in range(4, len(digits), 2)]
    if len(fields) == 1:
        fields.append(1)  # a missing month is January (tm_mon 0); a missing day is day 0
    fields += [0] * (6 - len(fields))
    as_utc = _fields_to_utc(fields)
    if offset is None:
        try:
            year, month, day, hour, minute, second = fields
            local = time.mktime((year, month, day, hour, minute, second, 0, 0, -1))
        except (OverflowError, ValueError):
            return None
        if local == -1:
            return None
        seconds = int(local)
        offset = as_utc - seconds
    else:
        if _local_mktime_fails(fields):
            return None
        seconds = as_utc - offset
    return AbsTime(seconds, offset)


def _local_mktime_fails(fields: list[int]) -> bool:
    """The reference runs ``mktime`` on the fields even with an explicit offset; -1 is failure."""
    try:
        year, month, day, hour, minute, second = fields
        return time.mktime((year, month, day, hour, minute, second, 0, 0, -1)) == -1
    except (OverflowError, ValueError):
        return True


def format_abstime(value: AbsTime) -> str:
    """``YYYY-MM-DDTHH:MM:SS±hh:mm`` in the stored offset; UTC prints as ``-00:00`` (§6)."""
    local = value.seconds + value.offset
    days, rem = divmod(local, 86400)
    year, month, day = _civil_from_days(days)
    hour, rem = divmod(rem, 3600)
    minute, second = divmod(rem, 60)
    sign = "+" if value.offset > 0 else "-"
    off_h, off_m = divmod(abs(value.offset) // 60, 60)
    return (
        f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
        f"{sign}{off_h:02d}:{off_m:02d}"
    )


# --- relTime text ---------------------------------------------------------------------------

_REL_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_reltime(text: str) -> RelTime | None:
    """The string of a ``relTime("...")`` literal: ``[-][D+|Dd][HH:|HHh][MM:|MMm]SS[.fff][s]``."""
    body = text.strip()
    negative = body.startswith("-")
    if negative:
        body = body[1:].strip()
    total = 0.0
    # Split into (number, separator) pairs; separators give the unit of the number before them.
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)\s*([dhms+:]?)\s*", body)
    if "".join(re.findall(r"\S+", body)) != "".join(n + s for n, s in parts):
        return None
    colon_groups: list[float] = []
    for number, sep in parts:
        value = float(number)
        if sep == ":":
            colon_groups.append(value)
            continue
        if sep in ("", "s") and colon_groups:
            colon_groups.append(value)
            value = 0.0
            for group in colon_groups:
                value = value * 60 + group
            colon_groups = []
            total += value
            continue
        if colon_groups:
            return None
        total += value * (86400 if sep == "+" else _REL_UNITS.get(sep, 1))
    if colon_groups or len([n for n, s in parts if s == ":"]) > 2:
        return None
    return RelTime(-total if negative else total)


def format_reltime(seconds: float) -> str:
    """``[-][D+]HH:MM:SS`` with leading zero fields dropped; fractions as C ``%02g`` (§6)."""
    if math.isnan(seconds) or math.isinf(seconds):
        return "00"
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    whole = int(seconds)
    frac = seconds - whole
    days, rem = divmod(whole, 86400)
    hours, rem = divmod(rem, 3600)
    minutes, secs = divmod(rem, 60)
    sec_text = _c_format("%02g", secs + frac) if frac else f"{secs:02d}"
    if days:
        return f"{sign}{days}+{hours:02d}:{minutes:02d}:{sec_text}"
    if hours:
        return f"{sign}{hours:02d}:{minutes:02d}:{sec_text}"
    if minutes:
        return f"{sign}{minutes:02d}:{sec_text}"
    return f"{sign}{sec_text}"


def _c_format(fmt: str, value: float) -> str:
    """C printf formatting (Python's %-operator follows C for g/E/f)."""
    return fmt % value


__all__ = [
    "AbsTime",
    "Error",
    "ErrorType",
    "RelTime",
    "Undefined",
    "UndefinedType",
    "format_abstime",
    "format_reltime",
    "parse_abstime",
    "parse_reltime",
]
