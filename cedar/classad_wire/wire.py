"""Putting ClassAds on a CEDAR message and taking them off (spec 02 §2).

The reader is the hot path of every query.  It takes all strings of an ad at once, checks every
line with one regular expression and leaves splitting them to the ad's first use; right-hand
sides stay unparsed until read (see :mod:`cedar.classad_wire.classad`).  Anything unusual goes
through a line-by-line reader, the reference for errors and offsets.  The writer prints every
value in wire syntax; values read from the wire and never touched are re-sent as received only
when they are already in canonical form (plain integers and backslash-free strings), so a
malformed value is never forwarded.  A server's stored ads keep their encoding between queries.
"""

from __future__ import annotations

import gc
import re
import struct
from collections.abc import Callable, Iterable
from itertools import repeat
from operator import add, getitem, itemgetter
from typing import Any

from cedar.classad_wire.classad import AdShape, ClassAd, Entry, ad_shape, split_line
from cedar.classad_wire.expr import AttrRef, Expr, Select, fold
from cedar.classad_wire.syntax import literal_token, parse_expr
from cedar.classad_wire.unparse import unparse
from cedar.errors import ClassAdError, ClassAdParseError, ProtocolError
from cedar.stream.primitives import MessageReader, MessageTruncated, MessageWriter, decode_text

#: Largest attribute count accepted from a peer (spec 02 §2.8 step 1).
MAX_ATTRIBUTES = 1_000_000
#: Largest attribute count accepted before authentication (§2.10).
MAX_HANDSHAKE_ATTRIBUTES = 100
#: The item that announces a secret expression line (§2.7).
SECRET_MARKER = b"ZKM"

#: V1 private attribute names (§2.7), folded.
PRIVATE_V1 = frozenset(
    ("capability", "childclaimids", "claimid", "claimidlist", "claimids", "transferkey")
)
_PRIVATE_V2_PREFIX = "_condor_priv"
#: First version that may receive ``_condor_priv*`` attributes.
_V2_MIN_VERSION = (9, 9, 0)

_CANONICAL_RAW = re.compile(r'-?(?:0|[1-9][0-9]{0,17})|"[^"\\\n]*"|true|false')
_SPECIAL_SCOPES = frozenset(("my", "self", "target", "parent", "root", "toplevel"))
_PROJECTION_SPLIT = re.compile(r"[\s,]+")
_LINE_WS = " \t\r\n\v\f"
#: Lines as every writer prints them, ``Name = value``, each followed by a NUL: the text of an ad
#: read in bulk.  For such a line the name and value are exactly what spec 02 §2.8 step 3 takes:
#: no whitespace or ``=`` in the name, a value starting with a non-blank character.
_CANONICAL_LINES = re.compile(r"(?:[^=\0 \t\r\n\v\f]+ = [^\0 \t\r\n\v\f][^\0]*\0)*")
_FIRST = itemgetter(0)
_THIRD = itemgetter(2)


def is_private(name: str, extra: frozenset[str] = frozenset()) -> bool:
    """True for a V1, V2 or caller-declared private attribute name."""
    key = fold(name)
    return key in PRIVATE_V1 or key.startswith(_PRIVATE_V2_PREFIX) or key in extra


def _line(ad: ClassAd, name: str, spelling: str | None = None) -> str:
    """``Name = value`` for one attribute, refusing what the wire cannot carry (§2.2)."""
    key = fold(name)
    entry = ad.entry_table()[key]
    return _entry_line(ad, key, entry, str(entry[0]) if spelling is None else spelling)


def _entry_line(ad: ClassAd, key: str, entry: Entry, spelling: str) -> str:
    if (
        not spelling
        or "=" in spelling
        or "\0" in spelling
        or spelling[0] in " \t\r\n\v\f"
        or spelling[-1] == " "
    ):
        raise ClassAdError(f"attribute name {spelling!r} cannot be sent on the wire")
    value = entry[1]
    if isinstance(value, str) and _CANONICAL_RAW.fullmatch(value):
        text = value
    else:
        text = unparse(ad.entry_expr(key, entry), old=True)
    line = f"{spelling} = {text}"
    if "\0" in line:
        raise ClassAdError(f"attribute {spelling!r} contains a NUL byte, which CEDAR cannot carry")
    return line


def references(expr: Expr) -> set[str]:
    """Folded names of the ad-local attributes an expression refers to (for projections)."""
    found: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, AttrRef):
            key = fold(node.name)
            if key not in _SPECIAL_SCOPES:
                found.add(key)
            continue
        if (
            isinstance(node, Select)
            and isinstance(node.base, AttrRef)
            and fold(node.base.name) in ("my", "self")
        ):
            found.add(fold(node.name))
            continue
        if isinstance(node, Select) and isinstance(node.base, AttrRef):
            continue  # TARGET.x, PARENT.x, other.x: nothing local to send
        stack.extend(node.children())
    return found


