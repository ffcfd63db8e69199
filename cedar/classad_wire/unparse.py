"""Printing expression trees in the wire ("old") and the new syntax (spec 02 §6).

The printer adds no parentheses of its own (the tree keeps the ones that were parsed) and walks
operator chains with loops, so the only recursion is into genuinely nested sub-expressions.
"""

from __future__ import annotations

import math
import re

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
    to_expr,
)
from cedar.classad_wire.syntax import is_identifier
from cedar.classad_wire.values import (
    AbsTime,
    ErrorType,
    RelTime,
    UndefinedType,
    format_abstime,
    format_reltime,
)

#: Names that must be quoted even though they look like identifiers (§6 "Name quoting").
_RESERVED_NAMES = frozenset(("error", "false", "is", "isnt", "parent", "true", "undefined"))
_PRINTABLE = re.compile(r"[ !#-\[\]-~]*")
_NAMED_ESCAPES = {
    0x22: '\\"',
    0x5C: "\\\\",
    0x07: "\\a",
    0x08: "\\b",
    0x0C: "\\f",
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
    0x0B: "\\v",
}
_NEW_OPS = {"=?=": " is ", "=!=": " isnt "}


def format_real(value: float, old: bool) -> str:
    """``%.16G`` (+ ``.0``) in wire syntax, ``%1.15E`` in new syntax; specials as ``real()``."""
    if value == 0:
        return f"{value:.1f}"
    if math.isnan(value):
        return 'real("NaN")'
    if math.isinf(value):
        return 'real("INF")' if value > 0 else 'real("-INF")'
    if not old:
        return f"{value:1.15E}"
    text = f"{value:.16G}"
    if "." not in text and "E" not in text and "e" not in text:
        text += ".0"
    return text


def quote_string(value: str, old: bool, quote: str = '"') -> str:
    """A string (or, with ``quote="'"``, a name) as a quoted token of the dialect."""
    if old:
        return quote + value.replace(quote, "\\" + quote) + quote
    if quote == '"' and _PRINTABLE.fullmatch(value):
        return quote + value + quote
    out = [quote]
    for byte in value.encode("utf-8", "surrogateescape"):
        if byte == ord(quote):
            out.append("\\" + quote)
        elif 0x20 <= byte < 0x7F and byte != 0x5C:
            out.append(chr(byte))
        else:
            named = _NAMED_ESCAPES.get(byte)
            out.append(named if named is not None else f"\\{byte:03o}")
    out.append(quote)
    return "".join(out)


def format_name(name: str, old: bool) -> str:
    """An attribute name as a token: bare when possible, otherwise ``'quoted'``."""
    if is_identifier(name) and fold(name) not in _RESERVED_NAMES:
        return name
    return quote_string(name, old, "'")


