"""Line reader and macro expander of the submit description language (spec 06 §1.3–§1.4, §4.1).

Submit text uses the configuration reader's syntax in "submit mode": logical lines with ``\\``
continuation, ``#`` comments only at the start of a line, lazy ``$(NAME)`` expansion with
``$(NAME:default)``, ``$ENV()``, ``$INT()``, ``$F*()`` and friends, ``$$(…)`` kept verbatim.
Everything here is pure string processing; job-ad translation lives in :mod:`submit_lang`.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable

from cedar.errors import CedarError

#: Expansion nesting limit: a definition cycle (``A=$(B)``, ``B=$(A)``) must fail, not hang.
MAX_DEPTH = 64
#: Upper bound of an expanded value; protects against exponential self-doubling definitions.
MAX_VALUE = 1 << 20

_NAME_CHARS = re.compile(r"[A-Za-z0-9_./]+\Z")
_FUNC = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)\(")
_DOLLAR_MARK = "\x00DOLLAR\x00"


class SubmitError(CedarError, ValueError):
    """A submit description is invalid (the message says which line or command, and why)."""


Lookup = Callable[[str], "str | None"]


def next_logical_line(lines: list[str], i: int) -> tuple[int, str, int] | None:
    """The logical line starting at physical line ``i``: ``(line_no, text, next_index)``.

    Comment and blank lines are skipped; ``None`` at the end.  Taking an index (rather than
    being a generator) lets the ``queue … (`` reader consume the raw lines of its item block.
    """
    while i < len(lines):
        start = i
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        continued = line.endswith("\\")
        while continued and i < len(lines):
            if line.endswith("\\"):
                line = line[:-1]
            nxt = lines[i].strip()
            i += 1
            if nxt.startswith("#"):
                # Reference quirk (spec 06 §1.3): a comment inside a continuation contributes
                # its last character only; a trailing backslash keeps the continuation going.
                if nxt.endswith("\\"):
                    continue
                line += nxt[-1]
                break
            line += nxt
            continued = nxt.endswith("\\")
        if line.endswith("\\"):
            line = line[:-1]
        return start + 1, line, i
    return None


def _find_body_end(text: str, start: int) -> int:
    """Index of the ``)`` closing a ``$(…)`` body starting at ``start``; one nested ``$(…)``
    is skipped (spec 06 §1.4 "Where a body ends"); -1 if there is none."""
    i = start
    nested = False
    while i < len(text):
        if not nested and text.startswith("$(", i):
            close = text.find(")", i + 2)
            if close < 0:
                return -1
            nested = True
            i = close + 1
            continue
        if text[i] == ")":
            return i
        i += 1
    return -1


def _path_parts(path: str, letters: str) -> str:
    """``$F<letters>(x)``: pieces of a path (spec 06 §1.4)."""
    directory, base = posixpath.split(path)
    if directory and not directory.endswith("/"):
        directory += "/"
    stem, ext = posixpath.splitext(base)
    out = ""
    if "q" in letters and letters.replace("q", "") == "":
        return f'"{path}"'
    if "p" in letters:
        out += directory
    elif "d" in letters:
        parent = posixpath.basename(directory.rstrip("/"))
        out += parent + "/" if parent else ""
    if "n" in letters:
        out += stem
    if "x" in letters:
        out += ext
    if "q" in letters:
        out = f'"{out}"'
    return out


class MacroExpander:
    """Expands ``$(…)`` references against a lookup function.

    ``lookup(name)`` returns the *raw* (unexpanded) value or ``None`` when the name is not
    defined; expansion is lazy, as in the reference, so a value is expanded when used.
    ``evaluate`` turns ClassAd expression text into a Python value for ``$INT``/``$REAL``/
    ``$EVAL`` (supplied by the caller so this module needs no ClassAd engine).
    """

    def __init__(self, lookup: Lookup, evaluate: Callable[[str], object] | None = None) -> None:
        self.lookup = lookup
        self.evaluate = evaluate

    def expand(self, text: str) -> str:
        """Fully expand ``text``."""
        return self._expand(text, 0).replace(_DOLLAR_MARK, "$")

    def _arg(self, name: str, depth: int) -> str:
        value = self.lookup(name.strip())
        if value is None:
            return self._expand(name.strip(), depth + 1)
        return self._expand(value, depth + 1)

    def _expand(self, text: str, depth: int) -> str:
        if depth > MAX_DEPTH:
            raise SubmitError("macro expansion is nested too deeply (a definition cycle?)")
        if "$" not in text:
            return text
        out: list[str] = []
        size = 0
        i = 0
        while i < len(text):
            j = text.find("$", i)
            if j < 0:
                out.append(text[i:])
                break
            out.append(text[i:j])
            if text.startswith("$$(", j):
                close = text.find(")", j + 3)
                end = len(text) if close < 0 else close + 1
                out.append(text[j:end])
                i = end
                continue
            replacement: str | None = None
            end = j + 1
            if text.startswith("$(", j):
                close = _find_body_end(text, j + 2)
                if close >= 0:
                    body = text[j + 2 : close]
                    end = close + 1
                    replacement = self._reference(body, depth)
            else:
                m = _FUNC.match(text, j)
                if m:
                    close = _find_body_end(text, m.end())
                    if close >= 0:
                        result = self._function(m.group(1), text[m.end() : close], depth)
                        if result is not None:
                            replacement = result
                            end = close + 1
            if replacement is None:
                out.append("$")
                i = j + 1
                continue
            size += len(replacement)
            if size > MAX_VALUE:
                raise SubmitError("macro expansion produced an unreasonably long value")
            out.append(replacement)
            i = end
        return "".join(out)

    def _reference(self, body: str, depth: int) -> str:
        name, sep, default = body.partition(":")
        if name.upper() == "DOLLAR" and not sep:
            return _DOLLAR_MARK
        if not _NAME_CHARS.match(name):
            # Not a reference at all (e.g. "$(a b)"): keep the text, expanding inside it.
            return "$(" + self._expand(body, depth + 1) + ")"
        value = self.lookup(name)
        expanded = self._expand(value, depth + 1) if value is not None else ""
        if not expanded and sep:
            return self._expand(default, depth + 1)
        return expanded

    def _function(self, func: str, body: str, depth: int) -> str | None:
        upper = func.upper()
        if func == "ENV":
            name, sep, default = body.partition(":")
            value = os.environ.get(name)
            if value is None:
                return self._expand(default, depth + 1) if sep else "UNDEFINED"
            return value
        args = [a.strip() for a in self._expand(body, depth + 1).split(",")]
        if func in ("INT", "REAL", "EVAL", "STRING"):
            return self._eval_function(func, args, depth)
        if func == "SUBSTR" and len(args) >= 2:
            value = self._arg(args[0], depth)
            try:
                start = int(args[1])
                length = int(args[2]) if len(args) > 2 else None
            except ValueError:
                raise SubmitError(f"$SUBSTR({body}): start and length must be integers") from None
            piece = value[start:] if start >= 0 else value[len(value) + start :]
            if length is not None:
                piece = piece[:length] if length >= 0 else piece[:length]
            return piece
        if func == "CHOICE" and len(args) >= 2:
            try:
                index = int(self._arg(args[0], depth))
            except ValueError:
                raise SubmitError(f"$CHOICE({body}): the index is not an integer") from None
            items = args[1:]
            if len(items) == 1:
                items = [a.strip() for a in self._arg(items[0], depth).split(",")]
            if not 0 <= index < len(items):
                raise SubmitError(f"$CHOICE({body}): index {index} out of range")
            return items[index]
        if func == "BASENAME" and args:
            base = posixpath.basename(self._arg(args[0], depth))
            if len(args) > 1 and args[1] and base.endswith(args[1]):
                base = base[: -len(args[1])]
            return base
        if func == "DIRNAME" and args:
            return _path_parts(self._arg(args[0], depth), "p")
        if upper.startswith("F") and len(func) > 1 and set(func[1:]) <= set("fpdnxbqauw"):
            path = self._arg(args[0], depth) if args else ""
            letters = func[1:]
            if "f" in letters or "a" in letters:
                path = os.path.abspath(path) if path else path
            return _path_parts(path, letters.replace("f", "pnx") if letters == "f" else letters)
        return None

    def _eval_function(self, func: str, args: list[str], depth: int) -> str:
        source = self._arg(args[0], depth) if args else ""
        fmt = args[1] if len(args) > 1 else None
        if self.evaluate is None:
            raise SubmitError(f"${func}() needs a ClassAd evaluator")
        try:
            value = self.evaluate(source)
        except CedarError:
            value = None
        if func == "STRING":
            return value if isinstance(value, str) else source
        if func == "EVAL":
            if value is None:
                return ""
            if isinstance(value, str):
                return value
            if isinstance(value, bool):
                return "true" if value else "false"
            return str(value) if isinstance(value, (int, float)) else "undefined"
        if func == "INT":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SubmitError(f"$INT({source}) does not evaluate to a number")
            return (fmt or "%d") % int(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SubmitError(f"$REAL({source}) does not evaluate to a number")
        if fmt is None:
            return f"{float(value):.16G}"
        text = fmt % float(value)
        return text if "." in text else text + ".0"