def _expand_projection(ad: ClassAd, names: Iterable[str], expand: bool) -> list[str]:
    """Projection names present in the ad, plus (transitively) what they reference (§2.6)."""
    chosen: dict[str, str] = {}
    pending: list[str] = []
    entries = ad.entry_table()
    for name in names:
        key = fold(name)
        if key not in chosen and key in entries:
            chosen[key] = name
            pending.append(key)
    while expand and pending:
        key = pending.pop()
        expr = ad.entry_expr(key, entries[key])
        if expr.is_literal:
            continue
        for ref in references(expr):
            if ref not in chosen and ref in entries:
                chosen[ref] = str(entries[ref][0])
                pending.append(ref)
    return sorted(chosen.values(), key=fold)


def put_classad(
    writer: MessageWriter,
    ad: ClassAd,
    *,
    projection: Iterable[str] | str | None = None,
    server_time: int | None = None,
    exclude_private: bool = False,
    types: bool = True,
    expand_projection: bool = True,
    peer_version: tuple[int, int, int] | None = None,
    private_names: Iterable[str] = (),
) -> None:
    """Write ``ad`` as count + expression lines (+ two empty type strings) per spec 02 §2.

    ``projection`` restricts the attributes sent (a list, or a comma/space separated string)
    and is expanded with referenced attributes unless ``expand_projection`` is false.
    ``server_time`` appends ``ServerTime = <n>`` as the last item.  ``exclude_private`` drops
    private attributes; ``_condor_priv*`` ones are also dropped unless ``peer_version`` is known
    to be 9.9.0 or later.  Private attributes that are sent while an exclusion applies go out
    behind the ``ZKM`` marker (always plain strings, because cedar only uses AES-GCM).
    """
    extra = frozenset(fold(n) for n in private_names)
    exclude_v2 = exclude_private or peer_version is None or peer_version < _V2_MIN_VERSION
    crypto = writer.crypto
    if projection is None:
        count, body = _encoded(
            ad,
            (crypto, exclude_private, exclude_v2, extra),
            lambda: _all_strings(ad, exclude_private, exclude_v2, extra),
        )
    else:
        if isinstance(projection, str):
            projection = [p for p in _PROJECTION_SPLIT.split(projection) if p]
        names = tuple(projection)
        skip_time = server_time is not None

        def strings() -> tuple[int, list[str | bytes]]:
            lines: list[str | bytes] = []
            for name in _expand_projection(ad, names, expand_projection):
                key = fold(name)
                if skip_time and key == "servertime":
                    continue
                if exclude_private and (key in PRIVATE_V1 or key in extra):
                    continue
                if exclude_v2 and key.startswith(_PRIVATE_V2_PREFIX):
                    continue
                # Spelled as in the projection (§2.3).  With AES-GCM the projection path never
                # needs the ZKM marker: it is only used when secrets are not a no-op.
                lines.append(_line(ad, name, name))
            return len(lines), lines

        if all(isinstance(name, str) for name in names):
            options = (crypto, exclude_private, exclude_v2, extra, names, expand_projection)
            count, body = _encoded(ad, (*options, skip_time), strings)
        else:  # not a key; fails below as it always did
            count, body = _encode(crypto, *strings())
    if server_time is not None:
        time_line = f"ServerTime = {int(server_time)}"
        writer.put_int(count + 1).put_bytes(body).put_string(time_line)
    else:
        writer.put_int(count).put_bytes(body)
    if types:
        writer.put_string("")
        writer.put_string("")


#: Most encodings one ad keeps (one per distinct set of options and projection).
_WIRE_CACHE_MAX = 16


def _encoded(
    ad: ClassAd, options: tuple[Any, ...], strings: Callable[[], tuple[int, list[str | bytes]]]
) -> tuple[int, bytes]:
    """Item count and encoded items for ``options``, cached on the ad from its second encoding.

    A server sends the same stored ads to every query; an ad sent once (most client-side ads)
    keeps nothing.  Any change to the ad drops its cache (:attr:`ClassAd.wire_cache`).
    """
    cache = ad.wire_cache
    if cache is not None:
        cached: tuple[int, bytes] | None = cache.get(options)
        if cached is not None:
            return cached
    encoded = _encode(options[0], *strings())
    if cache is None:
        ad.wire_cache = {}  # encoded once: cache from the next time on
    else:
        if len(cache) >= _WIRE_CACHE_MAX:
            cache.clear()
        cache[options] = encoded
    return encoded


