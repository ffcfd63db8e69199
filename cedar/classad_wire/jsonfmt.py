"""The HTCondor JSON form of a ClassAd (the reference's ``printJson`` is the oracle).

Literal values map to JSON values (undefined = ``null``, relTime = seconds); everything JSON
cannot express -- expressions, error, absTime, NaN and infinities -- is a string
``"/Expr(<new syntax>)/"`` whose slashes are written ``\\/``.  Layout: two-space indent, one
member per line, members in the reference's storage order, empty containers ``{`` / ``}`` on two
lines.
"""

from __future__ import annotations

import functools
import json
import json.decoder
import json.scanner
import math
import re
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any, Generic, TypeVar

from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.expr import Expr, ListExpr, Literal, RecordExpr, storage_key
from cedar.classad_wire.syntax import parse_expr, simple_value
from cedar.classad_wire.unparse import format_real, format_scalar, unparse
from cedar.classad_wire.values import RelTime, Undefined, UndefinedType
from cedar.errors import ClassAdParseError

#: A value cache's key and value type: text, or UTF-8 bytes.
_Text = TypeVar("_Text", str, bytes)

_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_JSON_ESCAPES["\t"] = "\\t"


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


@functools.lru_cache(maxsize=1 << 16)
def _json_name(name: str) -> str:
    """An attribute name as a JSON string (names repeat in every ad of a listing: cached)."""
    return _json_string(name)


def _json_string(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:  # the common case, without a loop per character
        return '"' + text + '"'
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    escape = _JSON_ESCAPES.get(char)
    return escape if escape is not None else f"\\u{ord(char):04X}"


def _expr_string(expr: Expr) -> str:
    # Only the slashes of the /Expr(...)/ marker are escaped (observed).
    return '"\\/Expr(' + _json_string(unparse(expr))[1:-1] + ')\\/"'


def _scalar(expr: Literal) -> str:
    value = expr.val
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, UndefinedType):
        return "null"
    if isinstance(value, RelTime):
        return format_real(float(value.seconds), old=True)
    if isinstance(value, (bool, int)) or (isinstance(value, float) and math.isfinite(value)):
        return format_scalar(value, old=True)  # JSON booleans and numbers read as in wire syntax
    return _expr_string(expr)  # absTime, error, NaN, INF: as an expression


