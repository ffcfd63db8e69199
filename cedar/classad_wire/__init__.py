"""ClassAds: the value model, the expression language, and their CEDAR wire encoding.

Spec 02.  ``ClassAd`` is a case-insensitive mapping; ``Expr`` an immutable expression tree;
``put_classad``/``get_classad`` move ads over a CEDAR message; ``parse_ads``/``parse_next``
read a stream of several ads (old or new syntax) from a string or a text file.

The files import only downwards, floor by floor (docs/ARCHITECTURE.md); this top floor fills
:data:`~cedar.classad_wire.expr.UPCALLS`, the few calls that point up.
"""

from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import UPCALLS, Expr
from cedar.classad_wire.jsonfmt import ad_from_json, ad_to_json
from cedar.classad_wire.reading import parse_ads, parse_next, parse_one
from cedar.classad_wire.syntax import parse_expr
from cedar.classad_wire.unparse import unparse
from cedar.classad_wire.values import AbsTime, Error, RelTime, Undefined
from cedar.classad_wire.wire import get_classad, get_handshake_ad, put_classad

UPCALLS.parse = parse_expr
UPCALLS.unparse = unparse
UPCALLS.evaluate = evaluate
UPCALLS.ad_type = ClassAd
UPCALLS.ad_to_json = ad_to_json
UPCALLS.ad_from_json = ad_from_json

__all__ = [
    "AbsTime",
    "ClassAd",
    "Error",
    "Expr",
    "RelTime",
    "Undefined",
    "evaluate",
    "get_classad",
    "get_handshake_ad",
    "parse_ads",
    "parse_expr",
    "parse_next",
    "parse_one",
    "put_classad",
    "unparse",
]