def _encode(crypto: bool, count: int, strings: list[str | bytes]) -> tuple[int, bytes]:
    return count, MessageWriter(crypto=crypto).put_strings(strings).getvalue()


def _all_strings(
    ad: ClassAd, exclude_private: bool, exclude_v2: bool, extra: frozenset[str]
) -> tuple[int, list[str | bytes]]:
    """Item count and strings of a whole ad (``ZKM`` markers included)."""
    strings: list[str | bytes] = []
    count = 0
    for key, entry in list(ad.entry_table().items()):  # keys are the folded names
        private = key in PRIVATE_V1 or key.startswith(_PRIVATE_V2_PREFIX) or key in extra
        if exclude_private and private:
            continue
        if exclude_v2 and key.startswith(_PRIVATE_V2_PREFIX):
            continue
        line = _entry_line(ad, key, entry, str(entry[0]))
        # With AES-GCM secrets are a no-op, so ZKM marks private lines only while an
        # exclusion rule is in force (§2.7 rules 3-4; example B).
        if exclude_v2 and private:
            strings.append(SECRET_MARKER)
        strings.append(line)
        count += 1
    return count, strings


def _read_count(reader: MessageReader, limit: int) -> int:
    start = reader.offset
    count = reader.get_int()
    if count < 0 or count > limit:
        raise ProtocolError(f"ClassAd attribute count {count} outside 0..{limit}", offset=start)
    return count


def _read_line(reader: MessageReader, index: int, allow_secret: bool) -> tuple[str, int]:
    start = reader.offset
    raw = reader.get_nullable_string_bytes()
    if raw == SECRET_MARKER and allow_secret:
        start = reader.offset
        raw = reader.get_nullable_string_bytes()
    if raw is None:
        raise ProtocolError(f"ClassAd item {index} is a NULL string", offset=start)
    return decode_text(raw), start


#: Any well-formed line: leading whitespace, a name that is not empty once trailing spaces go,
#: ``=``, spaces, and the value.  Other lines are left to the line-by-line reader, which reports
#: them.  Written to match in linear time (a greedy name backtracks only over its own trailing
#: spaces; no lookahead over the value), since a hostile peer controls these bytes.  Blank
#: values are rejected after the split.
_WIRE_LINE = re.compile(
    r"(?:\A|(?<=\0))[ \t\r\n\v\f]*([^=\0 \t\r\n\v\f](?:[^=\0]*[^=\0 ])?) *= *([^\0]*)\0"
)


def get_classad(reader: MessageReader, *, types: bool = True, strict: bool = False) -> ClassAd:
    """Read one ad written by :func:`put_classad` (spec 02 §2.8).

    Values are parsed lazily unless ``strict`` is true, in which case every value is parsed now
    and a malformed one fails the whole ad, as the reference does.
    """
    return _get_counted_classad(reader, _read_count(reader, MAX_ATTRIBUTES), types, strict)


def _get_counted_classad(reader: MessageReader, count: int, types: bool, strict: bool) -> ClassAd:
    if not strict:
        ad = _get_classad_fast(reader, count, types)
        if ad is not None:
            return ad
    return _get_classad_lines(reader, count, types, strict)


