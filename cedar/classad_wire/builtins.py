"""The ClassAd built-in functions: a registry from lower-case name to implementation.

One module because it is one registry: ``@_register`` fills :data:`FUNCTIONS` with every built-in as
the module is imported.

Every function takes the evaluator, its unevaluated argument expressions and the scope, so
lazy functions (``ifThenElse``, ``eval``) and strict ones share one calling convention.
The evaluator core (dispatch, step budget) stays in :mod:`cedar.classad_wire.evaluate`.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable

from cedar.classad_wire.expr import AttrRef, Expr, RecordExpr, Select, fold, to_expr
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
    arith,
    as_bool,
    compare,
    identical,
    is_number,
    is_numeric,
    to_string,
    trunc,
    wrap,
)
from cedar.classad_wire.regex import Pattern, RegexBudgetExceeded, RegexError, compile_pattern
from cedar.classad_wire.unparse import unparse
from cedar.classad_wire.values import AbsTime, Error, RelTime, Undefined


def _c_pow(base: float, exponent: float) -> float:
    """C ``pow``: infinities and NaN instead of exceptions, as the reference returns them."""
    try:
        return math.pow(base, exponent)
    except OverflowError:
        odd = exponent == math.floor(exponent) and exponent % 2 == 1
        return -math.inf if base < 0 and odd else math.inf
    except ValueError:
        if base == 0:  # zero to a negative power
            odd = exponent == math.floor(exponent) and exponent % 2 == 1
            return math.copysign(math.inf, base) if odd else math.inf
        return math.nan  # negative base, fractional exponent


Function = Callable[[Context, tuple[Expr, ...], Scope], Value]
FUNCTIONS: dict[str, Function] = {}


def _register(*names: str) -> Callable[[Function], Function]:
    def decorate(function: Function) -> Function:
        for name in names:
            FUNCTIONS[name.lower()] = function
        return function

    return decorate


def _strict_function(
    *names: str, arity: tuple[int, int], undefined_is_error: bool = False
) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    """Register a function of evaluated arguments; Error/Undefined arguments propagate.

    Some reference functions (the math ones, ``stringListMember``) turn an undefined argument
    into Error instead (observed); ``undefined_is_error`` selects that.
    """

    def decorate(function: Callable[..., Value]) -> Callable[..., Value]:
        def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
            if not arity[0] <= len(args) <= arity[1]:
                return Error
            values = [ev.eval(arg, scope) for arg in args]
            # Observed (substr): any undefined argument gives undefined, even next to error.
            if any(v is Undefined for v in values):
                return Error if undefined_is_error else Undefined
            if any(v is Error for v in values):
                return Error
            ev.charge(sum(len(v) for v in values if type(v) is str))
            result = function(*values)
            if type(result) is str:
                ev.charge(len(result))
            return result

        for name in names:
            FUNCTIONS[name.lower()] = call
        return function

    return decorate


def _type_test(predicate: Callable[[Value], bool]) -> Function:
    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        if len(args) != 1:
            return Error
        return predicate(ev.eval(args[0], scope))

    return call


for _name, _predicate in {
    "isUndefined": lambda v: v is Undefined,
    "isError": lambda v: v is Error,
    "isString": lambda v: type(v) is str,
    "isInteger": lambda v: type(v) is int,
    "isReal": lambda v: type(v) is float,
    "isBoolean": lambda v: type(v) is bool,
    "isList": lambda v: isinstance(v, tuple),
    "isClassAd": lambda v: isinstance(v, Scope),
    "isAbsTime": lambda v: type(v) is AbsTime,
    "isRelTime": lambda v: type(v) is RelTime,
}.items():
    FUNCTIONS[_name.lower()] = _type_test(_predicate)


@_register("ifThenElse")
def _if_then_else(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) != 3:
        return Error
    cond = as_bool(ev.eval(args[0], scope))
    if cond is Undefined or cond is Error:
        return cond
    return ev.eval(args[1] if cond else args[2], scope)


_LEADING_INT = re.compile(r"\s*[+-]?\d+")
_LEADING_REAL = re.compile(
    r"\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.I
)


def _time_number(value: Value) -> Value:
    """An absTime as its seconds, a relTime as its whole seconds (as the math functions see
    them, observed: real(relTime(2.5)) is 2.0); other values unchanged."""
    if type(value) is AbsTime:
        return value.seconds
    if type(value) is RelTime:
        return trunc(value.seconds)
    return value


@_strict_function("int", arity=(1, 1))
def _int(value: Value) -> Value:
    kind = type(value)
    if kind is int:
        return value
    if kind is bool:
        return int(value)
    if kind is float:
        return trunc(value)
    if kind is str:
        match = _LEADING_REAL.match(value)
        return Error if match is None else trunc(float(match.group()))
    if kind is AbsTime:
        return value.seconds
    if kind is RelTime:
        return trunc(value.seconds)
    return Error


@_strict_function("real", arity=(1, 1))
def _real(value: Value) -> Value:
    value = _time_number(value)
    kind = type(value)
    if kind in (int, float, bool):
        return float(value)
    if kind is str:
        match = _LEADING_REAL.match(value)
        return Error if match is None else float(match.group())
    if kind is AbsTime:
        return float(value.seconds)
    if kind is RelTime:
        return float(value.seconds)
    return Error


@_strict_function("string", arity=(1, 1))
def _string(value: Value) -> Value:
    return to_string(value)


@_strict_function("bool", arity=(1, 1))
def _bool(value: Value) -> Value:
    if type(value) is RelTime:
        value = _time_number(value)
    kind = type(value)
    if kind is bool:
        return value
    if kind in (int, float):
        return value != 0
    if kind is str:
        folded = fold(value)
        if folded == "true":
            return True
        if folded == "false":
            return False
        return Undefined
    return Error


def _rounding(function: Callable[[float], float]) -> Callable[[Value], Value]:
    def call(value: Value) -> Value:
        value = _time_number(value)
        kind = type(value)
        if kind is int:
            return value
        if kind is bool:
            return int(value)
        if kind is str:
            value = _real(value)
            if value is Error:
                return Error
        elif kind is not float:
            return Error
        if math.isnan(value) or math.isinf(value):
            return trunc(value)
        return trunc(float(function(value)))

    return call


_strict_function("floor", arity=(1, 1), undefined_is_error=True)(_rounding(math.floor))
_strict_function("ceiling", "ceil", arity=(1, 1), undefined_is_error=True)(_rounding(math.ceil))
_strict_function("round", arity=(1, 1), undefined_is_error=True)(_rounding(round))


@_strict_function("pow", arity=(2, 2), undefined_is_error=True)
def _pow(base: Value, exponent: Value) -> Value:
    if type(base) in (AbsTime, RelTime):
        base = float(_time_number(base))
    if type(exponent) in (AbsTime, RelTime):
        exponent = float(_time_number(exponent))
    if type(base) is str or type(exponent) is str:
        # Observed: strings are read as reals (pow("2", 3) is 8.0).
        base, exponent = _real(base), _real(exponent)
        if base is Error or exponent is Error:
            return Error
    if not (is_numeric(base) and is_numeric(exponent)):
        return Error
    result = _c_pow(float(base), float(exponent))
    if type(base) is int and type(exponent) is int and exponent >= 0:
        # Computed in double, then rounded as (long long)(x + 0.5): pow(-2, 3) is -7 (observed).
        return trunc(result + 0.5)
    return result  # booleans give a real, as observed


@_strict_function("quantize", arity=(2, 2), undefined_is_error=True)
def _quantize(original: Value, quantum: Value) -> Value:
    """Observed: strings and times are read as numbers; a zero quantum (or an empty list)
    returns the first argument unchanged, whatever it is."""
    timed = type(original) in (AbsTime, RelTime) or type(quantum) in (AbsTime, RelTime)
    value, quantum = _time_number(original), _time_number(quantum)
    if timed:  # observed: times make the arithmetic real
        value = float(value) if is_number(value) else value
        quantum = float(quantum) if is_number(quantum) else quantum
    if type(value) is str:
        value = _real(value)
    if type(quantum) is str:
        quantum = _real(quantum)
    if not is_numeric(value):
        return Error
    if quantum == () or (is_numeric(quantum) and quantum == 0):
        return original
    if isinstance(quantum, tuple):
        for q in quantum:
            if not is_numeric(q):
                return Error
            if q >= value:
                return q
        last = quantum[-1]
        if not is_numeric(last) or last == 0:
            return Error
        return _quantize(value, last)
    if not (is_numeric(value) and is_numeric(quantum)):
        return Error
    if quantum == 0:
        return Error
    ratio = value / quantum
    if math.isinf(ratio) or math.isnan(ratio):
        return ratio * quantum  # what the reference's double arithmetic gives
    if type(value) is int and type(quantum) is int:
        # Observed: C integer arithmetic ((a + q - 1) / q) * q, so quantize(-9, 3) is -6.
        return wrap(arith("/", wrap(value + quantum - 1), quantum) * quantum)
    return float(math.ceil(ratio) * quantum)


@_register("strcat")
def _strcat(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    values = [ev.eval(arg, scope) for arg in args]
    for value in values:  # the first undefined/error argument decides (observed)
        if value is Undefined or value is Error:
            return value
    result = "".join(to_string(v) for v in values)
    ev.charge(len(result))
    return result


@_strict_function("substr", arity=(2, 3))
def _substr(text: Value, offset: Value, length: Value = None) -> Value:
    if type(text) is not str or type(offset) is not int:
        return Error
    if length is not None and type(length) is not int:
        return Error
    size = len(text)
    start = offset if offset >= 0 else max(size + offset, 0)
    if start > size:
        return ""
    if length is None:
        return text[start:]
    end = start + length if length >= 0 else size + length
    return text[start:end] if end > start else ""


def _cmp(a: str, b: str) -> int:
    return (a > b) - (a < b)


@_strict_function("strcmp", arity=(2, 2))
def _strcmp(a: Value, b: Value) -> Value:
    return _cmp(to_string(a), to_string(b))


@_strict_function("stricmp", arity=(2, 2))
def _stricmp(a: Value, b: Value) -> Value:
    return _cmp(fold(to_string(a)), fold(to_string(b)))


@_strict_function("toUpper", arity=(1, 1))
def _to_upper(value: Value) -> Value:
    text = to_string(value)
    return (
        text.upper() if text.isascii() else "".join(c.upper() if c.isascii() else c for c in text)
    )


@_strict_function("toLower", arity=(1, 1))
def _to_lower(value: Value) -> Value:
    return fold(to_string(value))


@_strict_function("size", arity=(1, 1))
def _size(value: Value) -> Value:
    if type(value) is str:
        return len(value.encode("utf-8", "surrogateescape"))
    if isinstance(value, tuple):
        return len(value)
    if isinstance(value, Scope):
        source = value.source
        return len(source.names) if isinstance(source, RecordExpr) else len(source)  # type: ignore[arg-type]
    return Error


def _member_of(equal: Callable[[Value, Value], Value]) -> Callable[[Value, Value], Value]:
    def call(item: Value, items: Value) -> Value:
        if not isinstance(items, tuple) or isinstance(item, tuple | Scope):
            return Error
        return any(equal(item, element) is True for element in items)

    return call


_strict_function("member", arity=(2, 2))(_member_of(lambda a, b: compare("==", a, b)))


@_register("identicalMember")
def _identical_member(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """Not strict: ``identicalMember(undefined, {undefined})`` is true (observed)."""
    if len(args) != 2:
        return Error
    item, items = ev.eval(args[0], scope), ev.eval(args[1], scope)
    if items is Undefined:
        return Undefined
    if not isinstance(items, tuple):
        return Error
    if isinstance(item, tuple | Scope):
        return Error
    return any(identical(item, element) is True for element in items)


_LIST_BLANKS = " \t\r\n"


def _string_list(text: str, delims: str = ", ", trim: bool = True) -> list[str]:
    """A StringList: the items between delimiters, blanks trimmed, empty items dropped.

    ``stringListsIntersect`` compares untrimmed items (observed), hence ``trim``.
    """
    items = re.split("[" + re.escape(delims) + "]", text) if delims else [text]
    if trim:
        items = [item.strip(_LIST_BLANKS) for item in items]
    return [item for item in items if item]


def _string_list_args(values: list[Value], count: int) -> tuple[list[str], str] | Value:
    """The ``count`` string arguments and the optional delimiter argument, or the failure."""
    if len(values) not in (count, count + 1):
        return Error
    if any(v is Error for v in values):
        return Error
    if any(type(v) is not str for v in values):
        return Undefined if any(v is Undefined for v in values) else Error
    strings = [str(v) for v in values]
    return strings[:count], strings[count] if len(values) > count else ", "


def _string_list_function(
    *names: str, count: int, undefined: Value = Undefined
) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    """Register a function of ``count`` string-list strings and an optional delimiter string.

    ``undefined`` is the result when an argument is undefined (observed per function).
    """

    def decorate(function: Callable[..., Value]) -> Callable[..., Value]:
        def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
            values = [ev.eval(arg, scope) for arg in args]
            parsed = _string_list_args(values, count)
            if parsed is Undefined:
                return undefined
            if not isinstance(parsed, tuple):
                return parsed
            strings, delims = parsed
            ev.charge(sum(len(s) for s in strings))
            return function(*strings, delims)

        for name in names:
            FUNCTIONS[name.lower()] = call
        return function

    return decorate


def _member_call(fold_case: bool) -> Function:
    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        if not 2 <= len(args) <= 3:
            return Error
        values = [ev.eval(arg, scope) for arg in args]
        if any(v is Error for v in values):
            return Error
        if len(values) == 3 and values[2] is Undefined:
            values[2] = ", "  # observed: an undefined delimiter means the default
        if any(type(v) is not str and v is not Undefined for v in values):
            return Error
        if values[0] is Undefined and values[1] is Undefined:
            return Undefined
        if values[0] is Undefined or values[1] is Undefined:
            return False  # observed: stringListMember(undefined, "a") is false
        item, text = values[0], values[1]
        delims = values[2] if len(values) == 3 else ", "
        ev.charge(len(text))
        items = _string_list(text, delims)
        if fold_case:
            return fold(item) in {fold(i) for i in items}
        return item in items

    return call


FUNCTIONS["stringlistmember"] = _member_call(fold_case=False)
FUNCTIONS["stringlistimember"] = _member_call(fold_case=True)


@_string_list_function("stringListSize", count=1, undefined=Error)
def _string_list_size(text: str, delims: str) -> Value:
    return len(_string_list(text, delims))


_LIST_INT = re.compile(r"[+-]?\d+")
_FLT_MIN = 1.1754943508222875e-38


def _list_numbers(text: str, delims: str) -> list[int | float] | None:
    """The items of a string list as numbers (C ``strtod`` rules), or None if one is not."""
    numbers: list[int | float] = []
    for item in _string_list(text, delims):
        if _LIST_INT.fullmatch(item):
            numbers.append(wrap(int(item)))
            continue
        prefix = _STRTOD.match(item)
        if prefix is None:
            return None
        number = _strtod(prefix.group())
        if number is None:
            return None
        numbers.append(number)  # observed: a number prefix is enough ("1,x" as one item is 1.0)
    return numbers


_STRTOD = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
    re.IGNORECASE,
)


def _strtod(text: str) -> float | None:
    if not _STRTOD.fullmatch(text):
        return None
    body = text.lstrip("+-")
    if body[:2].lower() == "0x":
        sign = -1.0 if text.startswith("-") else 1.0
        mantissa = body[2:] if "p" in body.lower() else body[2:] + "p0"
        return sign * float.fromhex("0x" + mantissa)
    return float(text)


def _list_reduce(kind: str) -> Callable[[str, str], Value]:
    def call(text: str, delims: str) -> Value:
        numbers = _list_numbers(text, delims)
        if numbers is None:
            return Error
        if not numbers:
            return 0.0 if kind in ("sum", "avg") else Undefined
        real = any(type(n) is float for n in numbers)
        if kind == "sum":
            total: Value = 0
            for n in numbers:
                total = arith("+", total, n)
            return total
        if kind == "avg":
            total = 0
            for n in numbers:
                total = arith("+", total, n)
            return arith("/", total, float(len(numbers)) if real else len(numbers))
        # Observed: the maximum starts from 0 (ints) or FLT_MIN (reals).
        pick = min(numbers) if kind == "min" else max([*numbers, _FLT_MIN if real else 0])
        return float(pick) if real else pick

    return call


for _kind in ("sum", "avg", "min", "max"):
    _string_list_function(f"stringList{_kind.title()}", count=1, undefined=Error)(
        _list_reduce(_kind)
    )


@_string_list_function("stringListsIntersect", count=2)
def _lists_intersect(first: str, second: str, delims: str) -> Value:
    delims = delims or ", "  # observed: an empty delimiter string means the default here
    first_items = _string_list(first, delims, trim=False)
    return bool(set(first_items) & set(_string_list(second, delims, trim=False)))


def _subset(fold_case: bool) -> Callable[[str, str, str], Value]:
    def call(first: str, second: str, delims: str) -> Value:
        norm = fold if fold_case else str
        items = _string_list(first, delims)
        if not items:
            return False  # observed: a list of only blanks is a subset of nothing
        superset = {norm(i) for i in _string_list(second, delims)}
        return all(norm(i) in superset for i in items)

    return call


def _subset_call(fold_case: bool) -> Function:
    inner = _subset(fold_case)

    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        values = [ev.eval(arg, scope) for arg in args]
        if len(values) not in (2, 3):
            return Error
        if any(v is Error or (type(v) is not str and v is not Undefined) for v in values):
            return Error
        # Observed: "" is a subset of anything; so is undefined, except of undefined.
        if values[0] == "":
            return True
        if values[0] is Undefined:
            return Undefined if values[1] is Undefined else True
        if values[1] is Undefined:
            return False
        if len(values) == 3 and values[2] is Undefined:
            values[2] = ", "  # an undefined delimiter means the default
        if not _string_list(values[0], ", " if len(values) == 2 else str(values[2])):
            return values[0] == ""  # observed: "" is a subset of anything, " " of nothing
        parsed = _string_list_args(values, 2)
        if not isinstance(parsed, tuple):
            return parsed
        (first, second), delims = parsed
        return inner(first, second, delims)

    return call


FUNCTIONS["stringlistsubsetmatch"] = _subset_call(fold_case=False)
FUNCTIONS["stringlistisubsetmatch"] = _subset_call(fold_case=True)


@_register("stringList_regexpMember")
def _string_list_regexp_member(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    values = [ev.eval(arg, scope) for arg in args]
    if not 2 <= len(values) <= 4 or any(type(v) is not str for v in values):
        return Error
    pattern, text = values[0], values[1]
    delims = values[2] if len(values) > 2 else ", "
    options = values[3] if len(values) > 3 else ""
    compiled = _compile(pattern, options)
    if compiled is None:
        return Error
    if not _string_list(text, delims):
        return Undefined  # observed: an empty list gives undefined
    ev.charge(len(text))
    try:
        return any(
            compiled.search(_bytes_text(item)) is not None for item in _string_list(text, delims)
        )
    except RegexBudgetExceeded:
        return Error


def _split_items(text: str, delims: str) -> list[str]:
    """``split``: blank delimiters are soft (a run is one separator), others hard (one each).

    A separator is a run of blanks with at most one hard delimiter in it; the text may start
    with one.  So ``split("a,,b")`` is ``{"a","","b"}`` and ``split("a  b")`` is ``{"a","b"}``.
    """
    soft = "".join(c for c in delims if c in " \t")
    hard = "".join(c for c in delims if c not in " \t")
    end = len(text)

    def separator(pos: int) -> int:
        while pos < end and text[pos] in soft:
            pos += 1
        if pos < end and text[pos] in hard:
            pos += 1
            while pos < end and text[pos] in soft:
                pos += 1
        return pos

    items: list[str] = []
    pos = separator(0)
    while pos < end:
        start = pos
        while pos < end and text[pos] not in delims:
            pos += 1
        items.append(text[start:pos])
        pos = separator(pos)
    return items


@_strict_function("split", arity=(1, 2), undefined_is_error=True)
def _split(text: Value, delims: Value = None) -> Value:
    if type(text) is not str or (delims is not None and type(delims) is not str):
        return Error
    if delims == "":
        return (text,) if text else ()
    return tuple(_split_items(text, " ,\t" if delims is None else delims))


@_register("join")
def _join(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    values = [ev.eval(arg, scope) for arg in args]
    if not values:
        return ""  # observed: join() is the empty string
    items: Value
    sep: Value
    if len(values) == 1:
        # Observed: join(list) concatenates; join(",") alone is "" (a separator, no items).
        if values[0] is Undefined:
            return Undefined
        items, sep = (values[0], "") if isinstance(values[0], tuple) else ((), values[0])
    elif len(values) == 2 and (isinstance(values[1], tuple) or values[1] is Undefined):
        sep, items = values
    else:
        sep, items = values[0], tuple(values[1:])
    if items is Error or sep is Error:
        return Error
    if items is Undefined:
        return Undefined
    if not isinstance(items, tuple):
        return Error
    if any(item is Error for item in items):
        return Error
    if (items or sep is Undefined) and all(item is Undefined for item in items):
        return Undefined  # observed: join(undefined, {}) is undefined, join(",", {}) is ""
    glue = "" if sep is Undefined else to_string(sep)
    # Observed: undefined items are left out, and the separator only follows non-empty text.
    result = ""
    for item in items:
        if item is not Undefined:
            result = (result + glue if result else result) + to_string(item)
    ev.charge(len(result))
    return result


@_register("time")
def _time(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    return int(time.time()) if not args else Error


def _list_of_numbers(items: Value) -> list[Value] | Value:
    """Elements of a list argument for sum/avg/min/max: undefined elements are skipped."""
    if items is Undefined or items is Error:
        return items
    if not isinstance(items, tuple):
        return Error
    values = []
    for v in items:
        if v is Undefined:
            continue
        if type(v) is bool:
            v = int(v)
        if not is_number(v):
            return Error
        values.append(v)
    return values


def _aggregate(kind: str) -> Function:
    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        if len(args) != 1:
            return Error
        items = ev.eval(args[0], scope)
        values = _list_of_numbers(items)
        if not isinstance(values, list):
            return values
        if kind != "avg" and len(values) == 1:
            # Observed: one (defined) element is the result as it is, so a boolean stays one.
            return next(v for v in items if v is not Undefined)
        if kind == "sum":
            total: Value = 0
            for v in values:
                total = arith("+", total, v)
            return total
        if kind == "avg":
            if not values:
                return 0
            total = 0
            for v in values:
                total = arith("+", total, v)
            return arith("/", total, float(len(values)))
        if not values:
            return Undefined
        pick = min(values) if kind == "min" else max(values)
        return float(pick) if any(type(v) is float for v in values) else pick

    return call


for _kind in ("sum", "avg", "min", "max"):
    FUNCTIONS[_kind] = _aggregate(_kind)


# --- regular expressions (a bounded matcher on the UTF-8 bytes, as the reference's PCRE) ------


def _bytes_text(text: str) -> str:
    """The UTF-8 bytes of ``text`` as a latin-1 string (one character per byte)."""
    return text.encode("utf-8", "surrogateescape").decode("latin-1")


def _from_bytes_text(text: str) -> str:
    return text.encode("latin-1").decode("utf-8", "surrogateescape")


_PATTERNS: dict[tuple[str, str], Pattern | None] = {}
_PATTERNS_MAX = 256


def _compile(pattern: str, options: str) -> Pattern | None:
    """The compiled pattern (cached), or None when it is not valid."""
    key = (pattern, options)
    if key in _PATTERNS:
        return _PATTERNS[key]
    try:
        compiled: Pattern | None = compile_pattern(_bytes_text(pattern), options)
    except RegexError:
        compiled = None
    if len(_PATTERNS) >= _PATTERNS_MAX:
        _PATTERNS.clear()
    _PATTERNS[key] = compiled
    return compiled


def _regex_args(values: list[Value], count: int) -> list[str] | Value:
    """``count`` string arguments plus an optional options string; undefined wins over error."""
    if len(values) not in (count, count + 1):
        return Error
    if any(v is Error for v in values):
        return Error
    if any(v is Undefined for v in values):
        return Undefined
    if any(type(v) is not str for v in values):
        return Error
    return [str(v) for v in values] + ([""] if len(values) == count else [])


@_register("regexp")
def _regexp(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    strings = _regex_args([ev.eval(arg, scope) for arg in args], 2)
    if not isinstance(strings, list):
        return strings
    pattern, text, options = strings
    compiled = _compile(pattern, options)
    if compiled is None:
        return Error
    ev.charge(len(text))
    try:
        return compiled.search(_bytes_text(text)) is not None
    except RegexBudgetExceeded:
        return Error


@_register("regexpMember")
def _regexp_member(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    values = [ev.eval(arg, scope) for arg in args]
    if len(values) not in (2, 3):
        return Error
    pattern, items = values[0], values[1]
    options = values[2] if len(values) == 3 else ""
    if pattern is Error or items is Error or options is Error:
        return Error
    if pattern is Undefined or items is Undefined or options is Undefined:
        return Undefined
    if type(pattern) is not str or type(options) is not str or not isinstance(items, tuple):
        return Error
    compiled = _compile(pattern, options)
    if compiled is None:
        return Error
    try:
        for item in items:
            if item is Undefined:
                continue
            if type(item) is not str:
                return Error
            ev.charge(len(item))
            if compiled.search(_bytes_text(item)) is not None:
                return True
    except RegexBudgetExceeded:
        return Error
    return False


def _substitute(template: str, text: str, groups: list[int], count: int) -> str | None:
    """``template`` with ``\\0``..``\\9`` replaced by the match's groups; None if one is missing
    or comes after the last group that matched (the reference then gives error, as PCRE counts
    only the groups up to the last one set)."""
    matched = max((i for i in range(count + 1) if groups[2 * i] >= 0), default=0)
    out: list[str] = []
    pos = 0
    while pos < len(template):
        ch = template[pos]
        if ch == "\\" and pos + 1 < len(template) and template[pos + 1].isdigit():
            index = int(template[pos + 1])
            if index > count:
                return None
            if index > matched:
                return None  # observed: a group past the last one that matched is an error
            low, high = groups[2 * index], groups[2 * index + 1]
            if low >= 0 and high >= 0:
                out.append(text[low:high])  # an earlier group that took no part is empty
            pos += 2
            continue
        out.append(ch)
        pos += 1
    return "".join(out)


def _replacing(kind: str) -> Function:
    """``regexps`` (the substitution of the first match), ``replace`` and ``replaceAll``."""

    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        strings = _regex_args([ev.eval(arg, scope) for arg in args], 3)
        if not isinstance(strings, list):
            return strings
        pattern, target, template, options = strings
        compiled = _compile(pattern, options)
        if compiled is None:
            return Error
        text, template = _bytes_text(target), _bytes_text(template)
        ev.charge(len(text))
        pieces: list[str] = []
        pos = 0
        try:
            while pos <= len(text):
                groups = compiled.search(text, pos)
                if groups is None:
                    break
                replaced = _substitute(template, text, groups, compiled.groups)
                if replaced is None:
                    return Error
                if kind == "regexps":
                    return _from_bytes_text(replaced)
                if kind == "all" and groups[1] == groups[0]:
                    return Error  # observed: replaceAll with an empty match is an error
                pieces.append(text[pos : groups[0]] + replaced)
                pos = groups[1]
                ev.charge(len(replaced))
                if kind == "first":
                    break
        except RegexBudgetExceeded:
            return Error
        if kind == "regexps":
            return ""
        pieces.append(text[pos:])
        return _from_bytes_text("".join(pieces))

    return call


FUNCTIONS["regexps"] = _replacing("regexps")
FUNCTIONS["replace"] = _replacing("first")
FUNCTIONS["replaceall"] = _replacing("all")


# --- versions ---------------------------------------------------------------------------------


def _signed(byte: int) -> int:
    return byte - 256 if byte > 127 else byte


def _digit_run(data: bytes, pos: int) -> int:
    end = pos
    while end < len(data) and 48 <= data[end] <= 57:
        end += 1
    return end


def _leading_zeros(data: bytes, pos: int) -> int:
    """The zeros that start the digit run at ``pos``, not counting the run's last digit."""
    end = _digit_run(data, pos)
    zeros = len(data[pos:end]) - len(data[pos:end].lstrip(b"0"))
    return min(zeros, end - pos - 1)


