"""The clause analysis of a Requirements expression (spec 08 §7.2), pure.

The expression is cut into numbered clauses (comparisons, ``&&``/``||`` nodes and the direct
operands of logic operators), constant clauses are folded relative to the ad that owns the
expression (the job, or the slot in reverse analysis), each remaining clause is counted against
the other side's ads, and clauses that do not decide anything are pruned.  The numbering, the
folding and the pruning follow the reference's rules so that the table is the one ``condor_q
-better-analyze`` prints; :class:`ClauseTable` keeps everything the library reports beyond it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cedar.classad_wire.analysis import external_refs
from cedar.classad_wire.classad import ClassAd
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import (
    AttrRef,
    Binary,
    Call,
    Expr,
    Paren,
    Unary,
    fold,
)
from cedar.classad_wire.unparse import unparse

COMPARISONS = frozenset(("<", "<=", "!=", "==", ">=", ">", "=?=", "=!="))
LOGIC = frozenset(("&&", "||"))
#: Recursion bound for the clause walk: deeper expressions are counted as one clause.
MAX_DEPTH = 200


def truthy(value: object) -> bool:
    """The reference's "matches": true, or a non-zero number; anything else is no match."""
    if value is True:
        return True
    if value is False or value is None:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0
    return False


def analysis_text(expr: Expr) -> str:
    """An expression as the analysis prints it: wire syntax, but ``is``/``isnt`` for the
    identity operators (spec 08 §7.2)."""
    text = unparse(expr, old=True)
    if "=?=" not in text and "=!=" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':  # copy a string literal as is (escapes included)
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if text.startswith(" =?= ", i):
            out.append(" is ")
            i += 5
            continue
        if text.startswith(" =!= ", i):
            out.append(" isnt ")
            i += 5
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@dataclass
class Clause:
    """One numbered clause while the analysis runs (mutable working state)."""

    number: int
    expr: Expr
    op: str | None = None  # "&&" or "||" for logic clauses
    left: int | None = None
    right: int | None = None
    text: str = ""
    constant: bool = False
    value: bool = False
    variable: bool = False
    effective: int | None = None
    irrelevant: bool = False
    counts: list[int] = field(default_factory=lambda: [0, 0])
    counted: bool = False

    @property
    def logic(self) -> bool:
        return self.op is not None and self.left is not None and self.right is not None


def number_clauses(expr: Expr) -> list[Clause]:
    """Step A: the clauses of ``expr`` in the reference's post-order numbering."""
    clauses: list[Clause] = []

    def push(node: Expr, left: int | None = None, right: int | None = None) -> int:
        clause = Clause(len(clauses), node, left=left, right=right)
        clause.text = analysis_text(node) if left is None else f"[{left}] {analysis_text(node)}"
        clauses.append(clause)
        return clause.number

    def walk(node: Expr, store: bool, depth: int) -> int | None:
        if depth > MAX_DEPTH:
            return push(node) if store else None
        if isinstance(node, Binary) and node.op in LOGIC:
            left = walk(node.left, True, depth + 1)
            right = walk(node.right, True, depth + 1)
            clause = Clause(len(clauses), node, op=node.op, left=left, right=right)
            clause.text = f"[{left}] {node.op} [{right}]"
            clauses.append(clause)
            return clause.number
        if isinstance(node, Binary) and node.op in COMPARISONS:
            left = walk(node.left, False, depth + 1)
            walk(node.right, False, depth + 1)
            return push(node, left)
        if isinstance(node, Unary) and node.op == "!":
            inner = walk(node.operand, True, depth + 1)
            if inner is not None and inner == len(clauses) - 1:
                negated = clauses[inner]  # the clause becomes the whole negation
                negated.expr, negated.op, negated.left, negated.right = node, None, None, None
                negated.text = analysis_text(node)
            return inner
        if isinstance(node, Paren):
            return walk(node.inner, True, depth + 1)
        if isinstance(node, Binary):  # arithmetic: operands walked, stored only if asked
            left = walk(node.left, False, depth + 1)
            walk(node.right, False, depth + 1)
            return push(node, left) if store else None
        if isinstance(node, Unary):
            inner = walk(node.operand, False, depth + 1)
            return push(node, inner) if store else None
        return push(node) if store else None  # calls, literals, references: not walked into

    walk(expr, True, 0)
    return clauses


def _variable(expr: Expr) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, AttrRef) and fold(node.name) == "currenttime":
            return True
        if isinstance(node, Call) and fold(node.name) == "time":
            return True
        stack.extend(node.children())
    return False


