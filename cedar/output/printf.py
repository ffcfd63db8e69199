"""``-format FMT EXPR`` (repeatable): printf of one evaluated expression per item.

What each conversion does with each type of value (observed against condor_q 25.13.2, see
``docs/output.md``); when the value does not fit the conversion the whole item prints nothing:

* ``%d %i %u %x %X %o %c``: integers, booleans (``true`` is 1) and reals (truncated);
* ``%f %e %E %g %G``: integers, booleans and reals;
* ``%s``: a string value; else, when the argument is a bare attribute name the ad has, the
  attribute's expression text (``%s`` of ``RequestDisk`` prints the formula); else nothing;
* ``%v``: the value as ``-af`` prints it; ``%V``: the same, strings quoted;
* a format without a conversion prints its text for every ad.

The format's backslash escapes (``\\n``, ``\\t``...) are interpreted, as the tools do.  Only
the first conversion takes the value; any later one is printed as written (condor passes it
an unspecified argument: a deliberate deviation).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from cedar.classad_wire.classad import ClassAd
from cedar.errors import InvalidArgument
from cedar.output.values import Argument, value_text

__all__ = ["FormatItem", "Printf", "unescape"]

_CONVERSION = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>\d+)?(?:\.(?P<precision>\d*))?(?:hh|h|ll|l|L|q|j|z|t)?"
    r"(?P<conv>[diouxXeEfFgGcsvV%])"
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a",
            "b": "\b", "f": "\f", "v": "\v", "0": "\0"}  # fmt: skip
_INTEGER = frozenset("diouxXc")
_REAL = frozenset("feEgGF")


def unescape(text: str) -> str:
    """The C escapes of a ``-format`` string (``\\n``, ``\\t``, ...); others stay as written."""
    if "\\" not in text:
        return text
    out = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in _ESCAPES:
            out.append(_ESCAPES[text[index + 1]])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


class FormatItem:
    """One ``-format FMT EXPR`` pair."""

    __slots__ = ("argument", "conversion", "prefix", "spec", "suffix")

    def __init__(self, fmt: str, expression: str) -> None:
        fmt = unescape(fmt)
        self.argument = Argument(expression)
        self.conversion: str | None = None
        self.spec = ""
        position = 0
        for match in _CONVERSION.finditer(fmt):
            if match.group("conv") == "%":
                continue
            self.conversion = match.group("conv")
            self.spec = match.group(0)
            position = match.start()
            break
        if self.conversion is None:
            self.prefix, self.suffix = fmt.replace("%%", "%"), ""
        else:
            self.prefix = fmt[:position].replace("%%", "%")
            self.suffix = fmt[position + len(self.spec) :].replace("%%", "%")

    def render(self, ad: ClassAd) -> str:
        """The item's text for one ad ('' when the value does not fit the conversion)."""
        conv = self.conversion
        if conv is None:
            return self.prefix
        value = self.argument.evaluate(ad)
        spec = self.spec
        try:
            if conv in _INTEGER:
                if value.__class__ not in (int, bool, float):
                    return ""
                number = int(value)
                if conv == "c":
                    text = _pad(spec, chr(number & 0xFF))
                else:
                    spec = spec[:-1] + ("d" if conv in "iu" else conv)
                    text = _c_int(_strip_length(spec), number)
            elif conv in _REAL:
                if value.__class__ not in (int, bool, float):
                    return ""
                text = _strip_length(spec) % float(value)
            elif conv == "s":
                if value.__class__ is str:
                    text = _strip_length(spec) % value
                elif self.argument.attribute is not None and self.argument.attribute in ad:
                    text = _strip_length(spec) % ad.raw_text(self.argument.attribute)
                else:
                    return ""
            else:  # v, V
                text = _pad(spec, value_text(value, quoted=conv == "V"))
        except (ValueError, OverflowError, TypeError):
            return ""
        return self.prefix + text + self.suffix


def _strip_length(spec: str) -> str:
    """Python's ``%`` has no length modifiers (``%ld``): drop them."""
    return re.sub(r"(hh|h|ll|l|L|q|j|z|t)(?=[a-zA-Z]$)", "", spec)


def _pad(spec: str, text: str) -> str:
    """Width, precision and ``-`` of a ``%s``-like conversion applied to ``text``."""
    return (_strip_length(spec)[:-1] + "s") % text


def _c_int(spec: str, number: int) -> str:
    """C's ``%o``/``%#o`` (``017``), which Python's ``%`` spells ``0o17``."""
    if spec.endswith("o") and "#" in spec:
        return (spec.replace("#", "")[:-1] + "s") % ("0" + format(number, "o") if number else "0")
    return spec % number


class Printf:
    """A compiled list of ``-format`` items: each ad prints their texts in order, no newline
    of its own (the formats carry their ``\\n``)."""

    def __init__(self, items: Sequence[tuple[str, str]]) -> None:
        if not items:
            raise InvalidArgument("-format needs a format and an expression")
        self.items = [FormatItem(fmt, expression) for fmt, expression in items]

    def projection(self) -> list[str]:
        """Every attribute the expressions read."""
        names: dict[str, str] = {}
        for item in self.items:
            for name in item.argument.references():
                names.setdefault(name.lower(), name)
        return sorted(names.values(), key=str.lower)

    def line(self, ad: ClassAd) -> str:
        """One ad's text."""
        return "".join([item.render(ad) for item in self.items])

    def lines(self, ads: Iterable[ClassAd]) -> Iterator[str]:
        """One string per ad."""
        line = self.line
        for ad in ads:
            yield line(ad)
