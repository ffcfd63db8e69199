"""Arguments and environments (the submit language's V1/V2 syntaxes)."""

from __future__ import annotations

from collections.abc import Callable

from cedar.classad_wire.builtins.registry import FUNCTIONS, Function, register, strict_function
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.operators import (
    Context,
    Scope,
    Value,
)
from cedar.classad_wire.values import Error, Undefined

_ARG_SPECIAL = frozenset(" \t'\"")


def _quote_arg(arg: str) -> str:
    """One argument in the V2 syntax: runs of blanks/quotes wrapped in '...', ' doubled."""
    if not arg:
        return "''"
    out: list[str] = []
    pos = 0
    while pos < len(arg):
        if arg[pos] in " \t'":
            end = pos
            while end < len(arg) and arg[end] in " \t'":
                end += 1
            out.append("'" + arg[pos:end].replace("'", "''") + "'")
            pos = end
        else:
            out.append(arg[pos])
            pos += 1
    return "".join(out)


def _versioned(function: Callable[[Value, int], Value]) -> Function:
    """``f(value)`` or ``f(value, version)``: the version (1 or 2, the V1 or V2 syntax) is
    evaluated first, and anything else is Error before ``value`` is evaluated (observed)."""

    def call(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
        if len(args) not in (1, 2):
            return Error
        version = 2
        if len(args) == 2:
            given = ev.eval(args[1], scope)
            if type(given) is not int or given not in (1, 2):
                return Error
            version = given
        value = ev.eval(args[0], scope)
        if value is Undefined or value is Error:
            return Error
        return function(value, version)

    return call


def _list_to_args(items: Value, version: int) -> Value:
    if not isinstance(items, tuple) or any(type(item) is not str for item in items):
        return Error
    if version == 1:
        # V1: blank-separated, no quoting (observed: an item with a blank is Error).
        if any(any(ch in item for ch in " \t") for item in items):
            return Error
        return " ".join(items)
    return " ".join(_quote_arg(item) for item in items)


FUNCTIONS["listtoargs"] = _versioned(_list_to_args)


def _split_args(text: str) -> list[str] | None:
    """V2 arguments: blanks separate, '...' quotes (with '' for a quote); None if unbalanced."""
    args: list[str] = []
    current: list[str] = []
    in_arg = False
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch in " \t\n\r":
            if in_arg:
                args.append("".join(current))
                current, in_arg = [], False
            pos += 1
            continue
        in_arg = True
        if ch == "'":
            pos += 1
            while True:
                if pos >= len(text):
                    return None
                if text[pos] == "'":
                    if text[pos + 1 : pos + 2] == "'":
                        current.append("'")
                        pos += 2
                        continue
                    pos += 1
                    break
                current.append(text[pos])
                pos += 1
            continue
        current.append(ch)
        pos += 1
    if in_arg:
        args.append("".join(current))
    return args


def _args_to_list(text: Value, version: int) -> Value:
    if type(text) is not str:
        return Error
    if version == 1:
        return tuple(text.split())  # V1: blanks separate, quotes are plain characters
    args = _split_args(text)
    return Error if args is None else tuple(args)


FUNCTIONS["argstolist"] = _versioned(_args_to_list)


def _env_v2(pairs: list[tuple[str, str]]) -> str:
    return " ".join(_quote_arg(f"{name}={value}") for name, value in pairs)


def _parse_env_v2(text: str) -> list[tuple[str, str]] | None:
    args = _split_args(text)
    if args is None or any("=" not in arg for arg in args):
        return None
    return [(name, value) for name, _, value in (arg.partition("=") for arg in args)]


@strict_function("envV1ToV2", arity=(1, 1))
def _env_v1_to_v2(text: Value) -> Value:
    if type(text) is not str:
        return Error
    pairs = []
    for item in text.split(";"):
        if item:
            name, equals, value = item.partition("=")
            if not equals:
                return Error
            pairs.append((name, value))
    return _env_v2(pairs)


@register("mergeEnvironment")
def _merge_environment(ev: Context, args: tuple[Expr, ...], scope: Scope) -> Value:
    merged: dict[str, str] = {}
    for arg in args:
        value = ev.eval(arg, scope)
        if value is Undefined:
            continue
        if type(value) is not str:
            return Error
        pairs = _parse_env_v2(value)
        if pairs is None:
            return Error
        for name, text in pairs:
            merged[name] = text
    return _env_v2(sorted(merged.items()))  # observed: sorted by name
