"""The one constraint rule: how a user's constraint text becomes an expression, and how several
are combined.

Every command, service and tool that takes a constraint goes through here, so a typo is refused
with the same message everywhere, and constraints are combined as parsed trees (each operand
parenthesised), never by pasting strings: ``true) || (true`` cannot escape an owner scope,
because it does not parse on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cedar.classad_wire.evaluate import Budget, evaluate
from cedar.classad_wire.expr import Binary, Expr, Literal, Paren
from cedar.classad_wire.syntax import parse_expr
from cedar.classad_wire.unparse import unparse
from cedar.errors import CedarError, ClassAdError, ClassAdParseError, EvaluationBudgetExceeded

if TYPE_CHECKING:
    from cedar.classad_wire.classad import ClassAd

__all__ = ["and_constraints", "constraint_text", "matches", "parse_constraint"]


def parse_constraint(text: str | Expr | None) -> Expr | None:
    """The parsed constraint (old ClassAd syntax, as condor's tools read it), or ``None`` for no
    constraint (``None`` or blank text).

    Raises :class:`~cedar.errors.ClassAdParseError` naming the constraint when it does not
    parse as exactly one expression.
    """
    if text is None:
        return None
    if isinstance(text, Expr):
        return text
    if not text.strip():
        return None
    try:
        return parse_expr(text, old=True)
    except ClassAdError as exc:
        raise ClassAdParseError(f"invalid constraint {text!r}: {exc}", text=text) from None


def and_constraints(parts: Iterable[str | Expr | None]) -> Expr | None:
    """All the given constraints at once: each parsed on its own, then joined with ``&&`` as a
    tree.  Missing or blank parts are left out; ``None`` when nothing is left (no constraint)."""
    combined: Expr | None = None
    for part in parts:
        node = parse_constraint(part)
        if node is None:
            continue
        operand = node if isinstance(node, (Paren, Literal)) else Paren(node)
        combined = operand if combined is None else Binary("&&", combined, operand)
    return combined


def constraint_text(parts: Iterable[str | Expr | None]) -> str | None:
    """:func:`and_constraints` printed in the old syntax the daemons read, or ``None``."""
    combined = and_constraints(parts)
    return None if combined is None else unparse(combined, old=True)


def matches(expr: Expr | None, ad: ClassAd, budget: Budget | None = None) -> bool:
    """Whether a constraint holds for ``ad``: true or a non-zero number (an error, undefined
    or anything else does not), as a schedd or collector selects ads.

    Charged to ``budget`` (a request's); :class:`EvaluationBudgetExceeded` once it is spent.
    """
    if expr is None:
        return True
    try:
        value = evaluate(expr, ad, budget=budget)
    except EvaluationBudgetExceeded:
        raise
    except CedarError:
        return False
    if isinstance(value, bool):
        return value
    return isinstance(value, (int, float)) and value != 0