def version_compare(left: str, right: str) -> int:
    """The reference's ``versioncmp`` (a black-box model; strverscmp-like order).

    At the first differing byte: inside a digit run whose common part is only zeros, the end
    of a run is larger (+1/-1); inside one that starts with a zero, bytes compare as
    characters; inside one that starts with another digit, the longer run is larger (by the
    difference in length).  At the start of two digit runs the longer is larger, except that a
    run starting with a zero is a fraction (the longer one is smaller).  Otherwise the result
    is the difference of the two (signed) bytes.
    """
    a, b = left.encode("utf-8", "surrogateescape"), right.encode("utf-8", "surrogateescape")
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    c1 = a[p] if p < len(a) else 0
    c2 = b[p] if p < len(b) else 0
    if c1 == c2:
        return 0
    diff = _signed(c1) - _signed(c2)
    d1, d2 = 48 <= c1 <= 57, 48 <= c2 <= 57
    k = p
    while k > 0 and 48 <= a[k - 1] <= 57:
        k -= 1
    if k < p:  # inside a digit run
        common = a[k:p]
        if not common.strip(b"0"):
            if d1 != d2:
                # A run of zeros is a fraction: the one with more leading zeros is smaller, by
                # how many more (a run's last digit is its value, not a leading zero).
                zeros = _leading_zeros(a if d1 else b, k) - _leading_zeros(a if d2 else b, k)
                return -max(zeros, 1) if d1 else max(zeros, 1)
            return diff
        if common[0] == 48:
            return diff
        if d1 or d2:
            length = (_digit_run(a, k) - k) - (_digit_run(b, k) - k)
            return length if length else diff
        return diff
    if d1 and d2:
        la, lb = _digit_run(a, p) - p, _digit_run(b, p) - p
        if la == lb:
            return diff
        if c1 == 48:  # a fraction is smaller, by its count of leading zeros
            return -(la - len(a[p : p + la].lstrip(b"0")))
        if c2 == 48:
            return lb - len(b[p : p + lb].lstrip(b"0"))
        return la - lb
    return diff


