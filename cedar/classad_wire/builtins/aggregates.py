"""sum, avg, min and max of a list."""

from __future__ import annotations

from cedar.classad_wire.builtins.registry import FUNCTIONS, Function
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
    arith,
    is_number,
)
from cedar.classad_wire.values import Error, Undefined


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
