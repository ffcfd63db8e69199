"""The value semantics below the evaluator: scopes, lists, truth, arithmetic, comparison.

Operators and the built-in functions both use these; the evaluator (:mod:`.evaluate`) walks
expression trees and dispatches to them, and :mod:`.builtins` registers functions on them, so
neither imports the other's helpers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from cedar.classad_wire.expr import INT64_MAX, INT64_MIN, Expr, ListExpr, RecordExpr, fold, to_expr
from cedar.classad_wire.values import (
    AbsTime,
    Error,
    RelTime,
    Undefined,
    format_abstime,
    format_reltime,
)

Value = Any


class Context(Protocol):
    """What a built-in function needs of the evaluator that calls it."""

    def eval(self, node: Expr, scope: Scope) -> Value: ...

    def charge(self, size: int) -> None: ...


class EvaluationFailed(Exception):
    """The whole evaluation fails (classad2 raises "failed to evaluate expression").

    Internal control flow, not a cedar error: :func:`~cedar.classad_wire.evaluate.evaluate`
    turns it into a :class:`~cedar.errors.ClassAdError`.  A list element that fails gives
    Error instead (observed: ``{absTime(0, -1)}[0]``; ``size`` of it is still 1).
    """


class NoTopLevel(EvaluationFailed):
    """An absolute reference (``.X``, ``root`` in a record) met no ad: inside a list the
    element is undefined (observed: ``{.X}[0]``)."""


class _NoAd:
    """The ``source`` of :meth:`Scope.absent` (one object, compared by identity)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_AD"


#: Marks the scope that stands for "no ad" (see :meth:`Scope.absent`).
NO_AD = _NoAd()


def _no_member(key: str) -> Expr | None:
    return None


class Scope:
    """An ad (or nested record) during evaluation: its members, lexical parent and match partner."""

    __slots__ = ("members", "parent", "other", "source")

    def __init__(
        self,
        members: Callable[[str], Expr | None],
        parent: Scope | None,
        source: object,
    ) -> None:
        self.members = members
        self.parent = parent
        self.other: Scope | None = None
        self.source = source

    @classmethod
    def of_ad(cls, ad: Any) -> Scope:
        return cls(ad.get_expr, None, ad)

    @classmethod
    def absent(cls) -> Scope:
        """The scope of an evaluation without an ad: it has no members, ``MY`` is undefined
        there and an absolute reference (``.X``, ``root``) cannot be resolved (observed)."""
        return cls(_no_member, None, NO_AD)

    @classmethod
    def of_record(cls, record: RecordExpr, parent: Scope | None) -> Scope:
        table = {fold(name): value for name, value in record.items()}
        return cls(lambda key: table.get(key), parent, record)

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def without_absent_root(self) -> Scope | None:
        """This scope's chain with an absent ad (:meth:`absent`) at its top cut off: the
        outermost record becomes the top (``None`` when nothing is left).  Observed:
        ``countMatches`` and ``evalInEachContext`` evaluated without an ad see their outermost
        record (or the visited ad itself) as ``root``, where a plain ``.X`` fails."""
        if self.root().source is not NO_AD:
            return self
        if self.source is NO_AD:
            return None
        parent = self.parent.without_absent_root() if self.parent is not None else None
        copy = Scope(self.members, parent, self.source)
        copy.other = self.other
        return copy

    def to_expr(self) -> Expr:
        source = self.source
        if isinstance(source, RecordExpr):
            return source
        return source.to_expr()  # type: ignore[attr-defined, no-any-return]


class ListValue(tuple):  # type: ignore[type-arg]
    """An evaluated list literal; remembers its source so results keep unevaluated elements.

    ``scope`` is set only when evaluating an element cut a reference cycle: the reference
    evaluates an element when it is used, by then the cycle may be gone, so a subscript
    evaluates such an element again (``[a = {a}].a[0]`` is the list ``{a}``, observed).
    """

    source: ListExpr
    scope: Scope | None = None


def wrap(value: int) -> int:
    return ((value - INT64_MIN) & 0xFFFFFFFFFFFFFFFF) + INT64_MIN


