"""ClassAd decoding, parsing and evaluation on hostile input: a value, Error or a CedarError."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cedar.classad_wire import (
    ClassAd,
    evaluate,
    get_classad,
    get_handshake_ad,
    parse_expr,
    put_classad,
    unparse,
)
from cedar.classad_wire.evaluate import MAX_EVAL_STEPS
from cedar.classad_wire.expr import Expr
from cedar.classad_wire.syntax import MAX_DEPTH
from cedar.classad_wire.values import AbsTime, Error, ErrorType, RelTime, UndefinedType
from cedar.errors import ClassAdError, ProtocolError
from cedar.stream.primitives import MessageReader, MessageWriter
from tests.classad.strategies import wire_safe

from .helpers import fuzz, mutated

SAMPLE = ClassAd(
    {
        "MyType": "Machine",
        "Name": "slot1@host",
        "Cpus": 8,
        "Memory": 1.5,
        "Start": True,
        "List": [1, "a", 2.5],
        "Nested": {"a": 1, "b": "x"},
    }
)
SAMPLE.set_expr("Requirements", parse_expr('TARGET.Memory > 4 && regexp("^x", Name)'))
SAMPLE.set_expr("Rank", parse_expr("ifThenElse(Cpus > 4, Cpus * 2, undefined) ?: 0"))


def _payload(ad: ClassAd, crypto: bool = False) -> bytes:
    writer = MessageWriter(crypto=crypto)
    put_classad(writer, ad)
    return writer.getvalue()


#: What an evaluation may give: the ClassAd value types (a list holds the same).
VALUE_TYPES = (bool, int, float, str, list, ClassAd, AbsTime, RelTime, UndefinedType, ErrorType)


def _touch(ad: ClassAd) -> None:
    """The property of a decoded ad: each attribute is either malformed text, refused with a
    ClassAdError when used, or an expression with the :func:`_use` property."""
    for name in list(ad):
        try:
            expr = ad.lookup(name)
        except ClassAdError:
            with pytest.raises(ClassAdError):
                ad.eval(name, target=SAMPLE)
            continue
        _use(expr)
        assert isinstance(ad.eval(name, target=SAMPLE), VALUE_TYPES)
    ad.print_old()


def _decode(payload: bytes, crypto: bool) -> int:
    """Decode ``payload`` both ways; each either raises ProtocolError or gives an ad with the
    :func:`_touch` property.  Returns how many ads were decoded."""
    decoded = 0
    for reader_fn in (get_classad, get_handshake_ad):
        try:
            ad = reader_fn(MessageReader(payload, crypto=crypto))
        except ProtocolError:
            continue
        _touch(ad)
        decoded += 1
    return decoded


@fuzz(300)
@given(st.binary(max_size=200), st.booleans())
def test_arbitrary_payload(payload: bytes, crypto: bool) -> None:
    """Arbitrary bytes decode to a ProtocolError or to an ad with the :func:`_touch` property."""
    _decode(payload, crypto)


@fuzz(400)
@given(st.data(), st.booleans())
def test_mutated_valid_ad(data: st.DataObject, crypto: bool) -> None:
    """A mutated valid ad decodes to a ProtocolError or to an ad with the _touch property."""
    _decode(data.draw(mutated(_payload(SAMPLE, crypto))), crypto)


@fuzz(200)
@example([b"A = 1", b"b=x y", b"C = [ "])  # decodes; b and C are malformed, refused when used
@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\0" not in b), max_size=6))
def test_arbitrary_lines(lines: list[bytes]) -> None:
    """Well-framed ads of arbitrary lines always decode (the framing is right) and each
    attribute has the _touch property; lines without a name are refused as a ProtocolError."""
    writer = MessageWriter().put_int(len(lines))
    for line in lines:
        writer.put_bytes(line + b"\0")
    payload = writer.put_string("").put_string("").getvalue()
    if all(b"=" in line and line.split(b"=", 1)[0].strip() for line in lines):
        assert _decode(payload, False) >= 1
    else:
        _decode(payload, False)


@pytest.mark.parametrize("count", [1_000_001, 1 << 40, -1, -(1 << 63)])
def test_attribute_count_is_bounded(count: int) -> None:
    writer = MessageWriter().put_int(count)
    with pytest.raises(ProtocolError, match="attribute count"):
        get_classad(MessageReader(writer.getvalue()))


def test_huge_count_with_short_body_does_not_preallocate() -> None:
    writer = MessageWriter().put_int(1_000_000).put_string("A = 1")
    with pytest.raises(ProtocolError, match="ends before"):
        get_classad(MessageReader(writer.getvalue()))


# --------------------------------------------------------------------------- parse_expr

EXPR_ALPHABET = st.sampled_from(
    list("abAB01789.eE+-*/%<>=!&|^~?:;,()[]{}\"'\\ \t\n")
    + ["\0", "\udcff", "\x7f", "é", "=?=", "=!=", "isnt", "true", "undefined", "error"]
    + ["strcat(", "eval(", "regexp(", "absTime(", "relTime(", "quantize(", "split(", "size("]
    + ["MY.", "TARGET.", "parent.", "1e999", "9" * 30, "0x1", "\\0", "\\777", "\\u00"]
)


@fuzz(600)
@example('strcat("a\\"b", "\\\\") + [\'x y\' = "\\101\\n"]', False)  # escapes to print back
@example('"a\\"b" =?= \'\\\'', True)
@given(st.lists(EXPR_ALPHABET, max_size=40).map("".join), st.booleans())
def test_parse_and_evaluate_garbage(text: str, old: bool) -> None:
    """The parser either raises ClassAdError or gives an Expr with the :func:`_use` property."""
    try:
        expr = parse_expr(text, old=old)
    except ClassAdError:
        return
    _use(expr)


@fuzz(300)
@given(st.text(max_size=60), st.booleans())
def test_parse_arbitrary_text(text: str, old: bool) -> None:
    """The parser either raises ClassAdError or gives an Expr with the :func:`_use` property."""
    try:
        expr = parse_expr(text, old=old, full=False)
    except ClassAdError:
        return
    _use(expr)


def _use(expr: Expr) -> None:
    """The property of every parsed expression: printed in either syntax it parses back to an
    equal expression (equal hash) that prints the same, and it evaluates to a ClassAd value.

    The exceptions, both as in classad2: an infinite real literal (``1e999``) prints as
    ``real("INF")``, a call of the same value; and the wire (old) syntax cannot carry a string
    ending in a backslash inside a larger expression, nor a quote followed by a newline
    (spec 02 §10 item 8), so such expressions are only printed in it.
    """
    value = evaluate(expr, SAMPLE, SAMPLE)
    assert isinstance(value, VALUE_TYPES), (unparse(expr), value)
    for old in (True, False):
        if old and not wire_safe(expr):
            unparse(expr, old=True)
            continue
        text = unparse(expr, old=old)
        again = parse_expr(text, old=old)  # a ClassAdError here fails: we printed garbage
        assert unparse(again, old=old) == text
        if "INF" in text and again != expr:
            assert repr(evaluate(again, SAMPLE, SAMPLE)) == repr(value), text
            continue
        assert again == expr, (text, unparse(again, old=old))
        assert hash(again) == hash(expr), text


NESTERS = [
    ("(", ")"),
    ("{", "}"),
    ("[a=", "]"),
    ("strcat(", ")"),
    ("-", ""),
    ("!", ""),
    ("1 ? ", " : 2"),
    ("x ?: ", ""),
    ("", ".a"),
    ("", "[0]"),
    ("", "+1"),
]


@pytest.mark.parametrize(("left", "right"), NESTERS)
@pytest.mark.parametrize("depth", [100, MAX_DEPTH // 2, MAX_DEPTH + 1, 20_000])
def test_deep_nesting(left: str, right: str, depth: int) -> None:
    text = left * depth + "x" + right * depth
    try:
        expr = parse_expr(text)
    except ClassAdError:
        assert depth > 100
        return
    _use(expr)


@pytest.mark.parametrize(
    "text",
    [
        "9" * 5000,
        "-" + "9" * 5000,
        "0" * 3 + "1",
        "1" + "0" * 4300,
        "1." + "0" * 5000 + "1",
        "1e" + "9" * 5000,
        '"' + "\\" * 1001 + '"',
    ],
)
def test_huge_numbers_and_escapes(text: str) -> None:
    for old in (True, False):
        try:
            expr = parse_expr(text, old=old)
        except ClassAdError:
            continue
        _use(expr)


def test_integer_with_more_than_4300_digits_is_out_of_range() -> None:
    # Regression: int() refuses > 4300 digits (ValueError); out-of-range ints read as 0.
    assert evaluate(parse_expr("9" * 5000)) == 0
    assert evaluate(parse_expr("-" + "9" * 5000)) == 0
    assert evaluate(parse_expr("-" + "0" * 30 + "7")) == -7


def test_long_select_chain_is_a_parse_error() -> None:
    # Regression: a.b.b.b... built a tree whose evaluation overflowed the Python stack.
    with pytest.raises(ClassAdError, match="nested more than"):
        parse_expr("a" + ".b" * 100_000)
    with pytest.raises(ClassAdError, match="nested more than"):
        parse_expr("a" + "[0]" * 100_000)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("absTime(0) + relTime(1e309)", "any"),
        ("relTime(1e309) + absTime(0)", "any"),
        ("int(relTime(1e309))", -(1 << 31)),  # a C int, as classad2 gives
        ('int(relTime(real("NaN")))', -(1 << 31)),
        ('quantize("a", {1})', Error),
        ("quantize(true, {1})", 1),  # booleans count as numbers (classad2 prints 1)
        ('quantize(real("INF"), 1)', math.inf),
        ("quantize(-1e308, 1e-308)", -1e308),  # a quantum within 1e-8 of 0 is 0 (classad2)
        ("quantize(1e308, 1e-308)", 1e308),
        ('stringListSize("a,b", "")', 1),
        ('split("a,b", "")', ["a,b"]),
        ('stringListMember("a", "a", "")', True),
        ('stringListIMember("A", "", "")', False),
    ],
)
def test_evaluation_edge_cases(text: str, expected: object) -> None:
    # Regressions: OverflowError, TypeError and re.error escaped from these.
    value = evaluate(text)
    if expected != "any":
        assert value == expected or value is expected


def test_reference_chain_deeper_than_the_stack_is_error() -> None:
    # Regression: 150 nested attribute references of 100-deep calls raised RecursionError.
    ad = ClassAd()
    for i in range(200):
        ad.set_expr(f"a{i}", parse_expr("strcat(" * 100 + f"a{i + 1}" + ")" * 100))
    assert ad.eval("a0") is Error


def test_exponential_evaluation_is_cut_off() -> None:
    # Regression: a{i} = a{i-1} + a{i-1} took 2**79 steps; now the budget gives Error.
    ad = ClassAd({"a0": 1})
    for i in range(1, 80):
        ad.set_expr(f"a{i}", parse_expr(f"a{i - 1} + a{i - 1}"))
    assert ad.eval("a10") == 1024
    assert ad.eval("a79") is Error


def test_exponential_string_growth_is_cut_off() -> None:
    # Regression: strcat doubling inside a record literal asked for 2**59 bytes.
    members = ";".join(f"a{i} = strcat(a{i - 1}, a{i - 1})" for i in range(1, 60))
    assert evaluate(f'[a0 = "xy"; {members}].a59') is Error
    assert evaluate(f'[a0 = "xy"; {members}].a3') == "xy" * 8


def test_budget_allows_big_literal_lists() -> None:
    items = ",".join(["1"] * 100_000)
    assert evaluate(f"size({{{items}}})") == 100_000
    assert MAX_EVAL_STEPS > 100_000


@fuzz(100)
@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c", "d"]),
        st.lists(
            EXPR_ALPHABET | st.sampled_from(["a", "b", "c", "d", " + ", ","]), max_size=12
        ).map("".join),
        max_size=4,
    )
)
def test_ads_of_garbage_evaluate(attrs: dict[str, str]) -> None:
    """In an ad of garbage attributes (referring to each other), each attribute evaluates to a
    ClassAd value and its expression has the :func:`_use` property."""
    ad = ClassAd()
    for name, text in attrs.items():
        try:
            ad.set_expr(name, parse_expr(text))
        except ClassAdError:
            continue
    for name in list(ad):
        assert isinstance(ad.eval(name, target=ad), VALUE_TYPES)
        _use(ad.lookup(name))
