"""Reading a stream of several ClassAds, in the long ("old") or the bracketed ("new") syntax.

Old syntax: one ``Name = value`` per line, ads separated by blank lines, ``#`` lines skipped.
New syntax: ``[ ... ]`` literals one after another, optionally separated by whitespace or
comments.  ``syntax="auto"`` picks new when the first non-blank character is ``[``.

Unlike the reference bindings, a malformed ad raises :class:`ClassAdParseError` (with the line
and the parser's detail) instead of being dropped or truncated silently.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal, Protocol

from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.syntax import parse_record_prefix
from cedar.errors import ClassAdParseError

Syntax = Literal["auto", "old", "new"]
_BLANK = " \t\r\n\v\f"


class TextSource(Protocol):
    """What is read from a file object: lines (``readline`` returns ``""`` at the end)."""

    def readline(self) -> str: ...


class _Lines:
    """Lines of a string or a file object, with one line of look-ahead pushed back."""

    def __init__(self, source: str | TextSource) -> None:
        self._text = source if isinstance(source, str) else None
        self._file = None if isinstance(source, str) else source
        self._pos = 0
        self._pending: list[str] = []

    def readline(self) -> str:
        if self._pending:
            return self._pending.pop()
        if self._file is not None:
            return self._file.readline()
        assert self._text is not None
        text, pos = self._text, self._pos
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end + 1
        self._pos = end
        return text[pos:end]

    def push_back(self, line: str) -> None:
        if line:
            self._pending.append(line)

    def give_back(self, rest: str) -> None:
        """Keep unconsumed text after an ad for the next read of this reader."""
        if rest.strip(_BLANK):
            self._pending.append(rest)

    def first_significant_char(self) -> str:
        """The first non-blank character ahead ('' at the end), without consuming it."""
        while True:
            line = self.readline()
            if not line:
                return ""
            if line.strip(_BLANK):
                self.push_back(line)
                return line.strip(_BLANK)[0]


def _read_old(lines: _Lines) -> ClassAd | None:
    """The next ad of the long form, or None at the end; blank lines separate ads."""
    body: list[str] = []
    while True:
        line = lines.readline()
        if not line:
            break
        if not line.strip(_BLANK):
            if body:
                break
            continue
        body.append(line.rstrip("\r\n"))
    if not body:
        return None
    return ClassAd.parse_old("\n".join(body))


def _read_new(lines: _Lines) -> ClassAd | None:
    """The next ``[ ... ]`` ad, or None at the end; reads lines until the record is complete."""
    buffer = ""
    while True:
        line = lines.readline()
        if not line and not buffer.strip(_BLANK):
            return None
        buffer += line
        try:
            record, end = parse_record_prefix(buffer)
        except ClassAdParseError:
            if line:
                continue  # the record may go on in the next lines
            raise
        if record is None:  # only blanks and comments so far
            if not line:
                return None
            buffer = ""
            continue
        lines.give_back(buffer[end:])
        ad = ClassAd()
        for name, value in record.items():
            ad.set_expr(name, value)
        return ad


def _detect(lines: _Lines, syntax: Syntax) -> Syntax:
    if syntax != "auto":
        return syntax
    return "new" if lines.first_significant_char() == "[" else "old"


def parse_ads(source: str | TextSource, syntax: Syntax = "auto") -> Iterator[ClassAd]:
    """Every ad of ``source`` (a string or a text file object), lazily, in order."""
    lines = _Lines(source)
    read = _read_new if _detect(lines, syntax) == "new" else _read_old
    while True:
        ad = read(lines)
        if ad is None:
            return
        yield ad


def parse_next(source: str | TextSource, syntax: Syntax = "auto") -> ClassAd | None:
    """The first ad of ``source``, or None when there is none.

    From a file object, exactly the lines of that ad are consumed (old syntax: through the
    separating blank line), so calling it again reads the next ad.  New syntax reads whole
    lines: put each ad on its own line(s) when reading ad by ad from a file.
    """
    lines = _Lines(source)
    read = _read_new if _detect(lines, syntax) == "new" else _read_old
    return read(lines)


def parse_one(source: str | TextSource, syntax: Syntax = "auto") -> ClassAd:
    """All ads of ``source`` merged into one (later attributes win), like ``parseOne``."""
    merged = ClassAd()
    for ad in parse_ads(source, syntax):
        for name in ad:
            merged.set_expr(ad.spelling(name), ad.lookup(name))
    return merged


__all__ = ["Syntax", "TextSource", "parse_ads", "parse_next", "parse_one"]
