"""ANSI colours and styles for terminal output, as ``htcondor2._utils.ansi`` behaves.

Observed behaviour: every helper returns its text unchanged unless standard output was a terminal
when the module was imported (``IS_TTY``); otherwise the text is wrapped in the escape sequence
and followed by ``ANSI_RESET``.  256-colour ids below 0 count as 0; ids above 255 leave the text
unstyled.
"""

from __future__ import annotations

import enum
import importlib.util
import os
import re
import sys

ANSI_RESET = "\x1b[0m"
#: One ANSI escape sequence (a two-byte one or a CSI sequence).
ANSI_ESCAPE_RE = re.compile(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")
IS_WINDOWS = os.name == "nt"
IS_TTY = sys.stdout.isatty() if sys.stdout is not None else False
HAS_COLORAMA = importlib.util.find_spec("colorama") is not None


class Color(enum.Enum):
    """Foreground colours (the value is the escape sequence)."""

    BLACK = "\x1b[30m"
    RED = "\x1b[31m"
    GREEN = "\x1b[32m"
    YELLOW = "\x1b[33m"
    BLUE = "\x1b[34m"
    MAGENTA = "\x1b[35m"
    CYAN = "\x1b[36m"
    WHITE = "\x1b[37m"
    DARK_GREY = "\x1b[90m"
    BRIGHT_RED = "\x1b[91m"
    BRIGHT_GREEN = "\x1b[92m"
    BRIGHT_YELLOW = "\x1b[93m"
    BRIGHT_BLUE = "\x1b[94m"
    BRIGHT_MAGENTA = "\x1b[95m"
    BRIGHT_CYAN = "\x1b[96m"
    BRIGHT_WHITE = "\x1b[97m"


class Style(enum.Enum):
    """Text styles (the value is the escape sequence)."""

    BOLD = "\x1b[1m"
    UNDERLINE = "\x1b[4m"
    BLINK = "\x1b[5m"


def init(
    autoreset: bool = False, convert: object = None, strip: object = None, wrap: bool = True
) -> None:
    """Set up colour output on Windows consoles (through colorama, when installed)."""
    if HAS_COLORAMA:
        import colorama

        colorama.init(autoreset=autoreset, convert=convert, strip=strip, wrap=wrap)


def is_capable() -> bool:
    """Whether escape sequences are written (standard output is a terminal)."""
    return IS_TTY


def _codes(escape: str) -> str:
    """The parameter digits of an escape sequence (``"\\x1b[31m"`` -> ``"31"``)."""
    return "".join(ch for ch in escape if ch.isdigit() or ch == ";")


def _wrap(string: str, start: str) -> str:
    return f"{start}{string}{ANSI_RESET}" if is_capable() else string


def _palette_id(value: int) -> int | None:
    """A 256-colour id as the escape takes it (negative -> 0; beyond the palette: none)."""
    return None if value > 255 else max(0, value)


def colorize(string: str, color: Color) -> str:
    """``string`` in foreground colour ``color``."""
    return _wrap(string, color.value)


def bold(string: str) -> str:
    """``string`` in bold."""
    return _wrap(string, Style.BOLD.value)


def underline(string: str) -> str:
    """``string`` underlined."""
    return _wrap(string, Style.UNDERLINE.value)


def blink(string: str) -> str:
    """``string`` blinking."""
    return _wrap(string, Style.BLINK.value)


def id_colorize(string: str, id: int) -> str:  # noqa: A002 - the reference's keyword
    """``string`` in colour ``id`` of the 256-colour palette."""
    code = _palette_id(id)
    return string if code is None else _wrap(string, f"\x1b[38;5;{code}m")


def highlight(string: str, id: int) -> str:  # noqa: A002
    """``string`` on background colour ``id`` of the 256-colour palette."""
    code = _palette_id(id)
    return string if code is None else _wrap(string, f"\x1b[48;5;{code}m")


def strip_ansi(string: str) -> str:
    """``string`` without any escape sequence."""
    return ANSI_ESCAPE_RE.sub("", string)


class AnsiOptions:
    """A combination of styles and colours for :func:`stylize` (unknown keywords are ignored)."""

    def __init__(self, **kwargs: object) -> None:
        style = kwargs.get("style")
        self.bold = bool(kwargs.get("bold", False)) or style is Style.BOLD
        self.blink = bool(kwargs.get("blink", False)) or style is Style.BLINK
        self.underline = bool(kwargs.get("underline", False)) or style is Style.UNDERLINE
        self.style = style
        color = kwargs.get("color")
        self.color: str | None = None
        if color is not None:
            self.color = _codes(color.value) if isinstance(color, Color) else ""
        self.color_id = kwargs.get("color_id")
        self.highlight = kwargs.get("highlight")

    def __str__(self) -> str:
        parts = []
        if self.bold:
            parts.append("1")
        if self.underline:
            parts.append("4")
        if self.blink:
            parts.append("5")
        if self.color is not None:
            parts.append(self.color)
        if isinstance(self.color_id, int):
            parts.append(f"38;5;{self.color_id}")
        if isinstance(self.highlight, int):
            parts.append(f"48;5;{self.highlight}")
        return f"\x1b[{';'.join(parts)}m" if parts else ""

    def __repr__(self) -> str:
        return f"AnsiOptions({vars(self)!r})"


def stylize(string: str, options: AnsiOptions) -> str:
    """``string`` with every style and colour of ``options``."""
    return f"{options}{string}{ANSI_RESET}" if is_capable() else string


__all__ = [
    "ANSI_ESCAPE_RE",
    "ANSI_RESET",
    "HAS_COLORAMA",
    "IS_TTY",
    "IS_WINDOWS",
    "AnsiOptions",
    "Color",
    "Style",
    "blink",
    "bold",
    "colorize",
    "highlight",
    "id_colorize",
    "init",
    "is_capable",
    "strip_ansi",
    "stylize",
    "underline",
]
