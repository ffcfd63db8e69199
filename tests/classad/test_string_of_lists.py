"""``string()``/``strcat()`` of a list literal print it as written, as classad2 does."""

from __future__ import annotations

import pytest

from cedar.classad_wire import evaluate


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # expected values printed by classad2 25.14.1
        ("strcat({A})", "{ A }"),
        ('strcat({1,A,"x"})', '{ 1,A,"x" }'),
        ("string({A, 1+2})", "{ A,1 + 2 }"),
        ("strcat({})", "{  }"),
        ('string(split("a b"))', '{ "a","b" }'),  # a computed list prints its values
    ],
)
def test_list_literal_keeps_its_source(text: str, expected: str) -> None:
    assert evaluate(text) == expected
