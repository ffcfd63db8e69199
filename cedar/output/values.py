"""One ``-af``/``-format`` argument: parsed once, evaluated against each ad, printed as the
condor tools print a value.

The rules (observed against condor_q/condor_status 25.13.2, see ``docs/output.md``):

* an argument is an expression in the old ClassAd syntax, evaluated in the ad (``RequestDisk``
  prints ``1048576.0``, ``ClusterId * 10`` prints ``10``, ``Requirements`` prints ``error``
  because ``TARGET`` is missing);
* a value prints bare (strings unquoted, ``undefined``, ``error``, reals as in the wire syntax,
  lists and nested ads in the wire syntax); with ``V`` strings are quoted;
* *raw* (``-af:r``) prints the attribute's own expression text when the argument is a bare
  attribute name (``undefined`` when the ad lacks it), otherwise the argument, re-printed.
"""

from __future__ import annotations

import math
from typing import Any

from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import AttrRef, Expr, Select
from cedar.classad_wire.syntax import parse_expr
from cedar.classad_wire.unparse import format_real, quote_string, unparse
from cedar.classad_wire.values import AbsTime, Error, ErrorType, RelTime, Undefined, UndefinedType
from cedar.classad_wire.wire import references
from cedar.errors import CedarError, ClassAdError, InvalidArgument

__all__ = ["Argument", "value_text"]


_SCALARS = frozenset((int, float, str, bool))


class Argument:
    """One expression argument of ``-af`` or ``-format``, as the user typed it."""

    __slots__ = ("attribute", "expr", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            self.expr: Expr = parse_expr(text, old=True)
        except ClassAdError as exc:
            raise InvalidArgument(f"cannot parse the expression {text!r}: {exc}") from None
        expr = self.expr
        #: The attribute name when the argument is a bare (unscoped) attribute reference.
        self.attribute: str | None = (
            expr.name if isinstance(expr, AttrRef) and not expr.absolute else None
        )

    def __repr__(self) -> str:
        return f"Argument({self.text!r})"

    def references(self) -> set[str]:
        """The attribute names the argument reads (for the query's projection); a bare name
        keeps the user's spelling."""
        if self.attribute is not None:
            return {self.attribute}
        return references(self.expr)

    def evaluate(self, ad: ClassAd) -> Any:
        """The argument's value in ``ad`` (``Error`` when evaluation fails)."""
        try:
            if self.attribute is not None:
                try:  # a literal attribute: one lookup, no evaluator
                    value = ad[self.attribute]
                except KeyError:
                    return Undefined  # absent: no evaluator needed
                except CedarError:  # unparsable text: the evaluator decides
                    value = None
                if value.__class__ in _SCALARS:
                    return value
                return ad.eval(self.attribute)
            return evaluate(self.expr, ad)
        except (CedarError, RecursionError):
            return Error

    def raw(self, ad: ClassAd) -> str:
        """``%r``: the attribute's expression text, or the argument re-printed."""
        if self.attribute is not None:
            try:
                return ad.raw_text(self.attribute)
            except KeyError:
                return "undefined"
        if isinstance(self.expr, (AttrRef, Select)):
            return "undefined"  # a scoped name (MY.x) is looked up verbatim: never found
        return unparse(self.expr, old=True)


def value_text(value: Any, quoted: bool = False) -> str:
    """A value as ``-af`` prints it (``quoted``: as ``-af:V``/``%V``, strings in quotes)."""
    kind = value.__class__
    if kind is str:
        return quote_string(value, old=True) if quoted else value
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        return format_real(value, old=True)
    if isinstance(value, UndefinedType):
        return "undefined"
    if isinstance(value, ErrorType):
        return "error"
    if isinstance(value, RelTime):
        return format_real(float(value.seconds), old=True)
    if isinstance(value, AbsTime):
        return unparse(value, old=True)
    if isinstance(value, float) and not math.isfinite(value):
        return format_real(value, old=True)
    return unparse(value, old=True)
