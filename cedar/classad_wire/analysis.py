"""What an expression refers to in an ad, and partial evaluation against it.

``external_refs``/``internal_refs`` follow the reference's ``externalRefs``/``internalRefs``:
a reference to an attribute the ad defines is internal and the references of that attribute's
own expression are followed; anything else (an undefined name, ``TARGET.X``, ``X.Y`` through an
undefined ``X``) is external, reported as written.  ``flatten`` evaluates every subexpression
that depends only on the ad and keeps the rest as expressions.
"""

from __future__ import annotations

from cedar.classad_wire.evaluate import Evaluator, Scope, to_python
from cedar.classad_wire.expr import (
    AdLike,
    AttrRef,
    Binary,
    Call,
    Elvis,
    Expr,
    ListExpr,
    Literal,
    Paren,
    RecordExpr,
    Select,
    Subscript,
    Ternary,
    Unary,
    fold,
)
from cedar.classad_wire.unparse import unparse
from cedar.errors import ClassAdError

_SELF = frozenset(("my", "self"))
_SPECIAL = frozenset(("my", "self", "target", "other", "parent", "root", "toplevel"))


class _Refs:
    """One walk: collects internal and external names in first-seen order."""

    def __init__(self, ad: AdLike) -> None:
        self.ad = ad
        self.internal: dict[str, str] = {}
        self.external: dict[str, str] = {}
        self.followed: set[int] = set()

    def walk(self, node: Expr, records: tuple[RecordExpr, ...] = ()) -> None:
        stack: list[tuple[Expr, tuple[RecordExpr, ...]]] = [(node, records)]
        while stack:
            node, records = stack.pop()
            if isinstance(node, AttrRef):
                self._name(node.name, records, node.absolute)
            elif isinstance(node, Select):
                self._select(node, records, stack)
            elif isinstance(node, RecordExpr):
                inner = (*records, node)
                stack.extend((value, inner) for _, value in reversed(list(node.items())))
            else:
                stack.extend((child, records) for child in reversed(node.children()))

    def _name(self, name: str, records: tuple[RecordExpr, ...], absolute: bool = False) -> None:
        key = fold(name)
        if key in _SPECIAL and not absolute:
            return
        if not absolute:
            for record in reversed(records):
                for member, value in record.items():
                    if fold(member) == key:
                        self._follow(value, records)
                        return
        expr = self.ad.get_expr(name)
        if expr is None:
            self.external.setdefault(key, name)
            return
        self.internal.setdefault(key, name)
        self._follow(expr, ())

    def _follow(self, expr: Expr, records: tuple[RecordExpr, ...]) -> None:
        if id(expr) not in self.followed:
            self.followed.add(id(expr))
            self.walk(expr, records)

    def _select(
        self,
        node: Select,
        records: tuple[RecordExpr, ...],
        stack: list[tuple[Expr, tuple[RecordExpr, ...]]],
    ) -> None:
        base = node.base
        root: Expr = base
        while isinstance(root, Select):
            root = root.base
        if (
            root is not base
            and isinstance(root, AttrRef)
            and not root.absolute
            and fold(root.name) not in _SELF
            and self.ad.get_expr(root.name) is None
        ):
            text = unparse(node)  # X.Y.Z through an undefined X: external as written
            self.external.setdefault(fold(text), text)
            return
        if isinstance(base, AttrRef) and not base.absolute:
            key = fold(base.name)
            if key in _SELF:
                self._name(node.name, records)
                return
            target = self.ad.get_expr(base.name) if key not in _SPECIAL else None
            if isinstance(target, RecordExpr):
                self.internal.setdefault(key, base.name)
                member = dict((fold(n), v) for n, v in target.items()).get(fold(node.name))
                if member is None:
                    self.external.setdefault(fold(node.name), node.name)
                else:
                    self._follow(member, (target,))
                return
            if target is None:
                text = unparse(node)
                self.external.setdefault(fold(text), text)
                return
        stack.append((base, records))


def _walk(ad: AdLike, expr: Expr) -> _Refs:
    refs = _Refs(ad)
    refs.walk(expr)
    return refs


def external_refs(ad: AdLike, expr: Expr) -> list[str]:
    """Names ``expr`` uses that ``ad`` does not define (first spelling, first-seen order)."""
    return list(_walk(ad, expr).external.values())


def internal_refs(ad: AdLike, expr: Expr) -> list[str]:
    """Names ``expr`` uses (directly or through other attributes) that ``ad`` defines."""
    return list(_walk(ad, expr).internal.values())


def flatten(ad: AdLike, expr: Expr) -> Expr:
    """``expr`` with every part that depends only on ``ad`` replaced by its value."""
    return _Flattener(ad).run(expr)


class _Flattener:
    def __init__(self, ad: AdLike) -> None:
        self.ad = ad

    def _value(self, node: Expr) -> Expr:
        evaluator = Evaluator()
        value = evaluator.eval(node, Scope.of_ad(self.ad))
        if evaluator.cut:
            # Observed: the reference cannot flatten what runs into a reference cycle.
            raise ClassAdError("cannot flatten an expression that refers to itself")
        return Expr.from_value(to_python(value))

    def run(self, node: Expr) -> Expr:
        if not external_refs(self.ad, node):
            return self._value(node)
        if isinstance(node, Paren):
            return Paren(self.run(node.inner))
        if isinstance(node, Unary):
            return Unary(node.op, self.run(node.operand))
        if isinstance(node, Binary):
            left, right = self.run(node.left), self.run(node.right)
            if node.op in ("&&", "||"):
                decided = _logic(node.op, left, right)
                if decided is not None:
                    return decided
            return Binary(node.op, left, right)
        if isinstance(node, Ternary):
            cond = self.run(node.cond)
            if isinstance(cond, Literal) and type(cond.val) is bool:
                return self.run(node.then if cond.val else node.orelse)
            return Ternary(cond, self.run(node.then), self.run(node.orelse))
        if isinstance(node, Elvis):
            return Elvis(self.run(node.left), self.run(node.right))
        if isinstance(node, Call):
            return Call(node.name, [self.run(arg) for arg in node.args])
        if isinstance(node, ListExpr):
            return ListExpr(self.run(item) for item in node.items)
        if isinstance(node, Subscript):
            return Subscript(self.run(node.base), self.run(node.index))
        return node  # references that stay external, selects through them, record literals


def _logic(op: str, left: Expr, right: Expr) -> Expr | None:
    """``&&``/``||`` with one side known: the deciding value, or the other side."""
    for known, other in ((left, right), (right, left)):
        if isinstance(known, Literal) and type(known.val) in (bool, int, float):
            if bool(known.val) == (op == "||"):
                return Literal(op == "||")
            return other
    return None


__all__ = ["external_refs", "flatten", "internal_refs"]
