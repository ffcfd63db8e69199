"""The registry of built-in functions (lower-case name to implementation) and its two decorators."""

from __future__ import annotations

from collections.abc import Callable

from cedar.classad_wire.expr import Expr
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
)
from cedar.classad_wire.values import Error, Undefined

Function = Callable[[Context, tuple[Expr, ...], Scope], Value]
FUNCTIONS: dict[str, Function] = {}


def register(*names: str) -> Callable[[Function], Function]:
    def decorate(function: Function) -> Function:
        for name in names:
            FUNCTIONS[name.lower()] = function
        return function

    return decorate


def strict_function(
    *names: str,
    arity: tuple[int, int],
    undefined_is_error: bool = False,
    count_after: bool = False,
) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    """Register a function of evaluated arguments; Error/Undefined arguments propagate.

    Some reference functions (the math ones, ``stringListMember``) turn an undefined argument
    into Error instead (observed); ``undefined_is_error`` selects that.  Most check the number
    of arguments before evaluating any; with ``count_after``, one argument too many is still
    evaluated, so that a failing one fails the evaluation (observed: ``relTime(.X, 1)``
    without an ad fails, ``relTime(.X, 1, 1)`` is Error).
    """

    def decorate(function: Callable[..., Value]) -> Callable[..., Value]:
        def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
            if not arity[0] <= len(args) <= arity[1]:
                if count_after and len(args) == arity[1] + 1:
                    for arg in args:
                        ev.eval(arg, scope)
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
