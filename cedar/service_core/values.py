"""Typed attribute values from JSON: how every service turns a caller's value into ClassAd text.

One rule for the REST API and the MCP server (golang-htcondor's two sides encoded an edited
value differently): the ClassAd JSON mapping of :mod:`cedar.classad_wire.jsonfmt`, the same one
every answer is written with.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cedar.classad_wire.jsonfmt import ad_from_json_object
from cedar.classad_wire.unparse import unparse
from cedar.errors import InvalidArgument

#: Attributes no service edits, whoever asks (the schedd may allow some to its owner): a job's
#: identity and ownership, its universe (an agent that edited ``JobUniverse`` crashed a
#: schedd), and the state the schedd keeps itself (changed by hold, release and remove).
PROTECTED_ATTRS = (
    "JobUniverse",
    "ClusterId",
    "ProcId",
    "Owner",
    "User",
    "OsUser",
    "GlobalJobId",
    "JobStatus",
    "QDate",
    "MyType",
    "TargetType",
    "EnteredCurrentStatus",
)
_PROTECTED = frozenset(name.lower() for name in PROTECTED_ATTRS)


def check_editable(names: Iterable[str]) -> None:
    """Refuse (:class:`~cedar.errors.InvalidArgument`, 400) an edit of a protected attribute
    (:data:`PROTECTED_ATTRS`, any case): one deny-list for every mouth."""
    refused = sorted({name for name in names if name.lower() in _PROTECTED})
    if refused:
        raise InvalidArgument(
            f"{', '.join(refused)} cannot be edited through this service (protected: "
            "a job's identity, owner, universe and the state the schedd keeps)"
        )


def typed_values(values: dict[str, Any]) -> dict[str, str]:
    """Attribute name -> ClassAd wire text for JSON values in the same mapping: a JSON string is
    a string, a number or boolean itself, ``null`` undefined, ``"/Expr(...)/"`` an expression.
    A protected attribute (:func:`check_editable`) is refused: these values are edits."""
    if not values:
        raise InvalidArgument("no attributes to set")
    check_editable(values)
    ad = ad_from_json_object(values)
    return {name: unparse(ad.lookup(name), old=True) for name in values}
