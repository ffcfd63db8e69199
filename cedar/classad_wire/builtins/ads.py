"""Names, lists of ads, comparisons, unparse and eval."""

from __future__ import annotations

from cedar.classad_wire.builtins.registry import FUNCTIONS, Function, register, strict_function
from cedar.classad_wire.expr import AttrRef, Expr, Select, fold
from cedar.classad_wire.operators import (
    NO_AD,
    Context,
    EvaluationFailed,
    Scope,
    Value,
    as_bool,
    compare,
    identical,
)
from cedar.classad_wire.unparse import unparse
from cedar.classad_wire.values import AbsTime, Error, RelTime, Undefined


def _split_at(text: str, first_is_user: bool) -> tuple[str, str]:
    before, at, after = text.partition("@")
    if at:
        return before, after
    return (text, "") if first_is_user else ("", text)


@strict_function("splitUserName", arity=(1, 1), undefined_is_error=True)
def _split_user_name(text: Value) -> Value:
    return _split_at(text, True) if type(text) is str else Error


@strict_function("splitSlotName", arity=(1, 1), undefined_is_error=True)
def _split_slot_name(text: Value) -> Value:
    return _split_at(text, False) if type(text) is str else Error


_COMPARE_OPS = {"<": "<", "<=": "<=", "==": "==", "!=": "!=", ">=": ">=", ">": ">"}


def _list_compare(want_all: bool) -> Function:
    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        if len(args) != 3:
            return Error
        # Observed: each argument is evaluated only once the ones before it are usable.
        op = ev.eval(args[0], scope)
        if op is Undefined:
            return Undefined
        if type(op) is not str:
            return Error
        name = fold(op)
        if name not in _COMPARE_OPS and name not in ("is", "isnt"):
            return Error
        items = ev.eval(args[1], scope)
        if items is Undefined:
            return Undefined
        if not isinstance(items, tuple):
            return Error
        value = ev.eval(args[2], scope)
        for item in items:
            if name == "is":
                result = identical(item, value)
            elif name == "isnt":
                same = identical(item, value)
                result = same if same is Error else not same
            elif value is Undefined:
                result = Error if item is Error else Undefined
            else:
                result = compare(_COMPARE_OPS[name], item, value)
            if result is Error:
                return Error
            if want_all and result is not True:
                return False
            if not want_all and result is not False:
                # Observed: an undefined comparison ends anyCompare too, with false.
                return result is True
        return want_all

    return call


FUNCTIONS["anycompare"] = _list_compare(want_all=False)
FUNCTIONS["allcompare"] = _list_compare(want_all=True)


@register("countMatches")
def _count_matches(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """The ads of the list in which the first argument (an expression) evaluates to true."""
    if len(args) != 2:
        return Error
    try:
        items = ev.eval(args[1], scope)
    except EvaluationFailed:
        return 0  # observed: a list that fails to evaluate counts nothing
    if items is Undefined:
        return 0
    if not isinstance(items, tuple):
        return Error
    count = 0
    for item in items:
        if isinstance(item, Scope):
            inner = Scope(item.members, scope.without_absent_root(), item.source)
            inner.other = scope.root().other  # observed: still sees the match partner
            if as_bool(ev.eval(args[0], inner)) is True:
                count += 1
    return count


@register("evalInEachContext")
def _eval_in_each_context(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) != 2:
        return Error
    try:
        contexts = ev.eval(args[1], scope)
    except EvaluationFailed:
        return Undefined  # observed: as for countMatches
    if contexts is Undefined or contexts is Error:
        return contexts
    if not isinstance(contexts, tuple):
        return Error
    expr = _named_expr(ev, args[0], scope) or args[0]
    results = []
    for context in contexts:
        if not isinstance(context, Scope):
            results.append(Undefined if context is Undefined else Error)
            continue
        inner = Scope(context.members, scope.without_absent_root(), context.source)
        inner.other = scope.root().other  # observed: still sees the match partner
        results.append(ev.eval(expr, inner))
    return tuple(results)


def _named_expr(ev: Context, arg: Expr, scope: Scope) -> Expr | None:
    """The expression an attribute reference names where the call is made (the caller's
    scopes, then its match partner): ``evalInEachContext`` evaluates that in each context
    (observed: in ``[x = k * 2]``, ``evalInEachContext(x, {[k = 5]})`` is ``{10}``, as is
    ``MY.x``; ``(x)`` is ``{2}``)."""
    if isinstance(arg, AttrRef):
        if arg.absolute:
            root = scope.root()
            return None if root.source is NO_AD else root.members(fold(arg.name))
        found = _lookup_expr(scope, arg.name)
        if found is None and scope.other is not None:
            found = scope.other.members(fold(arg.name))
        return found
    if isinstance(arg, Select):
        try:
            base = ev.eval(arg.base, scope)
        except EvaluationFailed:
            return None
        if isinstance(base, Scope):
            return _lookup_expr(base, arg.name)
    return None


@register("unparse")
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


@register("debug")
def _debug(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    return ev.eval(args[0], scope) if len(args) == 1 else Error


@register("eval")
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
        return ev.eval(parse_expr(text, open_comment=True), scope)
    except ClassAdParseError:
        return Error