def format_scalar(value: object, old: bool) -> str:
    """The text of a literal value."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))  # an IntEnum's str() is its name on Python 3.10
    if isinstance(value, float):
        return format_real(value, old)
    if isinstance(value, str):
        return quote_string(value, old)
    if isinstance(value, UndefinedType):
        return "undefined"
    if isinstance(value, ErrorType):
        return "error"
    if isinstance(value, AbsTime):
        return f'absTime("{format_abstime(value)}")'
    if isinstance(value, RelTime):
        return f'relTime("{format_reltime(value.seconds)}")'
    raise TypeError(f"not a ClassAd literal: {value!r}")


def _emit(node: Expr, out: list[str], old: bool, indent: int | None = None) -> None:
    """Append ``node``'s text; with an ``indent``, lists and ads take the multi-line layout."""
    while True:
        kind = type(node)
        if kind is Literal:
            out.append(format_scalar(node.val, old))  # type: ignore[attr-defined]
            return
        if kind is AttrRef:
            assert isinstance(node, AttrRef)
            if node.absolute:
                out.append(".")
            out.append(format_name(node.name, old))
            return
        if kind is Binary:
            assert isinstance(node, Binary)
            spine: list[Binary] = []
            left: Expr = node
            while type(left) is Binary:
                spine.append(left)
                left = left.left
            _emit(left, out, old, indent)
            for link in reversed(spine[1:]):
                out.append(f" {link.op} " if old else _NEW_OPS.get(link.op, f" {link.op} "))
                _emit(link.right, out, old, indent)
            out.append(f" {node.op} " if old else _NEW_OPS.get(node.op, f" {node.op} "))
            node = node.right
            continue
        if kind is Unary:
            assert isinstance(node, Unary)
            out.append(" " + node.op)
            node = node.operand
            continue
        if kind is Paren:
            assert isinstance(node, Paren)
            out.append("(")
            _emit(node.inner, out, old, indent)
            out.append(")")
            return
        if kind is Select:
            assert isinstance(node, Select)
            _emit(node.base, out, old, indent)
            out.append("." + node.name)  # unquoted, as the reference prints it
            return
        if kind is Subscript:
            assert isinstance(node, Subscript)
            _emit(node.base, out, old, indent)
            out.append("[")
            _emit(node.index, out, old, indent)
            out.append("]")
            return
        if kind is Ternary:
            assert isinstance(node, Ternary)
            _emit(node.cond, out, old, indent)
            out.append(" ? ")
            _emit(node.then, out, old, indent)
            out.append(" : ")
            node = node.orelse
            continue
        if kind is Elvis:
            assert isinstance(node, Elvis)
            _emit(node.left, out, old, indent)
            out.append(" ?: ")
            node = node.right
            continue
        if kind is Call:
            assert isinstance(node, Call)
            out.append(node.name + "(")
            _emit_joined(node.args, ",", out, old, indent)
            out.append(")")
            return
        if kind is ListExpr:
            assert isinstance(node, ListExpr)
            if indent is not None:
                _emit_pretty_list(node, out, old, indent)
                return
            out.append("{ ")
            _emit_joined(node.items, ",", out, old)
            out.append(" }")
            return
        if kind is RecordExpr:
            assert isinstance(node, RecordExpr)
            if indent is not None:
                _emit_pretty_record(node, out, old, indent)
                return
            out.append("[ ")
            for i, (name, value) in enumerate(node.items()):
                if i:
                    out.append("; ")
                out.append(format_name(name, old) + " = ")
                _emit(value, out, old)
            out.append(" ]")
            return
        raise TypeError(f"cannot print {kind.__name__}")


def _emit_joined(
    items: tuple[Expr, ...], sep: str, out: list[str], old: bool, indent: int | None = None
) -> None:
    for i, item in enumerate(items):
        if i:
            out.append(sep)
        _emit(item, out, old, indent)


def _emit_pretty_list(node: ListExpr, out: list[str], old: bool, indent: int) -> None:
    """The reference's layout (observed): braces on their own lines 3 columns in, one item per
    line 6 columns in (nested lists and ads indent from there)."""
    pad, inner = " " * (indent + 3), indent + 6
    out.append("\n" + pad + "{")
    for i, item in enumerate(node.items):
        out.append(",\n" if i else "\n")
        out.append(" " * inner)
        _emit(item, out, old, inner)
    out.append("\n" + pad + "}")


def _emit_pretty_record(node: RecordExpr, out: list[str], old: bool, indent: int) -> None:
    """Brackets on their own lines 4 columns in, one ``name = value`` per line 8 columns in,
    ``"; "`` after all but the last (observed)."""
    pad, inner = " " * (indent + 4), indent + 8
    out.append("\n" + pad + "[")
    for i, (name, value) in enumerate(node.items()):
        out.append("; \n" if i else "\n")
        out.append(" " * inner + format_name(name, old) + " = ")
        _emit(value, out, old, inner)
    out.append("\n" + pad + "]")


def unparse(value: object, old: bool = False, pretty: bool = False) -> str:
    """Print an expression (or a Python value) in new syntax, or wire syntax with ``old=True``.

    ``pretty`` is the reference's multi-line layout of lists and ads (its ``unparse()``
    function and ``str()`` of an ad); the rest of the expression stays on its line.
    """
    node = to_expr(value)
    if type(node) is Literal:
        return format_scalar(node.val, old)
    out: list[str] = []
    _emit(node, out, old, 0 if pretty else None)
    return "".join(out)


__all__ = ["format_name", "format_real", "format_scalar", "quote_string", "unparse"]
