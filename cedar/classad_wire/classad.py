"""The ClassAd: a case-insensitive mapping from attribute names to expressions.

Values received from the wire are kept as their raw right-hand-side text and parsed on first
access, because query results can hold thousands of ads of which a caller reads a few
attributes.  A raw value that turns out not to parse raises :class:`ClassAdParseError` naming the
attribute when it is first used.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any

from cedar.classad_wire.expr import Expr, RecordExpr, fold, storage_key, to_expr
from cedar.classad_wire.syntax import parse_expr
from cedar.classad_wire.unparse import unparse
from cedar.errors import ClassAdParseError

_LINE_WS = " \t\r\n\v\f"


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

    __slots__ = ("_entries",)

    def __init__(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None):
        # folded name -> [spelling, Expr or raw wire text]
        self._entries: dict[str, list[Any]] = {}
        if values is not None:
            self.update(values)

    # -- storage ---------------------------------------------------------------------------
    def _set_raw(self, name: str, raw: str) -> None:
        """Store unparsed wire text (used by the wire reader; parsed on first access)."""
        key = fold(name)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = [name, raw]
        else:
            entry[1] = raw

    def set_expr(self, name: str, expr: Expr) -> None:
        """Set an attribute to an expression tree."""
        if not isinstance(name, str):
            raise TypeError(f"ClassAd attribute names are str, not {type(name).__name__}")
        key = fold(name)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = [name, expr]
        else:
            entry[1] = expr

    def _expr(self, entry: list[Any]) -> Expr:
        value = entry[1]
        if isinstance(value, str):
            try:
                value = parse_expr(value, old=True, full=False)
            except ClassAdParseError as exc:
                raise ClassAdParseError(f"attribute {entry[0]!r}: {exc}") from None
            entry[1] = value
        return value  # type: ignore[no-any-return]

    def raw_text(self, name: str) -> str:
        """The wire-syntax text of an attribute (the received text if it was never parsed)."""
        entry = self._entries[fold(name)]
        value = entry[1]
        return value if isinstance(value, str) else unparse(value, old=True)

    # -- mapping protocol ------------------------------------------------------------------
    def __getitem__(self, name: str) -> Any:
        return self._expr(self._entries[fold(name)]).value()

    def __setitem__(self, name: str, value: Any) -> None:
        self.set_expr(name, to_expr(value))

    def __delitem__(self, name: str) -> None:
        del self._entries[fold(name)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and fold(name) in self._entries

    def __iter__(self) -> Iterator[str]:
        return (entry[0] for entry in list(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClassAd):
            if self._entries.keys() != other._entries.keys():
                return False
            return all(
                self._expr(entry) == other._expr(other._entries[key])
                for key, entry in self._entries.items()
            )
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> ClassAd:
        """A shallow copy (expressions are immutable, so this is a full copy in effect)."""
        new = ClassAd()
        new._entries = {key: list(entry) for key, entry in self._entries.items()}
        return new

    __copy__ = copy

    # -- expressions -----------------------------------------------------------------------
    def lookup(self, name: str) -> Expr:
        """The attribute's expression tree (KeyError when absent)."""
        return self._expr(self._entries[fold(name)])

    def get_expr(self, name: str) -> Expr | None:
        """The attribute's expression tree, or None when absent."""
        entry = self._entries.get(fold(name))
        return None if entry is None else self._expr(entry)

    def spelling(self, name: str) -> str:
        """The stored spelling of a (case-insensitively matched) attribute name."""
        return str(self._entries[fold(name)][0])

    def eval(self, name: str, target: ClassAd | None = None) -> Any:
        """Evaluate an attribute in this ad (matched against ``target``); missing = Undefined."""
        from cedar.classad_wire.evaluate import evaluate
        from cedar.classad_wire.expr import AttrRef

        return evaluate(AttrRef(name), self, target)

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
        return {name: _to_plain(self[name]) for name in self}

    def to_expr(self) -> RecordExpr:
        """The ad as a record expression (``[ ... ]``)."""
        return RecordExpr((name, self.lookup(name)) for name in self)

    def print_new(self) -> str:
        """One-line new-syntax form ``[ a = 1; b = "x" ]``."""
        return unparse(self.to_expr(), old=False)

    def print_old(self) -> str:
        """The long form: one ``Name = value`` line per attribute (spec 02 §3.3).

        Names are written unquoted, as on the wire and in ``condor_q -long``, so the output
        reads back with :meth:`parse_old`; order is the reference's storage order.
        """
        return "".join(f"{name} = {self.raw_text(name)}\n" for name in self.sorted_names())

    def to_json(self) -> str:
        """The HTCondor JSON form (as printed by the reference's ``printJson``)."""
        from cedar.classad_wire.jsonfmt import ad_to_json

        return ad_to_json(self)

    @classmethod
    def from_json(cls, text: str) -> ClassAd:
        """Parse the HTCondor JSON form of one ad."""
        from cedar.classad_wire.jsonfmt import ad_from_json

        return ad_from_json(text)

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


def _to_plain(value: Any) -> Any:
    if isinstance(value, ClassAd):
        return value.to_dict()
    if isinstance(value, list):
        return [_to_plain(v) for v in value]
    return value


__all__ = ["ClassAd", "split_line"]
