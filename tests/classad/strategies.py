"""Hypothesis strategies producing ClassAd expression text, trees and ads."""

from __future__ import annotations

import string

from hypothesis import strategies as st

from cedar.classad_wire import ClassAd, Expr
from cedar.classad_wire.expr import (
    AttrRef,
    Binary,
    Call,
    Elvis,
    ListExpr,
    Literal,
    Paren,
    RecordExpr,
    Select,
    Subscript,
    Ternary,
    Unary,
)
from cedar.classad_wire.syntax import BINARY_PRECEDENCE

KEYWORDS = {
    "true",
    "false",
    "undefined",
    "error",
    "is",
    "isnt",
    "parent",
    "my",
    "target",
    "self",
    "root",
    "toplevel",
    "currenttime",
}

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: n.lower() not in KEYWORDS
)
ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
small_ints = st.integers(min_value=-20, max_value=20)
reals = st.floats(allow_nan=False, allow_infinity=False, width=64)
plain_text = st.text(
    alphabet=string.ascii_letters + string.digits + " _-./:@#$%^&*()[]{}<>?,;|~`'", max_size=8
)
#: Any text, with the characters a printer must escape drawn often (uniform unicode almost never
#: draws a quote or a backslash, so a printer that forgot to escape them went unnoticed).
any_text = st.text(
    alphabet=st.one_of(st.sampled_from("\"\\\n\t'\x7fa"), st.characters(exclude_categories=["Cs"])),
    max_size=8,
).filter(lambda s: "\0" not in s)


def _real_text(value: float) -> str:
    text = repr(value)
    return text if ("." in text or "e" in text) else text + ".0"


def _int_text(value: int) -> str:
    return str(value)


def _string_text(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


atom_text = st.one_of(
    small_ints.map(_int_text),
    ints.map(_int_text),
    reals.map(_real_text),
    plain_text.map(_string_text),
    st.sampled_from(["true", "FALSE", "undefined", "error", "Undefined"]),
    names,
    names.map(lambda n: "MY." + n),
    names.map(lambda n: "TARGET." + n),
)
_bin_ops = sorted(set(BINARY_PRECEDENCE) | {"is", "isnt"})
_funcs = [
    "strcat",
    "size",
    "ifThenElse",
    "isUndefined",
    "int",
    "real",
    "floor",
    "member",
    "toUpper",
    "substr",
    "foo",
]


def _compose(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    ws = st.sampled_from(["", " ", "  "])
    return st.one_of(
        st.tuples(children, ws, st.sampled_from(_bin_ops), ws, children).map(
            lambda t: (
                f"{t[0]}{t[1] or (' ' if t[2].isalpha() else '')}{t[2]}"
                f"{t[3] or (' ' if t[2].isalpha() else '')}{t[4]}"
            )
        ),
        st.tuples(st.sampled_from(["-", "+", "!", "~", "- "]), children).map(
            lambda t: t[0] + " " + t[1] if t[1].startswith(("-", "+")) else t[0] + t[1]
        ),
        children.map(lambda c: f"({c})"),
        st.tuples(children, children, children).map(lambda t: f"{t[0]} ? {t[1]} : {t[2]}"),
        st.tuples(children, children).map(lambda t: f"({t[0]}) ?: ({t[1]})"),
        st.tuples(children, names).map(lambda t: f"({t[0]}).{t[1]}"),
        st.tuples(children, children).map(lambda t: f"({t[0]})[{t[1]}]"),
        st.tuples(st.sampled_from(_funcs), st.lists(children, max_size=3)).map(
            lambda t: f"{t[0]}({','.join(t[1])})"
        ),
        st.lists(children, max_size=3).map(lambda items: "{" + ", ".join(items) + "}"),
        st.lists(st.tuples(names, children), max_size=3).map(
            lambda items: "[" + "; ".join(f"{n} = {v}" for n, v in items) + "]"
        ),
    )


expression_text = st.recursive(atom_text, _compose, max_leaves=8)

#: Closed expressions (no attribute references) so that evaluation exercises the operators.
value_atom_text = st.one_of(
    small_ints.map(_int_text),
    ints.map(_int_text),
    reals.map(_real_text),
    st.sampled_from(
        [
            "0.0",
            "-1.5",
            "2.5",
            "1e308",
            '""',
            '"abc"',
            '"ABC"',
            '"a,b c"',
            "{}",
            "{1, 2.5}",
            '{"a", "B"}',
            "[q = 1]",
            "undefined",
            "error",
            "true",
            "false",
        ]
    ),
    plain_text.map(_string_text),
)
value_text = st.recursive(value_atom_text, _compose, max_leaves=6)


# --- trees ---------------------------------------------------------------------------------

#: Reals that survive the 16-significant-digit wire printing (spec 02 §10 item 9).
wire_reals = reals.map(lambda x: float(f"{x:.16G}")).filter(lambda x: abs(x) != float("inf"))
literal_values = st.one_of(
    ints, wire_reals, st.booleans(), any_text, st.sampled_from(["Undefined", "Error"])
)


def _literal(value: object) -> Expr:
    from cedar.classad_wire import Error, Undefined

    if value == "Undefined":
        return Literal(Undefined)
    if value == "Error":
        return Literal(Error)
    return Literal(value)  # type: ignore[arg-type]


_leaf_trees = st.one_of(literal_values.map(_literal), names.map(AttrRef))


def _compose_trees(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    # Trees that print unambiguously: every operand of an operator is parenthesised.
    paren = children.map(Paren)
    return st.one_of(
        st.tuples(st.sampled_from(sorted(BINARY_PRECEDENCE)), paren, paren).map(
            lambda t: Binary(*t)
        ),
        st.tuples(st.sampled_from(["!", "~", "+"]), paren).map(lambda t: Unary(*t)),
        st.tuples(paren, paren, paren).map(lambda t: Ternary(*t)),
        st.tuples(paren, paren).map(lambda t: Elvis(*t)),
        st.tuples(paren, names).map(lambda t: Select(*t)),
        st.tuples(paren, children).map(lambda t: Subscript(*t)),
        st.tuples(names, st.lists(children, max_size=3)).map(lambda t: Call(*t)),
        st.lists(children, max_size=3).map(ListExpr),
        st.lists(st.tuples(names, children), max_size=3).map(RecordExpr),
    )


expression_trees = st.recursive(_leaf_trees, _compose_trees, max_leaves=10)

ads = st.dictionaries(
    names, st.one_of(literal_values.map(_literal), expression_trees), max_size=8
).map(lambda d: ClassAd({k: v for k, v in d.items()}))


def wire_safe(expr: Expr) -> bool:
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
