"""Value encodings of the submit language (spec 06 §5.1, §5.5): ClassAd value text, V1/V2
arguments and environment, sizes with units, booleans, and the files a job names.

Pure functions; the job-ad builder (:mod:`.builder`) composes them.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
from collections.abc import Mapping

from cedar.classad_wire import parse_expr, unparse
from cedar.classad_wire.evaluate import evaluate
from cedar.classad_wire.expr import AttrRef, Expr, Select, fold, to_expr
from cedar.errors import CedarError
from cedar.submit_language.errors import SubmitError

#: ``+Name``/``MY.Name`` attribute names; condor_submit also takes a leading digit (``+1st``).
ATTR_NAME = re.compile(r"[A-Za-z0-9_]+\Z")
_UNESCAPED_QUOTE = re.compile(r'(?<!\\)"')
URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_UNITS = re.compile(r"\s*(\d+)(?:\.(\d*))?\s*(?:([KMGTkmgt])[bB]?)?\s*\Z")


# --------------------------------------------------------------------------- ClassAd helpers


#: How many distinct expression texts the parse caches keep.  A submission re-uses the same
#: few texts for every proc (issue 12 B4: Requirements was parsed once per proc), so a bounded
#: cache makes each expression parse once per submission (or once per process).
PARSE_CACHE_SIZE = 4096


class _ParseFailure(str):
    """The message of a parse error, cached like a successful parse."""


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parsed(text: str) -> Expr | _ParseFailure:
    try:
        return parse_expr(text)
    except CedarError as exc:
        return _ParseFailure(str(exc))


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _reprinted(text: str) -> str | _ParseFailure:
    expr = _parsed(text)
    return expr if isinstance(expr, _ParseFailure) else unparse(expr, old=True)


def reprint(text: str, what: str = "expression") -> str:
    """Parse ClassAd expression text and print it in wire syntax (spec 06 §5.1 "Value text")."""
    printed = _reprinted(text)
    if isinstance(printed, _ParseFailure):
        raise SubmitError(f"Parse error in expression: {what} = {text} ({printed})")
    return printed


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def quote(value: str) -> str:
    """A ClassAd string literal in wire syntax (only ``"`` is escaped, spec 06 §5.1)."""
    return unparse(to_expr(value), old=True)


def evaluate_text(text: str) -> object:
    """Evaluate expression text without an ad (counts, booleans, priorities).  The parse is
    cached; the evaluation is not (``time()`` and friends)."""
    expr = _parsed(text)
    if isinstance(expr, _ParseFailure):
        raise SubmitError(f"Parse error in expression: {text} ({expr})")
    return evaluate(expr)


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def literal_value(text: str) -> object:
    """The value of ``text`` if it is a literal, else ``None`` (used by Requirements rules)."""
    expr = _parsed(text)
    if isinstance(expr, _ParseFailure):
        return None
    return expr.value() if expr.is_literal else None


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def requirement_references(text: str) -> frozenset[str]:
    """Folded names a Requirements expression refers to as ``TARGET.X`` or unqualified
    (spec 06 §5.3 step 4: a job attribute is only recognised through ``MY.``)."""
    found: set[str] = set()
    root = _parsed(text)
    if isinstance(root, _ParseFailure):
        return frozenset()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, AttrRef):
            found.add(fold(node.name))
            continue
        if isinstance(node, Select) and isinstance(node.base, AttrRef):
            if fold(node.base.name) == "target":
                found.add(fold(node.name))
            continue
        stack.extend(node.children())
    return frozenset(found)


def v2_tokens(text: str) -> list[str]:
    """Split V2 (quoted-syntax) text into arguments: ``""`` is ``"``, ``'…'`` groups, ``''``
    inside quotes is ``'`` (spec 06 §5.5)."""
    args: list[str] = []
    current: list[str] = []
    have = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            if have:
                args.append("".join(current))
                current = []
                have = False
            i += 1
        elif ch == "'":
            have = True
            i += 1
            while True:
                if i >= n:
                    raise SubmitError(f"unterminated single quote in {text!r}")
                if text[i] == "'":
                    if i + 1 < n and text[i + 1] == "'":
                        current.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                current.append(text[i])
                i += 1
        elif ch == '"' and i + 1 < n and text[i + 1] == '"':
            current.append('"')
            have = True
            i += 2
        else:
            current.append(ch)
            have = True
            i += 1
    if have:
        args.append("".join(current))
    return args


def v2_quote(arg: str) -> str:
    """One argument in V2 raw form: each run of whitespace and ``'`` characters is put in
    single quotes with every ``'`` doubled (``it's`` -> ``it''''s``), as condor_submit writes."""
    if arg == "":
        return "''"
    return re.sub(r"[ \t\r\n']+", lambda run: "'" + run.group(0).replace("'", "''") + "'", arg)


def _closing_quote(text: str) -> int:
    """Index of the quote that closes ``text``'s opening one (``""`` is an escaped quote)."""
    i = 1
    while i < len(text):
        if text[i] == '"':
            if i + 1 < len(text) and text[i + 1] == '"':
                i += 2
                continue
            return i
        i += 1
    return -1


