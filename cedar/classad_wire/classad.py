"""The ClassAd: a case-insensitive mapping from attribute names to expressions.

Values received from the wire are kept as their raw right-hand-side text and parsed on first
access, because query results can hold thousands of ads of which a caller reads a few
attributes.  A raw value that turns out not to parse raises :class:`ClassAdParseError` naming the
attribute when it is first used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

from cedar.classad_wire.analysis import external_refs, flatten, internal_refs
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import (
    UPCALLS,
    AttrRef,
    Expr,
    Literal,
    RecordExpr,
    fold,
    make_literal,
    storage_key,
    to_expr,
)
from cedar.classad_wire.syntax import parse_expr, simple_value
from cedar.classad_wire.unparse import format_name, unparse
from cedar.errors import ClassAdError, ClassAdParseError

_LINE_WS = " \t\r\n\v\f"
#: A ``Name = value`` line as condor writes ads to files: ASCII name, one space each side.
_NON_BLANK = re.compile(r"^[ \t\r\v\f]*[^\s]", re.MULTILINE)
_RAW_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) = ([^\s].*?)[ \t\r\v\f]*$", re.MULTILINE)

#: One attribute: (spelling, Expr or raw wire text, Python value of that raw text or None).
Entry = tuple[str, Any, Any]


class AdShape:
    """The attribute names of wire ads, shared by every ad that lists the same names in order.

    The ads of one query mostly list the same names (every slot of a pool has the same
    attributes): one shape holds their spellings, folded keys and positions, so such an ad keeps
    only its values and reading it builds no table.  Folded keys are distinct (so no spelling
    of one name is the key of another).  ``seen`` counts
    the ads read with it; :mod:`cedar.classad_wire.wire` keeps compiled readers in ``readers``
    (by crypto mode) for shapes that recur.
    """

    __slots__ = ("index", "keys", "names", "readers", "seen")

    def __init__(self, names: tuple[str, ...], keys: tuple[str, ...]) -> None:
        self.names = names
        self.keys = keys
        # Positions by folded key, and by spelling too (no folding for names read as sent).
        self.index = {name: position for position, name in enumerate(names)}
        self.index.update((key, position) for position, key in enumerate(keys))
        self.seen = 0
        self.readers: dict[bool, Any] = {}

    def __repr__(self) -> str:
        return f"<AdShape of {len(self.names)} names>"


#: Shapes by their names, bounded in shapes and in names held: a peer sending ever new (or
#: huge) shapes only makes them churn.  A shape larger than the whole bound is not kept.
_SHAPES: dict[tuple[str, ...], AdShape] = {}
_SHAPES_MAX = 256
_SHAPES_MAX_NAMES = 1 << 16
_shapes_names = [0]  # names held by _SHAPES


def ad_shape(names: tuple[str, ...]) -> AdShape | None:
    """The shared shape of ``names`` (``None`` when two of them fold to the same key)."""
    shape = _SHAPES.get(names)
    if shape is None:
        ascii_names = all(map(str.isascii, names))
        keys = tuple(map(str.lower if ascii_names else fold, names))
        if len(set(keys)) != len(keys):
            return None
        shape = AdShape(names, keys)
        if len(names) <= _SHAPES_MAX_NAMES:
            if len(_SHAPES) >= _SHAPES_MAX or _shapes_names[0] + len(names) > _SHAPES_MAX_NAMES:
                _SHAPES.clear()
                _shapes_names[0] = 0
            _SHAPES[names] = shape
            _shapes_names[0] += len(names)
    return shape


#: Value types that are their own evaluation result (see ClassAd.eval).
_SCALAR_TYPES = frozenset((int, float, str, bool))

#: Python values of raw wire texts (str or bytes) that are simple immutable literals: the ads of
#: one query repeat most values.  Bounded in entries and length.
_RAW_VALUES: dict[str | bytes, Any] = {}
_RAW_VALUES_MAX = 16384
_RAW_VALUE_LENGTH = 64


#: Parsed wire values that needed the full parser, by text.  The ads of one query mostly share
#: their expressions (every slot of a pool has the same ``Start``, ``Requirements``, ...), and
#: expression trees are immutable, so one tree can serve them all.  Bounded in entries and in
#: text length, so a peer cannot make it hold much.
_PARSED: dict[str, Expr] = {}
_PARSED_MAX_ENTRIES = 512
_PARSED_MAX_TEXT = 1024


def _parse_wire_value(text: str, spelling: str) -> Expr:
    """A wire right-hand side that is not a simple literal, through the shared cache (§2.8);
    a parse error names the attribute ``spelling``."""
    expr = _PARSED.get(text)
    if expr is None:
        try:
            expr = parse_expr(text, old=True, full=False)
        except ClassAdParseError as exc:
            raise ClassAdParseError(f"attribute {spelling!r}: {exc}") from None
        if len(text) <= _PARSED_MAX_TEXT:
            if len(_PARSED) >= _PARSED_MAX_ENTRIES:
                _PARSED.clear()
            _PARSED[text] = expr
    return expr


#: Expression trees of raw wire texts looked up without building the ad's entry table (an
#: evaluator reads a few attributes of each of 100 000 slot ads), by raw text; bounded like
#: :data:`_RAW_VALUES`.  Trees are immutable, so one serves every ad holding the same text.
_RAW_EXPRS: dict[str | bytes, Expr] = {}


def _raw_expr(raw: str | bytes, spelling: str) -> Expr:
    """The expression of one raw wire value, as :meth:`ClassAd.lookup` would build it."""
    expr = _RAW_EXPRS.get(raw)
    if expr is None:
        text = _text(raw)
        native = simple_value(text)
        expr = make_literal(native) if native is not None else _parse_wire_value(text, spelling)
        if len(raw) <= _PARSED_MAX_TEXT:
            if len(_RAW_EXPRS) >= _RAW_VALUES_MAX:
                _RAW_EXPRS.clear()
            _RAW_EXPRS[raw] = expr
    return expr


def _text(raw: str | bytes) -> str:
    """A raw wire value as text (bytes from the wire keep undecodable bytes, 02 §2.8)."""
    return raw if isinstance(raw, str) else raw.decode("utf-8", "surrogateescape")


def _texts(raws: Sequence[bytes]) -> Sequence[str]:
    """Raw wire values as texts: one decode for them all.  Wire values hold no NUL (a CEDAR
    string ends at its first), and UTF-8 decoding never joins bytes across an ASCII NUL, so
    this is :func:`_text` of each; values holding a NUL anyway are decoded one by one."""
    try:
        joined = b"\0".join(raws)
    except TypeError:  # a value set since, as text
        return [_text(raw) for raw in raws]
    texts = joined.decode("utf-8", "surrogateescape").split("\0")
    if len(texts) != len(raws):
        return [_text(raw) for raw in raws]
    return texts


def split_line(line: str) -> tuple[str, str]:
    """Split an ``Name = expr`` line per spec 02 §2.8 step 3; raises on a missing ``=``/name."""
    body = line.lstrip(_LINE_WS)
    eq = body.find("=")
    if eq < 0:
        raise ClassAdParseError(f"ad line has no '=': {_preview(line)}")
    name = body[:eq].rstrip(" ")
    if not name:
        raise ClassAdParseError(f"ad line has an empty attribute name: {_preview(line)}")
    return name, body[eq + 1 :].lstrip(" ")


def _preview(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


class ClassAd(MutableMapping[str, Any]):
    """A ClassAd.  Keys are case-insensitive and keep the spelling they were first set with.

    ``ad[name]`` gives a Python value for literals (int, float, str, bool, list, ClassAd,
    Undefined, Error, AbsTime, RelTime) and an :class:`Expr` for anything else; ``ad.lookup``
    always gives the expression.  Iteration follows insertion order.
    """

    __slots__ = ("_entries", "_shape", "_values", "_wire", "_match")
    _match: re.Match[bytes]  # only while an ad from from_match has not made its values
    # Entries, by folded name: (spelling, Expr or raw wire text, value of that text or None).
    # They are immutable tuples, replaced on every change: a query result holds hundreds of
    # thousands, and tuples of strings and numbers drop out of the garbage collector's sight.
    # The third item caches the Python value of a raw simple literal (see simple_value), so
    # reading values builds no expression nodes.

    def __init__(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None):
        self._entries: dict[str, Entry] = {}
        # A wire ad's shape and values until its entry table is built (see from_shape).
        self._shape: AdShape | None = None
        self._values: Sequence[str] | Sequence[bytes] = ()
        # put_classad's encodings of this ad, by options; any change drops them.
        self._wire: dict[Any, Any] | None = None
        if values is not None:
            self.update(values)

    # -- storage ---------------------------------------------------------------------------
    @classmethod
    def from_shape(cls, shape: AdShape, values: Sequence[str] | Sequence[bytes]) -> ClassAd:
        """An ad read from the wire: a shared shape and the raw value texts, in its order
        (for the wire reader, :mod:`cedar.classad_wire.wire`).

        The entry table is only built when the ad is changed or used beyond reading names and
        values (iteration, ``ad[name]``, ``in`` and ``len`` work on the shape directly).
        """
        ad = cls.__new__(cls)
        ad._shape = shape  # two slots, not a tuple: one object less for the collector to track
        ad._values = values
        ad._wire = None
        return ad

    @classmethod
    def from_match(cls, shape: AdShape, match: re.Match[bytes]) -> ClassAd:
        """As :meth:`from_shape`, the values being the groups of ``match``, taken on first use.

        Most ads of a large query are only counted, filtered on a few names or passed on, so
        making a bytes object for each of their values up front would be wasted work.
        """
        ad = cls.__new__(cls)
        ad._shape = shape
        ad._match = match  # _values stays empty until __getattr__ fills it
        ad._wire = None
        return ad

    if not TYPE_CHECKING:  # hidden from type checkers: no attribute of ClassAd is dynamic

        def __getattr__(self, name: str) -> Any:
            # Only reached for an empty slot: _values of an ad from from_match, _entries of an
            # ad from from_shape or from_match.
            if name == "_values":
                try:
                    match = self._match
                except AttributeError:
                    raise AttributeError("_values") from None
                self._values = values = match.groups()
                del self._match  # the match holds the whole piece of the reply
                return values
            if name != "_entries":
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            return self._materialize()

    def _materialize(self) -> dict[str, Entry]:
        """Build the entry table of an ad from :meth:`from_shape` (on its first such use)."""
        try:
            shape = self._shape
        except AttributeError:
            raise AttributeError("_entries") from None
        if shape is None:
            raise AttributeError("_entries")
        values = self._values
        texts = _texts(values) if values and values[0].__class__ is bytes else values  # type: ignore[arg-type]
        entries: dict[str, Entry] = dict(
            zip(shape.keys, zip(shape.names, texts, repeat(None)), strict=True)
        )
        self._entries = entries
        self._shape = None
        self._values = ()
        return entries

    def entry_table(self) -> dict[str, Entry]:
        """The entries by folded name: ``(spelling, Expr or received wire text, cached value)``.

        For this package's codecs (JSON, wire), which write from the received texts; the table
        is the ad's own, so a caller changes it only as the ad's methods do.
        """
        return self._entries

    @property
    def wire_cache(self) -> dict[Any, Any] | None:
        """:func:`~cedar.classad_wire.wire.put_classad`'s encodings of this ad, by options
        (``None`` until it was encoded once); any change to the ad drops them."""
        return self._wire

    @wire_cache.setter
    def wire_cache(self, cache: dict[Any, Any] | None) -> None:
        self._wire = cache

    def _pending_value(self, shape: AdShape, position: int, raw: str | bytes) -> Any:
        """``ad[name]`` of a value not yet materialized: simple literals are not parsed.

        Immutable answers (scalars, and expressions, which ``ad[name]`` returns as trees) are
        remembered by their raw text for the next ad that holds the same text.
        """
        text = _text(raw)
        native: Any = simple_value(text)
        if native is None:
            expr = _parse_wire_value(text, shape.names[position])
            if expr.is_literal:
                return expr.value()  # a list or a nested ad: a fresh value every time
            native = expr
            limit = _PARSED_MAX_TEXT
        else:
            limit = _RAW_VALUE_LENGTH
        if len(raw) <= limit:
            if len(_RAW_VALUES) >= _RAW_VALUES_MAX:
                _RAW_VALUES.clear()
            _RAW_VALUES[raw] = native
        return native

    def _set_raw(self, name: str, raw: str) -> None:
        """Store unparsed wire text (used by the wire reader; parsed on first access)."""
        key = fold(name)
        entry = self._entries.get(key)
        self._entries[key] = (name if entry is None else entry[0], raw, None)
        self._wire = None

    def set_expr(self, name: str, expr: Expr) -> None:
        """Set an attribute to an expression tree."""
        if not isinstance(name, str):
            raise TypeError(f"ClassAd attribute names are str, not {type(name).__name__}")
        key = fold(name)
        entry = self._entries.get(key)
        self._entries[key] = (name if entry is None else entry[0], expr, None)
        self._wire = None

    def entry_expr(self, key: str, entry: Entry) -> Expr:
        """The expression of the entry stored under ``key`` (folded) in :meth:`entry_table`,
        parsed (once) if still raw: for this package's codecs, which hold the entry already."""
        value = entry[1]
        if not isinstance(value, str):
            return value  # type: ignore[no-any-return]
        native = entry[2]
        if native is None:
            native = simple_value(value)
        if native is not None:
            # What the parser builds for a simple literal (booleans included: equal nodes).
            expr: Expr = make_literal(native)
        else:
            expr = _parse_wire_value(value, entry[0])
        self._entries[key] = (entry[0], expr, native)
        return expr

    def _value(self, key: str, entry: Entry) -> Any:
        """``ad[name]`` of the entry under ``key``: a raw simple literal's value is not parsed."""
        value = entry[1]
        if isinstance(value, str):
            native = entry[2]
            if native is None:
                native = simple_value(value)
                if native is None:
                    return self.entry_expr(key, entry).value()
                self._entries[key] = (entry[0], value, native)
            return native
        if value.__class__ is Literal:
            return value.val
        return value.value()

    def raw_text(self, name: str) -> str:
        """The wire-syntax text of an attribute (the received text if it was never parsed)."""
        entry = self._entries[fold(name)]
        value = entry[1]
        return value if isinstance(value, str) else unparse(value, old=True)

    def raw_columns(self) -> tuple[tuple[str, ...], Sequence[str]]:
        """The spellings of every attribute and their wire-syntax texts, in the ad's order.

        An ad read from the wire answers from its shared shape and received texts without
        building its entry table (the names tuple is the same object for every ad of a shape,
        so a writer can plan once per shape): the ``-long``/``-json`` writers stream with it.
        """
        shape = self._shape
        if shape is not None:
            values = self._values
            if values and values[0].__class__ is bytes:
                return shape.names, _texts(values)  # type: ignore[arg-type]
            return shape.names, values  # type: ignore[return-value]
        entries = list(self._entries.values())
        return (
            tuple(entry[0] for entry in entries),
            [entry[1] if isinstance(entry[1], str) else unparse(entry[1], old=True)
             for entry in entries],
        )  # fmt: skip

    def raw_values(self) -> tuple[tuple[str, ...], Sequence[str] | Sequence[bytes]]:
        """As :meth:`raw_columns`, but the values as received (an ad read from the wire does not
        decode its bytes): a cheap memo key for what is computed from a few attributes."""
        shape = self._shape
        if shape is not None:
            return shape.names, self._values
        return self.raw_columns()

    def raw_items(self) -> list[tuple[str, str]]:
        """``(spelling, wire-syntax text)`` of every attribute, in the ad's order."""
        names, texts = self.raw_columns()
        return list(zip(names, texts, strict=True))

    # -- mapping protocol ------------------------------------------------------------------
    def __getitem__(self, name: str) -> Any:
        shape = self._shape
        if shape is None:
            key = name.lower() if name.isascii() else fold(name)
            return self._value(key, self._entries[key])
        position = shape.index.get(name)
        if position is None:
            position = shape.index[name.lower() if name.isascii() else fold(name)]
        raw = self._values[position]
        try:
            return _RAW_VALUES[raw]
        except KeyError:
            return self._pending_value(shape, position, raw)

    def __setitem__(self, name: str, value: Any) -> None:
        self.set_expr(name, to_expr(value))

    def __delitem__(self, name: str) -> None:
        del self._entries[fold(name)]
        self._wire = None

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        shape = self._shape
        if shape is None:
            return fold(name) in self._entries
        index = shape.index  # holds the spellings too: most names are asked as they were sent
        return name in index or fold(name) in index

    def __iter__(self) -> Iterator[str]:
        shape = self._shape
        if shape is None:
            return (entry[0] for entry in list(self._entries.values()))
        return iter(shape.names)

    def __len__(self) -> int:
        shape = self._shape
        if shape is None:
            return len(self._entries)
        return len(shape.names)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClassAd):
            if self._entries.keys() != other._entries.keys():
                return False
            return all(
                self.entry_expr(key, entry) == other.entry_expr(key, other._entries[key])
                for key, entry in list(self._entries.items())
            )
        return NotImplemented  # an ad never equals a dict, as in the reference bindings

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> ClassAd:
        """A shallow copy (expressions are immutable, so this is a full copy in effect)."""
        new = ClassAd()
        new._entries = dict(self._entries)  # entries are immutable tuples
        return new

    __copy__ = copy

    def __deepcopy__(self, memo: object) -> ClassAd:
        return self.copy()  # entries are immutable tuples of strings and expression trees

    # -- expressions -----------------------------------------------------------------------
    def lookup(self, name: str) -> Expr:
        """The attribute's expression tree (KeyError when absent)."""
        expr = self.get_expr(name)
        if expr is None:
            raise KeyError(name)
        return expr

    def get_expr(self, name: str) -> Expr | None:
        """The attribute's expression tree, or None when absent.

        An ad read from the wire answers from its shape and raw texts, without building its
        entry table: matching reads a few attributes of every slot ad of a pool."""
        key = fold(name)
        try:
            shape = self._shape
        except AttributeError:
            shape = None
        if shape is not None:
            position = shape.index.get(key)
            if position is None:
                return None
            return _raw_expr(self._values[position], shape.names[position])
        entry = self._entries.get(key)
        return None if entry is None else self.entry_expr(key, entry)

    def spelling(self, name: str) -> str:
        """The stored spelling of a (case-insensitively matched) attribute name."""
        return str(self._entries[fold(name)][0])

    def eval(self, name: str, target: ClassAd | None = None) -> Any:
        """Evaluate an attribute in this ad (matched against ``target``); missing = Undefined.

        An attribute that holds a number, string or boolean literal is its own value (MY comes
        before TARGET): that common case skips the evaluator.  Otherwise the attribute's own
        expression is evaluated, as the reference does: the attribute is not yet "under
        evaluation", so a reference back to it is cut one level deeper (``[r =
        isUndefined(r)]`` gives false, the inner ``r`` being ``isUndefined(undefined)``).
        """
        try:
            value = self[name]
        except (KeyError, ClassAdError):  # absent or unparsable: the evaluator decides
            value = None
        if value.__class__ in _SCALAR_TYPES:
            return value
        try:
            expr = self.get_expr(name)
        except ClassAdError:
            expr = None
        return evaluate(AttrRef(name) if expr is None else expr, self, target)

    def get_string(self, name: str) -> str | None:
        """The attribute's value when it is a string; None when it is absent, of another type or
        cannot be read (the reasons, error strings, names a daemon's reply may carry)."""
        try:
            value = self.get(name)
        except ClassAdError:
            return None
        return value if isinstance(value, str) else None

    def external_refs(self, expr: Expr | str) -> list[str]:
        """Names ``expr`` uses that this ad does not define (``TARGET.X`` as written)."""
        return external_refs(self, _as_expr(expr))

    def internal_refs(self, expr: Expr | str) -> list[str]:
        """Names ``expr`` uses, directly or through other attributes, that this ad defines."""
        return internal_refs(self, _as_expr(expr))

    def flatten(self, expr: Expr | str) -> Expr:
        """``expr`` partially evaluated: what depends only on this ad becomes its value."""
        return flatten(self, _as_expr(expr))

    def sorted_names(self) -> list[str]:
        """Names in the reference's storage order, used for printing (spec 02 §2.3)."""
        return sorted((str(entry[0]) for entry in self._entries.values()), key=storage_key)

    # -- conversions -----------------------------------------------------------------------
    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> ClassAd:
        """Build an ad from a mapping of names to Python values or expressions."""
        return cls(values)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of names to values (nested ads become dicts; expressions stay Expr)."""
        # _value() inlined: this loop is the whole cost of reading a query result's values.
        plain = {}
        entries = self._entries
        for key, entry in list(entries.items()):
            value = entry[1]
            if isinstance(value, str):
                native = entry[2]
                if native is None:
                    native = simple_value(value)
                    if native is None:
                        plain[entry[0]] = _to_plain(self.entry_expr(key, entry).value())
                        continue
                    entries[key] = (entry[0], value, native)
                plain[entry[0]] = native
            elif value.__class__ is Literal:
                plain[entry[0]] = value.val
            else:
                plain[entry[0]] = _to_plain(value.value())
        return plain

    def to_expr(self) -> RecordExpr:
        """The ad as a record expression (``[ ... ]``)."""
        return RecordExpr((name, self.lookup(name)) for name in self)

    def print_new(self) -> str:
        """One-line new-syntax form ``[ a = 1; b = "x" ]``."""
        return unparse(self.to_expr(), old=False)

    def print_old(self) -> str:
        """The long form: one ``Name = value`` line per attribute (spec 02 §3.3).

        Names that are not identifiers are written ``'quoted'`` and an empty ad is one newline,
        as the reference's ``printOld``; order is the reference's storage order.
        """
        if not self._entries:
            return "\n"
        return "".join(
            f"{format_name(name, old=True)} = {self.raw_text(name)}\n"
            for name in self.sorted_names()
        )

    def to_json(self) -> str:
        """The HTCondor JSON form (as printed by the reference's ``printJson``)."""
        return UPCALLS.ad_to_json(self)  # jsonfmt, a floor above

    @classmethod
    def from_json(cls, text: str) -> ClassAd:
        """Parse the HTCondor JSON form of one ad."""
        ad: ClassAd = UPCALLS.ad_from_json(text)  # jsonfmt, a floor above
        return ad

    @classmethod
    def from_raw_text(cls, text: str) -> ClassAd:
        """:meth:`from_raw_lines` of a block of text: when every line is ``Name = value`` (as
        condor writes history files) the lines are split by one regular expression."""
        pairs = _RAW_LINE.findall(text)
        ad = cls()
        ad._entries = {name.lower(): (name, rhs, None) for name, rhs in pairs}
        if len(ad._entries) != len(pairs) or len(pairs) != len(_NON_BLANK.findall(text)):
            # an odd line or a repeated name: the line-by-line reader says what is wrong
            return cls.from_raw_lines(line for line in text.split("\n") if line.strip(_LINE_WS))
        return ad

    @classmethod
    def from_raw_lines(cls, lines: Iterable[str]) -> ClassAd:
        """An ad from ``Name = value`` lines in the wire (old) syntax, each value parsed only
        when it is first used, as for an ad read from the wire (history files hold this form;
        reading 25 000 records must not parse 3 million values).  A line without ``=`` or a
        name raises :class:`ClassAdParseError`; a bad value raises when it is used."""
        ad = cls()
        entries = ad._entries
        for line in lines:
            name, sep, rhs = line.partition(" = ")  # how condor writes them: the fast path
            if not sep or not name or name[0] in _LINE_WS or not rhs or rhs[0] in _LINE_WS:
                name, rhs = split_line(line)
            rhs = rhs.rstrip(_LINE_WS)
            if not rhs:
                raise ClassAdParseError(f"attribute {name!r} has no value")
            key = name.lower() if name.isascii() else fold(name)
            entry = entries.get(key)
            entries[key] = (name if entry is None else entry[0], rhs, None)
        return ad

    @classmethod
    def parse_old(cls, text: str) -> ClassAd:
        """Read the long form: one ``Name = value`` per line; blank and ``#`` lines skipped."""
        ad = cls()
        for number, line in enumerate(text.split("\n"), 1):
            stripped = line.strip(_LINE_WS)
            if not stripped or stripped.startswith("#"):
                continue
            try:
                name, rhs = split_line(line)
                ad.set_expr(name, parse_expr(rhs, old=True, full=False))
            except ClassAdParseError as exc:
                raise ClassAdParseError(f"line {number}: {exc}") from None
        return ad

    @classmethod
    def parse_new(cls, text: str) -> ClassAd:
        """Parse a new-syntax ad literal ``[ a = 1; b = 2 ]``."""
        expr = parse_expr(text, old=False)
        if not isinstance(expr, RecordExpr):
            raise ClassAdParseError("text is not a ClassAd literal [ ... ]", text=text)
        ad = cls()
        for name, value in expr.items():
            ad.set_expr(name, value)
        return ad

    def __repr__(self) -> str:
        return self.print_new()

    def __str__(self) -> str:
        return self.print_new()


def _as_expr(expr: Expr | str) -> Expr:
    return parse_expr(expr) if isinstance(expr, str) else expr


def _to_plain(value: Any) -> Any:
    if isinstance(value, ClassAd):
        return value.to_dict()
    if isinstance(value, list):
        return [_to_plain(v) for v in value]
    return value


__all__ = ["ClassAd", "split_line"]
