"""Control, conversions, type tests and arithmetic functions (ifThenElse, int, real, pow, ...)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from cedar.classad_wire.builtins.registry import FUNCTIONS, Function, register, strict_function
from cedar.classad_wire.expr import Expr, fold
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
    arith,
    as_bool,
    c_int,
    is_number,
    is_numeric,
    to_string,
    trunc,
    wrap,
)
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


@register("ifThenElse")
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


def time_number(value: Value) -> Value:
    """An absTime as its seconds, a relTime as its whole seconds in a C int (as the math
    functions see them, observed: real(relTime(2.5)) is 2.0, real(relTime(3e9)) is INT_MIN);
    other values unchanged."""
    if type(value) is AbsTime:
        return value.seconds
    if type(value) is RelTime:
        return c_int(value.seconds)
    return value


@strict_function("int", arity=(1, 1))
def to_int(value: Value) -> Value:
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
    if kind is AbsTime or kind is RelTime:
        return time_number(value)
    return Error


@strict_function("real", arity=(1, 1))
def _real(value: Value) -> Value:
    value = time_number(value)
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


@strict_function("string", arity=(1, 1))
def _string(value: Value) -> Value:
    return to_string(value)


@strict_function("bool", arity=(1, 1))
def _bool(value: Value) -> Value:
    if type(value) is RelTime:
        value = time_number(value)
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
        value = time_number(value)
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


strict_function("floor", arity=(1, 1), undefined_is_error=True)(_rounding(math.floor))
strict_function("ceiling", "ceil", arity=(1, 1), undefined_is_error=True)(_rounding(math.ceil))
strict_function("round", arity=(1, 1), undefined_is_error=True)(_rounding(round))


@strict_function("pow", arity=(2, 2), undefined_is_error=True)
def _pow(base: Value, exponent: Value) -> Value:
    if type(base) in (AbsTime, RelTime):
        base = float(time_number(base))
    if type(exponent) in (AbsTime, RelTime):
        exponent = float(time_number(exponent))
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


_ZERO_QUANTUM = 1e-8


@strict_function("quantize", arity=(2, 2), undefined_is_error=True)
def _quantize(original: Value, quantum: Value) -> Value:
    """Observed: strings and times are read as numbers; a zero quantum (or an empty list)
    returns the first argument unchanged, whatever it is."""
    timed = type(original) in (AbsTime, RelTime) or type(quantum) in (AbsTime, RelTime)
    value, quantum = time_number(original), time_number(quantum)
    if timed:  # observed: times make the arithmetic real
        value = float(value) if is_number(value) else value
        quantum = float(quantum) if is_number(quantum) else quantum
    if type(value) is str:
        value = _real(value)
    if type(quantum) is str:
        quantum = _real(quantum)
    if not is_numeric(value):
        return Error
    # Observed: a quantum within 1e-8 of zero counts as zero (quantize(3, 1e-9) is 3,
    # quantize(3, 1.1e-8) is 3.000000003).
    if quantum == () or (is_numeric(quantum) and abs(quantum) <= _ZERO_QUANTUM):
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
