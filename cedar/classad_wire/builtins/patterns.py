"""Regular-expression functions (a bounded matcher on the UTF-8 bytes, as the reference's PCRE)."""

from __future__ import annotations

from cedar.classad_wire.builtins.registry import FUNCTIONS, Function, register
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
)
from cedar.classad_wire.regex import Pattern, RegexBudgetExceeded, RegexError, compile_pattern
from cedar.classad_wire.values import Error, Undefined


def bytes_text(text: str) -> str:
    """The UTF-8 bytes of ``text`` as a latin-1 string (one character per byte)."""
    return text.encode("utf-8", "surrogateescape").decode("latin-1")


def _from_bytes_text(text: str) -> str:
    return text.encode("latin-1").decode("utf-8", "surrogateescape")


_PATTERNS: dict[tuple[str, str], Pattern | None] = {}
_PATTERNS_MAX = 256


def compiled_pattern(pattern: str, options: str) -> Pattern | None:
    """The compiled pattern (cached), or None when it is not valid."""
    key = (pattern, options)
    if key in _PATTERNS:
        return _PATTERNS[key]
    try:
        compiled: Pattern | None = compile_pattern(bytes_text(pattern), options)
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


@register("regexp")
def _regexp(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) not in (2, 3):
        return Error  # observed: before any argument is evaluated (so none can fail)
    strings = _regex_args([ev.eval(arg, scope) for arg in args], 2)
    if not isinstance(strings, list):
        return strings
    pattern, text, options = strings
    compiled = compiled_pattern(pattern, options)
    if compiled is None:
        return Error
    ev.charge(len(text))
    try:
        return compiled.search(bytes_text(text)) is not None
    except RegexBudgetExceeded:
        return Error


@register("regexpMember")
def _regexp_member(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    if len(args) not in (2, 3):
        return Error  # observed: before any argument is evaluated (so none can fail)
    values = [ev.eval(arg, scope) for arg in args]
    pattern, items = values[0], values[1]
    options = values[2] if len(values) == 3 else ""
    if pattern is Error or items is Error or options is Error:
        return Error
    if pattern is Undefined or items is Undefined or options is Undefined:
        return Undefined
    if type(pattern) is not str or type(options) is not str or not isinstance(items, tuple):
        return Error
    compiled = compiled_pattern(pattern, options)
    if compiled is None:
        return Error
    try:
        for item in items:
            if item is Undefined:
                continue
            if type(item) is not str:
                return Error
            ev.charge(len(item))
            if compiled.search(bytes_text(item)) is not None:
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
        if len(args) not in (3, 4):
            return Error  # observed: before any argument is evaluated (so none can fail)
        strings = _regex_args([ev.eval(arg, scope) for arg in args], 3)
        if not isinstance(strings, list):
            return strings
        pattern, target, template, options = strings
        compiled = compiled_pattern(pattern, options)
        if compiled is None:
            return Error
        text, template = bytes_text(target), bytes_text(template)
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
