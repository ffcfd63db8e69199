"""The one evaluation and formatting layer of every listing: ``-af``, ``-format``, ``-long``,
``-json``, ``-xml``, ``-attributes`` and the condor_q/condor_status default tables.

Used by ``cedar q``, ``cedar status``, ``cedar history``, ``cedar serve``'s text outputs and
every future command; it knows nothing of command lines.  Everything streams where the real
tool streams: each writer turns one ad into text, and :func:`write_ads` writes that text as the
ads arrive.

Typical use::

    from cedar.output import AutoFormat, write_ads
    af = AutoFormat(["ClusterId", "RequestDisk / 1024"], modifiers="h")
    schedd.query_iter(constraint, af.projection())  # ask only for what is printed
    write_ads(af.lines(ads), sys.stdout)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from cedar.lazy import lazy_exports

#: Public name -> the module that defines it, imported on first use (PEP 562): ``cedar q``
#: loads the job tables, not the slot tables, and a default table no JSON writer.
_LAZY = {
    "AF_MODIFIERS": "cedar.output.autoformat",
    "AutoFormat": "cedar.output.autoformat",
    "job_id": "cedar.output.autoformat",
    "FormatItem": "cedar.output.printf",
    "Printf": "cedar.output.printf",
    "unescape": "cedar.output.printf",
    "BATCH_PROJECTION": "cedar.output.qtables",
    "FACTORY_CONSTRAINT": "cedar.output.qtables",
    "FACTORY_PROJECTION": "cedar.output.qtables",
    "factory_lines": "cedar.output.qtables",
    "HOLD_CODES_PROJECTION": "cedar.output.qtables",
    "hold_code_lines": "cedar.output.qtables",
    "jobads_banner": "cedar.output.qtables",
    "jobads_totals_line": "cedar.output.qtables",
    "VIEW_CONSTRAINTS": "cedar.output.qtables",
    "QView": "cedar.output.qtables",
    "batch_lines": "cedar.output.qtables",
    "q_view": "cedar.output.qtables",
    "schedd_banner": "cedar.output.qtables",
    "totals_lines": "cedar.output.qtables",
    "STATUS_TABLES": "cedar.output.stables",
    "StatusTable": "cedar.output.stables",
    "natural_key": "cedar.output.stables",
    "status_sort_key": "cedar.output.stables",
    "Argument": "cedar.output.values",
    "value_text": "cedar.output.values",
    "JsonWriter": "cedar.output.whole",
    "LongWriter": "cedar.output.whole",
    "WholeAdWriter": "cedar.output.whole",
    "XmlWriter": "cedar.output.whole",
    "attribute_filter": "cedar.output.whole",
    "long_text": "cedar.output.whole",
}

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from cedar.classad_wire.classad import ClassAd
    from cedar.output.autoformat import AF_MODIFIERS, AutoFormat, job_id
    from cedar.output.printf import FormatItem, Printf, unescape
    from cedar.output.qtables import (
        BATCH_PROJECTION,
        FACTORY_CONSTRAINT,
        FACTORY_PROJECTION,
        HOLD_CODES_PROJECTION,
        VIEW_CONSTRAINTS,
        QView,
        batch_lines,
        factory_lines,
        hold_code_lines,
        jobads_banner,
        jobads_totals_line,
        q_view,
        schedd_banner,
        totals_lines,
    )
    from cedar.output.stables import STATUS_TABLES, StatusTable, natural_key, status_sort_key
    from cedar.output.values import Argument, value_text
    from cedar.output.whole import (
        JsonWriter,
        LongWriter,
        WholeAdWriter,
        XmlWriter,
        attribute_filter,
        long_text,
    )

__all__ = [
    "AF_MODIFIERS",
    "FACTORY_CONSTRAINT",
    "FACTORY_PROJECTION",
    "HOLD_CODES_PROJECTION",
    "factory_lines",
    "hold_code_lines",
    "jobads_banner",
    "jobads_totals_line",
    "BATCH_PROJECTION",
    "STATUS_TABLES",
    "VIEW_CONSTRAINTS",
    "Argument",
    "AutoFormat",
    "FormatItem",
    "JsonWriter",
    "LongWriter",
    "Printf",
    "QView",
    "StatusTable",
    "WholeAdWriter",
    "XmlWriter",
    "attribute_filter",
    "batch_lines",
    "job_id",
    "long_text",
    "natural_key",
    "q_view",
    "schedd_banner",
    "status_sort_key",
    "totals_lines",
    "unescape",
    "value_text",
    "whole_writer",
    "write_ads",
    "write_lines",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


def whole_writer(
    form: str, attributes: Iterable[str] | None = None, *, spaced_xml: bool = False
) -> WholeAdWriter:
    """The writer of a whole-ad form: ``long``, ``json`` or ``xml``, restricted to
    ``attributes`` when given (``-attributes``); ``spaced_xml`` as condor_status's ``-xml``."""
    from cedar.output.whole import JsonWriter, LongWriter, XmlWriter, attribute_filter

    only = attribute_filter(attributes)
    if form == "xml":
        return XmlWriter(only, spaced=spaced_xml)
    if form == "long":
        return LongWriter(only)
    if form == "json":
        return JsonWriter(only)
    raise ValueError(f"unknown ad form {form!r} (long, json, xml)")


def write_ads(ads: Iterable[ClassAd], writer: WholeAdWriter, out: TextIO) -> int:
    """Stream ``ads`` through a whole-ad ``writer`` to ``out``; returns the number of ads."""
    count = 0
    out.write(writer.begin())
    for ad in ads:
        out.write(writer.ad(ad))
        count += 1
    out.write(writer.end())
    return count


def write_lines(lines: Iterable[str], out: TextIO) -> None:
    """Write texts as they come (the ``lines`` of :class:`AutoFormat`, :class:`Printf`...)."""
    for line in lines:
        out.write(line)
