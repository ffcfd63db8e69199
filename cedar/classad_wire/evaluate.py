"""Evaluating ClassAd expressions with old-ClassAd semantics (spec 02 §8).

Runtime values are Python scalars, ``Undefined``/``Error``, :class:`AbsTime`/:class:`RelTime`,
tuples (evaluated lists) and :class:`Scope` objects (ads, nested records).  Attribute
references are resolved lexically (record, enclosing records, the ad) and then, inside a
match, in the target ad; a reference cycle evaluates to ``Undefined`` (spec 02 §10 item 4).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import Any

from cedar.classad_wire.expr import (
    INT64_MAX,
    INT64_MIN,
    AttrRef,
    Binary,
    Call,
    Elvis,
    Expr,
    ListExpr,
    Literal,
    Paren,
    RecordExpr,
    Select,
    Subscript,
    Ternary,
    Unary,
    fold,
    to_expr,
)
from cedar.classad_wire.values import AbsTime, Error, RelTime, Undefined
from cedar.errors import EvaluationBudgetExceeded

#: Nested attribute evaluations deeper than this give Error instead of exhausting the stack.
MAX_REFERENCE_DEPTH = 150
#: Work budget of one evaluation (a node is one unit, string functions pay per 64 bytes); past
#: it every node gives Error, so ``a1 = a0 + a0; a2 = a1 + a1; ...`` cannot run for hours.
MAX_EVAL_STEPS = 1_000_000
_BYTES_PER_STEP = 64
#: How often (in steps) an evaluation with a :class:`Budget` looks at the clock.
_CLOCK_EVERY = 1024

Value = Any


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
    def of_record(cls, record: RecordExpr, parent: Scope | None) -> Scope:
        table = {fold(name): value for name, value in record.items()}
        return cls(lambda key: table.get(key), parent, record)

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def to_expr(self) -> Expr:
        source = self.source
        if isinstance(source, RecordExpr):
            return source
        return source.to_expr()  # type: ignore[attr-defined, no-any-return]


class ListValue(tuple):  # type: ignore[type-arg]
    """An evaluated list literal; remembers its source so results keep unevaluated elements."""

    source: ListExpr


def _wrap(value: int) -> int:
    return ((value - INT64_MIN) & 0xFFFFFFFFFFFFFFFF) + INT64_MIN


def _trunc(value: float) -> int:
    """C ``(long long)`` of a double on x86-64: out of range (or NaN) gives INT64_MIN."""
    if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
        return INT64_MIN
    return int(value)


def _is_number(value: Value) -> bool:
    kind = type(value)
    return kind is int or kind is float


def _is_numeric(value: Value) -> bool:
    """A number or a boolean: the math functions take booleans as 0/1 (observed)."""
    kind = type(value)
    return kind is int or kind is float or kind is bool


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


def _as_bool(value: Value) -> Value:
    """Truth value for logical operators: True/False, or Undefined/Error."""
    kind = type(value)
    if kind is bool:
        return value
    if kind is int or kind is float:
        return value != 0
    if value is Undefined:
        return Undefined
    return Error


def _strict(*values: Value) -> Value | None:
    """Error if any operand is Error, else Undefined if any is Undefined, else None."""
    if any(v is Error for v in values):
        return Error
    if any(v is Undefined for v in values):
        return Undefined
    return None


def _arith(op: str, a: Value, b: Value) -> Value:
    bad = _strict(a, b)
    if bad is not None:
        return bad
    if isinstance(a, AbsTime | RelTime) or isinstance(b, AbsTime | RelTime):
        return _time_arith(op, a, b)
    if type(a) is bool:
        a = int(a)
    if type(b) is bool:
        b = int(b)
    if not (_is_number(a) and _is_number(b)):
        return Error
    if type(a) is int and type(b) is int:
        if op == "+":
            return _wrap(a + b)
        if op == "-":
            return _wrap(a - b)
        if op == "*":
            return _wrap(a * b)
        if b == 0:
            return Error
        if op == "/":
            if a == INT64_MIN and b == -1:
                return INT64_MAX
            quotient = abs(a) // abs(b)
            return quotient if (a < 0) == (b < 0) else -quotient
        if a == INT64_MIN and b == -1:
            return 0
        return int(math.fmod(a, b)) if abs(a) < 2**52 else a - b * int(a / b)
    a, b = float(a), float(b)
    if op == "%":
        return Error
    if op == "+":
        result = a + b
    elif op == "-":
        result = a - b
    elif op == "*":
        result = a * b
    elif b == 0:
        result = math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
    else:
        result = a / b
    # The reference reports a result of +infinity as an error (but not -infinity or NaN).
    return Error if result == math.inf else result


def _time_arith(op: str, a: Value, b: Value) -> Value:
    ta, tb = type(a), type(b)
    if ta is AbsTime and tb is RelTime and op in "+-":
        delta = _trunc(b.seconds)
        return AbsTime(a.seconds + delta if op == "+" else a.seconds - delta, a.offset)
    if ta is RelTime and tb is AbsTime and op == "+":
        return AbsTime(b.seconds + _trunc(a.seconds), b.offset)
    if ta is AbsTime and tb is AbsTime and op == "-":
        return RelTime(float(a.seconds - b.seconds))
    if ta is RelTime and tb is RelTime and op in "+-":
        return RelTime(a.seconds + b.seconds if op == "+" else a.seconds - b.seconds)
    if ta is RelTime and _is_number(b) and op in "*/":
        if op == "/" and b == 0:
            return Error
        return RelTime(a.seconds * b if op == "*" else a.seconds / b)
    if tb is RelTime and _is_number(a) and op == "*":
        return RelTime(a * b.seconds)
    return Error


def _compare(op: str, a: Value, b: Value) -> Value:
    bad = _strict(a, b)
    if bad is not None:
        return bad
    if type(a) is bool:
        a = int(a)
    if type(b) is bool:
        b = int(b)
    if type(a) is str and type(b) is str:
        a, b = fold(a), fold(b)
    elif _is_number(a) and _is_number(b):
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


def _bitwise(op: str, a: Value, b: Value) -> Value:
    bad = _strict(a, b)
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
        return _wrap(a << shift)
    if op == ">>":
        return a >> shift
    return (a & 0xFFFFFFFFFFFFFFFF) >> shift if shift else a


_ARITH = frozenset("+-*/%")
_COMPARE = frozenset(("==", "!=", "<", "<=", ">", ">="))
_SPECIAL = frozenset(("my", "self", "target", "parent", "root", "toplevel"))


class Budget:
    """The evaluation work one request may do, shared by every evaluation made for it.

    A server makes one per request and passes it to each :func:`evaluate` call (one per
    candidate ad), so a cheap-looking constraint cannot cost ``MAX_EVAL_STEPS`` per ad times
    every ad.  ``steps`` and ``seconds`` are totals for the request; ``slice_seconds`` caps one
    single evaluation (what runs without a chance to yield).  Once any is spent, evaluations
    give ``Error`` and :func:`evaluate` raises :class:`EvaluationBudgetExceeded`.
    Thread-compatible (not thread-safe): one request uses it from one thread at a time.
    """

    __slots__ = ("steps_left", "seconds_left", "slice_seconds", "exceeded", "clock")

    def __init__(
        self,
        steps: int = 20_000_000,
        seconds: float = 10.0,
        *,
        slice_seconds: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.steps_left = steps
        self.seconds_left = seconds
        self.slice_seconds = slice_seconds
        self.exceeded: str | None = None
        self.clock = clock

    def __repr__(self) -> str:
        return (
            f"Budget(steps_left={self.steps_left}, seconds_left={self.seconds_left:.3f}, "
            f"exceeded={self.exceeded!r})"
        )

    def check(self) -> None:
        """Raise :class:`EvaluationBudgetExceeded` if the budget is spent."""
        if self.exceeded is not None:
            raise EvaluationBudgetExceeded(self.exceeded)


class Evaluator:
    """One evaluation: tracks attributes under evaluation to cut reference cycles, and counts
    steps against ``limit`` (and, with a :class:`Budget`, a wall-clock ``deadline``)."""

    __slots__ = ("active", "steps", "limit", "deadline", "clock", "timed_out")

    def __init__(self, budget: Budget | None = None) -> None:
        self.active: list[tuple[int, str]] = []
        self.steps = 0
        self.limit = MAX_EVAL_STEPS
        self.deadline: float | None = None
        self.clock: Callable[[], float] = time.monotonic
        self.timed_out = False
        if budget is not None:
            self.limit = max(0, min(MAX_EVAL_STEPS, budget.steps_left))
            self.clock = budget.clock
            self.deadline = self.clock() + min(budget.seconds_left, budget.slice_seconds)

    def child(self) -> Evaluator:
        """An evaluator for another ad's members, on the same budget and deadline."""
        inner = Evaluator()
        inner.steps, inner.limit = self.steps, self.limit
        inner.deadline, inner.clock = self.deadline, self.clock
        return inner

    def charge(self, size: int) -> None:
        """Count string work of ``size`` bytes against the budget."""
        self.steps += size // _BYTES_PER_STEP

    # -- attribute resolution --------------------------------------------------------------
    def _member(self, scope: Scope, key: str) -> Value:
        expr = scope.members(key)
        if expr is None:
            return None
        marker = (id(scope.source), key)
        if marker in self.active or len(self.active) >= MAX_REFERENCE_DEPTH:
            return Undefined if marker in self.active else Error
        self.active.append(marker)
        try:
            return self.eval(expr, scope)
        finally:
            self.active.pop()

    def _special(self, key: str, scope: Scope) -> Value:
        if key in ("my", "self"):
            return scope
        if key == "target":
            other = scope.root().other
            return Undefined if other is None else other
        if key == "parent":
            return Undefined if scope.parent is None else scope.parent
        return scope.root()

    def reference(self, name: str, scope: Scope, absolute: bool = False) -> Value:
        key = fold(name)
        if absolute:
            found = self._member(scope.root(), key)
            return Undefined if found is None else found
        if key in _SPECIAL:
            return self._special(key, scope)
        current: Scope | None = scope
        while current is not None:
            found = self._member(current, key)
            if found is not None:
                return found
            current = current.parent
        other = scope.root().other
        if other is not None:
            found = self._member(other, key)
            if found is not None:
                return found
        if key == "currenttime":
            return int(time.time())
        return Undefined

    def select(self, base: Value, name: str) -> Value:
        if isinstance(base, Scope):
            found = self._member(base, fold(name))
            return Undefined if found is None else found
        if base is Undefined:
            return Undefined
        if isinstance(base, tuple):
            return tuple(self.select(item, name) for item in base)
        return Error

    # -- expressions -----------------------------------------------------------------------
    def eval(self, node: Expr, scope: Scope) -> Value:
        self.steps += 1
        if self.steps > self.limit:
            return Error
        if (
            self.deadline is not None
            and not self.steps % _CLOCK_EVERY
            and self.clock() > self.deadline
        ):
            self.timed_out = True
            self.limit = self.steps - 1  # everything from here on gives Error
            return Error
        while True:
            kind = type(node)
            if kind is Literal:
                return node.val  # type: ignore[attr-defined]
            if kind is Paren:
                node = node.inner  # type: ignore[attr-defined]
                continue
            if kind is AttrRef:
                assert isinstance(node, AttrRef)
                return self.reference(node.name, scope, node.absolute)
            if kind is Binary:
                assert isinstance(node, Binary)
                return self._binary(node, scope)
            if kind is Unary:
                return self._unary(node, scope)  # type: ignore[arg-type]
            if kind is Ternary:
                assert isinstance(node, Ternary)
                cond = _as_bool(self.eval(node.cond, scope))
                if cond is Undefined or cond is Error:
                    return cond
                node = node.then if cond else node.orelse
                continue
            if kind is Elvis:
                assert isinstance(node, Elvis)
                left = self.eval(node.left, scope)
                if left is not Undefined:
                    return left
                node = node.right
                continue
            if kind is Select:
                assert isinstance(node, Select)
                return self.select(self.eval(node.base, scope), node.name)
            if kind is Subscript:
                assert isinstance(node, Subscript)
                return self._subscript(self.eval(node.base, scope), self.eval(node.index, scope))
            if kind is ListExpr:
                assert isinstance(node, ListExpr)
                result = ListValue(self.eval(item, scope) for item in node.items)
                result.source = node
                return result
            if kind is RecordExpr:
                assert isinstance(node, RecordExpr)
                return Scope.of_record(node, scope)
            if kind is Call:
                assert isinstance(node, Call)
                function = FUNCTIONS.get(node.name.lower())
                if function is None:
                    return Error
                return function(self, node.args, scope)
            raise TypeError(f"cannot evaluate {kind.__name__}")

    def _binary(self, node: Binary, scope: Scope) -> Value:
        # Walk the left spine iteratively: long left-associative chains are common.
        spine: list[Binary] = []
        left: Expr = node
        while type(left) is Binary:
            spine.append(left)  # type: ignore[arg-type]
            left = left.left  # type: ignore[attr-defined]
        value = self.eval(left, scope)
        for link in reversed(spine):
            value = self._apply(link.op, value, link.right, scope)
        return value

    def _apply(self, op: str, a: Value, right: Expr, scope: Scope) -> Value:
        if op == "&&":
            left = _as_bool(a)
            if left is False or left is Error:
                return left
            b = _as_bool(self.eval(right, scope))
            if b is Error or b is False:
                return b
            return Undefined if left is Undefined or b is Undefined else True
        if op == "||":
            left = _as_bool(a)
            if left is True or left is Error:
                return left
            b = _as_bool(self.eval(right, scope))
            if b is Error or b is True:
                return b
            return Undefined if left is Undefined or b is Undefined else False
        b = self.eval(right, scope)
        if op in _ARITH:
            return _arith(op, a, b)
        if op in _COMPARE:
            return _compare(op, a, b)
        if op == "=?=":
            return identical(a, b)
        if op == "=!=":
            same = identical(a, b)
            return same if same is Error else not same
        return _bitwise(op, a, b)

    def _unary(self, node: Unary, scope: Scope) -> Value:
        ops: list[str] = []
        inner: Expr = node
        while type(inner) is Unary:
            ops.append(inner.op)  # type: ignore[attr-defined]
            inner = inner.operand  # type: ignore[attr-defined]
        value = self.eval(inner, scope)
        for op in reversed(ops):
            value = _unary_op(op, value)
        return value

    def _subscript(self, base: Value, index: Value) -> Value:
        bad = _strict(base, index)
        if bad is not None:
            return bad
        if isinstance(base, tuple) and type(index) is int:
            return base[index] if 0 <= index < len(base) else Error
        if isinstance(base, Scope) and type(index) is str:
            # Members of an ad value are evaluated in that ad (on the same budget).
            inner = self.child()
            try:
                return inner.select(base, index)
            finally:
                self.steps = inner.steps
                self.limit = inner.limit
                self.timed_out = self.timed_out or inner.timed_out
        return Error