def wrap32(value: int) -> int:
    """A 64-bit integer cut to a C ``int`` (two's complement wrap), as the reference stores
    times and list subscripts."""
    return ((value + 2**31) & 0xFFFFFFFF) - 2**31


def trunc(value: float) -> int:
    """C ``(long long)`` of a double on x86-64: out of range (or NaN) gives INT64_MIN."""
    if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
        return INT64_MIN
    return int(value)


def c_int(value: float) -> int:
    """C ``(int)`` of a double as the reference converts times: out of range (or NaN) gives
    INT_MIN (observed: int(relTime(3e9)) is -2147483648)."""
    seconds = trunc(value)
    return seconds if -(2**31) <= seconds < 2**31 else -(2**31)


def is_number(value: Value) -> bool:
    kind = type(value)
    return kind is int or kind is float


def is_numeric(value: Value) -> bool:
    """A number or a boolean: the math functions take booleans as 0/1 (observed)."""
    kind = type(value)
    return kind is int or kind is float or kind is bool


def as_bool(value: Value) -> Value:
    """Truth value for logical operators: True/False, or Undefined/Error."""
    kind = type(value)
    if kind is bool:
        return value
    if kind is int or kind is float:
        return value != 0
    if value is Undefined:
        return Undefined
    return Error


def strict(*values: Value) -> Value | None:
    """Error if any operand is Error, else Undefined if any is Undefined, else None."""
    if any(v is Error for v in values):
        return Error
    if any(v is Undefined for v in values):
        return Undefined
    return None


def arith(op: str, a: Value, b: Value) -> Value:
    bad = strict(a, b)
    if bad is not None:
        return bad
    if isinstance(a, AbsTime | RelTime) or isinstance(b, AbsTime | RelTime):
        return time_arith(op, a, b)
    if type(a) is bool:
        a = int(a)
    if type(b) is bool:
        b = int(b)
    if not (is_number(a) and is_number(b)):
        return Error
    if type(a) is int and type(b) is int:
        if op == "+":
            return wrap(a + b)
        if op == "-":
            return wrap(a - b)
        if op == "*":
            return wrap(a * b)
        if b == 0:
            return Error
        if op == "/":
            if a == INT64_MIN and b == -1:
                return INT64_MAX
            quotient = abs(a) // abs(b)
            return quotient if (a < 0) == (b < 0) else -quotient
        if a == INT64_MIN and b == -1:
            return 0
        remainder = abs(a) % abs(b)  # C's %: exact, with the sign of the dividend
        return remainder if a >= 0 else -remainder
    a, b = float(a), float(b)
    if op == "%":
        return Error
    if op == "+":
        result = a + b
    elif op == "-":
        result = a - b
    elif op == "*":
        result = a * b
    elif b == 0:  # the signs of both count: 1 / -0.0 is -infinity (observed)
        infinity = math.copysign(math.inf, a) * math.copysign(1.0, b)
        result = math.nan if a == 0 or math.isnan(a) else infinity
    else:
        result = a / b
    # The reference reports a result of +infinity as an error (but not -infinity or NaN).
    return Error if result == math.inf else result


def time_arith(op: str, a: Value, b: Value) -> Value:
    ta, tb = type(a), type(b)
    if ta is AbsTime and tb is RelTime and op in "+-":
        delta = trunc(b.seconds)
        return AbsTime(a.seconds + delta if op == "+" else a.seconds - delta, a.offset)
    if ta is RelTime and tb is AbsTime and op == "+":
        return AbsTime(b.seconds + trunc(a.seconds), b.offset)
    if ta is AbsTime and tb is AbsTime and op == "-":
        return RelTime(float(a.seconds - b.seconds))
    if ta is RelTime and tb is RelTime and op in "+-":
        return RelTime(a.seconds + b.seconds if op == "+" else a.seconds - b.seconds)
    if ta is RelTime and is_number(b) and op in "*/":
        if op == "/" and b == 0:
            return Error
        return RelTime(a.seconds * b if op == "*" else a.seconds / b)
    if tb is RelTime and is_number(a) and op == "*":
        return RelTime(a * b.seconds)
    return Error