def _get_classad_fast(reader: MessageReader, count: int, types: bool) -> ClassAd | None:
    """The common case in bulk: a recurring shape in one regex match, else one decode and split.

    Returns ``None`` (the reader back where it was) for anything unusual -- a NULL string, a
    ``ZKM`` item, a line the patterns do not take, a read error -- so that the line-by-line
    reader handles it with its exact semantics and errors.
    """
    if types:
        for shape_reader in _SHAPE_READERS.get((count, reader.crypto), ()):
            ad = shape_reader.read(reader, reader.offset)
            if ad is not None:
                return ad
    start = reader.offset
    if not reader.complete and not reader.crypto:
        # A streamed piece usually ends inside an ad.  In clear mode every string but the NULL
        # one (refused below anyway) ends with a NUL, so fewer NULs than strings left in the
        # piece means the ad goes on in the next one: say so without reading it string by
        # string.  Only near the end of a piece, where it costs one short scan.
        payload = reader.payload
        strings = count + 2 if types else count
        if len(payload) - start < _CUT_SCAN and payload.count(b"\0", start) < strings:
            raise MessageTruncated("the piece ends inside this ad", offset=start)
    try:
        raws = reader.get_strings(count + 2 if types else count)
    except MessageTruncated:
        reader.seek(start)
        if not reader.complete:
            raise  # a streamed reply: the rest of this ad is still on its way
        return None
    except ProtocolError:
        reader.seek(start)
        return None
    if None in raws or SECRET_MARKER in raws:
        reader.seek(start)
        return None
    typed = types and raws[count] == b"" and raws[count + 1] == b""
    if types:
        del raws[count:]
    raws.append(b"")
    # Lines hold no NUL (the reader cuts at the first one), so NUL ends each exactly, and UTF-8
    # decoding never joins bytes across an ASCII NUL.
    text = b"\0".join(raws).decode("utf-8", "surrogateescape")  # type: ignore[arg-type]
    lines = text.split("\0")
    lines.pop()  # after the last NUL
    recent = _RECENT_SHAPES.get(count)
    if recent is not None and not _BLANK_VALUE.search(text):
        # Most likely the names of the last ad of this size: check them, no split needed.
        # (A line starting "Name = " for a checked name is canonical up to its value, and no
        # value starts blank: the first " = " of a line follows its name.)
        last, prefixes, slices = recent
        if all(map(str.startswith, lines, prefixes)):
            return _shaped(last, list(map(getitem, lines, slices)), typed, reader.crypto)
    canonical = _CANONICAL_LINES.fullmatch(text) is not None
    if canonical:
        # The first " = " ends the name (names hold no blank, no "=").
        halves = list(map(str.partition, lines, repeat(" = ")))
        names: list[str] = list(map(_FIRST, halves))
        values: list[str] = list(map(_THIRD, halves))
    else:
        # One match per line: [before, name, value, between, name, value, ..., after].
        parts = _WIRE_LINE.split(text)
        if len(parts) != 3 * count + 1:
            reader.seek(start)
            return None
        values = parts[2::3]
        if any(not value or value.isspace() for value in values):
            reader.seek(start)
            return None
        names = parts[1::3]
        typed = False  # a shape reader only takes canonical lines
    wire_names = tuple(names)
    plan = _MERGES.get(wire_names)
    shape = ad_shape(wire_names) if plan is None else None
    if shape is None:
        # A repeated name (the 25.x schedd sends JobStatus twice in every job ad): as the line
        # reader, the first spelling at its first position with the last value (§2.8).
        plan = plan or _merge_plan(wire_names)
        shape = plan.shape
        if shape is None:
            reader.seek(start)
            return None
        plan.seen += 1
        crypto = reader.crypto
        if typed and plan.seen >= _SHAPE_READER_AFTER and crypto not in plan.readers:
            _add_shape_reader(shape, crypto, plan)
        return ClassAd.from_shape(shape, plan.getter(values))
    if canonical:
        if len(_RECENT_SHAPES) >= _RECENT_SHAPES_MAX:
            _RECENT_SHAPES.clear()
        prefixes = tuple(f"{name} = " for name in names)
        _RECENT_SHAPES[count] = (shape, prefixes, tuple(slice(len(p), None) for p in prefixes))
    return _shaped(shape, values, typed, reader.crypto)


class _MergePlan:
    """How to read the ads that list one sequence of names with some name repeated.

    Each repeated name (case-insensitively) is folded into its first occurrence, which takes
    the last value; ``shape`` is the merged names' (``None`` if they cannot form one).  Like an
    :class:`AdShape`, a plan counts its ads (``seen``) and holds its compiled readers, by
    crypto mode: the wire names are what a reader's pattern spells out.
    """

    __slots__ = ("getter", "names", "readers", "seen", "shape", "sources")

    def __init__(self, names: tuple[str, ...]) -> None:
        first: dict[str, int] = {}
        kept: list[str] = []
        sources: list[int] = []
        for position, name in enumerate(names):
            folded = name.lower() if name.isascii() else fold(name)
            index = first.get(folded)
            if index is None:
                first[folded] = len(kept)
                kept.append(name)
                sources.append(position)
            else:
                sources[index] = position
        self.names = names
        #: The wire position each of :attr:`shape`'s values comes from.
        self.sources = tuple(sources)
        self.getter: Callable[[Any], tuple[Any, ...]] = (
            _only(sources[0]) if len(sources) == 1 else itemgetter(*sources)
        )
        self.shape = ad_shape(tuple(kept))
        self.seen = 0
        self.readers: dict[bool, _ShapeReader] = {}


def _merge_plan(names: tuple[str, ...]) -> _MergePlan:
    """A new merge plan for these names with a repeat, kept by them (bounded)."""
    plan = _MergePlan(names)
    if len(_MERGES) >= _RECENT_SHAPES_MAX:
        _MERGES.clear()
    _MERGES[names] = plan
    return plan


