"""``classad2`` on cedar: ``ClassAd``, ``ExprTree``, ``Value``, ``parseAds``/``parseOne``/
``parseNext``, ``quote``/``unquote``, ``ClassAdException``.

A compat :class:`ClassAd` *is* a :class:`cedar.ClassAd` (same storage; ads that cedar's clients
return are re-classed in place, no copy), with the bindings' camelCase methods and with
expressions handed out as :class:`ExprTree`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from typing import IO

from cedar.classad_wire import ClassAd as _CedarAd
from cedar.classad_wire import Error, Expr, Undefined
from cedar.classad_wire.expr import RecordExpr
from cedar.classad_wire.reading import Syntax, parse_ads, parse_next, parse_one
from cedar.classad_wire.unparse import quote_string, unparse
from cedar.compat.errors import ClassAdException
from cedar.errors import ClassAdError


class Value(enum.IntEnum):
    """The two special values; ``ad["x"]`` gives ``Value.Undefined`` for ``x = undefined``."""

    Error = 1
    Undefined = 2


class ParserType(enum.IntEnum):
    """Which ClassAd syntax :func:`parseAds` reads."""

    Auto = -1
    Old = 0
    XML = 1
    JSON = 2
    New = 3
    FileAuto = 4


def _to_python(value: object) -> object:
    """cedar's values as classad2 hands them out."""
    if value is Undefined:
        return Value.Undefined
    if value is Error:
        return Value.Error
    if isinstance(value, Expr):
        return ExprTree._wrap(value)
    if isinstance(value, _CedarAd) and not isinstance(value, ClassAd):
        return ClassAd._adopt(value)
    if isinstance(value, list):
        return [_to_python(item) for item in value]
    return value


def _from_python(value: object) -> object:
    if isinstance(value, ExprTree):
        return value._expr
    if value is Value.Undefined:
        return Undefined
    if value is Value.Error:
        return Error
    if isinstance(value, ClassAd):
        return value._plain()
    if isinstance(value, Mapping) and not isinstance(value, _CedarAd):
        return ClassAd(dict(value))._plain()
    if isinstance(value, (list, tuple)):
        return [_from_python(item) for item in value]
    return value


class ExprTree:
    """An unevaluated ClassAd expression."""

    __slots__ = ("_expr",)

    def __init__(self, expr: str | ExprTree | None = None) -> None:
        if isinstance(expr, ExprTree):
            self._expr: Expr = expr._expr
            return
        text = "undefined" if expr is None else str(expr)
        try:
            self._expr = Expr.parse(text)
        except ClassAdError as exc:
            raise ClassAdException(f"Unable to parse string into a ClassAd. ({exc})") from None

    @classmethod
    def _wrap(cls, expr: Expr) -> ExprTree:
        tree = cls.__new__(cls)
        tree._expr = expr
        return tree

    def eval(self, scope: ClassAd | None = None, target: ClassAd | None = None) -> object:
        """The value of the expression, with ``scope`` as MY and ``target`` as TARGET."""
        return _to_python(self._expr.eval(scope, target))

    def simplify(self, scope: ClassAd | None = None, target: ClassAd | None = None) -> ExprTree:
        """The value as a (literal) expression."""
        return ExprTree._wrap(Expr.from_value(self._expr.eval(scope, target)))

    def __str__(self) -> str:
        return self._expr.unparse()

    def __repr__(self) -> str:
        return self._expr.unparse()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ExprTree):
            return self._expr.unparse() == other._expr.unparse()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._expr.unparse())

    def __reduce__(self) -> tuple[object, tuple[str]]:
        """Pickled as its text (the reference's cannot be pickled at all)."""
        return (ExprTree, (self._expr.unparse(),))

    def __bool__(self) -> bool:
        return bool(self.eval())


