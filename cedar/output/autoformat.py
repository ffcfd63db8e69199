"""``-af[:jlhVr,tng] EXPR ...``: one line of evaluated expressions per ad.

Layout rules observed against condor_q/condor_status 25.13.2 (``docs/output.md``):

* values are separated by a space (``t``: a tab; ``g``: nothing), ``,`` puts a comma after
  every value but the last (unless ``n``), ``n`` ends every value with a newline;
* ``g`` starts every ad with an empty line; ``l`` prints ``NAME = value``;
* ``j`` prints ``ClusterId.ProcId`` first (label ``ID``);
* ``h`` prints a heading line (the arguments as typed) before the first ad; every column is
  left-aligned in the width of its heading or of the first ad's value, where a string or an
  integer counts its length, a real counts 21, and anything else counts nothing.  Headings
  replace ``l``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from cedar.classad_wire.classad import ClassAd
from cedar.errors import CedarError, InvalidArgument
from cedar.jobid import format_job_id
from cedar.output.values import Argument, value_text

__all__ = ["AF_MODIFIERS", "AutoFormat", "job_id"]

#: The modifier letters ``-af:`` accepts (``T`` and ``Y`` are accepted and ignored: see README).
AF_MODIFIERS = frozenset("jlhVr,tngTY")
_REAL_WIDTH = 21  # observed: condor sizes a real column for its longest printed form


def job_id(ad: ClassAd) -> str:
    """``ClusterId.ProcId`` of a job ad; empty for an ad without ``ClusterId`` (a slot)."""
    cluster = ad.eval("ClusterId")
    if not isinstance(cluster, int):
        return ""
    proc = ad.eval("ProcId")
    if isinstance(proc, int) and not isinstance(proc, bool):
        return format_job_id(cluster, proc)
    return f"{cluster}.{value_text(proc)}"  # shown as it is, e.g. 5.undefined


class AutoFormat:
    """A compiled ``-af`` request: the arguments (repeated ``-af`` lists concatenated) and the
    union of their modifier letters.

    Raises :class:`~cedar.errors.InvalidArgument` for an unknown modifier or an argument
    that does not parse.
    """

    def __init__(
        self, arguments: Sequence[str], modifiers: str = "", *, widths_from_headings: bool = False
    ) -> None:
        unknown = sorted(set(modifiers) - AF_MODIFIERS)
        if unknown:
            raise InvalidArgument(
                f"unknown -af modifier {''.join(unknown)!r} "
                f"(known: {''.join(sorted(AF_MODIFIERS))})"
            )
        if not arguments:
            raise InvalidArgument("-af needs at least one attribute or expression")
        self.arguments = [Argument(text) for text in arguments]
        #: ``h`` columns as wide as their headings only, printed as the ads arrive
        #: (condor_history prints the heading before any record arrives); otherwise widened to
        #: every ad's values and printed after the last (condor_q, condor_status).
        self.widths_from_headings = widths_from_headings
        self.modifiers = modifiers
        self.job_id = "j" in modifiers
        self.labels = "l" in modifiers and "h" not in modifiers
        self.headings = "h" in modifiers
        self.quoted = "V" in modifiers
        self.raw = "r" in modifiers
        self.comma = "," in modifiers and "n" not in modifiers
        self.newline = "n" in modifiers
        self.glued = "g" in modifiers
        self.separator = "" if self.glued else ("\t" if "t" in modifiers else " ")
        self._simple = not (self.comma or self.newline or self.glued or self.labels)

    def projection(self) -> list[str]:
        """Every attribute the arguments read (plus the job id's when ``j`` is given)."""
        names: dict[str, str] = {}
        for argument in self.arguments:
            for name in argument.references():
                names.setdefault(name.lower(), name)
        if self.job_id:
            names.setdefault("clusterid", "ClusterId")
            names.setdefault("procid", "ProcId")
        return sorted(names.values(), key=str.lower)

    def cells(self, ad: ClassAd) -> list[str]:
        """The printed values of one ad, job id first when asked."""
        out = [job_id(ad)] if self.job_id else []
        if self.raw:
            out.extend(argument.raw(ad) for argument in self.arguments)
            return out
        quoted = self.quoted
        for argument in self.arguments:
            name = argument.attribute
            if name is not None:  # a bare name: one lookup, the evaluator only for formulas
                try:
                    value = ad[name]
                except KeyError:
                    out.append("undefined")
                    continue
                except CedarError:  # unparsable text: the evaluator decides
                    value = None
                kind = value.__class__
                if kind is str and not quoted:
                    out.append(value)
                    continue
                if kind is int:
                    out.append(str(value))
                    continue
            out.append(value_text(argument.evaluate(ad), quoted))
        return out

    def line(self, ad: ClassAd) -> str:
        """One ad's output without headings (what :meth:`lines` yields for it)."""
        cells = self.cells(ad)
        if self._simple:
            return self.separator.join(cells) + "\n"
        if self.labels:
            labels = self._labels()
            cells = [f"{label} = {cell}" for label, cell in zip(labels, cells, strict=True)]
        return self._line(cells, None)

    def _labels(self) -> list[str]:
        return (["ID"] if self.job_id else []) + [argument.text for argument in self.arguments]

    def _row(self, ad: ClassAd) -> tuple[list[str], list[int]]:
        """One ad's cells and the width each claims (see the module's notes)."""
        cells = [job_id(ad)] if self.job_id else []
        sizes = [len(cells[0])] if self.job_id else []
        for argument in self.arguments:
            value: Any = argument.raw(ad) if self.raw else argument.evaluate(ad)
            text = value if self.raw else value_text(value, self.quoted)
            cells.append(text)
            if isinstance(value, bool):
                sizes.append(0)
            elif isinstance(value, str):
                sizes.append(len(text))
            elif isinstance(value, int):
                sizes.append(len(str(value)))
            elif isinstance(value, float):
                sizes.append(_REAL_WIDTH)
            else:
                sizes.append(0)
        return cells, sizes

    def _line(self, cells: Sequence[str], widths: Sequence[int] | None) -> str:
        parts = []
        last = len(cells) - 1
        for index, cell in enumerate(cells):
            if index:
                parts.append(self.separator)
            parts.append(cell.ljust(widths[index]) if widths is not None else cell)
            if self.comma and index < last:
                parts.append(",")
            if self.newline:
                parts.append("\n")
        if not self.newline:
            parts.append("\n")
        return ("\n" if self.glued else "") + "".join(parts)

    def lines(self, ads: Iterable[ClassAd]) -> Iterator[str]:
        """The output, one string per ad.  With headings every row is computed first (the
        widths come from all of them, as condor's), then the heading, then the rows."""
        if self.headings and self.widths_from_headings:  # streamed: widths known up front
            labels = self._labels()
            if self.job_id:
                labels[0] = " ID"
            widths = [len(label) for label in labels]
            for number, ad in enumerate(ads):
                if number == 0:
                    yield self._line(labels, widths)
                yield self._line(self._row(ad)[0], widths)
            return
        if self.headings:
            rows = [self._row(ad) for ad in ads]
            if not rows:
                return
            labels = self._labels()
            if self.job_id:
                labels[0] = " ID"
            widths = [len(label) for label in labels]
            for _, sizes in rows:
                widths = [max(w, s) for w, s in zip(widths, sizes, strict=True)]
            yield self._line(labels, widths)
            for cells, _ in rows:
                yield self._line(cells, widths)
            return
        line = self.line
        for ad in ads:
            yield line(ad)
