"""Owner scoping and redaction: what one caller may see of the queue.

The scope is combined with the caller's constraint as parsed trees
(:func:`cedar.classad_wire.constraints.and_constraints`), so ``true) || (true`` cannot leave it:
it does not parse on its own and is refused.
"""

from __future__ import annotations

from collections.abc import Iterable

from cedar.classad_wire import ClassAd
from cedar.classad_wire.constraints import and_constraints, parse_constraint
from cedar.classad_wire.expr import AttrRef, Binary, Expr, Literal

#: The value shown in place of a redacted attribute (restd's spelling).
REDACTED = "<REDACTED>"


def owner_scope(user: str) -> Expr:
    """``User == "<user@domain>"``: the jobs of the authenticated identity (``User`` is what the
    schedd stores for the job's owner, with its domain)."""
    return Binary("==", AttrRef("User"), Literal(user))


def scoped_constraint(constraint: str | Expr | None, user: str | None) -> Expr | None:
    """The caller's constraint limited to ``user``'s jobs (no limit for ``None``), as the tree
    the clients send as it is (a tree given here is not parsed again)."""
    parts: list[str | Expr | None] = [constraint]
    if user is not None:
        parts.insert(0, owner_scope(user))
    return and_constraints(parts)


def check_constraint(constraint: str | None, max_length: int) -> Expr | None:
    """The parsed constraint (``None`` for none or blank), refused when it does not parse or is
    too long.  Hand the tree on: parsed here, it is not parsed again on its way to the wire."""
    if constraint is None or not constraint.strip():
        return None
    if len(constraint) > max_length:
        from cedar.errors import InvalidArgument

        raise InvalidArgument(f"constraint longer than {max_length} characters")
    return parse_constraint(constraint)


def scope_and(*parts: str | Expr | None) -> Expr | None:
    """The parts combined (for callers that need the tree)."""
    return and_constraints(parts)


def redact(ad: ClassAd, private: Iterable[str]) -> ClassAd:
    """``ad`` with each private attribute present replaced by ``"<REDACTED>"`` (in place)."""
    for name in private:
        if name in ad:
            ad[name] = REDACTED
    return ad
