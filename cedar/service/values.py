"""Typed attribute values from JSON: how every service turns a caller's value into ClassAd text.

One rule for the REST API and the MCP server (golang-htcondor's two sides encoded an edited
value differently): the ClassAd JSON mapping of :mod:`cedar.classad_wire.jsonfmt`, the same one
every answer is written with.
"""

from __future__ import annotations

from typing import Any

from cedar.classad_wire.jsonfmt import ad_from_json_object
from cedar.classad_wire.unparse import unparse
from cedar.errors import InvalidArgument


def typed_values(values: dict[str, Any]) -> dict[str, str]:
    """Attribute name -> ClassAd wire text for JSON values in the same mapping: a JSON string is
    a string, a number or boolean itself, ``null`` undefined, ``"/Expr(...)/"`` an expression."""
    if not values:
        raise InvalidArgument("no attributes to set")
    ad = ad_from_json_object(values)
    return {name: unparse(ad.lookup(name), old=True) for name in values}
