"""The one constraint rule: parse once, combine as trees."""

from __future__ import annotations

import pytest

from cedar.classad_wire import ClassAd
from cedar.classad_wire.constraints import and_constraints, constraint_text, parse_constraint
from cedar.errors import ClassAdParseError


def test_two_constraints_are_their_intersection() -> None:
    combined = and_constraints(["ProcId == 0", "ClusterId == 1"])
    assert combined is not None
    matched = []
    for cluster, proc in [(1, 0), (1, 1), (2, 0)]:
        ad = ClassAd({"ClusterId": cluster, "ProcId": proc})
        ad.set_expr("Matches", combined)
        if ad.eval("Matches") is True:
            matched.append((cluster, proc))
    assert matched == [(1, 0)]
    assert constraint_text(["ProcId == 0", "ClusterId == 1"]) == "(ProcId == 0) && (ClusterId == 1)"


def test_blank_parts_are_no_constraint() -> None:
    assert and_constraints([None, "", "   "]) is None
    assert parse_constraint("  ") is None


def test_a_part_cannot_escape_its_parentheses() -> None:
    with pytest.raises(ClassAdParseError, match="invalid constraint 'true\\) \\|\\| \\(true'"):
        constraint_text(['Owner == "alice"', "true) || (true"])


def test_precedence_is_kept_by_the_tree() -> None:
    text = constraint_text(["a || b", "c"])
    assert text == "(a || b) && (c)"
