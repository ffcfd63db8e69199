"""Hypothesis properties: wire round trips of ads and print/parse round trips of trees."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cedar.classad_wire import ClassAd, Expr, get_classad, parse_expr, put_classad
from cedar.classad_wire.expr import Literal
from cedar.stream.primitives import MessageReader, MessageWriter

from .strategies import ads, expression_text, expression_trees


def _wire_safe(expr: Expr) -> bool:
    """Wire syntax cannot carry a string ending in a backslash inside a larger expression,
    nor one holding a quote followed by LF (spec 02 §10 item 8)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if (
            isinstance(node, Literal)
            and isinstance(node.val, str)
            and (node.val.endswith("\\") or '"\n' in node.val or "\0" in node.val)
        ):
            return False
        stack.extend(node.children())
    return True


@settings(max_examples=150, deadline=None)
@given(ads, st.booleans())
def test_wire_round_trip(ad: ClassAd, crypto: bool) -> None:
    if not all(_wire_safe(ad.lookup(name)) for name in ad):
        return
    writer = MessageWriter(crypto=crypto)
    put_classad(writer, ad)
    reader = MessageReader(writer.getvalue(), crypto=crypto)
    received = get_classad(reader)
    reader.end_of_message()
    assert received == ad


@settings(max_examples=200, deadline=None)
@given(expression_trees)
def test_new_syntax_round_trip(expr: Expr) -> None:
    if any(
        isinstance(n, Literal) and isinstance(n.val, str) and "\0" in n.val for n in _walk(expr)
    ):
        return
    assert parse_expr(str(expr)) == expr


@settings(max_examples=200, deadline=None)
@given(expression_trees)
def test_wire_syntax_round_trip(expr: Expr) -> None:
    if not _wire_safe(expr):
        return
    assert parse_expr(expr.unparse(old=True), old=True) == expr


@settings(max_examples=200, deadline=None)
@given(expression_text)
def test_printing_is_stable(text: str) -> None:
    """print(parse(print(parse(t)))) == print(parse(t)) in both syntaxes."""
    try:
        expr = parse_expr(text)
    except ValueError:
        return
    for old in (False, True):
        first = expr.unparse(old=old)
        again = parse_expr(first, old=old).unparse(old=old)
        assert parse_expr(again, old=old).unparse(old=old) == again


@settings(max_examples=100, deadline=None)
@given(ads)
def test_json_and_long_form_round_trip(ad: ClassAd) -> None:
    if all(_wire_safe(ad.lookup(n)) and "\n" not in ad.raw_text(n) for n in ad):
        assert ClassAd.parse_old(ad.print_old()) == ad
    if all(_json_safe(ad.lookup(n)) for n in ad):
        assert ClassAd.from_json(ad.to_json()) == ad


def _walk(expr: Expr) -> list[Expr]:
    out, stack = [], [expr]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.children())
    return out


def _json_safe(expr: Expr) -> bool:
    # JSON turns undefined into null and error/expressions into strings; reals print with 16
    # significant digits, so only exactly representable ones survive.
    for node in _walk(expr):
        if (
            isinstance(node, Literal)
            and isinstance(node.val, float)
            and float(f"{node.val:.16G}") != node.val
        ):
            return False
        if isinstance(node, Literal) and isinstance(node.val, str) and "\0" in node.val:
            return False
    return True
