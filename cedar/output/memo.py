"""Per-row work done once per distinct input: the tables' cells of ads that hold the same
texts (the procs of a cluster, the slots of a machine) are computed once.

Imports nothing of the ClassAd machinery until used (``cedar q --help`` stays light).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import count
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from cedar.classad_wire.classad import ClassAd

__all__ = ["MEMO_LIMIT", "Memo", "RawTexts", "literal_key"]


_T = TypeVar("_T")
#: A received value: text, or bytes as read from the wire.
Raw = str | bytes
#: A :class:`RawTexts` key: (names token, the received values of the wanted names).
Key = tuple[int, tuple[Raw, ...]]
#: Entries a memo holds before it starts over (bounded memory whatever the ads hold).
MEMO_LIMIT = 8192


class RawTexts:
    """A key made of the received wire texts of a few attributes of an ad, read with one call
    per ad: ``(shape token, texts of the attributes the ad has)``.

    The ads of one query share their names tuple (:meth:`ClassAd.raw_columns`), so the
    positions of the wanted names are found once per distinct tuple (its token says which
    names were absent), not once per ad.
    """

    __slots__ = ("_count", "_fold", "_keys", "_plans", "planned")

    def __init__(self, names: Sequence[str]) -> None:
        from cedar.classad_wire.expr import fold

        self._fold = fold
        self._keys = tuple(fold(name) for name in names)
        self._count = count()
        #: How many names tuples were planned for (many: the ads share none).
        self.planned = 0
        # id(names tuple) -> (the tuple, kept alive so the id stays its own; token; reader)
        self._plans: dict[int, tuple[tuple[str, ...], int, Callable[[Sequence[Raw]], Any]]] = {}

    def __call__(self, ad: ClassAd) -> Key:
        names, texts = ad.raw_values()
        plan = self._plans.get(id(names))
        if plan is None or plan[0] is not names:
            plan = self._plan(names)
        return plan[1], plan[2](texts)

    def _plan(
        self, names: tuple[str, ...]
    ) -> tuple[tuple[str, ...], int, Callable[[Sequence[Raw]], Any]]:
        where: dict[str, int] = {}
        fold = self._fold
        for position, name in enumerate(names):
            where.setdefault(fold(name), position)
        present = [where[key] for key in self._keys if key in where]
        reader: Callable[[Sequence[Raw]], Any]
        if len(present) > 1:
            reader = itemgetter(*present)
        elif present:
            only = present[0]

            def reader(texts: Sequence[Raw]) -> tuple[Raw, ...]:
                return (texts[only],)

        else:

            def reader(texts: Sequence[Raw]) -> tuple[Raw, ...]:
                return ()

        if len(self._plans) >= 64:  # ads without a shared tuple: do not grow without bound
            self._plans.clear()
        self.planned += 1
        plan = (names, next(self._count), reader)
        self._plans[id(names)] = plan
        return plan


def _literal(text: str | bytes) -> bool:
    from cedar.classad_wire.syntax import simple_value

    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    return simple_value(text) is not None


def literal_key(key: Key) -> bool:
    """Whether every text of a :class:`RawTexts` key is a literal (its own value)."""
    return all(map(_literal, key[1]))


class Memo(Generic[_T]):
    """``compute(ad)`` kept by the raw texts of the attributes it reads: ads that hold the
    same literal texts (the procs of a cluster, the slots of a machine) share one result.

    A result is kept only when every text is a literal (an expression may read attributes
    outside the key).  Bounded by :data:`MEMO_LIMIT`; when the inputs turn out to be mostly
    distinct the memo stops keeping results and just computes them.
    """

    __slots__ = ("_compute", "_hits", "_misses", "_results", "_texts")

    def __init__(self, names: Sequence[str], compute: Callable[[ClassAd], _T]) -> None:
        self._texts = RawTexts(names)
        self._compute = compute
        self._results: dict[Key, _T] = {}
        self._hits = 0
        self._misses = 0

    def __call__(self, ad: ClassAd) -> _T:
        if (self._misses > 2048 and self._hits < self._misses) or self._texts.planned > 32:
            return self._compute(ad)  # mostly distinct inputs, or no shared names: no gain
        key = self._texts(ad)
        try:
            result = self._results[key]
        except KeyError:
            pass
        else:
            self._hits += 1
            return result
        self._misses += 1
        result = self._compute(ad)
        if literal_key(key):
            if len(self._results) >= MEMO_LIMIT:
                self._results.clear()
            self._results[key] = result
        return result