def _version_strings(ev: Context, args: tuple[Expr, ...], scope: Scope, count: int) -> Value:
    if len(args) != count:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    if any(v is Undefined for v in values):
        return Undefined  # observed: undefined wins over error here
    if any(v is Error for v in values):
        return Error
    return [to_string(v) for v in values]


@_register("versioncmp")
def _versioncmp(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    strings = _version_strings(ev, args, scope, 2)
    if not isinstance(strings, list):
        return strings
    return version_compare(strings[0], strings[1])


def _version_test(test: Callable[[int], bool]) -> Function:
    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        strings = _version_strings(ev, args, scope, 2)
        if not isinstance(strings, list):
            return strings
        return test(version_compare(strings[0], strings[1]))

    return call


FUNCTIONS["versiongt"] = _version_test(lambda c: c > 0)
FUNCTIONS["versionge"] = _version_test(lambda c: c >= 0)
FUNCTIONS["versionlt"] = _version_test(lambda c: c < 0)
FUNCTIONS["versionle"] = _version_test(lambda c: c <= 0)
FUNCTIONS["versioneq"] = _version_test(lambda c: c == 0)


@_register("version_in_range")
def _version_in_range(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """Observed: the bounds are checked last to first; an undefined version is an error."""
    if len(args) != 3:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    if values[2] is Undefined or values[1] is Undefined:
        return Undefined
    if values[2] is Error or values[1] is Error:
        return Error
    if values[0] is Undefined or values[0] is Error:
        return Error
    version, low, high = (to_string(v) for v in values)
    return version_compare(low, version) <= 0 and version_compare(version, high) <= 0


# --- names, lists of ads, comparisons -------------------------------------------------------


def _split_at(text: str, first_is_user: bool) -> tuple[str, str]:
    before, at, after = text.partition("@")
    if at:
        return before, after
    return (text, "") if first_is_user else ("", text)


@_strict_function("splitUserName", arity=(1, 1), undefined_is_error=True)
def _split_user_name(text: Value) -> Value:
    return _split_at(text, True) if type(text) is str else Error


@_strict_function("splitSlotName", arity=(1, 1), undefined_is_error=True)
def _split_slot_name(text: Value) -> Value:
    return _split_at(text, False) if type(text) is str else Error


_COMPARE_OPS = {"<": "<", "<=": "<=", "==": "==", "!=": "!=", ">=": ">=", ">": ">"}


def _list_compare(want_all: bool) -> Function:
    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        if len(args) != 3:
            return Error
        op, items, value = (ev.eval(arg, scope) for arg in args)
        if op is Undefined:
            return Undefined
        if type(op) is not str:
            return Error
        name = fold(op)
        if name not in _COMPARE_OPS and name not in ("is", "isnt"):
            return Error
        if items is Undefined:
            return Undefined
        if not isinstance(items, tuple):
            return Error
        for item in items:
            if name == "is":
                result = identical(item, value)
            elif name == "isnt":
                same = identical(item, value)
                result = same if same is Error else not same
            elif value is Undefined:
                result = Undefined  # observed: not an error even for an error element
            else:
                result = compare(_COMPARE_OPS[name], item, value)
            if result is Error:
                return Error
            if want_all and result is not True:
                return False
            if not want_all and result is True:
                return True
        return want_all

    return call


FUNCTIONS["anycompare"] = _list_compare(want_all=False)
FUNCTIONS["allcompare"] = _list_compare(want_all=True)


@_register("countMatches")
def _count_matches(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """The ads of the list in which the first argument (an expression) evaluates to true."""
    if len(args) != 2:
        return Error
    items = ev.eval(args[1], scope)
    if items is Undefined:
        return 0
    if not isinstance(items, tuple):
        return Error
    count = 0
    for item in items:
        if isinstance(item, Scope):
            inner = Scope(item.members, scope, item.source)
            if as_bool(ev.eval(args[0], inner)) is True:
                count += 1
    return count


@_register("evalInEachContext")
def _eval_in_each_context(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) != 2:
        return Error
    contexts = ev.eval(args[1], scope)
    if contexts is Undefined or contexts is Error:
        return contexts
    if not isinstance(contexts, tuple):
        return Error
    results = []
    for context in contexts:
        if not isinstance(context, Scope):
            results.append(Undefined if context is Undefined else Error)
            continue
        inner = Scope(context.members, scope, context.source)
        results.append(ev.eval(args[0], inner))
    return tuple(results)


@_register("unparse")
def _unparse(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """The text of the referenced attribute's expression ("" when it is not defined)."""
    if len(args) != 1:
        return Error
    arg = args[0]
    if isinstance(arg, AttrRef):
        found = _lookup_expr(scope, arg.name)
        return "" if found is None else unparse(found, pretty=True)
    if isinstance(arg, Select):
        return ""
    return Error


def _lookup_expr(scope: Scope, name: str) -> Expr | None:
    key = fold(name)
    current: Scope | None = scope
    while current is not None:
        found = current.members(key)
        if found is not None:
            return found
        current = current.parent
    return None


@_register("debug")
def _debug(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    return ev.eval(args[0], scope) if len(args) == 1 else Error


@_register("eval")
def _eval_function(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    from cedar.classad_wire.syntax import parse_expr
    from cedar.errors import ClassAdParseError

    if len(args) != 1:
        return Error
    text = ev.eval(args[0], scope)
    if type(text) is not str:
        # Observed: other values evaluate to themselves, except times, undefined and error.
        if text is Undefined or type(text) in (AbsTime, RelTime):
            return Error
        return text
    ev.charge(len(text))
    try:
        return ev.eval(parse_expr(text), scope)
    except ClassAdParseError:
        return Error


@_strict_function("absTime", arity=(0, 2))
def _abs_time(value: Value = None, offset: Value = None) -> Value:
    if value is None:
        return AbsTime(int(time.time()), 0)
    if type(value) is int and (offset is None or type(offset) is int):
        return AbsTime(value, offset or 0)
    if type(value) is str:
        from cedar.classad_wire.values import parse_abstime

        parsed = parse_abstime(value)
        return Error if parsed is None else parsed
    return Error


@_strict_function("relTime", arity=(1, 1))
def _rel_time(value: Value) -> Value:
    if type(value) in (AbsTime, RelTime):
        return RelTime(float(_time_number(value)) if type(value) is AbsTime else value.seconds)
    if type(value) is int:
        return RelTime(float(_wrap32(value)))  # observed: an integer count of seconds is a C int
    if type(value) is float:
        return RelTime(value)
    if type(value) is str:
        from cedar.classad_wire.values import parse_reltime

        parsed = parse_reltime(value)
        return Error if parsed is None else parsed
    return Error


# --- time -------------------------------------------------------------------------------------


def _wrap32(value: int) -> int:
    """A 64-bit integer cut to a C ``int`` (two's complement wrap), as the reference stores it."""
    return ((value + 2**31) & 0xFFFFFFFF) - 2**31


def _seconds_of(value: Value) -> int | None:
    kind = type(value)
    if kind is int:
        return int(value)
    if kind is bool:
        return int(value)
    if kind is float:
        return trunc(value)
    return None


@_strict_function("interval", arity=(1, 1), undefined_is_error=True)
def _interval(value: Value) -> Value:
    if type(value) is RelTime:
        # Observed: a double outside the C int range converts to INT_MIN, not a wrap.
        seconds = trunc(value.seconds)
        if not -(2**31) <= seconds < 2**31:
            seconds = -(2**31)
    elif type(value) is str:
        parsed = _int(value)
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
    seconds = _wrap32(seconds)  # observed: interval() works on a C int
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
    """(UTC fields of the clock time, offset) of an absTime or a number of seconds."""
    if type(value) is AbsTime:
        return _gmtime(value.seconds + value.offset), value.offset
    seconds = _seconds_of(value)
    if seconds is None:
        return None
    return _gmtime(seconds), 0


def _gmtime(seconds: int) -> time.struct_time:
    try:
        return time.gmtime(seconds)
    except (OverflowError, OSError, ValueError):
        return time.gmtime(0)


@_register("formatTime")
def _format_time(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) > 2:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    if any(v is Undefined or v is Error for v in values):
        return Error
    when = values[0] if values else AbsTime(int(time.time()), 0)
    pattern = values[1] if len(values) == 2 else "%c"
    if type(pattern) is not str:
        return Error
    fields = _broken_down(when)
    if fields is None:
        return Error
    if not pattern:
        return ""
    try:
        return time.strftime(pattern.replace("%z", "+0000").replace("%Z", "GMT"), fields[0])
    except ValueError:
        return Error


@_register("splitTime")
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
            clock = _gmtime(value.seconds)
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
    _strict_function(f"get{_field}", arity=(1, 1), undefined_is_error=True)(
        _time_field(_field.lower())
    )


@_register("dayTime")
def _day_time(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """Seconds since midnight (UTC), as a real."""
    if args:
        return Error
    return float(int(time.time()) % 86400)


@_register("random")
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


# --- arguments and environments (the submit language's V1/V2 syntaxes) ------------------------

_ARG_SPECIAL = frozenset(" \t'\"")


def _quote_arg(arg: str) -> str:
    """One argument in the V2 syntax: runs of blanks/quotes wrapped in '...', ' doubled."""
    if not arg:
        return "''"
    out: list[str] = []
    pos = 0
    while pos < len(arg):
        if arg[pos] in " \t'":
            end = pos
            while end < len(arg) and arg[end] in " \t'":
                end += 1
            out.append("'" + arg[pos:end].replace("'", "''") + "'")
            pos = end
        else:
            out.append(arg[pos])
            pos += 1
    return "".join(out)


@_strict_function("listToArgs", arity=(1, 1), undefined_is_error=True)
def _list_to_args(items: Value) -> Value:
    if not isinstance(items, tuple) or any(type(item) is not str for item in items):
        return Error
    return " ".join(_quote_arg(item) for item in items)


def _split_args(text: str) -> list[str] | None:
    """V2 arguments: blanks separate, '...' quotes (with '' for a quote); None if unbalanced."""
    args: list[str] = []
    current: list[str] = []
    in_arg = False
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch in " \t\n\r":
            if in_arg:
                args.append("".join(current))
                current, in_arg = [], False
            pos += 1
            continue
        in_arg = True
        if ch == "'":
            pos += 1
            while True:
                if pos >= len(text):
                    return None
                if text[pos] == "'":
                    if text[pos + 1 : pos + 2] == "'":
                        current.append("'")
                        pos += 2
                        continue
                    pos += 1
                    break
                current.append(text[pos])
                pos += 1
            continue
        current.append(ch)
        pos += 1
    if in_arg:
        args.append("".join(current))
    return args


@_strict_function("argsToList", arity=(1, 1), undefined_is_error=True)
def _args_to_list(text: Value) -> Value:
    if type(text) is not str:
        return Error
    args = _split_args(text)
    return Error if args is None else tuple(args)


def _env_v2(pairs: list[tuple[str, str]]) -> str:
    return " ".join(_quote_arg(f"{name}={value}") for name, value in pairs)


def _parse_env_v2(text: str) -> list[tuple[str, str]] | None:
    args = _split_args(text)
    if args is None or any("=" not in arg for arg in args):
        return None
    return [(name, value) for name, _, value in (arg.partition("=") for arg in args)]


@_strict_function("envV1ToV2", arity=(1, 1))
def _env_v1_to_v2(text: Value) -> Value:
    if type(text) is not str:
        return Error
    pairs = []
    for item in text.split(";"):
        if item:
            name, equals, value = item.partition("=")
            if not equals:
                return Error
            pairs.append((name, value))
    return _env_v2(pairs)


@_register("mergeEnvironment")
def _merge_environment(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    merged: dict[str, str] = {}
    for arg in args:
        value = ev.eval(arg, scope)
        if value is Undefined:
            continue
        if type(value) is not str:
            return Error
        pairs = _parse_env_v2(value)
        if pairs is None:
            return Error
        for name, text in pairs:
            merged[name] = text
    return _env_v2(sorted(merged.items()))  # observed: sorted by name


# --- users --------------------------------------------------------------------------------------


@_register("userHome")
def _user_home(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """The home directory of a local user, else the default (second argument), else undefined."""
    if not 1 <= len(args) <= 2:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    default = values[1] if len(values) == 2 else Undefined
    name = values[0]
    if type(name) is str and name:
        try:
            import pwd

            return pwd.getpwnam(name).pw_dir
        except (ImportError, KeyError):
            pass
    return default


@_register("userMap")
def _user_map(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """No user maps are configured in cedar: the default (fourth argument) or undefined."""
    if not 2 <= len(args) <= 4:
        return Error
    values = [ev.eval(arg, scope) for arg in args]
    if any(v is Error for v in values[:2]):
        return Error
    return values[3] if len(values) == 4 else Undefined
