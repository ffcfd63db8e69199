"""Times: absTime, relTime, interval, formatTime, splitTime, the get* fields, time, random."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from cedar.classad_wire.builtins.core import time_number, to_int
from cedar.classad_wire.builtins.registry import register, strict_function
from cedar.classad_wire.expr import Expr, RecordExpr, to_expr
from cedar.classad_wire.operators import (
    Context,
    EvaluationFailed,
    Scope,
    Value,
    c_int,
    trunc,
    wrap32,
)
from cedar.classad_wire.values import AbsTime, Error, RelTime, Undefined


@register("time")
def _time(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    return int(time.time()) if not args else Error


@register("absTime")
def _abs_time(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """``absTime()``, ``absTime(time)``, ``absTime(time, offset)``, as observed in classad2.

    Numbers are seconds on a C int (an integer wraps, a real out of range is INT_MIN, a
    relTime counts as its seconds); an absTime is returned as it is, and so, with an offset,
    is a string.  The offset is checked first: undefined or not a number is Error even when
    the time is undefined.  An integer time with the offset -1 fails the whole evaluation.
    """
    if len(args) > 2:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    if not values:
        now = int(time.time())
        return AbsTime(now, _local_offset(now))
    offset: int | None = None
    if len(values) == 2:
        offset = _c_int(values[1])
        if offset is None:
            return Error
    value = values[0]
    kind = type(value)
    if value is Undefined or kind is AbsTime:
        return value
    if kind is str:
        if offset is not None:
            return value
        ev.charge(len(value))
        from cedar.classad_wire.values import parse_abstime

        parsed = parse_abstime(value)
        return Error if parsed is None else parsed
    seconds = _c_int(value)
    if seconds is None:
        return Error
    if kind is int and offset == -1:
        raise EvaluationFailed("absTime() of an integer with the offset -1")
    return AbsTime(seconds, _local_offset(seconds) if offset is None else offset)


def _local_offset(seconds: int) -> int:
    """The local zone's UTC offset at ``seconds``: the offset classad2 gives a time that comes
    without one (a number, ``absTime()``), daylight saving included (observed under ``TZ=``)."""
    try:
        return time.localtime(seconds).tm_gmtoff
    except (OverflowError, OSError, ValueError):
        return 0


def _c_int(value: Value) -> int | None:
    """A number as the C int classad2 keeps for times (None: not a number)."""
    kind = type(value)
    if kind is int:
        return wrap32(value)
    if kind is float or kind is RelTime:
        return c_int(value if kind is float else value.seconds)
    return None


@strict_function("relTime", arity=(1, 1), count_after=True)
def _rel_time(value: Value) -> Value:
    if type(value) in (AbsTime, RelTime):
        return RelTime(float(time_number(value)) if type(value) is AbsTime else value.seconds)
    if type(value) is int:
        return RelTime(float(wrap32(value)))  # observed: an integer count of seconds is a C int
    if type(value) is float:
        return RelTime(value)
    if type(value) is str:
        from cedar.classad_wire.values import parse_reltime

        parsed = parse_reltime(value)
        return Error if parsed is None else parsed
    return Error


def _seconds_of(value: Value) -> int | None:
    kind = type(value)
    if kind is int:
        return int(value)
    if kind is bool:
        return int(value)
    if kind is float:
        return trunc(value)
    return None


@strict_function("interval", arity=(1, 1), undefined_is_error=True)
def _interval(value: Value) -> Value:
    if type(value) is RelTime:
        # Observed: a double outside the C int range converts to INT_MIN, not a wrap.
        seconds = trunc(value.seconds)
        if not -(2**31) <= seconds < 2**31:
            seconds = -(2**31)
    elif type(value) is str:
        parsed = to_int(value)
        if parsed is Error:
            return Error
        seconds = parsed
    elif type(value) is AbsTime:
        seconds = value.seconds
    else:
        found = _seconds_of(value)
        if found is None:
            return Error
        seconds = found
    seconds = wrap32(seconds)  # observed: interval() works on a C int
    sign = "-" if seconds < 0 else ""
    rest = abs(seconds)
    days, rest = divmod(rest, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}+{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{sign}{hours}:{minutes:02d}:{secs:02d}"
    if minutes:
        return f"{sign}{minutes}:{secs:02d}"
    return f"{sign}{secs}"


def _broken_down(value: Value) -> tuple[time.struct_time, int] | None:
    """(fields of the clock time, offset) of an absTime at its own offset, or of a number of
    seconds at the local zone's."""
    if type(value) is AbsTime:
        return _gmtime(value.seconds + value.offset), value.offset
    if type(value) is bool:  # observed: formatTime(true) and splitTime(true) are error
        return None
    # Observed (condor_status -af on 25.13.2, classad2): a real is first a C int, so one out
    # of its range (or NaN) is INT_MIN, 1901-12-13; an integer keeps its 64 bits.
    seconds = _c_int(value) if type(value) is float else _seconds_of(value)
    if seconds is None:
        return None
    offset = _local_offset(seconds)
    return _gmtime(seconds + offset), offset