def compare(op: str, a: Value, b: Value) -> Value:
    bad = strict(a, b)
    if bad is not None:
        return bad
    if type(a) is bool:
        a = int(a)
    if type(b) is bool:
        b = int(b)
    if type(a) is str and type(b) is str:
        a, b = fold(a), fold(b)
    elif is_number(a) and is_number(b):
        pass
    elif type(a) is type(b) and type(a) in (AbsTime, RelTime):
        a, b = a.seconds, b.seconds
    else:
        return Error
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


def identical(a: Value, b: Value) -> Value:
    """``=?=``: same type and value; strings case-sensitive; two lists or two ads are an error."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return Error
    if isinstance(a, Scope) and isinstance(b, Scope):
        return Error
    if type(a) is not type(b) and not (isinstance(a, tuple) and isinstance(b, tuple)):
        return False
    if type(a) is AbsTime:
        return bool(a.seconds == b.seconds)
    return bool(a is b or a == b)


def bitwise(op: str, a: Value, b: Value) -> Value:
    bad = strict(a, b)
    if bad is not None:
        return bad
    if type(a) is not int or type(b) is not int:
        return Error
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    shift = b & 63
    if op == "<<":
        return wrap(a << shift)
    if op == ">>":
        if a >= 0:
            return a >> shift
        # Observed (a C shift whose count is not masked for a negative number): a count <= 0
        # leaves it, a count >= 64 gives -1.
        return a if b <= 0 else a >> min(b, 63)
    if not shift:
        return a if a >= 0 else 0  # observed: a negative number >>> 0 is 0
    return (a & 0xFFFFFFFFFFFFFFFF) >> shift


def unary_op(op: str, value: Value) -> Value:
    if value is Error or value is Undefined:
        return value
    kind = type(value)
    if op == "!":
        truth = as_bool(value)
        return truth if truth is Error else not truth
    if op == "~":
        return ~value if kind is int else Error
    if op == "-":
        if kind is int:
            return wrap(-value)
        if kind is float:
            return -value
        if kind is RelTime:
            return RelTime(-value.seconds)
        return Error
    return value if kind in (int, float, RelTime) else Error


# --- conversion to Python -----------------------------------------------------------------


def to_python(value: Value) -> Any:
    """A runtime value as the Python value callers see (tuples → lists, scopes → ClassAd).

    A list literal keeps its non-literal elements as expressions, like the reference bindings.
    """
    if isinstance(value, ListValue):
        return value.source.value()
    if isinstance(value, tuple):
        return [to_python(item) for item in value]
    if isinstance(value, Scope):
        source = value.source
        if isinstance(source, RecordExpr):
            return source.value()
        return source
    return value


def value_to_expr(value: Value) -> Expr:
    """A runtime value as an expression (for ``string()`` and friends).

    A list literal prints as written (``string({A})`` is ``"{ A }"``, as in the reference).
    """
    if isinstance(value, ListValue) and getattr(value, "source", None) is not None:
        return value.source
    if isinstance(value, tuple):
        return ListExpr(value_to_expr(v) for v in value)
    if isinstance(value, Scope):
        return value.to_expr()
    return to_expr(value)


def to_string(value: Value) -> str:
    """``string()`` of a value: strings as is, everything else printed in new syntax."""
    kind = type(value)
    if kind is str:
        text: str = value
        return text
    if kind is AbsTime:
        return format_abstime(value)
    if kind is RelTime:  # observed: whole seconds (string(relTime(2.5)) is "02")
        return format_reltime(float(trunc(value.seconds)))
    return value_to_expr(value).unparse(old=False)


__all__ = [
    "Context",
    "EvaluationFailed",
    "ListValue",
    "NoTopLevel",
    "NO_AD",
    "Scope",
    "Value",
    "arith",
    "as_bool",
    "bitwise",
    "compare",
    "identical",
    "is_number",
    "is_numeric",
    "strict",
    "time_arith",
    "to_python",
    "to_string",
    "trunc",
    "unary_op",
    "value_to_expr",
    "wrap",
]