def _unary_op(op: str, value: Value) -> Value:
    if value is Error or value is Undefined:
        return value
    kind = type(value)
    if op == "!":
        truth = _as_bool(value)
        return truth if truth is Error else not truth
    if op == "~":
        return ~value if kind is int else Error
    if op == "-":
        if kind is int:
            return _wrap(-value)
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


def evaluate(
    expr: Expr | str, my: Any = None, target: Any = None, *, budget: Budget | None = None
) -> Any:
    """Evaluate an expression (text is parsed as new syntax) in ``my`` against ``target``.

    With a ``budget``, the work is charged to it and :class:`EvaluationBudgetExceeded` is
    raised once it is spent (instead of quietly giving ``Error``).
    """
    if isinstance(expr, str):
        from cedar.classad_wire.syntax import parse_expr

        expr = parse_expr(expr)
    from cedar.classad_wire.classad import ClassAd

    my_scope = Scope.of_ad(my if my is not None else ClassAd())
    if target is not None:
        target_scope = Scope.of_ad(target)
        my_scope.other = target_scope
        target_scope.other = my_scope
    if budget is not None:
        budget.check()
    evaluator = Evaluator(budget)
    started = evaluator.clock()
    try:
        return to_python(evaluator.eval(expr, my_scope))
    except RecursionError:
        # Each attribute is bounded by the parser's depth limit, but chains of references
        # (up to MAX_REFERENCE_DEPTH) can still multiply that beyond the Python stack.
        return Error
    finally:
        if budget is not None:
            _charge(budget, evaluator, evaluator.clock() - started)


def _charge(budget: Budget, evaluator: Evaluator, elapsed: float) -> None:
    """Deduct one evaluation from its request's budget; note why it ran out, if it did."""
    budget.steps_left -= evaluator.steps
    budget.seconds_left -= elapsed
    if evaluator.timed_out:
        budget.exceeded = (
            f"evaluation exceeded its time budget ({budget.slice_seconds:g} s per ad, "
            "or the request's total)"
        )
    elif budget.steps_left < 0 or evaluator.steps > evaluator.limit:
        budget.exceeded = "evaluation exceeded the request's step budget"
    elif budget.seconds_left < 0:
        budget.exceeded = "evaluation exceeded the request's time budget"
    if budget.exceeded is not None:
        budget.check()


# --- built-in functions -------------------------------------------------------------------

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


def to_string(value: Value) -> str:
    """``string()`` of a value: strings as is, everything else printed in new syntax."""
    if type(value) is str:
        return value
    return value_to_expr(value).unparse(old=False)


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


__all__ = ["FUNCTIONS", "Evaluator", "Scope", "evaluate", "identical", "to_python", "to_string"]
