"""Typed knobs: the plain-integer shortcut (no ClassAd evaluator) agrees with the evaluator."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cedar.classad_wire.expr import Expr
from cedar.config.typed import typed_value

INT_KNOB = "ADSTASH_NUM_THREADS"
BOOL_KNOB = "ABORT_ON_EXCEPTION"


def _by_evaluator(text: str, kind: str) -> object:
    try:
        value = Expr.parse(text.strip()).eval()
    except Exception:  # noqa: BLE001 - anything the evaluator refuses falls back
        return 0 if kind == "int" else False
    if isinstance(value, (bool, int, float)):
        return int(value) if kind == "int" else value != 0
    return 0 if kind == "int" else False


@pytest.mark.parametrize(
    "text",
    ["0", "-0", "7", " 12 ", "-5", "010", "007", "0x10", "+3", "2+3", "1.5", "1e3",
     "999999999999999999", "9223372036854775807", "99999999999999999999", "", "x", "true"],
)  # fmt: skip
def test_plain_and_evaluated_integers_agree(text: str) -> None:
    assert typed_value(INT_KNOB, text) == _by_evaluator(text, "int")
    expected_bool = text.strip().lower() == "true" or _by_evaluator(text, "bool")
    assert typed_value(BOOL_KNOB, text) == expected_bool


@given(st.integers(min_value=-(10**18), max_value=10**18))
def test_any_decimal_integer(value: int) -> None:
    """Property: a decimal integer of up to 18 digits reads as itself, as the evaluator reads it."""
    assert typed_value(INT_KNOB, str(value)) == _by_evaluator(str(value), "int") == value