class ClauseTable:
    """Steps B-D for one expression owned by ``my``: fold, count, prune."""

    def __init__(self, my: ClassAd, expr: Expr) -> None:
        self.my = my
        self.expr = expr
        self.clauses = number_clauses(expr)
        self.targets = 0
        self.columns = 1
        self._fold_constants()

    # -- step B ----------------------------------------------------------------------------
    def _fold_constants(self) -> None:
        for clause in self.clauses:
            if clause.logic:
                continue
            if not external_refs(self.my, clause.expr):
                clause.constant = True
                clause.value = truthy(evaluate(clause.expr, self.my))
                clause.variable = _variable(clause.expr)
        for clause in self.clauses:
            if not clause.logic:
                continue
            assert clause.left is not None and clause.right is not None
            left, right = self.clauses[clause.left], self.clauses[clause.right]
            if not (left.constant or right.constant):
                continue
            decisive = clause.op == "||"  # the operand value that decides the clause
            if left.constant and left.value == decisive:
                self._decide(clause, left, right, decisive)
            elif right.constant and right.value == decisive:
                self._decide(clause, right, left, decisive)
            elif left.constant and right.constant:
                clause.constant, clause.value = True, not decisive
            elif left.constant:
                clause.effective = right.number
                self._irrelevant(left.number)
            else:
                clause.effective = left.number
                self._irrelevant(right.number)
        for clause in self.clauses:
            if clause.logic:
                assert clause.left is not None and clause.right is not None
                clause.left = self.resolve(clause.left)
                clause.right = self.resolve(clause.right)

    def _decide(self, clause: Clause, decider: Clause, other: Clause, value: bool) -> None:
        clause.constant, clause.value = True, value
        clause.variable = decider.variable
        clause.effective = decider.number
        self._irrelevant(other.number)

    def _irrelevant(self, number: int, recursive: bool = True) -> None:
        stack = [number]
        while stack:
            clause = self.clauses[stack.pop()]
            if clause.constant and clause.variable:
                continue
            clause.irrelevant = True
            if recursive:
                stack.extend(n for n in (clause.left, clause.right) if n is not None)

    def resolve(self, number: int) -> int:
        """Follow a clause's chain of effective clauses to its end."""
        seen = 0
        while self.clauses[number].effective is not None and seen <= len(self.clauses):
            number = self.clauses[number].effective  # type: ignore[assignment]
            seen += 1
        return number

    # -- step C ----------------------------------------------------------------------------
    def count(self, targets: Sequence[ClassAd], drained: Sequence[ClassAd] = ()) -> None:
        """Count every remaining clause against the targets (job as MY, target as TARGET);
        ``drained`` are the drain overlays, counted in a second column."""
        self.targets = len(targets) + len(drained)
        self.columns = 2 if drained else 1
        total = self.targets
        for clause in self.clauses:
            if clause.effective is not None or clause.irrelevant or clause.constant:
                continue
            left = self.clauses[clause.left] if clause.left is not None else None
            right = self.clauses[clause.right] if clause.right is not None else None
            if clause.logic and left is not None and right is not None:
                self._pre_check(clause, left, right, total)
            expr = clause.expr
            clause.counts = [
                sum(1 for t in targets if truthy(evaluate(expr, self.my, t))),
                sum(1 for t in drained if truthy(evaluate(expr, self.my, t))),
            ]
            clause.counted = True
            if clause.op == "&&" and left is not None and right is not None:
                own, lc, rc = self.total(clause), self.total(left), self.total(right)
                if lc == own:
                    clause.effective = left.number
                    if rc > own:
                        self._irrelevant(right.number, recursive=False)
                elif rc == own:
                    clause.effective = right.number
                    if lc > own:
                        self._irrelevant(left.number, recursive=False)

    def _pre_check(self, clause: Clause, left: Clause, right: Clause, total: int) -> None:
        lc, rc = self.total(left), self.total(right)
        if clause.op == "&&":
            if lc == 0:
                clause.effective = left.number
            elif rc == 0:
                clause.effective = right.number
            return
        if lc == total:
            clause.effective = left.number
            self._irrelevant(right.number)
        elif rc == total or (lc == 0 and rc != 0):
            clause.effective = right.number
            self._irrelevant(left.number)
        elif rc == 0 and lc != 0:
            clause.effective = left.number
            self._irrelevant(right.number)

    @staticmethod
    def total(clause: Clause) -> int:
        """A clause's count over all targets (0 when it was never counted)."""
        return sum(clause.counts) if clause.counted else 0

    # -- step D ----------------------------------------------------------------------------
    def shown(self, clause: Clause) -> bool:
        """Whether the pruned table shows the clause."""
        return clause.effective is None and not clause.irrelevant

    def label(self, clause: Clause) -> str:
        """The clause's text in the pruned table (logic operands replaced by effective ones)."""
        if clause.logic:
            assert clause.left is not None and clause.right is not None
            return f"[{self.resolve(clause.left)}] {clause.op} [{self.resolve(clause.right)}]"
        return clause.text

    def constant_word(self, clause: Clause) -> str | None:
        """``always``/``never`` (``now``/``not now`` for time-dependent ones), or None."""
        if not clause.constant:
            return None
        if clause.variable:
            return "now" if clause.value else "not now"
        return "always" if clause.value else "never"


__all__ = ["Clause", "ClauseTable", "analysis_text", "number_clauses", "truthy"]
