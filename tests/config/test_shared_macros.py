"""The configuration and the submit language share one line reader and macro expander."""

from __future__ import annotations

import pytest

from cedar.commands.submit import Submit, SubmitSettings
from cedar.config import Config
from cedar.config.macros import MAX_VALUE, MacroExpander
from cedar.errors import ConfigError


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("$SUBSTR(V, 2)", "cdef"),
        ("$SUBSTR(V, -2)", "ef"),
        ("$SUBSTR(V, -100)", "abcdef"),
        ("$SUBSTR(V, -100, 2)", "ab"),
        ("$SUBSTR(V, 1, -2)", "bcd"),
    ],
)
def test_substr_is_the_same_in_config_and_submit(call: str, expected: str) -> None:
    config = Config.from_text(f"V = abcdef\nX = {call}\n", detect=False)
    assert config.get("X") == expected
    submit = Submit(f'V = abcdef\nexecutable = /bin/true\nMY.X = "{call}"\nqueue\n')
    ads = submit.build(settings=SubmitSettings())
    assert ads.cluster_ad["X"] == f'"{expected}"'


def test_both_languages_have_the_size_guard() -> None:
    definitions = {"A0": "x" * 1024}
    for n in range(1, 12):
        definitions[f"A{n}"] = f"$(A{n - 1})$(A{n - 1})"
    expander = MacroExpander(definitions.get)
    with pytest.raises(ConfigError, match="unreasonably long"):
        expander.expand("$(A11)")
    text = "\n".join(f"{k} = {v}" for k, v in definitions.items()) + "\nX = $(A11)\n"
    with pytest.raises(ConfigError, match="unreasonably long"):
        Config.from_text(text, detect=False).get("X")
    assert len("x" * 1024) * 2**11 > MAX_VALUE
