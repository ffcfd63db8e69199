"""Typed knob values as the reference's ``param`` hands them out (observed behaviour).

A knob the table types ``int``/``float``/``bool`` is read as a ClassAd expression: ``2+3`` is 5,
``1.5`` is 1 for an int, ``True`` is 1; ``true``/``false`` in any case are booleans.  A value
that does not evaluate to a number (or a boolean) falls back to the knob's compiled-in default,
and to 0 / False when that does not evaluate either.  Other knobs are strings.

A plain decimal integer is read without the ClassAd machinery (the usual case: a client reads
a few such knobs before its first command, and the evaluator costs milliseconds to import).
"""

from __future__ import annotations

import re

from cedar.config.defaults import KNOB_TYPES
from cedar.errors import CedarError

KnobValue = str | int | bool | float


#: Types of the names the table only has with a subsystem prefix (``TOOL.IsTool``).
_BARE_TYPES = {key.rpartition(".")[2]: kind for key, kind in KNOB_TYPES.items() if "." in key}


def knob_type(name: str) -> str:
    """The table's type of ``name`` (a ``PREFIX.NAME`` has the type of ``NAME``)."""
    key = name.upper()
    if key in KNOB_TYPES:
        return KNOB_TYPES[key]
    bare = key.rpartition(".")[2]
    return KNOB_TYPES.get(bare) or _BARE_TYPES.get(bare, "str")


#: What the ClassAd parser reads as a plain integer literal (no leading zero, in 64 bits).
_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")


def _evaluate(text: str) -> object:
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _PLAIN_INT.fullmatch(stripped):
        return int(stripped)
    from cedar.classad_wire.expr import Expr

    try:
        return Expr.parse(stripped).eval()
    except (CedarError, ValueError, TypeError, RecursionError):
        return None


def _number(value: object, kind: str) -> int | float | None:
    if isinstance(value, bool):
        return int(value) if kind == "int" else float(value)
    if isinstance(value, (int, float)):
        return int(value) if kind == "int" else float(value)
    return None


def _truth(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    return None


def typed_value(name: str, text: str, default_text: str | None = None) -> KnobValue:
    """``text`` (the expanded value of knob ``name``) in the knob's type."""
    kind = knob_type(name)
    if kind == "str":
        return text
    convert = _truth if kind == "bool" else (lambda v: _number(v, kind))
    for candidate in (text, default_text):
        if candidate is None:
            continue
        converted = convert(_evaluate(candidate))
        if converted is not None:
            return converted
    return False if kind == "bool" else (0 if kind == "int" else 0.0)


__all__ = ["KnobValue", "knob_type", "typed_value"]
