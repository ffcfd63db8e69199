"""String functions (strcat, substr, strcmp, toUpper, size, member, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from cedar.classad_wire.builtins.registry import register, strict_function
from cedar.classad_wire.expr import Expr, RecordExpr, fold
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
    compare,
    identical,
    to_string,
)
from cedar.classad_wire.values import Error, Undefined


@register("strcat")
def _strcat(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    values = []
    for arg in args:  # the first undefined/error argument decides; the rest is not evaluated
        value = ev.eval(arg, scope)
        if value is Undefined or value is Error:
            return value
        values.append(value)
    result = "".join(to_string(v) for v in values)
    ev.charge(len(result))
    return result


_Sliceable = TypeVar("_Sliceable", str, bytes)


@strict_function("substr", arity=(2, 3))
def _substr(text: Value, offset: Value, length: Value = None) -> Value:
    if type(text) is not str or type(offset) is not int:
        return Error
    if length is not None and type(length) is not int:
        return Error
    if not text.isascii():
        # Observed: offsets count UTF-8 bytes (as size() does); a cut inside a character
        # keeps the bytes (held as surrogate escapes, like other invalid UTF-8 text).
        data = text.encode("utf-8", "surrogateescape")
        part = _cut(data, offset, length)
        return part.decode("utf-8", "surrogateescape")
    return _cut(text, offset, length)


def _cut(text: _Sliceable, offset: int, length: int | None) -> _Sliceable:
    size = len(text)
    start = offset if offset >= 0 else max(size + offset, 0)
    if start > size:
        return text[:0]
    if length is None:
        return text[start:]
    end = start + length if length >= 0 else size + length
    return text[start:end] if end > start else text[:0]


def _cmp(a: str, b: str) -> int:
    return (a > b) - (a < b)


@strict_function("strcmp", arity=(2, 2))
def _strcmp(a: Value, b: Value) -> Value:
    return _cmp(to_string(a), to_string(b))


@strict_function("stricmp", arity=(2, 2))
def _stricmp(a: Value, b: Value) -> Value:
    return _cmp(fold(to_string(a)), fold(to_string(b)))


@strict_function("toUpper", arity=(1, 1))
def _to_upper(value: Value) -> Value:
    text = to_string(value)
    return (
        text.upper() if text.isascii() else "".join(c.upper() if c.isascii() else c for c in text)
    )


@strict_function("toLower", arity=(1, 1))
def _to_lower(value: Value) -> Value:
    return fold(to_string(value))


@strict_function("size", arity=(1, 1))
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


strict_function("member", arity=(2, 2))(_member_of(lambda a, b: compare("==", a, b)))


@register("identicalMember")
def _identical_member(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    """Not strict: ``identicalMember(undefined, {undefined})`` is true (observed)."""
    if len(args) != 2:
        return Error
    item, items = ev.eval(args[0], scope), ev.eval(args[1], scope)
    if items is Undefined:
        return Undefined
    if not isinstance(items, tuple):
        return Error
    if isinstance(item, tuple | Scope):
        return Error
    return any(identical(item, element) is True for element in items)
