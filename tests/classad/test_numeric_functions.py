"""Math built-ins take booleans as 0/1 and follow C ``pow``/casts (values printed by classad2)."""

from __future__ import annotations

import math

import pytest

from cedar.classad_wire import Error, evaluate

INT64_MIN = -(1 << 63)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("floor(true)", 1),
        ("ceiling(false)", 0),
        ("round(0 != 0)", 0),
        ("pow(true, 2)", 1.0),
        ("pow(2, true)", 2.0),
        ("pow(2, false)", 1.0),
        ("pow(0, -1)", math.inf),
        ("pow(10.0, 400)", math.inf),
        ("pow(3, 39)", 4052555153018976256),  # through a double: 3**39 is ...267
        ("pow(3, 40)", INT64_MIN),
        ("pow(2, 63)", INT64_MIN),
        ("pow(2, -1)", 0.5),
        ("quantize(true, true)", 1.0),
        ("quantize(3, {1, true})", 3.0),
        ("quantize(1, {true})", True),
        ("abs(true)", Error),
    ],
)
def test_math_functions_match_the_reference(text: str, expected: object) -> None:
    result = evaluate(text)
    assert result == expected and type(result) is type(expected), (text, result)


def test_negative_base_fractional_exponent_is_nan() -> None:
    result = evaluate("pow(-8, 0.5)")
    assert isinstance(result, float) and math.isnan(result)