class ClassAd(_CedarAd):
    """A ClassAd as ``classad2`` presents it: ``ClassAd("[a = 1]")``, ``ClassAd({"a": 1})``."""

    __slots__ = ()

    def __init__(self, input: str | Mapping[str, object] | None = None) -> None:  # noqa: A002
        if isinstance(input, str):
            super().__init__()
            # The first ad of the text; what follows its closing bracket is ignored, as the
            # reference does.
            try:
                parsed = parse_next(input, "new")
            except ClassAdError:
                parsed = None
            if parsed is None:
                raise ClassAdException("Unable to parse string into a ClassAd.")
            for name in parsed:  # its expressions as they are (parsed already)
                self.set_expr(name, parsed.lookup(name))
            return
        super().__init__()
        if input is not None:
            for key, value in input.items():
                self[key] = value

    @classmethod
    def _adopt(cls, ad: _CedarAd) -> ClassAd:
        """The same ad, re-classed in place (the storage layouts are identical)."""
        ad.__class__ = cls
        return ad  # type: ignore[return-value]

    def _plain(self) -> _CedarAd:
        """A cedar ad with the same entries (for cedar code, which expects ``Expr`` lookups)."""
        plain = _CedarAd()
        for name in self:
            plain.set_expr(name, _CedarAd.lookup(self, name))
        return plain

    def to_expr(self) -> RecordExpr:
        return RecordExpr((name, _CedarAd.lookup(self, name)) for name in self)

    def __getitem__(self, key: str) -> object:
        return _to_python(super().__getitem__(key))

    def __setitem__(self, key: str, value: object) -> None:
        super().__setitem__(key, _from_python(value))

    def get(self, key: str, default: object = None) -> object:
        try:
            return self[key]
        except KeyError:
            return default

    def eval(self, attr: str) -> object:  # type: ignore[override]
        """The value of attribute ``attr`` evaluated in this ad."""
        return _to_python(super().eval(attr))

    def lookup(self, attr: str) -> ExprTree:  # type: ignore[override]
        """The expression of ``attr`` (``KeyError`` when absent)."""
        return ExprTree._wrap(super().lookup(attr))

    def printOld(self) -> str:  # noqa: N802 - the bindings' spelling
        """The ``name = value`` lines form."""
        return self.print_old()

    formatOld = printOld  # noqa: N815

    def printJson(self) -> str:  # noqa: N802
        """The JSON form (expressions as ``"\\/Expr(...)\\/"`` strings)."""
        return self._plain().to_json()

    def __reduce__(self) -> tuple[object, tuple[str]]:
        """Pickled as its text (multiprocessing passes ads between processes)."""
        return (ClassAd, (self.print_new(),))

    formatJson = printJson  # noqa: N815

    def matches(self, ad: _CedarAd) -> bool:
        """Whether this ad's ``Requirements`` holds against ``ad``."""
        return super().eval("Requirements", target=ad) is True if "Requirements" in self else False

    def symmetricMatch(self, ad: ClassAd) -> bool:  # noqa: N802
        """Whether both ads' ``Requirements`` hold against each other."""
        return self.matches(ad) and ad.matches(self)

    def externalRefs(self, expr: ExprTree) -> list[str]:  # noqa: N802
        """Names ``expr`` uses that this ad does not define, sorted (as the reference)."""
        return sorted(self.external_refs(expr._expr))

    def internalRefs(self, expr: ExprTree) -> list[str]:  # noqa: N802
        """Names ``expr`` uses that this ad defines, sorted (as the reference)."""
        return sorted(self.internal_refs(expr._expr))

    def flatten(self, expr: ExprTree) -> ExprTree:  # type: ignore[override]
        """``expr`` with what this ad defines put in, partially evaluated (``ValueError``, as
        the reference, when it runs into a cycle)."""
        try:
            return ExprTree._wrap(super().flatten(expr._expr))
        except ClassAdError:
            raise ValueError("Unable to flatten expression.") from None

    def __str__(self) -> str:
        """The reference's multi-line form (attributes sorted, nested ads and lists indented,
        also inside larger expressions)."""
        return unparse(self.to_expr(), pretty=True)

    def __repr__(self) -> str:
        return self.print_new()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _CedarAd):
            return NotImplemented
        mine = {k.lower(): self.raw_text(k) for k in self}
        theirs = {k.lower(): other.raw_text(k) for k in other}
        return mine == theirs

    __hash__ = None


