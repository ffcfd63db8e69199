"""Whole ads: ``-long``, ``-json`` and ``-xml``, streamed one ad at a time.

Every form lists an ad's attributes sorted case-insensitively by name (condor_q and
condor_status 25.13.2 both do).  ``-long`` ends every ad with an empty line; ``-json`` is one
list whose ads are separated by ``\\n,\\n`` and prints nothing at all for no ads; ``-xml``
always prints its prologue and ``</classads>``.  Each writer's :meth:`begin`/:meth:`ad`/
:meth:`end` return text, so output starts with the first ad received.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.expr import Expr, ListExpr, Literal, RecordExpr
from cedar.classad_wire.jsonfmt import (
    ad_to_json_sorted,
    ad_to_json_sorted_bytes,
    column_plan,
    sorted_columns,
)
from cedar.classad_wire.syntax import simple_value
from cedar.classad_wire.unparse import format_name, format_real, quote_string, unparse
from cedar.classad_wire.values import (
    AbsTime,
    ErrorType,
    RelTime,
    UndefinedType,
    format_abstime,
)

__all__ = [
    "JsonWriter",
    "LongWriter",
    "WholeAdWriter",
    "XmlWriter",
    "attribute_filter",
    "long_bytes",
    "long_text",
]


def _folded(item: tuple[str, str]) -> str:
    return item[0].lower()


def _items(ad: ClassAd, only: frozenset[str] | None) -> list[tuple[str, str]]:
    names, texts = sorted_columns(ad, only)
    return list(zip(names, texts, strict=True))


class _LongNames(dict[str, str]):
    """``Name = `` by name (quoted when not an identifier), made on first use."""

    def __missing__(self, name: str) -> str:
        if len(self) >= 65536:
            self.clear()
        text = self[name] = f"{format_name(name, old=True)} = "
        return text


_LONG_NAMES = _LongNames()


class _LongTemplates(dict[tuple[str, ...], str]):
    """The ``-long`` text of an ad with these names (in this order) as a ``%`` template, made
    on first use: one C-level formatting per ad instead of a concatenation per line."""

    def __missing__(self, names: tuple[str, ...]) -> str:
        if len(self) >= 256:
            self.clear()
        lines = (_LONG_NAMES[name].replace("%", "%%") + "%s" for name in names)
        text = self[names] = "\n".join(lines) + "\n\n"
        return text


_LONG_TEMPLATES = _LongTemplates()


def attribute_filter(names: Iterable[str] | None) -> frozenset[str] | None:
    """The ``-attributes`` list as the writers' ``only`` argument (``None``: every attribute).

    The daemons add attributes of their own to a projected answer (the schedd's
    ``ServerTime``); the tools print only the listed ones."""
    return None if names is None else frozenset(name.lower() for name in names)


def long_text(ad: ClassAd, only: frozenset[str] | None = None) -> str:
    """One ad as ``-long`` prints it: ``Name = value`` lines sorted case-insensitively, then an
    empty line (``only``: just these lower-cased names, see :func:`attribute_filter`)."""
    names, texts = sorted_columns(ad, only)
    if not names:
        return "\n"
    return _LONG_TEMPLATES[names] % tuple(texts)


class _LongByteTemplates(dict[tuple[str, ...], bytes]):
    """:data:`_LONG_TEMPLATES` as UTF-8 bytes (a name read from the wire keeps its bytes)."""

    def __missing__(self, names: tuple[str, ...]) -> bytes:
        if len(self) >= 256:
            self.clear()
        template = _LONG_TEMPLATES[names].encode("utf-8", "surrogateescape")
        self[names] = template
        return template


_LONG_BYTE_TEMPLATES = _LongByteTemplates()


def long_bytes(ad: ClassAd, only: frozenset[str] | None = None) -> bytes | None:
    """:func:`long_text` as bytes, made from the values as received: the wire text is what
    ``-long`` prints, so nothing is decoded or encoded (``None``: an ad not read from the
    wire, use :func:`long_text`)."""
    names, raws = ad.raw_values()
    if not raws or raws[0].__class__ is not bytes:
        return None
    getter, kept = column_plan(names, only)
    if not kept:
        return b"\n"
    return _LONG_BYTE_TEMPLATES[kept] % getter(raws)


class WholeAdWriter:
    """The interface of the whole-ad forms: text before the first ad, per ad, and at the end.

    ``only`` restricts every ad to the ``-attributes`` list (see :func:`attribute_filter`).
    """

    def __init__(self, only: frozenset[str] | None = None) -> None:
        self.only = only

    def begin(self) -> str:
        """Text printed before anything else (even when no ad comes)."""
        return ""

    def ad(self, ad: ClassAd) -> str:
        """The text of one ad."""
        raise NotImplementedError

    def ad_bytes(self, ad: ClassAd) -> bytes | None:
        """What :meth:`ad` gives (for :class:`JsonWriter`: :meth:`JsonWriter.text`), as UTF-8
        bytes made from the received values; ``None`` where this form has no byte path or the
        ad was not read from the wire."""
        return None

    def end(self) -> str:
        """Text printed after the last ad."""
        return ""


class LongWriter(WholeAdWriter):
    """``-long``."""

    def ad(self, ad: ClassAd) -> str:
        """See :func:`long_text`."""
        return long_text(ad, self.only)

    def ad_bytes(self, ad: ClassAd) -> bytes | None:
        """See :func:`long_bytes`."""
        return long_bytes(ad, self.only)


class JsonWriter(WholeAdWriter):
    """``-json``: ``[`` before the first ad, ``,`` between ads, ``]`` after the last."""

    def __init__(self, only: frozenset[str] | None = None) -> None:
        super().__init__(only)
        self.count = 0

    def ad(self, ad: ClassAd) -> str:
        """One member of the list."""
        self.count += 1
        return ("[\n" if self.count == 1 else "\n,\n") + self.text(ad)

    def text(self, ad: ClassAd) -> str:
        """One ad's JSON object alone."""
        return ad_to_json_sorted(ad, self.only)

    def ad_bytes(self, ad: ClassAd) -> bytes | None:
        """:meth:`text` as bytes (the separators are the caller's: they depend on position)."""
        return ad_to_json_sorted_bytes(ad, self.only)

    def end(self) -> str:
        """``]`` after at least one ad; nothing at all for none (as the tools)."""
        return "\n]\n" if self.count else ""


