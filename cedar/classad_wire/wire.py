"""Putting ClassAds on a CEDAR message and taking them off (spec 02 §2).

The reader is the hot path of every query: it splits each line and stores the right-hand side
unparsed (see :mod:`cedar.classad_wire.classad`).  The writer prints every value in wire syntax;
values read from the wire and never touched are re-sent as received only when they are already in
canonical form (plain integers and backslash-free strings), so a malformed value is never
forwarded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cedar.classad_wire.classad import ClassAd, split_line
from cedar.classad_wire.expr import AttrRef, Expr, Select, fold
from cedar.classad_wire.syntax import literal_token, parse_expr
from cedar.classad_wire.unparse import unparse
from cedar.errors import ClassAdError, ClassAdParseError, ProtocolError
from cedar.stream.primitives import MessageReader, MessageWriter, decode_text

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


def is_private(name: str, extra: frozenset[str] = frozenset()) -> bool:
    """True for a V1, V2 or caller-declared private attribute name."""
    key = fold(name)
    return key in PRIVATE_V1 or key.startswith(_PRIVATE_V2_PREFIX) or key in extra


def _line(ad: ClassAd, name: str, spelling: str | None = None) -> str:
    """``Name = value`` for one attribute, refusing what the wire cannot carry (§2.2)."""
    entry = ad._entries[fold(name)]
    if spelling is None:
        spelling = str(entry[0])
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
        text = unparse(ad._expr(entry), old=True)
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
    for name in names:
        key = fold(name)
        if key not in chosen and key in ad._entries:
            chosen[key] = name
            pending.append(key)
    while expand and pending:
        key = pending.pop()
        expr = ad._expr(ad._entries[key])
        if expr.is_literal:
            continue
        for ref in references(expr):
            if ref not in chosen and ref in ad._entries:
                chosen[ref] = str(ad._entries[ref][0])
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
    items: list[tuple[bool, str]] = []  # (secret, line)
    if projection is None:
        for name in ad:
            key = fold(name)
            if exclude_private and is_private(name, extra):
                continue
            if exclude_v2 and key.startswith(_PRIVATE_V2_PREFIX):
                continue
            # With AES-GCM secrets are a no-op, so ZKM marks private lines only while an
            # exclusion rule is in force (§2.7 rules 3-4; example B).
            items.append((exclude_v2 and is_private(name, extra), _line(ad, name)))
    else:
        if isinstance(projection, str):
            projection = [p for p in _PROJECTION_SPLIT.split(projection) if p]
        for name in _expand_projection(ad, projection, expand_projection):
            key = fold(name)
            if server_time is not None and key == "servertime":
                continue
            if exclude_private and (key in PRIVATE_V1 or key in extra):
                continue
            if exclude_v2 and key.startswith(_PRIVATE_V2_PREFIX):
                continue
            # Spelled as in the projection (§2.3).  With AES-GCM the projection path never
            # needs the ZKM marker: it is only used when secrets are not a no-op.
            items.append((False, _line(ad, name, name)))
    if server_time is not None:
        items.append((False, f"ServerTime = {int(server_time)}"))
    writer.put_int(len(items))
    for secret, line in items:
        if secret:
            writer.put_string(SECRET_MARKER)
            writer.put_secret(line)
        else:
            writer.put_string(line)
    if types:
        writer.put_string("")
        writer.put_string("")


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


def get_classad(reader: MessageReader, *, types: bool = True, strict: bool = False) -> ClassAd:
    """Read one ad written by :func:`put_classad` (spec 02 §2.8).

    Values are parsed lazily unless ``strict`` is true, in which case every value is parsed now
    and a malformed one fails the whole ad, as the reference does.
    """
    count = _read_count(reader, MAX_ATTRIBUTES)
    ad = ClassAd()
    entries = ad._entries
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
        # Spec 02 §2.8 step 3, inlined from split_line() because this is the hot loop.
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
        if entry is None:
            entries[key] = entry = [name, rhs]
        else:
            entry[1] = rhs
        if strict:
            try:
                entry[1] = parse_expr(rhs, old=True, full=False)
            except ClassAdParseError as exc:
                raise ProtocolError(f"attribute {name!r}: {exc}", offset=start) from None
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
        except ClassAdParseError as exc:
            raise ProtocolError(f"handshake ad item {index}: {exc}", offset=start) from None
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
    "get_handshake_ad",
    "is_private",
    "put_classad",
    "references",
]
