"""Functions on comma-separated string lists (stringList*, split, join)."""

from __future__ import annotations

import re
from collections.abc import Callable

from cedar.classad_wire.builtins.patterns import bytes_text, compiled_pattern
from cedar.classad_wire.builtins.registry import FUNCTIONS, Function, register, strict_function
from cedar.classad_wire.expr import Expr, fold
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
    arith,
    to_string,
    wrap,
)
from cedar.classad_wire.regex import RegexBudgetExceeded
from cedar.classad_wire.values import Error, Undefined

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
            if len(args) not in (count, count + 1):
                return Error  # observed: before any argument is evaluated
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
        if len(args) not in (2, 3):
            return Error  # observed: before any argument is evaluated
        values = [ev.eval(arg, scope) for arg in args]
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


@register("stringList_regexpMember")
def _string_list_regexp_member(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if not 2 <= len(args) <= 4:
        return Error  # observed: before any argument is evaluated
    values = [ev.eval(arg, scope) for arg in args]
    if any(type(v) is not str for v in values):
        return Error
    pattern, text = values[0], values[1]
    delims = values[2] if len(values) > 2 else ", "
    options = values[3] if len(values) > 3 else ""
    compiled = compiled_pattern(pattern, options)
    if compiled is None:
        return Error
    if not _string_list(text, delims):
        return Undefined  # observed: an empty list gives undefined
    ev.charge(len(text))
    try:
        return any(
            compiled.search(bytes_text(item)) is not None for item in _string_list(text, delims)
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


@strict_function("split", arity=(1, 2), undefined_is_error=True)
def _split(text: Value, delims: Value = None) -> Value:
    if type(text) is not str or (delims is not None and type(delims) is not str):
        return Error
    if delims == "":
        return (text,) if text else ()
    return tuple(_split_items(text, " ,\t" if delims is None else delims))


@register("join")
def _join(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    values = []
    for arg in args:
        values.append(ev.eval(arg, scope))
        if values[0] is Error:
            return Error  # observed: an error separator stops before the items
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