_XML_HEAD = '<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n'


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_string(text: str) -> str:
    """A string's content: the new syntax's escapes (a backslash doubled...), bare quotes."""
    return _xml_escape(quote_string(text, old=False)[1:-1].replace('\\"', '"'))


def _xml_scalar(value: Any) -> str:
    if value is True:
        return '<b v="t"/>'
    if value is False:
        return '<b v="f"/>'
    if isinstance(value, int):
        return f"<i>{value}</i>"
    if isinstance(value, float):
        return f"<r>{format_real(value, old=False)}</r>"
    if isinstance(value, str):
        return f"<s>{_xml_string(value)}</s>"
    if isinstance(value, UndefinedType):
        return "<un/>"
    if isinstance(value, ErrorType):
        return "<er/>"
    if isinstance(value, AbsTime):
        return f"<at>{format_abstime(value)}</at>"
    if isinstance(value, RelTime):
        return f"<r>{format_real(float(value.seconds), old=False)}</r>"
    return f"<e>{_xml_escape(unparse(value, old=False))}</e>"


def _xml_expr(expr: Expr, indent: int) -> str:
    if isinstance(expr, Literal):
        return _xml_scalar(expr.val)
    if isinstance(expr, ListExpr):
        return "<l>" + "".join(_xml_expr(item, indent) for item in expr.items) + "</l>"
    if isinstance(expr, RecordExpr):
        pad = " " * indent
        inner = "".join(
            f'{pad}    <a n="{_xml_escape(name)}">{_xml_expr(value, indent + 4)}</a>\n'
            for name, value in expr.items()
        )
        return f"<c>\n{inner}{pad}</c>"
    return f"<e>{_xml_escape(unparse(expr, old=False))}</e>"


class XmlWriter(WholeAdWriter):
    """``-xml``: the prologue, one ``<c>`` per ad, ``</classads>`` (``spaced``: an empty line
    after every ad, as condor_status prints; condor_q does not)."""

    def __init__(self, only: frozenset[str] | None = None, spaced: bool = False) -> None:
        super().__init__(only)
        self.spaced = spaced

    def begin(self) -> str:
        """The XML prologue (printed even for no ads)."""
        return _XML_HEAD

    def ad(self, ad: ClassAd) -> str:
        """One ``<c>`` element."""
        items = _items(ad, self.only)
        lines = ["<c>\n"]
        for name, text in items:
            value = simple_value(text)
            body = _xml_scalar(value) if value is not None else _xml_expr(ad.lookup(name), 4)
            lines.append(f'    <a n="{_xml_escape(name)}">{body}</a>\n')
        lines.append("</c>\n\n" if self.spaced else "</c>\n")
        return "".join(lines)

    def end(self) -> str:
        """``</classads>``."""
        return "</classads>\n"