def _only(position: int) -> Callable[[Any], tuple[Any, ...]]:
    return lambda values: (values[position],)


#: Merge plans of ads whose names repeat, by their names (bounded as _RECENT_SHAPES).
_MERGES: dict[tuple[str, ...], _MergePlan] = {}


def _shaped(shape: AdShape, values: list[str], typed: bool, crypto: bool) -> ClassAd:
    """An ad of ``shape`` read line by line; a shape that keeps recurring gets a reader."""
    shape.seen += 1
    if typed and shape.seen >= _SHAPE_READER_AFTER and crypto not in shape.readers:
        _add_shape_reader(shape, crypto)
    return ClassAd.from_shape(shape, values)


#: How close to the end of a streamed piece an ad is first checked for being cut (bytes).
_CUT_SCAN = 64 << 10
#: The last canonical shape read line by line for each attribute count, with its line prefixes
#: (``Name = ``) and the slices that cut the values; bounded.
_RECENT_SHAPES: dict[int, tuple[AdShape, tuple[str, ...], tuple[slice, ...]]] = {}
_RECENT_SHAPES_MAX = 64
#: A line's first `` = `` followed by a blank or the end: a value that is not canonical.
_BLANK_VALUE = re.compile(r" = [\0 \t\r\n\v\f]")


#: A shape is given a compiled reader once this many of its ads were read line by line.  The
#: compile costs about as much as reading 150-300 ads of the shape the slow way, whatever its
#: size (both grow with the attribute count), so this is near break-even: a handful of queries
#: for one daemon ad each never pay for a compile, a large query soon does.
_SHAPE_READER_AFTER = 128
#: Largest ad (in attributes) and most shapes that get a compiled reader.
_SHAPE_READER_MAX_ATTRIBUTES = 1024
_SHAPE_READERS_MAX = 64
_SHAPE_READERS_PER_COUNT = 4
#: Compiled readers by (attribute count, crypto mode).
_SHAPE_READERS: dict[tuple[int, bool], list[_ShapeReader]] = {}
#: One string's length prefix under crypto mode, for lengths below 65536 (spec 01 §3.5).
_PREFIX = rb"\0\0\0\0\0\0([\0-\xff][\0-\xff])"
#: A canonical value: a non-blank first character, no NUL (as _CANONICAL_LINES).
_VALUE = rb"([^\0 \t\r\n\v\f][^\0]*)\0"


class PlainNames(tuple[str, ...]):
    """A shape's names as :func:`read_shaped_values` gives them when the values at positions
    :attr:`plain` (in the names' order) were matched as plain literals (see :data:`PLAIN`).

    Equal to the shape's names (and hashed alike); a distinct object, so that a writer keying
    its plans by the names' identity (``jsonfmt.columns_json_bytes``) plans these ads apart."""

    plain: tuple[int, ...]


#: A plain literal: a value that reads the same in ClassAd and in JSON syntax, whose JSON is
#: its received bytes as they are (checked against the one mapping in the tests): an integer
#: of at most 18 digits (no ``-0``), an integer-valued real of at most 15 digits written
#: ``N.0`` (exact in a double, printed back alike), ``true``/``false``, a string with no
#: backslash, quote or control character (any other byte, UTF-8 or not, is kept as is).
#: Its kinds: a cheaper pattern each than their alternation.
_PLAIN_KINDS = (
    rb'"[^"\\\0-\x1f]*"',
    rb"0|-?[1-9][0-9]{0,17}",
    rb"-?(?:0|[1-9][0-9]{0,14})\.0",
    rb"true|false",
)
PLAIN = b"(?:" + b"|".join(_PLAIN_KINDS) + b")"
_ANY_PLAIN = len(_PLAIN_KINDS)
_KIND_MATCHES = tuple(re.compile(kind).fullmatch for kind in _PLAIN_KINDS)
_PLAIN_VALUES = tuple(b"(" + kind + rb")\0" for kind in (*_PLAIN_KINDS, PLAIN))


def _plain_kind(value: bytes) -> int | None:
    """The index in _PLAIN_KINDS of a plain literal's kind (``None``: not plain)."""
    for kind, fullmatch in enumerate(_KIND_MATCHES):
        if fullmatch(value) is not None:
            return kind
    return None


