"""The calls that point up a floor of classad_wire (``expr.UPCALLS``) are wired, whatever file
is imported first, and the pieces that moved to keep the floors behave as before."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cedar.classad_wire import ClassAd, Expr, Undefined, evaluate, parse_expr, unparse
from cedar.classad_wire.expr import UPCALLS, RecordExpr, Upcalls, to_expr
from cedar.errors import ClassAdError


def test_every_upcall_is_filled_by_the_package() -> None:
    missing = [slot for slot in Upcalls.__slots__ if not hasattr(UPCALLS, slot)]
    assert not missing, f"cedar/classad_wire/__init__.py leaves {missing} unfilled"
    assert UPCALLS.ad_type is ClassAd
    assert UPCALLS.parse is parse_expr and UPCALLS.unparse is unparse


@pytest.mark.parametrize(
    "module", ["cedar.classad_wire.expr", "cedar.classad_wire.syntax", "cedar.classad_wire.values"]
)
def test_a_low_file_imported_first_still_reaches_the_upper_floors(module: str) -> None:
    """Importing any file runs the package ``__init__`` first, which fills the upcalls."""
    code = (
        f"import {module}\n"
        "from cedar.classad_wire.expr import Expr\n"
        "e = Expr.parse('[a = 1; b = a + 1].b')\n"
        "print(str(e), e.eval(), type(Expr.parse('[x = 1]').value()).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "[",
        "a",
        "=",
        "1;",
        "b",
        "=",
        "a",
        "+",
        "1",
        "].b",
        "2",
        "ClassAd",
    ]


def test_evaluate_without_an_ad_has_no_my() -> None:
    """As in classad2: ``MY`` is undefined, an absolute reference fails the evaluation."""
    assert evaluate("MY") is Undefined and evaluate("MY =?= MY") is True
    assert evaluate("size(MY)") is Undefined and evaluate("string(MY)") is Undefined
    assert evaluate("MY.x") is evaluate("x") and evaluate("isUndefined(x)") is True
    with pytest.raises(ClassAdError, match="without an ad"):
        evaluate(".x")
    assert evaluate(".x", ClassAd()) is Undefined


def test_records_and_ads_cross_the_floors_both_ways() -> None:
    ad = ClassAd.parse_new("[a = 1; r = [b = a]]")
    assert isinstance(ad["r"], ClassAd) and to_expr(ad) == ad.to_expr()
    assert isinstance(to_expr(ad), RecordExpr)
    assert ClassAd.from_json(ad.to_json()) == ad
    assert Expr.parse("r.b").eval(ad) == 1 and ad.flatten("a + 1") == Expr.parse("2")
    assert ad.external_refs("a + TARGET.c") == ["TARGET.c"]


def test_regex_errors_are_classad_errors() -> None:
    from cedar.classad_wire.regex import RegexBudgetExceeded, RegexError, compile_pattern

    with pytest.raises(RegexError) as bad:
        compile_pattern("(")
    assert isinstance(bad.value, ClassAdError) and isinstance(bad.value, ValueError)
    assert issubclass(RegexBudgetExceeded, ClassAdError)
    assert evaluate('regexp("(", "x")') is evaluate("error")
