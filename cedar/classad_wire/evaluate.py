"""Evaluating ClassAd expressions with old-ClassAd semantics (spec 02 §8).

Runtime values are Python scalars, ``Undefined``/``Error``, :class:`AbsTime`/:class:`RelTime`,
tuples (evaluated lists) and :class:`Scope` objects (ads, nested records).  Attribute
references are resolved lexically (record, enclosing records, the ad) and then, inside a
match, in the target ad; a reference cycle evaluates to ``Undefined`` (spec 02 §10 item 4).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cedar.classad_wire.expr import (
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
)
from cedar.classad_wire.operators import (
    NO_AD,
    EvaluationFailed,
    ListValue,
    NoTopLevel,
    Scope,
    Value,
    arith,
    as_bool,
    bitwise,
    compare,
    identical,
    strict,
    to_python,
    to_string,
    unary_op,
    wrap32,
)
from cedar.classad_wire.syntax import parse_expr
from cedar.classad_wire.values import (
    Error,
    RelTime,
    Undefined,
)
from cedar.errors import ClassAdError, EvaluationBudgetExceeded

if TYPE_CHECKING:
    from cedar.classad_wire.builtins.registry import Function

#: The built-in functions by lower-case name (:mod:`cedar.classad_wire.builtins`), imported when
#: the first call is evaluated: a client that only moves ads (``cedar ping``, a handshake)
#: never pays the ~5 ms their modules take to import.
_functions: dict[str, Function] | None = None


def _builtin(name: str) -> Function | None:
    global _functions
    if _functions is None:
        from cedar.classad_wire.builtins import FUNCTIONS

        _functions = FUNCTIONS
    return _functions.get(name)


#: Nested attribute evaluations deeper than this give Error instead of exhausting the stack.
MAX_REFERENCE_DEPTH = 150
#: Work budget of one evaluation (a node is one unit, string functions pay per 64 bytes); past
#: it every node gives Error, so ``a1 = a0 + a0; a2 = a1 + a1; ...`` cannot run for hours.
MAX_EVAL_STEPS = 1_000_000
_BYTES_PER_STEP = 64
#: How often (in steps) an evaluation with a :class:`Budget` looks at the clock.
_CLOCK_EVERY = 1024


_ARITH = frozenset("+-*/%")
_COMPARE = frozenset(("==", "!=", "<", "<=", ">", ">="))
_SPECIAL = frozenset(("my", "self", "target", "other", "parent", "root", "toplevel"))


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

    __slots__ = ("active", "steps", "limit", "deadline", "clock", "timed_out", "cut")

    def __init__(self, budget: Budget | None = None) -> None:
        self.active: list[tuple[int, str]] = []
        #: Whether a reference cycle was cut (flattening such an expression fails, observed).
        self.cut = False
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
        if marker in self.active:
            self.cut = True
            return Undefined
        if len(self.active) >= MAX_REFERENCE_DEPTH:
            return Error
        self.active.append(marker)
        try:
            return self.eval(expr, scope)
        finally:
            self.active.pop()

    def _special(self, key: str, scope: Scope) -> Value:
        if key in ("my", "self"):
            return Undefined if scope.source is NO_AD else scope
        if key == "target" or key == "other":
            other = scope.root().other
            return Undefined if other is None else other
        if key == "parent":
            parent = scope.parent
            return Undefined if parent is None or parent.source is NO_AD else parent
        # Observed: without an ad, a bare ``root`` is undefined; from inside a record it fails.
        return Undefined if scope.source is NO_AD else _top(scope)

    def reference(self, name: str, scope: Scope, absolute: bool = False) -> Value:
        key = fold(name)
        if absolute:
            root = _top(scope)
            found = self._member(root, key)
            if found is None and key in _SPECIAL:
                return self._special(key, root)  # observed: .self is the ad
            return Undefined if found is None else found
        current: Scope | None = scope
        while current is not None:
            found = self._member(current, key)
            if found is not None:
                return found
            current = current.parent
        if key in _SPECIAL:
            # Observed: an attribute named like a scope (target, self, parent...) hides it.
            return self._special(key, scope)
        # Observed: only a reference made at an ad's top level (or in the ads countMatches and
        # evalInEachContext visit) falls through to the match partner; inside a nested record
        # the lexical scopes are all there is.
        other = scope.other
        if other is not None:
            found = self._member(other, key)
            if found is not None:
                return found
        if key == "currenttime":
            return int(time.time())
        return Undefined

    def select(self, base: Value, name: str) -> Value:
        if isinstance(base, Scope):
            # Observed: a name a nested ad lacks is looked up in its enclosing scopes
            # ([x = 1; B = [].x] gives B = 1).
            key = fold(name)
            if key in _SPECIAL and base.members(key) is None:
                return self._special(key, base)  # observed: x.self is x, x.parent its parent
            current: Scope | None = base
            while current is not None:
                found = self._member(current, key)
                if found is not None:
                    return found
                current = current.parent
            return Undefined
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
                value = node.val  # type: ignore[attr-defined]
                # Observed: a relTime("...") literal evaluates to a real (isReal is true).
                return value if type(value) is not RelTime else value.seconds
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
                raw = self.eval(node.cond, scope)
                cond = as_bool(raw)
                if cond is Undefined or cond is Error:
                    if cond is Error and raw is not Error:
                        self._both_arms(node, scope)
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
                cut, self.cut = self.cut, False
                try:
                    result = ListValue(self.eval(item, scope) for item in node.items)
                except EvaluationFailed:
                    result = ListValue(self._item(item, scope) for item in node.items)
                result.source = node
                if self.cut:
                    result.scope = scope  # an element met a cycle: evaluated again when used
                else:
                    self.cut = cut
                return result
            if kind is RecordExpr:
                assert isinstance(node, RecordExpr)
                return Scope.of_record(node, scope)
            if kind is Call:
                assert isinstance(node, Call)
                function = _builtin(node.name.lower())
                if function is None:
                    return Error
                return function(self, node.args, scope)
            raise TypeError(f"cannot evaluate {kind.__name__}")

    def _both_arms(self, node: Ternary, scope: Scope) -> None:
        """A condition that is not a truth value (a string, list, ad or time) is Error, but
        classad2 still evaluates what follows it, so a failure there fails the whole
        evaluation (observed: ``"a" ? 1 : .X`` and ``"a" && .X`` fail without an ad, where
        ``error ? .X : 1`` is Error)."""
        self.eval(node.then, scope)
        self.eval(node.orelse, scope)

    def _item(self, item: Expr, scope: Scope) -> Value:
        """A list element whose evaluation fails: undefined for an absolute reference without
        an ad, else Error (observed: ``{.X}[0]``, ``{absTime(0, -1)}[0]``; ``.X`` alone
        fails)."""
        try:
            return self.eval(item, scope)
        except NoTopLevel:
            return Undefined
        except EvaluationFailed:
            return Error

    def _binary(self, node: Binary, scope: Scope) -> Value:
        # Walk the left spine iteratively: long left-associative chains are common.
        spine: list[Binary] = []
        left: Expr = node
        while type(left) is Binary:
            spine.append(left)
            left = left.left
        value = self.eval(left, scope)
        for link in reversed(spine):
            value = self._apply(link.op, value, link.right, scope)
        return value

    def _apply(self, op: str, a: Value, right: Expr, scope: Scope) -> Value:
        if op == "&&":
            left = as_bool(a)
            if left is False or left is Error:
                if left is Error and a is not Error:
                    self.eval(right, scope)  # observed: see _both_arms
                return left
            b = as_bool(self.eval(right, scope))
            if b is Error or b is False:
                return b
            return Undefined if left is Undefined or b is Undefined else True
        if op == "||":
            left = as_bool(a)
            if left is True or left is Error:
                if left is Error and a is not Error:
                    self.eval(right, scope)  # observed: see _both_arms
                return left
            b = as_bool(self.eval(right, scope))
            if b is Error or b is True:
                return b
            return Undefined if left is Undefined or b is Undefined else False
        b = self.eval(right, scope)
        if op in _ARITH:
            return arith(op, a, b)
        if op in _COMPARE:
            return compare(op, a, b)
        if op == "=?=":
            return identical(a, b)
        if op == "=!=":
            same = identical(a, b)
            return same if same is Error else not same
        return bitwise(op, a, b)

    def _unary(self, node: Unary, scope: Scope) -> Value:
        ops: list[str] = []
        inner: Expr = node
        while type(inner) is Unary:
            ops.append(inner.op)
            inner = inner.operand
        value = self.eval(inner, scope)
        for op in reversed(ops):
            value = unary_op(op, value)
        return value

    def _subscript(self, base: Value, index: Value) -> Value:
        bad = strict(base, index)
        if bad is not None:
            return bad
        if isinstance(base, tuple) and type(index) is int:
            index = wrap32(index)  # observed: a C int ({1, 2, 3}[4294967297] is 2)
            if not 0 <= index < len(base):
                return Error
            again = getattr(base, "scope", None)
            if again is not None:
                return self.eval(base.source.items[index], again)  # type: ignore[attr-defined]
            return base[index]
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


def _top(scope: Scope) -> Scope:
    """The ad at the top of ``scope``; without an ad there is none, and the reference fails
    the whole evaluation (observed: classad2 raises for ``.X``, ``[a = root].a`` or
    ``[a = .b].a`` evaluated without an ad, while ``MY`` and ``parent`` are undefined)."""
    root = scope.root()
    if root.source is NO_AD:
        raise NoTopLevel
    return root


def evaluate(
    expr: Expr | str, my: Any = None, target: Any = None, *, budget: Budget | None = None
) -> Any:
    """Evaluate an expression (text is parsed as new syntax) in ``my`` against ``target``.

    With a ``budget``, the work is charged to it and :class:`EvaluationBudgetExceeded` is
    raised once it is spent (instead of quietly giving ``Error``).  Without ``my``, an
    absolute reference (``.X``, ``root``) raises :class:`~cedar.errors.ClassAdError`, as the
    reference's evaluation fails.
    """
    if isinstance(expr, str):
        expr = parse_expr(expr)
    # No ad: a scope without members stands in (``MY`` is undefined there, ``.X`` fails).
    my_scope = Scope.of_ad(my) if my is not None else Scope.absent()
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
    except NoTopLevel:
        raise ClassAdError(
            "cannot evaluate an absolute reference (.name, root, toplevel) without an ad"
        ) from None
    except EvaluationFailed as exc:
        raise ClassAdError(f"cannot evaluate the expression: {exc}") from None
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


__all__ = ["Evaluator", "Scope", "evaluate", "identical", "to_python", "to_string"]