class _ShapeReader:
    """Reads a whole ad of one known shape with one regular-expression match.

    The pattern spells out every name and the two empty type strings, so a match is an ad of
    exactly that shape in canonical lines, and its groups are the values (under crypto mode,
    interleaved with each string's length prefix, all checked against the actual lengths so
    the NUL-based split is the length-based reading).  Anything else does not match and goes
    to the general reader.  Linear: no group can extend past a NUL.  With a merge ``plan`` the
    pattern spells the plan's names (a name repeated) and the values are merged as it says.

    With ``plain`` (wire positions), the values there must be plain literals (:data:`PLAIN`):
    such a reader is a narrower variant of a shape's reader, tried first by
    :func:`read_shaped_values` (see :meth:`learn`), whose results say which values are plain.
    """

    __slots__ = (
        "crypto",
        "lengths",
        "marked",
        "merge",
        "offset_sum",
        "offsets",
        "owner",
        "pattern",
        "plain",
        "shape",
        "variant",
        "variants",
    )

    def __init__(
        self,
        shape: AdShape,
        crypto: bool,
        plan: _MergePlan | None = None,
        plain: dict[int, int] | None = None,
    ) -> None:
        plain = plain or {}
        self.shape = shape
        self.crypto = crypto
        self.owner: AdShape | _MergePlan = shape if plan is None else plan
        self.merge = None if plan is None else plan.getter
        spelled = shape.names if plan is None else plan.names
        names = [name.encode("utf-8", "surrogateescape") for name in spelled]
        prefix = _PREFIX if crypto else b""
        empty = rb"\0\0\0\0\0\0\0\x01\0" if crypto else b"\0"
        self.pattern = re.compile(
            b"".join(
                prefix
                + re.escape(name)
                + b" = "
                + (_PLAIN_VALUES[plain[i]] if i in plain else _VALUE)
                for i, name in enumerate(names)
            )
            + empty * 2
        )
        # A line's length prefix is len(name) + len(" = ") + len(value) + the NUL.
        self.offsets = tuple(len(name) + 4 for name in names)
        self.lengths = struct.Struct(f">{len(names)}H")
        #: The offsets as one number of 16-bit digits, the first most significant (see
        #: :meth:`values`).
        self.offset_sum = sum(o << 16 * i for i, o in enumerate(reversed(self.offsets)))
        #: The wire positions whose values this reader takes as plain literals only, each with
        #: its kind (an index in _PLAIN_KINDS, or _ANY_PLAIN).
        self.plain = plain
        #: What :func:`read_shaped_values` gives as the shape of this variant's ads.
        self.marked = shape
        if plain:
            sources = range(len(names)) if plan is None else plan.sources
            marked = PlainNames(shape.names)
            marked.plain = tuple(i for i, source in enumerate(sources) if source in plain)
            self.marked = AdShape(marked, shape.keys)
        #: The plain variant of this reader (``None``: none yet, or no more, see :meth:`learn`).
        self.variant: _ShapeReader | None = None
        #: Variants made so far (each one widens the last; bounded by _VARIANTS_MAX).
        self.variants = 0

    def read(self, reader: MessageReader, start: int) -> ClassAd | None:
        """The ad whose first line is at ``start``, the reader then after it; else ``None``."""
        match = self.pattern.match(reader.payload, start)
        if match is None:
            return None
        ad = self.ad(match)
        if ad is not None:
            reader.seek(match.end())
        return ad

    def ad(self, match: re.Match[bytes]) -> ClassAd | None:
        """The ad of a match of :attr:`pattern` (``None``: a length prefix is not its length)."""
        if not self.crypto and self.merge is None:
            return ClassAd.from_match(self.shape, match)  # the values are its groups
        values = self.values(match)
        return None if values is None else ClassAd.from_shape(self.shape, values)

    def values(self, match: re.Match[bytes]) -> tuple[bytes, ...] | None:
        """The values of a match of :attr:`pattern` in :attr:`shape`'s order, as received
        (``None``: a length prefix is not its length)."""
        if self.crypto:
            groups = match.groups()
            values = groups[1::2]
            prefixes = b"".join(groups[::2])
            if match.end() - match.start() < 1 << 16:
                # Every line is shorter than the match, so each prefix's due value (offset +
                # value length) fits its 16-bit digit: the sums below carry nothing, and equal
                # numbers mean equal digits, each prefix its line's length.
                if int.from_bytes(prefixes, "big") != self.offset_sum + int.from_bytes(
                    self.lengths.pack(*map(len, values)), "big"
                ):
                    return None
            else:  # a large ad: line by line (a line too long for its prefix is a lie)
                try:
                    due = self.lengths.pack(*map(add, map(len, values), self.offsets))
                except struct.error:
                    return None
                if prefixes != due:
                    return None
        else:
            values = match.groups()
        merge = self.merge
        return values if merge is None else merge(values)

    def learn(self, match: re.Match[bytes]) -> None:
        """Make (or widen) the plain variant from an ad this reader matched and the variant
        did not: its positions holding plain literals, less any that ever held anything else.

        Each variant costs a compile, so a shape gets a few at most; then none (its ads are
        read by this reader alone, as before variants existed)."""
        if self.variants >= _VARIANTS_MAX:
            self.variant = None
            return
        groups = match.groups()
        wire_values = groups[1::2] if self.crypto else groups
        kinds = {i: _plain_kind(value) for i, value in enumerate(wire_values)}
        plain = {i: kind for i, kind in kinds.items() if kind is not None}
        if self.variant is not None:
            known = self.variant.plain
            plain = {  # a value of another plain kind widens the position to any plain one
                i: kind if kind == known[i] else _ANY_PLAIN
                for i, kind in plain.items()
                if i in known
            }
            if plain == known:
                return  # the variant missed for another reason (a length prefix)
        self.variants += 1
        plan = self.owner if isinstance(self.owner, _MergePlan) else None
        self.variant = _ShapeReader(self.shape, self.crypto, plan, plain) if plain else None
        if not plain:
            self.variants = _VARIANTS_MAX


