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
from typing import TextIO

from cedar.classad_wire.classad import ClassAd
from cedar.output.autoformat import AF_MODIFIERS, AutoFormat, job_id
from cedar.output.printf import FormatItem, Printf, unescape
from cedar.output.qtables import (
    BATCH_PROJECTION,
    VIEW_CONSTRAINTS,
    QView,
    batch_lines,
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

_WHOLE: dict[str, type[LongWriter] | type[JsonWriter]] = {
    "long": LongWriter,
    "json": JsonWriter,
}


def whole_writer(
    form: str, attributes: Iterable[str] | None = None, *, spaced_xml: bool = False
) -> WholeAdWriter:
    """The writer of a whole-ad form: ``long``, ``json`` or ``xml``, restricted to
    ``attributes`` when given (``-attributes``); ``spaced_xml`` as condor_status's ``-xml``."""
    only = attribute_filter(attributes)
    if form == "xml":
        return XmlWriter(only, spaced=spaced_xml)
    try:
        return _WHOLE[form](only)
    except KeyError:
        raise ValueError(f"unknown ad form {form!r} (long, json, xml)") from None


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