def _localtime(seconds: int) -> time.struct_time:
    try:
        return time.localtime(seconds)
    except (OverflowError, OSError, ValueError):
        return time.gmtime(0)


def _gmtime(seconds: int) -> time.struct_time:
    try:
        return time.gmtime(seconds)
    except (OverflowError, OSError, ValueError):
        return time.gmtime(0)


@register("formatTime")
def _format_time(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) > 2:
        return Error
    when = ev.eval(args[0], scope) if args else int(time.time())
    # Observed: a time that is no time is Error before the format is evaluated.
    if when is Undefined or when is Error:
        return Error
    fields = _broken_down(when)
    if fields is None:
        return Error
    pattern = ev.eval(args[1], scope) if len(args) == 2 else "%c"
    if type(pattern) is not str:
        return Error
    if not pattern:
        return ""
    try:
        # observed: %z is always +0000 and %Z the local zone's standard name (CET in June)
        zone = time.tzname[0].replace("%", "%%")
        return time.strftime(pattern.replace("%z", "+0000").replace("%Z", zone), fields[0])
    except ValueError:
        return Error


@register("splitTime")
def _split_time(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) != 1:
        return Error
    value = ev.eval(args[0], scope)
    if value is Undefined or value is Error:
        return value
    if type(value) is RelTime:
        total = value.seconds
        whole = abs(trunc(total))
        days, rest = divmod(whole, 86400)
        hours, rest = divmod(rest, 3600)
        minutes = rest // 60
        sign = -1 if total < 0 else 1
        seconds = math.fmod(total, 60.0)
        members: list[tuple[str, Value]] = [
            ("Type", "RelativeTime"),
            ("Days", sign * days),
            ("Hours", sign * hours),
            ("Minutes", sign * minutes),
            ("Seconds", seconds),
        ]
    else:
        fields = _broken_down(value)
        if fields is None:
            return Error
        clock, offset = fields
        members = [
            ("Type", "AbsoluteTime"),
            ("Year", clock.tm_year),
            ("Month", clock.tm_mon),
            ("Day", clock.tm_mday),
            ("Hours", clock.tm_hour),
            ("Minutes", clock.tm_min),
            ("Seconds", clock.tm_sec),
            ("Offset", offset),
        ]
    record = RecordExpr((name, to_expr(v)) for name, v in members)
    return Scope.of_record(record, scope)


def _time_field(kind: str) -> Callable[[Value], Value]:
    def call(value: Value) -> Value:
        if type(value) is AbsTime:
            clock = _localtime(value.seconds)  # the local zone's, not the value's offset
            fields = {
                "year": clock.tm_year,
                "month": clock.tm_mon,
                "dayofyear": clock.tm_yday - 1,
                "dayofmonth": clock.tm_mday,
                "dayofweek": (clock.tm_wday + 1) % 7,
                "hours": clock.tm_hour,
                "minutes": clock.tm_min,
                "seconds": clock.tm_sec,
            }
            return fields.get(kind, Error)
        if type(value) is RelTime and kind in ("days", "hours", "minutes", "seconds"):
            whole = trunc(value.seconds)
            sign, whole = (-1 if whole < 0 else 1), abs(whole)
            parts = {
                "days": whole // 86400,
                "hours": (whole % 86400) // 3600,
                "minutes": (whole % 3600) // 60,
                "seconds": whole % 60,
            }
            return sign * parts[kind]
        return Error

    return call


for _field in (
    "Year",
    "Month",
    "DayOfYear",
    "DayOfMonth",
    "DayOfWeek",
    "Hours",
    "Minutes",
    "Seconds",
    "Days",
):
    strict_function(f"get{_field}", arity=(1, 1), undefined_is_error=True)(
        _time_field(_field.lower())
    )


@register("dayTime")
def _day_time(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """Seconds since midnight (UTC), as a real."""
    if args:
        return Error
    return float(int(time.time()) % 86400)


@register("random")
def _random(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """A random real in [0, 1), or in [0, n) with the type of ``n``.

    The reference fails the whole evaluation for ``random(0)`` and negative bounds; cedar gives
    Error there (deviation).
    """
    if len(args) > 1:
        return Error
    if not args:
        return _RANDOM.random()
    bound = ev.eval(args[0], scope)
    if type(bound) is int and bound > 0:
        return _RANDOM.randrange(bound)
    if type(bound) is float and bound > 0:
        return _RANDOM.random() * bound
    return Error


_RANDOM = random.Random()
