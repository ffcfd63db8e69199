"""The one line reader and ``$(...)`` macro expander of the configuration and submit languages.

Both languages share the reference's syntax (spec 06 §1.3-§1.4, §4.1): logical lines with
``\\`` continuation and ``#`` comments only at the start of a line; lazy ``$(NAME)`` expansion
with ``$(NAME:default)``, ``$ENV()``, ``$SUBSTR()``, ``$CHOICE()``, ``$BASENAME()``,
``$DIRNAME()``, ``$F*()`` path pieces, ``$INT()``/``$REAL()``/``$EVAL()``/``$STRING()`` (when the
caller supplies a ClassAd evaluator) and ``$$(...)`` kept (the ``$(...)`` inside it expanded).
Everything is pure string processing over a lookup function, so both readers (and their error
types) plug into it.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from cedar.errors import CedarError, ConfigError

if TYPE_CHECKING:
    import random

#: Expansion nesting limit: a definition cycle (``A=$(B)``, ``B=$(A)``) must fail, not hang.
MAX_DEPTH = 64
#: Upper bound of an expanded value; protects against exponential self-doubling definitions.
MAX_VALUE = 1 << 20

NAME_RE = re.compile(r"[A-Za-z0-9_./]+")
_FUNC = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)\(")
_PATH_FUNC = re.compile(r"F[fpdnxbqauw]*")
DOLLAR_MARK = "\x00DOLLAR\x00"
#: ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` draw from this (not for secrets).


@functools.cache
def _random() -> random.Random:
    """The generator of ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` (imported on first use: start-up)."""
    import random

    return random.Random()


#: ``lookup(name)`` -> the raw (unexpanded) value, or ``None`` when the name is not defined.
Lookup = Callable[[str], "str | None"]
#: ``evaluate(text)`` -> the Python value of ClassAd expression text (for ``$INT`` and friends).
Evaluate = Callable[[str], object]


def next_logical_line(lines: list[str], i: int) -> tuple[int, str, int] | None:
    """The logical line starting at physical line ``i``: ``(line_no, text, next_index)``.

    Comment and blank lines are skipped; ``None`` at the end.  Taking an index (rather than
    being a generator) lets a caller consume raw lines itself (``queue … (`` item blocks,
    ``NAME @= tag`` multi-line values).
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


def find_body_end(text: str, start: int) -> int:
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


def path_parts(path: str, letters: str) -> str:
    """``$F<letters>(x)``: a piece of a path (spec 06 §1.4): ``p`` directory, ``d`` parent
    directory name, ``n`` name, ``x`` extension, ``q`` quoted, ``b`` bare; no piece letter means
    the whole path (observed: ``$F(/a/b.c)`` and ``$Fb(/a/b.c)`` are ``/a/b.c``; dask-jobqueue
    writes ``$F(MY.JobId)``).  The value's surrounding quotes go first (observed: ``$F`` of
    ``"/x/y.c"`` is ``/x/y.c``, ``$Fq`` of it ``"/x/y.c"``).

    Observed (25.13.2, ``condor_submit -dry-run`` on generated paths and letter sets): the
    piece is one slice of the path.  It starts where the first of ``d``, ``p``, ``n``, ``x``
    starts (``x`` after its dot with ``b``) and ends at the end for ``x``, before the
    extension for ``n``, else after the directory's last ``/`` (one character earlier with
    ``b``).  The directory is cut at ``/`` alone, but ``d`` starts after the separator
    (``/`` or ``\\``) before the path's last one; a slice that would end before it starts runs
    to the end (``$Fd(/x\\y\\z.q)`` is ``y\\z.q``, ``$Fdb(/x/y\\z.q)`` is ``y\\z.q``), and a
    path without ``/`` has no ``d`` or ``p`` piece.  ``f`` puts the current directory before a
    relative path, unnormalised (``$Ff(/x/y/)`` keeps its ``/``); ``u`` turns ``\\`` into ``/``
    and ``w`` ``/`` into ``\\`` before the pieces are taken (so ``$Fpw(/x/y.c)`` is empty);
    ``a`` only makes ``q`` quote with ``'`` (``$Fqa(a b)`` is ``'a b'``)."""
    if path[:1] in ('"', "'"):
        # Observed (25.13.2, config and submit alike): a leading quote is dropped, and a
        # trailing one only when it is the same quote ("a/b' keeps its ').
        path = path[1:-1] if len(path) > 1 and path[-1] == path[0] else path[1:]
    if "f" in letters and path and not path.startswith("/"):
        # Observed: one leading "./" goes first (".\\" too with w): $Ff(./a) is CWD/a,
        # $Ff(./) is CWD/./
        if len(path) > 2 and (path[:2] == "./" or ("w" in letters and path[:2] == ".\\")):
            path = path[2:]
        cwd = os.getcwd()
        path = (cwd if cwd.endswith("/") else cwd + "/") + path  # "./" + "/a" is CWD//a
    if "u" in letters:
        path = path.replace("\\", "/")
    if "w" in letters:
        path = path.replace("/", "\\")
    quote = ("'" if "a" in letters else '"') if "q" in letters else ""
    if not any(piece in letters for piece in "pdnx"):
        return f"{quote}{path}{quote}"
    out, closed = _path_slice(path, letters, quoted=bool(quote))
    # Observed: an empty piece quoted is the opening quote alone ($Fqa(a.b) is '), unless
    # a d without a directory or an empty name before a dot made it ($Fdqa(a.b) is '').
    return f"{quote}{out}{quote}" if out or closed else quote


def _extension_start(path: str, name_start: int, quoted: bool) -> int:
    """Where the extension starts (``len(path)`` without one): at the name's last dot, unless
    that dot is right after a ``/`` or starts the value -- which, quoted, it does not (observed:
    ``$Fx(.a)`` is empty, ``$Fxqa(.a)`` is ``'.a'``; ``$Fx(/x/.a)`` is empty either way)."""
    dot = path.rfind(".", name_start)
    if dot < 0 or (dot == name_start and (dot > 0 or not quoted)):
        return len(path)
    return dot


def _path_slice(path: str, letters: str, *, quoted: bool) -> tuple[str, bool]:
    """The slice of ``path`` that the piece letters ``p``/``d``/``n``/``x`` (and ``b``) name,
    and whether a quoted empty slice still gets its closing quote."""
    name_start = path.rfind("/") + 1  # the directory ends after its last "/"
    ext_start = _extension_start(path, name_start, quoted)
    ext = ext_start < len(path)
    bare = "b" in letters
    has_directory = name_start > 0
    closed = False
    if "d" in letters and has_directory:
        last = max(path.rfind("/"), path.rfind("\\"))
        start = max(path.rfind("/", 0, last), path.rfind("\\", 0, last)) + 1
    elif "p" in letters and has_directory:
        start = 0
    elif "n" in letters:
        start = name_start
        closed = "x" not in letters and (ext and ext_start == name_start or "d" in letters)
    elif "x" in letters:
        start = min(ext_start + (1 if bare and ext else 0), len(path))
    else:
        return "", "d" in letters
    if "x" in letters:
        end = len(path)
    elif "n" in letters:
        end = ext_start
    else:
        end = name_start - (1 if bare else 0)
    if end < start:  # runs to the end, unquoted (observed: quoted it is empty)
        return ("", False) if quoted else (path[start:], False)
    if bare and end == start == 0 and "n" not in letters and "x" not in letters:
        closed = True  # a directory that "b" emptied ($Fpbqa(/x) is '')
    return path[start:end], closed


class MacroExpander:
    """Expands ``$(…)`` references against a lookup function.

    Expansion is lazy, as in the reference: a value is expanded when it is used.  ``evaluate``
    turns ClassAd expression text into a Python value for ``$INT``/``$REAL``/``$EVAL``/
    ``$STRING``; without it those stay literal text.  ``error`` is the exception type raised
    for invalid uses (the configuration raises :class:`ConfigError`, submit its own type).
    """

    def __init__(
        self,
        lookup: Lookup,
        evaluate: Evaluate | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        error: type[CedarError] = ConfigError,
    ) -> None:
        self.lookup = lookup
        self.evaluate = evaluate
        self.environ = os.environ if environ is None else environ
        self.error = error

    def expand(self, text: str) -> str:
        """Fully expand ``text``."""
        return self._expand(text, 0).replace(DOLLAR_MARK, "$")

    def _arg(self, name: str, depth: int) -> str:
        """A function argument: the named macro's value if defined, else the literal text."""
        value = self.lookup(name.strip())
        if value is None:
            return self._expand(name.strip(), depth + 1)
        return self._expand(value, depth + 1)

    def _expand(self, text: str, depth: int) -> str:
        if depth > MAX_DEPTH:
            raise self.error(
                f"macro expansion is nested too deeply (a definition cycle?) in {text[:80]!r}"
            )
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
                # A match-time reference keeps its own text, but observed (25.13.2, config and
                # submit): the $(...) inside it are expanded ($$(X$(A)) with A=5 is $$(X5)).
                out.append("$$(")
                i = j + 3
                continue
            replacement: str | None = None
            end = j + 1
            if text.startswith("$(", j):
                close = find_body_end(text, j + 2)
                if close >= 0:
                    body = text[j + 2 : close]
                    end = close + 1
                    replacement = self._reference(body, depth)
            else:
                m = _FUNC.match(text, j)
                if m:
                    close = find_body_end(text, m.end())
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
                raise self.error("macro expansion produced an unreasonably long value")
            out.append(replacement)
            i = end
        return "".join(out)

    def _reference(self, body: str, depth: int) -> str:
        name, sep, default = body.partition(":")
        if name.upper() == "DOLLAR" and not sep:
            return DOLLAR_MARK
        if not NAME_RE.fullmatch(name):
            # Not a reference at all (e.g. "$(a b)"): keep the text, expanding inside it.
            return "$(" + self._expand(body, depth + 1) + ")"
        value = self.lookup(name)
        expanded = self._expand(value, depth + 1) if value is not None else ""
        if not expanded.strip() and sep:
            return self._expand(default, depth + 1)
        return expanded

    def _function(self, func: str, body: str, depth: int) -> str | None:
        if func == "ENV":
            name, sep, default = body.partition(":")
            value = self.environ.get(name.strip())
            if value is None:
                return self._expand(default, depth + 1) if sep else "UNDEFINED"
            return value
        if func in ("INT", "REAL", "EVAL", "STRING") and self.evaluate is None:
            return None
        args = [a.strip() for a in self._expand(body, depth + 1).split(",")]
        if func in ("INT", "REAL", "EVAL", "STRING"):
            return self._eval_function(func, args, depth)
        if func == "RANDOM_CHOICE" and args:
            if len(args) == 1:  # observed: one argument names a macro holding the list,
                args = self._arg(args[0], depth).replace(",", " ").split()  # blanks split it
            return _random().choice(args)
        if func == "RANDOM_INTEGER":
            return self._random_integer(body, args)
        if func == "SUBSTR":
            return self._substr(body, args, depth)
        if func == "CHOICE" and len(args) >= 2:
            try:
                index = int(self._arg(args[0], depth))
            except ValueError:
                raise self.error(f"$CHOICE({body}): the index is not an integer") from None
            items = args[1:]
            if len(items) == 1:
                items = [a.strip() for a in self._arg(items[0], depth).split(",")]
            if not 0 <= index < len(items):
                raise self.error(f"$CHOICE({body}): index {index} out of range")
            return items[index]
        if func == "BASENAME" and args:
            base = posixpath.basename(self._arg(args[0], depth))
            if len(args) > 1 and args[1] and base.endswith(args[1]):
                base = base[: -len(args[1])]
            return base
        if func == "DIRNAME" and args:
            return path_parts(self._arg(args[0], depth), "p")
        if _PATH_FUNC.fullmatch(func):
            path = self._arg(args[0], depth) if args else ""
            return path_parts(path, func[1:])
        return None

    def _random_integer(self, body: str, args: list[str]) -> str:
        """``$RANDOM_INTEGER(min, max[, step])``: an integer drawn from the range, inclusive."""
        try:
            low, high = int(args[0]), int(args[1])
            step = int(args[2]) if len(args) > 2 else 1
        except (IndexError, ValueError):
            raise self.error(f"invalid $RANDOM_INTEGER({body})") from None
        if step < 1 or high < low:
            raise self.error(f"invalid $RANDOM_INTEGER({body}): empty range")
        return str(_random().randrange(low, high + 1, step))

    def _substr(self, body: str, args: list[str], depth: int) -> str:
        """``$SUBSTR(name, start[, length])``: a negative start counts from the end (clamped
        to the beginning), a negative length drops characters from the end."""
        if len(args) < 2:
            raise self.error(f"invalid $SUBSTR({body}): it needs a name and a start")
        value = self._arg(args[0], depth)
        try:
            start = int(args[1])
            length = int(args[2]) if len(args) > 2 else None
        except ValueError:
            raise self.error(f"$SUBSTR({body}): start and length must be integers") from None
        if start < 0:
            start = max(0, len(value) + start)
        piece = value[start:]
        if length is not None:
            piece = piece[:length] if length >= 0 else piece[: max(0, len(piece) + length)]
        return piece

    def _eval_function(self, func: str, args: list[str], depth: int) -> str:
        assert self.evaluate is not None
        source = self._arg(args[0], depth) if args else ""
        fmt = args[1] if len(args) > 1 else None
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
                raise self.error(f"$INT({source}) does not evaluate to a number")
            return (fmt or "%d") % int(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(f"$REAL({source}) does not evaluate to a number")
        if fmt is None:
            return f"{float(value):.16G}"
        text = fmt % float(value)
        return text if "." in text else text + ".0"


__all__ = [
    "DOLLAR_MARK",
    "MAX_DEPTH",
    "MAX_VALUE",
    "NAME_RE",
    "MacroExpander",
    "find_body_end",
    "next_logical_line",
    "path_parts",
    "split_list",
]


def split_list(value: str | None) -> list[str]:
    """An HTCondor list: items separated by commas and/or whitespace."""
    if not value:
        return []
    return [item for item in re.split(r"[\s,]+", value) if item]
