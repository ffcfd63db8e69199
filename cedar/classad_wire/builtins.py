"""The ClassAd built-in functions: a registry from lower-case name to implementation.

Every function takes the evaluator, its unevaluated argument expressions and the scope, so
lazy functions (``ifThenElse``, ``eval``) and strict ones share one calling convention.
The evaluator core (dispatch, step budget) stays in :mod:`cedar.classad_wire.evaluate`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable

from cedar.classad_wire.evaluate import (
    Evaluator,
    Scope,
    Value,
    _arith,
    _as_bool,
    _compare,
    _is_number,
    _is_numeric,
    _strict,
    _trunc,
    _wrap,
    identical,
    to_string,
)
from cedar.classad_wire.expr import Expr, RecordExpr, fold
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


Function = Callable[[Evaluator, tuple[Expr, ...], Scope], Value]
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
        def call(ev: Evaluator, args: tuple[Expr, ...], scope: Scope) -> Value:
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
    def call(ev: Evaluator, args: tuple[Expr, ...], scope: Scope) -> Value:
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
def _if_then_else(ev: Evaluator, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) != 3:
        return Error
    cond = _as_bool(ev.eval(args[0], scope))
    if cond is Undefined or cond is Error:
        return cond
    return ev.eval(args[1] if cond else args[2], scope)


_LEADING_INT = re.compile(r"\s*[+-]?\d+")
_LEADING_REAL = re.compile(
    r"\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.I
)


@_strict_function("int", arity=(1, 1))
def _int(value: Value) -> Value:
    kind = type(value)
    if kind is int:
        return value
    if kind is bool:
        return int(value)
    if kind is float:
        return _trunc(value)
    if kind is str:
        match = _LEADING_REAL.match(value)
        return Error if match is None else _trunc(float(match.group()))
    if kind is AbsTime:
        return value.seconds
    if kind is RelTime:
        return _trunc(value.seconds)
    return Error


@_strict_function("real", arity=(1, 1))
def _real(value: Value) -> Value:
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
            return _trunc(value)
        return _trunc(float(function(value)))

    return call


_strict_function("floor", arity=(1, 1), undefined_is_error=True)(_rounding(math.floor))
_strict_function("ceiling", "ceil", arity=(1, 1), undefined_is_error=True)(_rounding(math.ceil))
_strict_function("round", arity=(1, 1), undefined_is_error=True)(_rounding(round))


@_strict_function("pow", arity=(2, 2), undefined_is_error=True)
def _pow(base: Value, exponent: Value) -> Value:
    if not (_is_numeric(base) and _is_numeric(exponent)):
        return Error
    result = _c_pow(float(base), float(exponent))
    if type(base) is int and type(exponent) is int and exponent >= 0:
        return _trunc(result)  # computed in double, then a C cast (pow(3, 39) is inexact)
    return result  # booleans give a real, as observed


@_strict_function("abs", arity=(1, 1))
def _abs(value: Value) -> Value:
    if type(value) is int:
        return _wrap(abs(value))
    if type(value) is float:
        return abs(value)
    return Error


@_strict_function("quantize", arity=(2, 2), undefined_is_error=True)
def _quantize(value: Value, quantum: Value) -> Value:
    if not _is_numeric(value):
        return Error
    if isinstance(quantum, tuple):
        for q in quantum:
            if _is_numeric(q) and q >= value:
                return q
        last = quantum[-1] if quantum else Error
        if not _is_numeric(last) or last == 0:
            return Error
        return _quantize(value, last)
    if not (_is_numeric(value) and _is_numeric(quantum)):
        return Error
    if quantum == 0:
        return Error
    ratio = value / quantum
    if math.isinf(ratio) or math.isnan(ratio):
        return ratio * quantum  # what the reference's double arithmetic gives
    steps = math.ceil(ratio)
    if type(value) is int and type(quantum) is int:
        return _wrap(steps * quantum)
    return float(steps * quantum)


@_register("strcat")
def _strcat(ev: Evaluator, args: tuple[Expr, ...], scope: Scope) -> Value:
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


@_strict_function("size", "length", arity=(1, 1))
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


_strict_function("member", arity=(2, 2))(_member_of(lambda a, b: _compare("==", a, b)))
_strict_function("identicalMember", arity=(2, 2))(_member_of(identical))


def _string_list(text: str, delims: str = ", ") -> list[str]:
    if not delims:  # no delimiter: the whole string is the one item
        return [text] if text else []
    return [item for item in re.split("[" + re.escape(delims) + "]", text) if item]


def _list_function(
    function: Callable[[str, list[str]], Value],
) -> Callable[..., Value]:
    def call(item: Value, text: Value, delims: Value = ", ") -> Value:
        if type(item) is not str or type(text) is not str or type(delims) is not str:
            return Error
        return function(item, _string_list(text, delims))

    return call


_strict_function("stringListMember", arity=(2, 3), undefined_is_error=True)(
    _list_function(lambda s, items: s in items)
)
_strict_function("stringListIMember", arity=(2, 3), undefined_is_error=True)(
    _list_function(lambda s, items: fold(s) in {fold(i) for i in items})
)


@_strict_function("stringListSize", arity=(1, 2), undefined_is_error=True)
def _string_list_size(text: Value, delims: Value = ", ") -> Value:
    if type(text) is not str or type(delims) is not str:
        return Error
    return len(_string_list(text, delims))


@_strict_function("split", arity=(1, 2))
def _split(text: Value, delims: Value = None) -> Value:
    if type(text) is not str or (delims is not None and type(delims) is not str):
        return Error
    if delims is None:
        return tuple(item for item in re.split(r"[\s,]+", text) if item)
    return tuple(_string_list(text, delims))


@_register("join")
def _join(ev: Evaluator, args: tuple[Expr, ...], scope: Scope) -> Value:
    values = [ev.eval(arg, scope) for arg in args]
    bad = _strict(*values)
    if bad is not None or not values:
        return Error if bad is None else bad
    if len(values) == 1:
        items, sep = values[0], ""
    elif len(values) == 2 and isinstance(values[1], tuple):
        sep, items = values
    else:
        sep, items = values[0], tuple(values[1:])
    if not isinstance(items, tuple) or isinstance(sep, tuple | Scope):
        return Error
    result = to_string(sep).join(to_string(item) for item in items if item is not Undefined)
    ev.charge(len(result))
    return result


@_strict_function("regexp", arity=(2, 3))
def _regexp(pattern: Value, text: Value, options: Value = "") -> Value:
    if type(pattern) is not str or type(text) is not str or type(options) is not str:
        return Error
    flags = re.IGNORECASE if "i" in options.lower() else 0
    try:
        return re.search(pattern, text, flags) is not None
    except re.error:
        return Error


@_register("time")
def _time(ev: Evaluator, args: tuple[Expr, ...], scope: Scope) -> Value:
    return int(time.time()) if not args else Error


def _numeric_list(function: Callable[[list[Value]], Value]) -> Callable[[Value], Value]:
    def call(items: Value) -> Value:
        if not isinstance(items, tuple):
            return Error
        bad = _strict(*items)
        if bad is not None:
            return bad
        values = [int(v) if type(v) is bool else v for v in items]
        if not all(_is_number(v) for v in values):
            return Error
        return function(values)

    return call


def _sum(values: list[Value]) -> Value:
    total: Value = 0
    for v in values:
        total = _arith("+", total, v)
    return total


def _sum_skipping_undefined(items: Value) -> Value:
    """``sum`` ignores undefined elements (observed: ``sum({1, undefined})`` is 1)."""
    if isinstance(items, tuple):
        items = tuple(v for v in items if v is not Undefined)
    return _numeric_list(_sum)(items)


def _avg(values: list[Value]) -> Value:
    if not values:
        return 0
    return float(sum(float(v) for v in values)) / len(values)


def _extreme(pick: Callable[..., Value]) -> Callable[[list[Value]], Value]:
    def call(values: list[Value]) -> Value:
        if not values:
            return Undefined
        result = pick(values)
        return float(result) if any(type(v) is float for v in values) else result

    return call


_strict_function("sum", arity=(1, 1))(_sum_skipping_undefined)
_strict_function("avg", arity=(1, 1))(_numeric_list(_avg))
_strict_function("min", arity=(1, 1))(_numeric_list(_extreme(min)))
_strict_function("max", arity=(1, 1))(_numeric_list(_extreme(max)))


@_register("eval")
def _eval_function(ev: Evaluator, args: tuple[Expr, ...], scope: Scope) -> Value:
    from cedar.classad_wire.syntax import parse_expr
    from cedar.errors import ClassAdParseError

    if len(args) != 1:
        return Error
    text = ev.eval(args[0], scope)
    if type(text) is not str:
        return _strict(text) or Error
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
    if _is_number(value):
        return RelTime(float(value))
    if type(value) is str:
        from cedar.classad_wire.values import parse_reltime

        parsed = parse_reltime(value)
        return Error if parsed is None else parsed
    return Error
