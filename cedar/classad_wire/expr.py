"""The expression tree: immutable, hashable nodes with structural equality.

Every attribute value is an expression tree (spec 02 §7).  The tree keeps exactly what the
parser saw -- parentheses are nodes, ``-5`` (a literal) differs from ``- 5`` (unary minus) -- so
printing it back reproduces the reference's text (§6).

Hashes are computed bottom-up when a node is built and equality is checked with an explicit
stack, so neither recurses: a peer can send a left-deep chain like ``1+1+...+1`` of any length.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NoReturn, Protocol

from cedar.classad_wire.values import AbsTime, ErrorType, RelTime, UndefinedType
from cedar.errors import ClassAdError

#: Python types a :class:`Literal` may hold.
Scalar = int | float | str | bool | UndefinedType | ErrorType | AbsTime | RelTime

BINARY_OPS = frozenset(
    ("||", "&&", "|", "^", "&", "==", "!=", "=?=", "=!=", "<", "<=", ">", ">=")
    + ("<<", ">>", ">>>", "+", "-", "*", "/", "%")
)
UNARY_OPS = frozenset(("-", "+", "!", "~"))
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def storage_key(name: str) -> tuple[int, bytes]:
    """The reference's attribute order: length, then ASCII-case-insensitive bytes (spec 02 §2.3)."""
    raw = name.encode("utf-8", "surrogateescape")
    return (len(raw), raw.lower())


_ASCII_FOLD = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def fold(name: str) -> str:
    """Case-fold an attribute name the way the reference does (ASCII letters only)."""
    return name.lower() if name.isascii() else name.translate(_ASCII_FOLD)


class AdLike(Protocol):
    """What evaluation needs of an ad (``ClassAd`` is one): its members and its record form.

    Files below ``classad.py`` name ads by this, so that they need not import it.
    """

    def get_expr(self, name: str) -> Expr | None: ...

    def to_expr(self) -> RecordExpr: ...


class Upcalls:
    """The functions of upper floors that a lower floor of ``classad_wire`` calls.

    The files of the package are ordered in floors (docs/ARCHITECTURE.md) and import only
    downwards.  A few conveniences point up -- ``Expr.parse``/``str(expr)``/``Expr.eval`` need
    the parser, printer and evaluator, ``RecordExpr.value()`` the ClassAd type,
    ``ClassAd.to_json`` the JSON codec -- so they call through :data:`UPCALLS`, which
    ``cedar/classad_wire/__init__.py`` fills once.  Importing any file of the package runs
    that ``__init__`` first, so the slots are filled before user code can call them; a slot
    is one attribute load, cheaper than the function-local import it replaces.
    """

    __slots__ = ("ad_from_json", "ad_to_json", "ad_type", "evaluate", "parse", "unparse")

    parse: Callable[[str, bool], Expr]
    unparse: Callable[[Expr, bool], str]
    evaluate: Callable[[Expr, Any, Any], Any]
    ad_type: type[Any]
    ad_to_json: Callable[[Any], str]
    ad_from_json: Callable[[str], Any]


#: The one instance, filled by ``cedar/classad_wire/__init__.py``.
UPCALLS = Upcalls()


def _scalar_key(value: Scalar) -> tuple[object, ...]:
    if isinstance(value, float):
        return ("f", "nan" if value != value else struct.pack("<d", value))
    return (type(value).__name__, value)


class Expr:
    """An unevaluated ClassAd expression (abstract base of the node classes).

    Immutable and hashable; ``==`` is structural (spelling of names included).  ``str(expr)``
    is the new syntax, ``expr.unparse(old=True)`` the wire syntax.
    """

    __slots__ = ("_hash",)
    _hash: int

    # -- construction helpers ---------------------------------------------------------------
    def _seal(self, own: tuple[object, ...]) -> None:
        object.__setattr__(
            self, "_hash", hash((type(self).__name__, own, *(c._hash for c in self.children())))
        )

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __copy__(self) -> Expr:
        return self  # immutable: a copy would be indistinguishable

    def __deepcopy__(self, memo: object) -> Expr:
        return self

    # -- structure ---------------------------------------------------------------------------
    def own(self) -> tuple[object, ...]:
        """The node's non-expression data (compared by ``==``)."""
        raise NotImplementedError

    def children(self) -> tuple[Expr, ...]:
        """Direct sub-expressions, in source order."""
        return ()

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Expr):
            return NotImplemented
        stack = [(self, other)]
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if a._hash != b._hash or type(a) is not type(b) or a.own() != b.own():
                return False
            ka, kb = a.children(), b.children()
            if len(ka) != len(kb):
                return False
            stack.extend(zip(ka, kb, strict=True))
        return True

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    # -- text --------------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str, old: bool = False) -> Expr:
        """Parse one complete expression (new syntax, or wire syntax with ``old=True``)."""
        return UPCALLS.parse(text, old)

    def unparse(self, old: bool = False) -> str:
        """The expression as text: new syntax, or wire syntax with ``old=True``."""
        return UPCALLS.unparse(self, old)

    def __str__(self) -> str:
        return self.unparse()

    def __repr__(self) -> str:
        return f"Expr({self.unparse()!r})"

    # -- values ------------------------------------------------------------------------------
    @property
    def is_literal(self) -> bool:
        """True for constants, lists and records (what the reference bindings turn into values)."""
        return False

    def value(self) -> Any:
        """The Python value of a literal node; the expression itself otherwise."""
        return self

    @staticmethod
    def from_value(value: object) -> Expr:
        """A Python value (or an Expr, returned as is) as an expression tree."""
        return to_expr(value)

    def eval(self, my: AdLike | None = None, target: AdLike | None = None) -> Any:
        """Evaluate in the scope of ``my`` (optionally matched against ``target``)."""
        return UPCALLS.evaluate(self, my, target)

    def simplify(self, my: AdLike | None = None, target: AdLike | None = None) -> Expr:
        """The value of this expression (evaluated like :meth:`eval`) as an expression."""
        return Expr.from_value(self.eval(my, target))