#: The old name of :class:`ParserType`.
Parser = ParserType


_SYNTAX: dict[ParserType, Syntax] = {
    ParserType.Auto: "auto",
    ParserType.FileAuto: "auto",
    ParserType.Old: "old",
    ParserType.New: "new",
}


def _syntax(parser: ParserType) -> Syntax:
    if parser not in _SYNTAX:
        raise ClassAdException(f"{parser.name} ClassAd input is not supported by cedar.compat")
    return _SYNTAX[parser]


def parseAds(  # noqa: N802
    input: str | IO[str],  # noqa: A002
    parser: ParserType = ParserType.Auto,
) -> Iterator[ClassAd]:
    """Every ad in ``input`` (old ``name = value`` blocks separated by blank lines, or
    ``[...]`` new-syntax ads), lazily."""
    syntax = _syntax(parser)
    try:
        for ad in parse_ads(input, syntax):
            yield ClassAd._adopt(ad)
    except ClassAdError:
        raise ClassAdException("Unable to parse string into a ClassAd.") from None


def parseOne(  # noqa: N802
    input: str | Iterable[str],  # noqa: A002
    parser: ParserType = ParserType.Auto,
) -> ClassAd:
    """All of ``input`` as one ad (the attributes of several ads are merged)."""
    text = input if isinstance(input, str) else "".join(input)
    try:
        return ClassAd._adopt(parse_one(text, _syntax(parser)))
    except ClassAdError:
        raise ClassAdException("Unable to parse string into a ClassAd.") from None


def parseNext(  # noqa: N802
    input: str | IO[str],  # noqa: A002
    parser: ParserType = ParserType.Auto,
) -> ClassAd:
    """The next ad of ``input`` (``StopIteration`` when there is none)."""
    try:
        ad = parse_next(input, _syntax(parser))
    except ClassAdError:
        raise ClassAdException("Unable to parse string into a ClassAd.") from None
    if ad is None:
        raise StopIteration
    return ClassAd._adopt(ad)


def quote(input: str) -> str:  # noqa: A002
    """``input`` as a ClassAd string literal."""
    return quote_string(input, old=False)


def unquote(input: str) -> str:  # noqa: A002
    """The string a ClassAd string literal stands for."""
    try:
        value = Expr.parse(input).value()
    except ClassAdError:
        raise ClassAdException(f"Invalid string literal: {input}") from None
    if not isinstance(value, str):
        raise ClassAdException(f"Not a string literal: {input}")
    return value


def version() -> str:
    """The ClassAd library version this module stands in for."""
    return "25.0.0"


def lastError() -> str:  # noqa: N802
    """Kept for old programs: errors are raised, so there is never a pending one."""
    return ""


def adopt(ad: _CedarAd) -> ClassAd:
    """A cedar ad as a ``classad2.ClassAd``, re-classed in place (no copy): what the other
    compat modules hand their callers.  Not in ``__all__`` (the reference has no such name)."""
    return ClassAd._adopt(ad)


def plain(ad: ClassAd) -> _CedarAd:
    """A cedar ad with the entries of a ``classad2.ClassAd``: what the other compat modules hand
    cedar's clients.  Not in ``__all__`` (the reference has no such name)."""
    return ad._plain()


__all__ = [
    "ClassAd",
    "ClassAdException",
    "ExprTree",
    "Parser",
    "ParserType",
    "Value",
    "lastError",
    "parseAds",
    "parseNext",
    "parseOne",
    "quote",
    "unquote",
    "version",
]