#: Plain variants a shape's reader makes at most (see :meth:`_ShapeReader.learn`).
_VARIANTS_MAX = 4


def read_shaped_values(reader: MessageReader) -> tuple[AdShape, tuple[bytes, ...]] | None:
    """One ad of a recurring shape (one with a compiled reader) as its shape and its values as
    received, without making the ad; the reader is then after it.  ``None``, the reader left
    where it was, for anything else (the general :func:`get_classad` reads it then).

    For a reader that turns ads straight into something else (a listing's JSON) and never
    needs them as ads: the same bytes, matched by the same patterns, as :func:`get_classad`."""
    start = reader.offset
    payload = reader.payload
    if len(payload) < start + 8:
        return None
    (count,) = _ONE_INT(payload, start)
    for shape_reader in _SHAPE_READERS.get((count, reader.crypto), ()):
        variant = shape_reader.variant
        if variant is not None:
            match = variant.pattern.match(payload, start + 8)
            if match is not None:
                values = variant.values(match)
                if values is not None:
                    reader.seek(match.end())
                    return variant.marked, values
        match = shape_reader.pattern.match(payload, start + 8)
        if match is not None:
            values = shape_reader.values(match)
            if values is not None:
                reader.seek(match.end())
                shape_reader.learn(match)
                return shape_reader.shape, values
    return None


def _read_shaped_run(
    data: bytes, position: int, crypto: bool, append: Callable[[ClassAd], None]
) -> int:
    """Read ``I(more) AD`` items of recurring shapes back to back from ``position``.

    The bulk of a large reply, without a call per ad for the reader's bookkeeping.  Stops at
    the first item that is not one (the end, a cut, another shape, anything unusual) and
    returns its position, for the general reader to take from there.
    """
    end = len(data) - 16
    readers_for = _SHAPE_READERS.get
    while position <= end:
        more, count = _TWO_INTS(data, position)
        readers = readers_for((count, crypto)) if more else None
        if not readers:
            return position
        for shape_reader in readers:
            match = shape_reader.pattern.match(data, position + 16)
            if match is not None:
                ad = shape_reader.ad(match)
                if ad is not None:
                    append(ad)
                    position = match.end()
                    break
        else:
            return position
    return position


def _add_shape_reader(shape: AdShape, crypto: bool, plan: _MergePlan | None = None) -> None:
    count = len(shape.names if plan is None else plan.names)  # the items on the wire
    if not 0 < count <= _SHAPE_READER_MAX_ATTRIBUTES:
        return
    if sum(map(len, _SHAPE_READERS.values())) >= _SHAPE_READERS_MAX:
        for old in _SHAPE_READERS.values():
            for stale in old:
                _drop_reader(stale)
        _SHAPE_READERS.clear()
    shape_reader = _ShapeReader(shape, crypto, plan)
    shape_reader.owner.readers[crypto] = shape_reader
    readers = _SHAPE_READERS.setdefault((count, crypto), [])
    if len(readers) >= _SHAPE_READERS_PER_COUNT:
        _drop_reader(readers.pop())
    readers.insert(0, shape_reader)


def _drop_reader(shape_reader: _ShapeReader) -> None:
    """Forget a shape's reader; it earns a new one only by recurring as often again."""
    shape_reader.owner.readers.pop(shape_reader.crypto, None)
    shape_reader.owner.seen = 0