class Literal(Expr):
    """A constant: int, float, str, bool, Undefined, Error, AbsTime or RelTime."""

    __slots__ = ("val",)
    val: Scalar

    def __init__(self, val: Scalar) -> None:
        _set_literal(self, val)

    def own(self) -> tuple[object, ...]:
        return _scalar_key(self.val)

    @property
    def is_literal(self) -> bool:
        return True

    def value(self) -> Any:
        return self.val


_new_object = object.__new__
_set_val: Callable[[Literal, Scalar], None] = Literal.__dict__["val"].__set__
_set_hash: Callable[[Expr, int], None] = Expr.__dict__["_hash"].__set__


def _set_literal(node: Literal, val: Scalar) -> None:
    # Literals are the most common node and reading a query result builds one per value, so the
    # slots are set through their descriptors and the hash is the value's own: equal literals
    # (equal _scalar_key) have equal values of one type.  Floats go through the key, because a
    # NaN's own hash is its identity while all NaN literals are equal.
    _set_val(node, val)
    _set_hash(node, hash(_scalar_key(val)) if val.__class__ is float else hash(val))


def make_literal(val: Scalar) -> Literal:
    """``Literal(val)`` without the call overhead of the class, for the wire reader's hot path."""
    node: Literal = _new_object(Literal)
    _set_val(node, val)
    _set_hash(node, hash(_scalar_key(val)) if val.__class__ is float else hash(val))
    return node


class AttrRef(Expr):
    """A bare attribute reference ``name``, or the absolute reference ``.name``."""

    __slots__ = ("name", "absolute")
    name: str
    absolute: bool

    def __init__(self, name: str, absolute: bool = False) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "absolute", absolute)
        self._seal((name, absolute))

    def own(self) -> tuple[object, ...]:
        return (self.name, self.absolute)


class Select(Expr):
    """Selection ``base.name`` (``MY.x`` is a selection whose base is the reference ``MY``)."""

    __slots__ = ("base", "name")
    base: Expr
    name: str

    def __init__(self, base: Expr, name: str) -> None:
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "name", name)
        self._seal((name,))

    def own(self) -> tuple[object, ...]:
        return (self.name,)

    def children(self) -> tuple[Expr, ...]:
        return (self.base,)


class Subscript(Expr):
    """Subscript ``base[index]``."""

    __slots__ = ("base", "index")
    base: Expr
    index: Expr

    def __init__(self, base: Expr, index: Expr) -> None:
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "index", index)
        self._seal(())

    def own(self) -> tuple[object, ...]:
        return ()

    def children(self) -> tuple[Expr, ...]:
        return (self.base, self.index)


class Unary(Expr):
    """Prefix operator ``-``, ``+``, ``!`` or ``~``."""

    __slots__ = ("op", "operand")
    op: str
    operand: Expr

    def __init__(self, op: str, operand: Expr) -> None:
        if op not in UNARY_OPS:
            raise ClassAdError(f"unknown unary operator {op!r}")
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "operand", operand)
        self._seal((op,))

    def own(self) -> tuple[object, ...]:
        return (self.op,)

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)


class Binary(Expr):
    """Infix operator; ``is``/``isnt`` are stored as ``=?=``/``=!=``."""

    __slots__ = ("op", "left", "right")
    op: str
    left: Expr
    right: Expr

    def __init__(self, op: str, left: Expr, right: Expr) -> None:
        if op not in BINARY_OPS:
            raise ClassAdError(f"unknown binary operator {op!r}")
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "left", left)
        object.__setattr__(self, "right", right)
        self._seal((op,))

    def own(self) -> tuple[object, ...]:
        return (self.op,)

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)