def _emit(expr: Expr, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(expr, RecordExpr):
        out.append("{\n")
        members = list(expr.items())
        for i, (name, value) in enumerate(members):
            out.append(f"{pad}  {_json_string(name)}: ")
            _emit(value, indent + 2, out)
            out.append(",\n" if i + 1 < len(members) else "\n")
        out.append(pad + "}")
    elif isinstance(expr, ListExpr):
        out.append("[\n")
        for i, item in enumerate(expr.items):
            out.append(pad + "  ")
            _emit(item, indent + 2, out)
            out.append(",\n" if i + 1 < len(expr.items) else "\n")
        out.append(pad + "]")
    elif isinstance(expr, Literal):
        out.append(_scalar(expr))
    else:
        out.append(_expr_string(expr))


def ad_to_json(ad: ClassAd) -> str:
    """The JSON text of one ad, byte-compatible with the reference's ``printJson``.

    Members whose wire text is a plain literal (most of a query result) are written straight
    from that text, without building expression nodes: this keeps ``--json`` of a large query
    as cheap as the ``Name = value`` form.
    """
    entries = sorted(ad.entry_table().values(), key=_member_order)
    if not entries:
        return "{\n}"
    members = []
    for name, stored, _ in entries:
        text = _plain_literal_json(stored) if isinstance(stored, str) else None
        if text is None:
            out: list[str] = []
            _emit(ad.lookup(name), 2, out)
            text = "".join(out)
        members.append(f"  {_json_name(name)}: {text}")
    return "{\n" + ",\n".join(members) + "\n}"


#: Sorted-column plans by (names, only): the order of a shape's names and the names kept.
_PLANS: dict[tuple[tuple[str, ...], frozenset[str] | None], tuple[Any, tuple[str, ...]]] = {}
_PLANS_MAX = 256


def sorted_columns(
    ad: ClassAd, only: frozenset[str] | None = None
) -> tuple[tuple[str, ...], Sequence[str]]:
    """An ad's names and wire texts sorted case-insensitively by name, as condor_q and
    condor_status print whole ads; ``only``: just these lower-cased names (``-attributes``).

    The order is computed once per shape (every ad of a large query shares its names)."""
    names, texts = ad.raw_columns()
    getter, kept = column_plan(names, only)
    return kept, getter(texts)


def column_plan(
    names: tuple[str, ...], only: frozenset[str] | None = None
) -> tuple[Callable[[Sequence[Any]], tuple[Any, ...]], tuple[str, ...]]:
    """How :func:`sorted_columns` orders the values of an ad with these names: a getter that
    picks them from the ad's values in the printed order, and the printed names (made once per
    names tuple, which every ad of one shape shares)."""
    key = (names, only)
    plan = _PLANS.get(key)
    if plan is None:
        order = _column_order(names, only)
        if len(order) > 1:
            getter: Any = itemgetter(*order)
        elif order:
            getter = _single(order[0])
        else:
            getter = _nothing
        plan = (getter, tuple(names[i] for i in order))
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _column_order(names: Sequence[str], only: frozenset[str] | None) -> list[int]:
    """Positions of ``names`` sorted case-insensitively (``only``: just these lower-cased)."""
    order = sorted(range(len(names)), key=lambda i: names[i].lower())
    if only is not None:
        order = [i for i in order if names[i].lower() in only]
    return order


def _single(index: int) -> Any:
    return lambda seq: (seq[index],)


def _nothing(seq: Sequence[str]) -> tuple[str, ...]:
    return ()


class _MemberNames(dict[str, str]):
    """``  "Name": `` by name, made on first use."""

    def __missing__(self, name: str) -> str:
        if len(self) >= 65536:
            self.clear()
        text = self[name] = f"  {_json_string(name)}: "
        return text


class _PlainValues(dict[str, "str | None"]):
    """The JSON of a plain wire text (see :func:`_plain_literal_json`), remembered: the ads of
    one query repeat most values."""

    def __missing__(self, text: str) -> str | None:
        value = _plain_literal_json(text)
        if len(text) <= 64:
            if len(self) >= 65536:
                self.clear()
            self[text] = value
        return value


_MEMBER_NAMES = _MemberNames()


class _JsonTemplates(dict[tuple[str, ...], str]):
    """The JSON object of an ad with these member names (in this order) as a ``%`` template,
    made on first use: one C-level formatting per ad instead of a concatenation per member."""

    def __missing__(self, names: tuple[str, ...]) -> str:
        if len(self) >= 256:
            self.clear()
        members = (_MEMBER_NAMES[name].replace("%", "%%") + "%s" for name in names)
        text = self[names] = "{\n" + ",\n".join(members) + "\n}"
        return text


_JSON_TEMPLATES = _JsonTemplates()
#: The JSON of non-plain wire texts (expressions, lists, nested ads), by text; bounded.
_EXPRESSIONS: dict[str, str] = {}
_PLAIN_VALUES = _PlainValues()


def ad_to_json_sorted(ad: ClassAd, only: frozenset[str] | None = None) -> str:
    """The JSON text of one ad with its members sorted case-insensitively, as condor_q and
    condor_status ``-json`` print them (from the received texts, see :func:`sorted_columns`)."""
    names, texts = sorted_columns(ad, only)
    if not names:
        return "{\n}"
    values = list(map(_PLAIN_VALUES.__getitem__, texts))
    if None in values:
        for index, value in enumerate(values):
            if value is None:
                values[index] = _expression_json(ad, names[index], texts[index])
    return _JSON_TEMPLATES[names] % tuple(values)


def _expression_json(ad: ClassAd, name: str, text: str) -> str:
    """The JSON of a member whose wire text is not a plain literal (remembered by its text)."""
    json_text = _EXPRESSIONS.get(text)
    if json_text is None:
        out: list[str] = []
        _emit(ad.lookup(name), 2, out)
        json_text = "".join(out)
        if len(text) <= 4096:  # an expression's JSON depends on its text alone
            if len(_EXPRESSIONS) >= 4096:
                _EXPRESSIONS.clear()
            _EXPRESSIONS[text] = json_text
    return json_text


#: Wire texts that are their own JSON: a string with no escape and no control character (as
#: :func:`_plain_literal_json` passes them on), a canonical non-negative integer.
_SAME_IN_JSON = re.compile(rb'"[^"\\\x00-\x1f]*"|0|[1-9][0-9]{0,17}')


#: What :data:`_PLAIN_VALUE_BYTES` gives for a value that is not a plain literal (bytes, so
#: that finding it in a list compares bytes with bytes: no JSON text is a lone NUL).
_NOT_PLAIN = b"\0"


class _PlainValueBytes(dict[bytes, bytes]):
    """:class:`_PlainValues` keyed and answered in received bytes."""

    def __missing__(self, raw: bytes) -> bytes:
        value: bytes
        if _SAME_IN_JSON.fullmatch(raw) is not None:
            value = raw  # (a value unique to each ad -- an id, a time -- takes this path)
        else:
            text = _plain_literal_json(raw.decode("utf-8", "surrogateescape"))
            value = _NOT_PLAIN if text is None else _utf8(text)
        if len(raw) <= 64:
            if len(self) >= 65536:
                self.clear()
            self[raw] = value
        return value


class _JsonByteTemplates(dict[tuple[str, ...], bytes]):
    """:data:`_JSON_TEMPLATES` as bytes."""

    def __missing__(self, names: tuple[str, ...]) -> bytes:
        if len(self) >= 256:
            self.clear()
        template = self[names] = _utf8(_JSON_TEMPLATES[names])
        return template


_PLAIN_VALUE_BYTES = _PlainValueBytes()
#: :data:`_EXPRESSIONS` by received bytes, as bytes.
_EXPRESSION_BYTES: dict[bytes, bytes] = {}
_JSON_BYTE_TEMPLATES = _JsonByteTemplates()


def ad_to_json_sorted_bytes(ad: ClassAd, only: frozenset[str] | None = None) -> bytes | None:
    """:func:`ad_to_json_sorted` as UTF-8 bytes, made from the values as received (no text
    decoded, none encoded: a listing of 40 000 jobs writes them as they came); ``None`` for
    an ad not read from the wire (use the text form)."""
    names, raws = ad.raw_values()
    if not raws or raws[0].__class__ is not bytes:
        return None
    getter, kept = column_plan(names, only)
    if not kept:
        return b"{\n}"
    picked: tuple[bytes, ...] = getter(raws)
    values = list(map(_PLAIN_VALUE_BYTES.__getitem__, picked))
    index = -1
    while True:  # the few expressions, found by C-level scans
        try:
            index = values.index(_NOT_PLAIN, index + 1)
        except ValueError:
            break
        raw = picked[index]
        json_bytes = _EXPRESSION_BYTES.get(raw)
        if json_bytes is None:
            text = raw.decode("utf-8", "surrogateescape")
            json_bytes = _utf8(_expression_json(ad, kept[index], text))
            if len(raw) <= 4096:  # as _EXPRESSIONS
                if len(_EXPRESSION_BYTES) >= 4096:
                    _EXPRESSION_BYTES.clear()
                _EXPRESSION_BYTES[raw] = json_bytes
        values[index] = json_bytes
    return _JSON_BYTE_TEMPLATES[kept] % tuple(values)


def _compact(json_text: str, lower: bool) -> str:
    """An indented JSON value on one line (a raw newline never occurs inside a JSON string,
    so dropping each line's indentation is exact); ``lower``: member names lower-cased."""
    lines = json_text.split("\n")
    if not lower:
        return "".join([line.lstrip(" ") for line in lines])
    out = []
    for line in lines:
        line = line.lstrip(" ")
        if line[:1] == '"':
            # A member line is '"Name": value'.  Inside a string a quote is always escaped, so
            # a '": ' with no backslash before it ends a member name (a string list item has
            # none, or only escaped ones).
            end = line.find('": ')
            if end > 0 and "\\" not in line[1:end]:
                line = line[:end].lower() + line[end:]
        out.append(line)
    return "".join(out)


class _CompactPlan:
    """How to write the ads of one shape compactly: which texts in which order, and each
    member's ``"Name":`` prefix (``,`` before all but the first)."""

    __slots__ = (
        "assembly",
        "getter",
        "masked",
        "names",
        "order",
        "plain",
        "prefixes",
        "source",
        "template",
        "template_bytes",
    )

    def __init__(
        self,
        source: tuple[str, ...],
        only: frozenset[str] | None,
        lower: bool,
        masked: frozenset[str] | None = None,
        plain: tuple[int, ...] = (),
    ):
        order = _column_order(source, only)
        #: Source positions in the written order.
        self.order = tuple(order)
        #: Source positions whose received bytes are their JSON (see ``wire.PlainNames``).
        self.plain = plain
        self.source = source  # the shape's names tuple (identity checked on use)
        self.names = tuple(source[i] for i in order)
        #: Positions (in the written order) whose value is replaced by the mask.
        self.masked = tuple(
            i for i, name in enumerate(self.names) if masked and name.lower() in masked
        )
        self.getter: Any = (
            itemgetter(*order) if len(order) > 1 else _single(order[0]) if order else _nothing
        )
        self.prefixes = tuple(
            ("," if i else "") + _json_string(name.lower() if lower else name) + ": "
            for i, name in enumerate(self.names)
        )
        #: The whole object with a ``%s`` per value: one C-level pass joins an ad (1.6x faster
        #: than joining ``prefix + value`` pairs, measured on 80 members).
        self.template = "{" + "".join(p.replace("%", "%%") + "%s" for p in self.prefixes) + "}"
        #: :attr:`template` in UTF-8 for :func:`ad_to_json_compact_bytes` (made on first use).
        self.template_bytes: bytes | None = None
        #: How :func:`columns_json_bytes` fills :attr:`template_bytes` (made on first use).
        self.assembly: _Assembly | None = None

    def assemble(self, mask: bytes) -> _Assembly:
        """:attr:`assembly`: the values to convert (neither plain nor masked), and where each
        member's JSON is in ``values + converted + (mask,)``."""
        masked = {self.order[i] for i in self.masked}
        plain = frozenset(self.plain)
        convert = [i for i in self.order if i not in plain and i not in masked]
        converted = {source: len(self.source) + k for k, source in enumerate(convert)}
        mask_at = len(self.source) + len(convert)
        final = [
            mask_at if source in masked else converted.get(source, source) for source in self.order
        ]
        self.assembly = assembly = (_tuple_getter(convert), _tuple_getter(final), (mask,))
        return assembly


#: A plan's filling of its template: the getter of the values to convert, the getter of the
#: members' JSON from ``values + converted + mask``, and ``mask`` (a 1-tuple).
_Assembly = tuple[Callable[[Any], tuple[Any, ...]], Callable[[Any], tuple[Any, ...]], tuple[bytes]]


def _tuple_getter(positions: Sequence[int]) -> Callable[[Any], tuple[Any, ...]]:
    """``itemgetter(*positions)`` that always gives a tuple (also of one or no item)."""
    if len(positions) > 1:
        getter: Callable[[Any], tuple[Any, ...]] = itemgetter(*positions)
        return getter
    return _single(positions[0]) if positions else _nothing


#: Compact plans by (id of the names tuple, only, lower), and by the names themselves for ads
#: whose names tuple is built anew each time (not read from the wire).  Bounded.
_PlanKey = tuple[frozenset[str] | None, bool, frozenset[str] | None]
_COMPACT_BY_ID: dict[tuple[int, _PlanKey], _CompactPlan] = {}
_COMPACT_BY_NAMES: dict[tuple[tuple[str, ...], _PlanKey, tuple[int, ...]], _CompactPlan] = {}


def _compact_plan(
    names: tuple[str, ...],
    only: frozenset[str] | None,
    lower: bool,
    masked: frozenset[str] | None = None,
) -> _CompactPlan:
    options = (only, lower, masked)
    plan = _COMPACT_BY_ID.get((id(names), options))
    if plan is not None and plan.source is names:
        return plan
    plain: tuple[int, ...] = getattr(names, "plain", ())  # wire.PlainNames
    plan = _COMPACT_BY_NAMES.get((names, options, plain))
    if plan is None:
        plan = _CompactPlan(names, only, lower, masked, plain)
        if len(_COMPACT_BY_NAMES) >= _PLANS_MAX:
            _COMPACT_BY_NAMES.clear()
        _COMPACT_BY_NAMES[names, options, plain] = plan
    if len(_COMPACT_BY_ID) >= _PLANS_MAX:
        _COMPACT_BY_ID.clear()
    plan.source = names
    _COMPACT_BY_ID[id(names), options] = plan
    return plan


class _ValueCache(dict[_Text, _Text], Generic[_Text]):
    """Compact JSON of wire values (plain or not: a value's JSON depends on its text alone), as
    the ads of one query repeat most values: by text (JSON text) or by received bytes (JSON in
    UTF-8).  Bounded in characters or bytes held.  A cache by bytes made with ``lower``
    converts a value it misses (``cache[raw]`` is always its JSON)."""

    __slots__ = ("held", "lower")
    LIMIT = 1 << 22
    LONGEST = 4096

    def __init__(self, lower: bool | None = None) -> None:
        super().__init__()
        self.held = 0
        self.lower = lower

    def __missing__(self, raw: _Text) -> _Text:
        if self.lower is None or raw.__class__ is not bytes:
            raise KeyError(raw)
        value: Any = _raw_value_json(raw, "Value", self.lower)
        self.remember(raw, value)
        return value  # type: ignore[no-any-return]

    def remember(self, text: _Text, value: _Text) -> None:
        if len(text) > self.LONGEST:
            return
        if self.held + len(text) + len(value) > self.LIMIT:
            self.clear()
            self.held = 0
        self[text] = value
        self.held += len(text) + len(value)


_COMPACT_VALUES: dict[bool, _ValueCache[str]] = {False: _ValueCache(), True: _ValueCache()}


def ad_to_json_compact(
    ad: ClassAd,
    only: frozenset[str] | None = None,
    *,
    lower: bool = False,
    masked: frozenset[str] | None = None,
    mask: str = "",
) -> str:
    """:func:`ad_to_json_sorted` on one line with no indentation (``"Name": value`` members
    joined by ``,``): JSON Lines and HTTP bodies.  ``lower``: member names lower-cased, nested
    ones too (htcondor-restd's convention).  ``masked`` (lower-cased names): those members are
    written with the string ``mask`` as their value (redaction, planned once per shape instead of
    looked up in every ad; the ad is not changed).  Written directly from the received texts with
    a plan per shape and a cache of value texts: a listing's per-ad cost is a few lookups."""
    names, texts = ad.raw_columns()
    plan = _compact_plan(names, only, lower, masked or None)
    if not plan.names:
        return "{}"
    ordered = plan.getter(texts)
    cache = _COMPACT_VALUES[lower]
    values = list(map(cache.get, ordered))
    if plan.masked:
        masked_json = _json_string(mask)
        for index in plan.masked:
            values[index] = masked_json
    if None in values:
        for index, value in enumerate(values):
            if value is None:
                text = ordered[index]
                json_text = _plain_literal_json(text)
                if json_text is None:
                    out: list[str] = []
                    _emit(ad.lookup(plan.names[index]), 2, out)
                    json_text = "".join(out)
                if "\n" in json_text:  # a list or nested ad
                    json_text = _compact(json_text, lower)
                cache.remember(text, json_text)
                values[index] = json_text
    result: str = plan.template % tuple(values)
    return result


_COMPACT_BYTES: dict[bool, _ValueCache[bytes]] = {
    False: _ValueCache(lower=False),
    True: _ValueCache(lower=True),
}
_NEEDS_ESCAPE_BYTES = re.compile(rb'["\\\x00-\x1f]')


def ad_to_json_compact_bytes(
    ad: ClassAd,
    only: frozenset[str] | None = None,
    *,
    lower: bool = False,
    masked: frozenset[str] | None = None,
    mask: str = "",
) -> bytes:
    """:func:`ad_to_json_compact` in UTF-8, written from the values' received bytes when the ad
    still holds them (a streamed listing's ads): no decoding of the ad into text, nor encoding
    of its JSON back to bytes, and a value's JSON is looked up by its bytes.  Any other ad goes
    through :func:`ad_to_json_compact`.  Bytes that were not UTF-8 on the wire are written back
    as they came (``surrogateescape``), never an error in the middle of a listing."""
    names, raws = ad.raw_values()
    if not raws or raws[0].__class__ is not bytes:
        return _utf8(ad_to_json_compact(ad, only, lower=lower, masked=masked, mask=mask))
    return columns_json_bytes(names, raws, only, lower=lower, masked=masked, mask=mask)  # type: ignore[arg-type]


def columns_json_bytes(
    names: tuple[str, ...],
    raws: Sequence[bytes],
    only: frozenset[str] | None = None,
    *,
    lower: bool = False,
    masked: frozenset[str] | None = None,
    mask: str = "",
) -> bytes:
    """:func:`ad_to_json_compact_bytes` of the ad whose wire names are ``names`` (no name twice)
    and whose values are ``raws``, as received: what a reader that never builds the ad (a
    listing transcoded from the schedd's messages straight to JSON) writes.  ``names`` is best
    the same tuple object for every ad of a shape (the plan is found by its identity)."""
    plan = _compact_plan(names, only, lower, masked or None)
    template = plan.template_bytes
    if template is None:
        template = plan.template_bytes = _utf8(plan.template)
    if not plan.names:
        return b"{}"
    convert, final, mask_json = plan.assembly or plan.assemble(_utf8(_json_string(mask)))
    if raws.__class__ is not tuple:
        raws = tuple(raws)
    # All C-level: the few values that are not plain looked up (converted on a miss), then
    # every member's JSON picked in the written order and put into the template at once.
    try:
        converted = tuple(map(_COMPACT_BYTES[lower].__getitem__, convert(raws)))
    except ClassAdParseError:
        for position in convert(range(len(names))):  # the error again, naming the attribute
            _raw_value_json(raws[position], names[position], lower)
        raise
    result: bytes = template % final(raws + converted + mask_json)
    return result


def _raw_value_json(raw: bytes, name: str, lower: bool) -> bytes:
    """The compact JSON of one received value (see :func:`_plain_literal_json`), in UTF-8."""
    if raw.isascii():  # the two commonest new values, checked on the bytes themselves
        if len(raw) < 19 and raw.isdigit() and (raw[0] != 0x30 or raw == b"0"):
            return raw  # a canonical non-negative integer
        if (
            len(raw) > 1
            and raw[0] == 0x22
            and raw[-1] == 0x22
            and _NEEDS_ESCAPE_BYTES.search(raw, 1, len(raw) - 1) is None
        ):
            return raw  # a string without escapes
    text = raw.decode("utf-8", "surrogateescape")
    json_text = _plain_literal_json(text)
    if json_text is None:
        # The value as the ad would parse it (its JSON depends on its text alone).
        out: list[str] = []
        _emit(ClassAd.from_raw_lines([f"{name} = {text}"]).lookup(name), 2, out)
        json_text = "".join(out)
    if "\n" in json_text:  # a list or nested ad
        json_text = _compact(json_text, lower)
    return _utf8(json_text)


def _utf8(text: str) -> bytes:
    """JSON text as bytes; text decoded with ``surrogateescape`` gets its original bytes back."""
    return text.encode("utf-8", "surrogateescape")


def _member_order(entry: tuple[str, object, object]) -> tuple[int, str]:
    """:func:`storage_key` as a ``str`` pair, so an ASCII name (the fast path, no encoding) and
    a non-ASCII one of the same byte length compare (bytes against str raised TypeError): the
    UTF-8 bytes read as Latin-1 order exactly as the bytes do."""
    name = entry[0]
    if name.isascii():
        return len(name), name.lower()
    length, raw = storage_key(name)
    return length, raw.decode("latin-1")


@functools.lru_cache(maxsize=1 << 16)
def _plain_literal_json(text: str) -> str | None:
    """The JSON of a wire value that is a plain int, real, boolean or escape-free string."""
    if (
        len(text) > 1
        and text[0] == '"'
        and text[-1] == '"'
        and _NEEDS_ESCAPE.search(text, 1, len(text) - 1) is None
    ):
        return text  # a string without escapes reads the same in both syntaxes
    if len(text) < 19 and text.isdigit() and text.isascii() and (text[0] != "0" or text == "0"):
        return text  # a canonical non-negative integer
    value = simple_value(text)
    if value is None:
        return None
    if isinstance(value, str):
        return _json_string(value)
    return format_scalar(value, old=True)


def attribute_json(ad: ClassAd, name: str) -> str:
    """One ``  "Name": value`` member of an ad's JSON object (for tools that order members)."""
    out = [f"  {_json_string(ad.spelling(name))}: "]
    _emit(ad.lookup(name), 2, out)
    return "".join(out)


class _ExprText(str):
    """A JSON string written ``"\\/Expr(...)\\/"``: the only form the reference reads as an
    expression (observed: ``"/Expr(1)/"`` with plain slashes stays a string; "Expr" is
    matched in any case)."""


_EXPR_RAW = re.compile(r"\\/expr\(.*\)\\/", re.IGNORECASE | re.DOTALL)


def _scan_string(text: str, end: int, strict: bool = True) -> tuple[str, int]:
    # scanstring and py_make_scanner are public in the json package but not in its stubs.
    value, after = json.decoder.scanstring(text, end, strict)  # type: ignore[attr-defined]
    if _EXPR_RAW.fullmatch(text, end, after - 1):
        return _ExprText(value), after
    return value, after


class _ExprDecoder(json.JSONDecoder):
    """``json.loads`` that still knows which strings were written with escaped slashes."""

    def __init__(self) -> None:
        super().__init__()
        self.parse_string = _scan_string
        self.scan_once = json.scanner.py_make_scanner(self)  # type: ignore[attr-defined]


def _from_json_value(value: Any) -> Any:
    if value is None:
        return Undefined
    if isinstance(value, _ExprText):
        return parse_expr(value[6:-2])
    if isinstance(value, dict):
        return {k: _from_json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json_value(v) for v in value]
    return value


def ad_from_json(text: str) -> ClassAd:
    """One ad from its JSON text (a JSON object)."""
    try:
        # Only text with an escaped slash can hold an expression; the rest takes the C reader.
        data = json.loads(text, cls=_ExprDecoder) if "\\/" in text else json.loads(text)
    except ValueError as exc:
        raise ClassAdParseError(f"invalid ClassAd JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ClassAdParseError("ClassAd JSON must be an object")
    return ClassAd(_from_json_value(data))


def ad_from_json_object(data: Mapping[str, Any]) -> ClassAd:
    """One ad from an already decoded JSON object (an HTTP or MCP body), in which a string
    ``"/Expr(...)/"`` is an expression: once decoded, the escaped slashes that mark one in raw
    JSON text (see :func:`ad_from_json`) can no longer be told apart, so every slash is written
    escaped again (the same string to JSON)."""
    return ad_from_json(json.dumps(data).replace("/", "\\/"))


__all__ = [
    "ad_from_json",
    "ad_from_json_object",
    "ad_to_json",
    "ad_to_json_compact_bytes",
    "ad_to_json_sorted",
    "ad_to_json_sorted_bytes",
    "column_plan",
    "columns_json_bytes",
    "sorted_columns",
]