def get_flagged_classads(reader: MessageReader) -> tuple[list[ClassAd], bool]:
    """The ``I(more) AD`` items complete in ``reader`` and whether the closing ``I(0)`` came.

    A query reply is such a sequence (spec 05 §2.4).  The ads a streamed piece holds are read in
    one loop; the reader stops before an item the piece cuts short, which raises
    :class:`MessageTruncated` only when not even one item is complete (wait for more then).

    The cyclic garbage collector is paused while a piece is read (unless the program paused
    it itself): reading makes two tracked objects per ad and no cycle, and the collections
    they would set off every 700 of them (each old one scanning every object the program
    holds) were measured at a third of the reading time of 20 000 small ads.
    """
    if not gc.isenabled():
        return _get_flagged_classads(reader)
    gc.disable()
    try:
        return _get_flagged_classads(reader)
    finally:
        gc.enable()


def _get_flagged_classads(reader: MessageReader) -> tuple[list[ClassAd], bool]:
    ads: list[ClassAd] = []
    append = ads.append
    data = reader.payload
    size = len(data)
    crypto = reader.crypto
    while True:
        if _SHAPE_READERS:
            reader.seek(_read_shaped_run(data, reader.offset, crypto, append))
        start = reader.offset
        try:
            if start + 16 <= size:
                more, count = _TWO_INTS(data, start)  # both at once: the common case
                if more and 0 <= count <= MAX_ATTRIBUTES:
                    reader.seek(start + 16)
                    append(_get_counted_classad(reader, count, True, False))
                    continue
            if not reader.get_int():
                return ads, True
            append(get_classad(reader))
        except MessageTruncated:
            if not ads or reader.complete:
                raise
            reader.seek(start)
            return ads, False


_TWO_INTS = struct.Struct(">qq").unpack_from
_ONE_INT = struct.Struct(">q").unpack_from


def _get_classad_lines(reader: MessageReader, count: int, types: bool, strict: bool) -> ClassAd:
    """The line-by-line reader: any input, exact error offsets, ``strict`` parsing."""
    ad = ClassAd()
    entries = ad.entry_table()
    read = reader.get_nullable_string_bytes
    for index in range(count):
        start = reader.offset
        raw = read()
        if raw == SECRET_MARKER:
            start = reader.offset
            raw = read()
        if raw is None:
            raise ProtocolError(f"ClassAd item {index} is a NULL string", offset=start)
        line = raw.decode("utf-8", "surrogateescape")
        # Spec 02 §2.8 step 3, inlined from split_line().
        body = line.lstrip(_LINE_WS)
        eq = body.find("=")
        name = body[:eq].rstrip(" ")
        if eq < 0 or not name:
            try:
                split_line(line)
            except ClassAdParseError as exc:
                raise ProtocolError(f"ClassAd item {index}: {exc}", offset=start) from None
        rhs = body[eq + 1 :].lstrip(" ")
        if not rhs.strip(_LINE_WS):
            raise ProtocolError(f"attribute {name!r} has no value", offset=start)
        key = name.lower() if name.isascii() else fold(name)
        entry = entries.get(key)
        value: Expr | str = rhs
        if strict:
            try:
                value = parse_expr(rhs, old=True, full=False)
            except ClassAdParseError as exc:
                raise ProtocolError(f"attribute {name!r}: {exc}", offset=start) from None
        entries[key] = (name if entry is None else entry[0], value, None)
    if types:
        reader.get_string_bytes()
        reader.get_string_bytes()
    return ad


def get_handshake_ad(reader: MessageReader) -> ClassAd:
    """The restricted reader used before authentication (spec 02 §2.10).

    At most 100 attributes, no ``ZKM``, and every value exactly one literal token.
    """
    count = _read_count(reader, MAX_HANDSHAKE_ATTRIBUTES)
    ad = ClassAd()
    for index in range(count):
        line, start = _read_line(reader, index, allow_secret=False)
        try:
            name, rhs = split_line(line)
        except ClassAdParseError:
            # Not quoted back: handshake ads carry session ids.
            raise ProtocolError(
                f"handshake ad item {index} is not a 'Name = value' line", offset=start
            ) from None
        literal = literal_token(rhs)
        if literal is None:
            # The value is not quoted back: handshake ads carry session ids.
            raise ProtocolError(
                f"handshake ad attribute {name!r} is not a single literal", offset=start
            )
        ad.set_expr(name, literal)
    reader.get_string_bytes()
    reader.get_string_bytes()
    return ad


__all__ = [
    "MAX_ATTRIBUTES",
    "MAX_HANDSHAKE_ATTRIBUTES",
    "PRIVATE_V1",
    "SECRET_MARKER",
    "get_classad",
    "get_flagged_classads",
    "get_handshake_ad",
    "is_private",
    "put_classad",
    "read_shaped_values",
    "references",
]