def encode_arguments(value: str) -> tuple[str, str]:
    """``arguments`` command value → (attribute name, argument string)."""
    stripped = value.strip()
    if stripped.startswith('"'):
        close = _closing_quote(stripped)
        if close < 0:
            raise SubmitError(f"Unterminated double-quote in arguments: {value}")
        if close != len(stripped) - 1:
            # As condor_submit: a lone quote inside the new syntax ends it ("a "b" c").
            raise SubmitError(
                "Unexpected characters following double-quote in arguments (repeat a "
                f"double-quote to escape it): {stripped[close:]}"
            )
        return "Arguments", " ".join(v2_quote(a) for a in v2_tokens(stripped[1:-1]))
    if _UNESCAPED_QUOTE.search(stripped):
        raise SubmitError(f"Found illegal unescaped double-quote in arguments: {value}")
    args = [a.replace('\\"', '"') for a in stripped.split()]
    return "Args", " ".join(args)


def parse_environment(value: str) -> tuple[dict[str, str], bool]:
    """Environment entries and whether the value used the V2 syntax."""
    stripped = value.strip()
    entries: dict[str, str] = {}
    if len(stripped) >= 2 and stripped.startswith('"') and stripped.endswith('"'):
        for token in v2_tokens(stripped[1:-1]):
            name, _, val = token.partition("=")
            entries[name] = val
        return entries, True
    for entry in value.split(";"):
        if not entry.strip():
            continue
        name, _, val = entry.partition("=")
        entries[name] = val
    return entries, False


def encode_env_v2(entries: Mapping[str, str]) -> str:
    parts = []
    for name in sorted(entries):
        val = entries[name]
        parts.append(f"{v2_quote(name)}={v2_quote(val) if val else ''}")
    return " ".join(parts)


def parse_units(value: str, base: str) -> int | None:
    """``2GB`` → integer in ``base`` units (``"M"`` MiB or ``"K"`` KiB), rounded up (spec 06
    §5.5); ``None`` if ``value`` is not a number with an optional unit."""
    m = _UNITS.match(value)
    if not m:
        return None
    whole, frac, unit = m.group(1), (m.group(2) or "")[:3], (m.group(3) or base).upper()
    powers = {"K": 1, "M": 2, "G": 3, "T": 4}
    number = int(whole) * 1000 + (int(frac.ljust(3, "0")) if frac else 0)
    scale: int = 1024 ** powers[unit] // 1024 ** powers[base] if powers[unit] >= powers[base] else 0
    if scale:
        return math.ceil(number * scale / 1000)
    divisor: int = 1024 ** (powers[base] - powers[unit])
    return math.ceil(number / 1000 / divisor)


#: The signals a job's kill_sig, remove_kill_sig and hold_kill_sig may name (observed,
#: condor_submit 25.13.2: by number or by case-insensitive SIG name; 16, 26, 30 and the
#: aliases SIGCLD, SIGIOT, SIGPOLL, SIGPWR are refused).
SIGNALS = {
    1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
    7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2",
    13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP",
    20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
    27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 31: "SIGSYS",
}  # fmt: skip
_SIGNAL_NUMBERS = {name: number for number, name in SIGNALS.items()}


def signal_name(value: str) -> str:
    """A signal as condor_submit writes it: ``7`` and ``sigbus`` are ``SIGBUS``; a number is
    read as C ``atoi`` reads it (``15x`` is 15, ``3.0`` is 3)."""
    digits = re.match(r"\d+", value)
    if digits:
        name = SIGNALS.get(int(digits.group()))
    else:
        name = value.upper() if value.upper() in _SIGNAL_NUMBERS else None
    if name is None:
        raise SubmitError(f"invalid signal {value}")
    return name


def bool_value(name: str, value: str) -> bool:
    """A submit boolean: a ClassAd expression evaluating to a bool or number (spec 06 §4.1)."""
    try:
        result = evaluate_text(value)
    except CedarError:
        result = None
    if isinstance(result, bool):
        return result
    if isinstance(result, (int, float)):
        return result != 0
    raise SubmitError(f"{name}={value} is invalid, must eval to a boolean.")


def join_path(directory: str, name: str) -> str:
    if name.startswith("/"):
        return name
    return re.sub(r"/+", "/", f"{directory}/{name}")


def size_kib(path: str) -> int:
    """KiB a file or directory tree adds to ``DiskUsage``: a tree's bytes are summed, then
    rounded up once (as condor_submit does); unreadable paths count 0."""
    try:
        if os.path.isdir(path):
            total = 0
            for root, _dirs, files in os.walk(path):
                for f in files:
                    with contextlib.suppress(OSError):
                        total += os.path.getsize(os.path.join(root, f))
            return math.ceil(total / 1024)
        return math.ceil(os.path.getsize(path) / 1024)
    except OSError:
        return 0


# --------------------------------------------------------------------------- settings
