"""The bounded regular-expression matcher behind regexp/regexps/replace (issue 13 §1)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from cedar.classad_wire import Error, parse_expr
from cedar.classad_wire.regex import RegexBudgetExceeded, RegexError, compile_pattern

HOSTILE = [
    ("(a+)+$", "a" * 5000 + "!"),
    ("(a|aa)*$", "a" * 3000 + "b"),
    ("(x+x+)+z", "x" * 4000),
    ("^(\\w+\\s?)*$", "word " * 800 + "!"),
    ("(a*)*(b|c)$", "a" * 4000 + "d"),
]


def test_hostile_patterns_finish_in_a_subprocess() -> None:
    """Catastrophic-backtracking patterns end (error or false) instead of freezing the caller.

    Run in a subprocess with a generous timeout: the assertion is only "it finishes".
    """
    program = (
        "from cedar.classad_wire import parse_expr\n"
        f"cases = {HOSTILE!r}\n"
        "for pattern, text in cases:\n"
        "    for call in ('regexp', 'regexps', 'replaceAll'):\n"
        "        extra = ', \"x\"' if call != 'regexp' else ''\n"
        "        expr = f'{call}({pattern!r}, {text!r}{extra})'.replace(\"'\", '\"')\n"
        "        print(call, parse_expr(expr).eval())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3 * len(HOSTILE)


def test_budget_is_an_error_not_a_hang() -> None:
    with pytest.raises(RegexBudgetExceeded):
        compile_pattern("(a+)+$").search("a" * 3000 + "!")
    assert parse_expr(f'regexp("(a+)+$", "{"a" * 3000}!")').eval() is Error


@pytest.mark.parametrize(
    ("pattern", "text", "options", "expected"),
    [
        ("a.c", "xabcx", "", [1, 4]),
        ("^b", "a\nb", "m", [2, 3]),
        ("^b", "a\nb", "", None),
        ("a.b", "a\nb", "s", [0, 3]),
        ("a b", "ab", "x", [0, 2]),
        ("A", "a", "i", [0, 1]),
        ("(a)\\1", "aa", "", [0, 2, 0, 1]),
        ("a(?=b)", "ab", "", [0, 1]),
        ("(?<=a)b", "ab", "", [1, 2]),
        ("a*?", "a", "", [0, 0]),
        ("a++b", "aab", "", [0, 3]),
        ("[[:digit:]]+", "x12", "", [1, 3]),
        ("\\Qa.b\\E", "a.b", "", [0, 3]),
        ("a$", "a\n", "", [0, 1]),
        ("a\\z", "a\n", "", None),
    ],
)
def test_pcre_subset(pattern: str, text: str, options: str, expected: list[int] | None) -> None:
    assert compile_pattern(pattern, options).search(text) == expected


@pytest.mark.parametrize("pattern", ["(", "a{2,1}", "[a-", "a**", "(a)\\2", "\\k<x>"])
def test_invalid_patterns(pattern: str) -> None:
    with pytest.raises(RegexError):
        compile_pattern(pattern)


@pytest.mark.parametrize(
    "pattern",
    ["(a+)+$", "(a|aa)*c", "(x+x+)+y", "a{1001}", "^.$", "^..$", "[\\w-]+", "(?i:A)b"],
)
def test_agrees_with_reference(classad2: Any, pattern: str) -> None:
    for text in ["a" * 40 + "!", "aaab", "é", "xxxxy", "aB", "w-x"]:
        call = f'regexp("{pattern.replace(chr(92), chr(92) * 2)}", "{text}")'
        ours = parse_expr(call).eval()
        theirs = classad2.ExprTree(call).eval()
        assert (ours is Error) == (theirs is classad2.Value.Error), call
        if ours is not Error:
            assert ours == theirs, call


@pytest.mark.parametrize(
    "call",
    [
        r'regexps("(a)(b)?", "ab", "\\2")',
        r'regexps("(a)(b)?", "[a-c]+", "\\2")',  # group 2 after the last group that matched
        r'regexps("(a)|(b)", "b", "\\1")',  # group 1 unset but before a set group: empty
        r'regexps("(a)|(b)|(c)", "c", "[\\1\\2]")',
        r'regexps("(a)|(b)|(c)", "b", "\\3")',
        r'regexps("x(a)?", "x", "\\1")',
        r'regexps("x(a)?", "x", "\\0")',
        r'replace("(a)(b)?", "aa", "\\2")',
        r'replaceAll("(a)(b)?", "abab", "[\\2]")',
        r'replaceAll("(a)(b)?", "aa", "\\2", "a{2}")',
    ],
)
def test_group_references_agree_with_reference(classad2: Any, call: str) -> None:
    """A reference to a group that took no part in the match: empty, or error past the last set."""
    ours = parse_expr(call).eval()
    classad2.ClassAd("[a = 1]")  # registers regexps & co. in the reference
    theirs = classad2.ExprTree(call).eval()
    assert (ours is Error) == (theirs is classad2.Value.Error), call
    if ours is not Error:
        assert ours == theirs, call