class Ternary(Expr):
    """``cond ? then : else``."""

    __slots__ = ("cond", "then", "orelse")
    cond: Expr
    then: Expr
    orelse: Expr

    def __init__(self, cond: Expr, then: Expr, orelse: Expr) -> None:
        object.__setattr__(self, "cond", cond)
        object.__setattr__(self, "then", then)
        object.__setattr__(self, "orelse", orelse)
        self._seal(())

    def own(self) -> tuple[object, ...]:
        return ()

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.then, self.orelse)


class Elvis(Expr):
    """``left ?: right``: left unless it is undefined."""

    __slots__ = ("left", "right")
    left: Expr
    right: Expr

    def __init__(self, left: Expr, right: Expr) -> None:
        object.__setattr__(self, "left", left)
        object.__setattr__(self, "right", right)
        self._seal(())

    def own(self) -> tuple[object, ...]:
        return ()

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)


class Paren(Expr):
    """Explicit parentheses; kept because the reference prints exactly the ones it read."""

    __slots__ = ("inner",)
    inner: Expr

    def __init__(self, inner: Expr) -> None:
        object.__setattr__(self, "inner", inner)
        self._seal(())

    def own(self) -> tuple[object, ...]:
        return ()

    def children(self) -> tuple[Expr, ...]:
        return (self.inner,)


class Call(Expr):
    """Function call; the name is matched case-insensitively and printed as written."""

    __slots__ = ("name", "args")
    name: str
    args: tuple[Expr, ...]

    def __init__(self, name: str, args: Iterable[Expr] = ()) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "args", tuple(args))
        self._seal((name,))

    def own(self) -> tuple[object, ...]:
        return (self.name,)

    def children(self) -> tuple[Expr, ...]:
        return self.args


class ListExpr(Expr):
    """List literal ``{ a, b }``; elements are expressions."""

    __slots__ = ("items",)
    items: tuple[Expr, ...]

    def __init__(self, items: Iterable[Expr] = ()) -> None:
        object.__setattr__(self, "items", tuple(items))
        self._seal(())

    def own(self) -> tuple[object, ...]:
        return ()

    def children(self) -> tuple[Expr, ...]:
        return self.items

    @property
    def is_literal(self) -> bool:
        return True

    def value(self) -> list[Any]:
        return [item.value() for item in self.items]


class RecordExpr(Expr):
    """Nested ad literal ``[ a = 1; b = 2 ]``.

    Members are normalised on construction the way the reference stores them: a later duplicate
    (case-insensitive) replaces the value but keeps the first spelling, and members are ordered
    by :func:`storage_key`, which is also the printing order.
    """

    __slots__ = ("names", "values")
    names: tuple[str, ...]
    values: tuple[Expr, ...]

    def __init__(self, items: Iterable[tuple[str, Expr]] = ()) -> None:
        merged: dict[str, tuple[str, Expr]] = {}
        for name, value in items:
            key = fold(name)
            old = merged.get(key)
            merged[key] = (old[0] if old else name, value)
        ordered = sorted(merged.values(), key=lambda item: storage_key(item[0]))
        object.__setattr__(self, "names", tuple(n for n, _ in ordered))
        object.__setattr__(self, "values", tuple(v for _, v in ordered))
        self._seal(self.names)

    def own(self) -> tuple[object, ...]:
        return self.names

    def children(self) -> tuple[Expr, ...]:
        return self.values

    def items(self) -> Iterator[tuple[str, Expr]]:
        """(name, expression) pairs in storage order."""
        return zip(self.names, self.values, strict=True)

    @property
    def is_literal(self) -> bool:
        return True

    def value(self) -> Any:
        """A new ``ClassAd`` holding this record's attributes."""
        ad = UPCALLS.ad_type()
        for name, expr in self.items():
            ad.set_expr(name, expr)
        return ad


def to_expr(value: object) -> Expr:
    """Convert a Python value to an expression tree (lists, mappings and ads recursively)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool | float | str | UndefinedType | ErrorType | AbsTime | RelTime):
        return Literal(value)
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise ClassAdError(f"integer {value} does not fit in 64 bits")
        return Literal(int(value))
    if isinstance(value, UPCALLS.ad_type):
        return RecordExpr((name, value.lookup(name)) for name in value)
    if isinstance(value, Mapping):
        return RecordExpr((_check_name(k), to_expr(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return ListExpr(to_expr(v) for v in value)
    from datetime import datetime

    if isinstance(value, datetime):
        return Literal(AbsTime.from_datetime(value))
    raise TypeError(f"cannot convert {type(value).__name__} to a ClassAd value")


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"ClassAd attribute names are str, not {type(name).__name__}")
    return name


__all__ = [
    "UPCALLS",
    "AdLike",
    "AttrRef",
    "Binary",
    "Call",
    "Elvis",
    "Expr",
    "ListExpr",
    "Literal",
    "Paren",
    "RecordExpr",
    "Scalar",
    "Select",
    "Subscript",
    "Ternary",
    "Unary",
    "Upcalls",
    "fold",
    "storage_key",
    "to_expr",
]
