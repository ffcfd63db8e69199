"""A client call's constraint as the tree that goes on the wire.

Every client (job queries, history, actions, edits) takes a constraint as text or as an
already-parsed expression: text is parsed here, once, by the one constraint rule
(:mod:`cedar.classad_wire.constraints`); a tree (from ``cedar q``, the services, ...) passes
unchanged, so nothing on the way to the wire parses it again.
"""

from __future__ import annotations

from cedar.classad_wire.constraints import parse_constraint
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.unparse import unparse
from cedar.errors import ClassAdError, InvalidArgument

__all__ = ["Constraint", "constraint_text", "constraint_tree"]

#: What a client call accepts as a constraint: text, a parsed tree, or none.
Constraint = str | Expr | None


def constraint_tree(constraint: Constraint) -> Expr | None:
    """The parsed constraint (``None`` for none or blank text).  Raises
    :class:`~cedar.errors.InvalidArgument` naming a constraint that does not parse.  Any
    other object (a foreign expression type) is read as its text, as the bindings do."""
    if constraint is not None and not isinstance(constraint, (str, Expr)):
        constraint = str(constraint)
    try:
        return parse_constraint(constraint)
    except ClassAdError as exc:
        raise InvalidArgument(str(exc)) from None


def constraint_text(constraint: str | Expr) -> str:
    """The text a qmgmt call sends (its constraint argument is a string): text as given, a tree
    printed in the old syntax the schedd reads."""
    return constraint if isinstance(constraint, str) else unparse(constraint, old=True)
