"""The ClassAd built-in functions, one module per family, all in one registry.

Every function takes the evaluator (as :class:`~cedar.classad_wire.operators.Context`), its
unevaluated argument expressions and the scope, so lazy functions (``ifThenElse``, ``eval``)
and strict ones share one calling convention.  The families use only the value semantics of
:mod:`cedar.classad_wire.operators`; the evaluator imports :data:`FUNCTIONS` from here.
"""

from __future__ import annotations

from cedar.classad_wire.builtins import (  # noqa: F401 - imported to register their functions
    ads,
    aggregates,
    arguments,
    core,
    patterns,
    stringlists,
    strings,
    times,
    users,
    versions,
)
from cedar.classad_wire.builtins.registry import FUNCTIONS, Function
from cedar.classad_wire.builtins.versions import version_compare

__all__ = ["FUNCTIONS", "Function", "version_compare"]
