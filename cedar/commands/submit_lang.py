"""The submit description language and its translation to job ClassAds (spec 06 §4–§5).

:class:`Submit` holds a submit description (text or a mapping, like ``htcondor2.Submit``);
:meth:`Submit.build` turns it into the cluster ad and per-proc ads that the queue-management
transaction sends (spec 05 §4.7).  Values are ClassAd expression text in wire ("old") syntax,
re-printed through :mod:`cedar.classad_wire` so they are byte-identical to what
``condor_submit`` sends.  Multiple ``queue`` statements are processed top to bottom as
``condor_submit`` does.
"""

from __future__ import annotations

import contextlib
import fnmatch
import glob
import math
import os
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cedar.auth.version import CEDAR_VERSION_STRING
from cedar.classad_wire import parse_expr, unparse
from cedar.classad_wire.expr import AttrRef, Select, fold, to_expr
from cedar.commands.submit_macros import (
    MacroExpander,
    SubmitError,
    next_logical_line,
)
from cedar.config import version_condition
from cedar.errors import CedarError

__all__ = [
    "JobAds",
    "QueueSpec",
    "Submit",
    "SubmitError",
    "SubmitSettings",
    "parse_queue",
]

CONDOR_VERSION = CEDAR_VERSION_STRING
CONDOR_PLATFORM = "$CondorPlatform: X86_64-Linux $"
DEFAULT_REQUEST_DISK = "MAX({1024, (TransferInputSizeMB+1) * 1.25}) * 1024"
HOLD_REASON = "submitted on hold at user's request"
MAX_PROCS = 100_000

UNIVERSES = {
    "standard": 1,
    "vanilla": 5,
    "docker": 5,
    "container": 5,
    "scheduler": 7,
    "mpi": 8,
    "grid": 9,
    "java": 10,
    "parallel": 11,
    "local": 12,
    "vm": 13,
}
NOTIFICATION = {"never": 0, "always": 1, "complete": 2, "error": 3, "start": 4}
_PREDEFINED_JOB = (
    "cluster",
    "clusterid",
    "process",
    "procid",
    "jobid",
    "step",
    "itemindex",
    "row",
    "item",
    "node",
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
_ATTR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEYWORD = re.compile(r"(?<![\w.])(in|from|matching)(?![\w.])", re.IGNORECASE)
_UNITS = re.compile(r"\s*(\d+)(?:\.(\d*))?\s*(?:([KMGTkmgt])[bB]?)?\s*\Z")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


# --------------------------------------------------------------------------- ClassAd helpers


def reprint(text: str, what: str = "expression") -> str:
    """Parse ClassAd expression text and print it in wire syntax (spec 06 §5.1 "Value text")."""
    try:
        return unparse(parse_expr(text), old=True)
    except CedarError as exc:
        raise SubmitError(f"Parse error in expression: {what} = {text} ({exc})") from None


def quote(value: str) -> str:
    """A ClassAd string literal in wire syntax (only ``"`` is escaped, spec 06 §5.1)."""
    return unparse(to_expr(value), old=True)


def _evaluate(text: str) -> object:
    """Evaluate expression text without an ad (counts, booleans, priorities)."""
    expr = parse_expr(text)
    try:
        from cedar.classad_wire.evaluate import evaluate
    except ImportError:  # the evaluator is built alongside; literals need none
        return expr.value() if expr.is_literal else None
    return evaluate(expr)


def _literal_value(text: str) -> object:
    """The value of ``text`` if it is a literal, else ``None`` (used by Requirements rules)."""
    try:
        expr = parse_expr(text)
    except CedarError:
        return None
    return expr.value() if expr.is_literal else None


def _references(text: str) -> set[str]:
    """Folded names a Requirements expression refers to as ``TARGET.X`` or unqualified
    (spec 06 §5.3 step 4: a job attribute is only recognised through ``MY.``)."""
    found: set[str] = set()
    try:
        stack = [parse_expr(text)]
    except CedarError:
        return found
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
    return found


# --------------------------------------------------------------------------- queue statement


@dataclass
class QueueSpec:
    """A parsed ``queue`` statement (spec 06 §4.3)."""

    count: str = "1"
    variables: list[str] = field(default_factory=list)
    mode: str = ""  # "", "in", "from", "matching"
    qualifiers: list[str] = field(default_factory=list)
    slice: tuple[int | None, int | None, int | None] | None = None
    items: list[str] = field(default_factory=list)
    source: str = ""  # for "from <file>": the file name
    text: str = ""

    def __str__(self) -> str:
        return self.text


def _split_items(text: str) -> list[str]:
    return [piece for piece in re.split(r"[\s,]+", text) if piece]


def _parse_slice(text: str) -> tuple[int | None, int | None, int | None]:
    parts = text.strip()[1:-1].split(":")
    if len(parts) > 3:
        raise SubmitError(f"invalid slice {text}")
    values: list[int | None] = []
    for part in parts:
        part = part.strip()
        try:
            values.append(int(part) if part else None)
        except ValueError:
            raise SubmitError(f"invalid slice {text}") from None
    while len(values) < 3:
        values.append(None)
    return values[0], values[1], values[2]


def parse_queue(args: str, block: list[str] | None = None) -> QueueSpec:
    """Parse the arguments of a ``queue`` statement; ``block`` holds the lines of a
    multi-line ``( … )`` item list, if the statement opened one."""
    spec = QueueSpec(text=args.strip())
    match = _KEYWORD.search(args)
    if not match:
        spec.count = args.strip() or "1"
        return spec
    spec.mode = match.group(1).lower()
    head = args[: match.start()]
    tokens = [t for t in re.split(r"[\s,]+", head) if t]
    variables: list[str] = []
    while tokens and _IDENT.match(tokens[-1]):
        variables.insert(0, tokens.pop())
    spec.count = " ".join(tokens) or "1"
    spec.variables = variables
    rest = args[match.end() :].strip()
    # qualifiers: files/dirs/any (matching), table (from), and a [slice]
    while rest:
        word = re.match(r"(files|dirs|any|table(?:\([^)]*\))?)(?=\s|\[|\(|\Z)", rest, re.I)
        if word:
            spec.qualifiers.append(word.group(1).lower())
            rest = rest[word.end() :].lstrip()
            continue
        if rest.startswith("["):
            close = rest.find("]")
            if close < 0:
                raise SubmitError(f"unterminated slice in queue statement: {args}")
            spec.slice = _parse_slice(rest[: close + 1])
            rest = rest[close + 1 :].lstrip()
            continue
        break
    if block is not None:
        lines = block
        if spec.mode == "from":
            spec.items = [line.strip(" \t") for line in lines if not line.strip().startswith("#")]
        else:
            spec.items = [
                piece
                for line in lines
                if not line.strip().startswith("#")
                for piece in _split_items(line)
            ]
        return spec
    if rest.startswith("("):
        close = rest.rfind(")")
        inner = rest[1:close] if close >= 0 else rest[1:]
        if spec.mode == "from":
            spec.items = [inner.strip(" \t")]
        else:
            spec.items = _split_items(inner)
        return spec
    if spec.mode == "from":
        spec.source = rest
    else:
        spec.items = _split_items(rest)
    return spec


def _split_row(row: str, nvars: int) -> list[str]:
    """Row splitting of ``queue … from`` (spec 06 §4.3): the last variable takes the rest."""
    row = row.strip(" \t")
    seps = "\x1f" if "\x1f" in row else ", \t"
    fields: list[str] = []
    rest = row
    for _ in range(nvars - 1):
        idx = next((i for i, ch in enumerate(rest) if ch in seps), -1)
        if idx < 0:
            fields.append(rest)
            rest = ""
            continue
        fields.append(rest[:idx])
        rest = rest[idx + 1 :].lstrip(" \t")
    fields.append(rest)
    return fields


# --------------------------------------------------------------------------- argument encodings


def _v2_tokens(text: str) -> list[str]:
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


def _v2_quote(arg: str) -> str:
    """One argument in V2 raw form: whitespace runs in single quotes, ``'`` doubled."""
    if arg == "":
        return "''"
    out = re.sub(r"'", "''", arg)
    return re.sub(r"([ \t\r\n]+)", r"'\1'", out)


def encode_arguments(value: str) -> tuple[str, str]:
    """``arguments`` command value → (attribute name, argument string)."""
    stripped = value.strip()
    if len(stripped) >= 2 and stripped.startswith('"') and stripped.endswith('"'):
        return "Arguments", " ".join(_v2_quote(a) for a in _v2_tokens(stripped[1:-1]))
    args = [a.replace('\\"', '"') for a in stripped.split()]
    return "Args", " ".join(args)


def _parse_environment(value: str) -> tuple[dict[str, str], bool]:
    """Environment entries and whether the value used the V2 syntax."""
    stripped = value.strip()
    entries: dict[str, str] = {}
    if len(stripped) >= 2 and stripped.startswith('"') and stripped.endswith('"'):
        for token in _v2_tokens(stripped[1:-1]):
            name, _, val = token.partition("=")
            entries[name] = val
        return entries, True
    for entry in value.split(";"):
        if not entry.strip():
            continue
        name, _, val = entry.partition("=")
        entries[name] = val
    return entries, False


def _encode_env_v2(entries: Mapping[str, str]) -> str:
    parts = []
    for name in sorted(entries):
        val = entries[name]
        parts.append(f"{_v2_quote(name)}={_v2_quote(val) if val else ''}")
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
    scale = 1024 ** powers[unit] // 1024 ** powers[base] if powers[unit] >= powers[base] else 0
    if scale:
        return math.ceil(number * scale / 1000)
    divisor = 1024 ** (powers[base] - powers[unit])
    return math.ceil(number / 1000 / divisor)


def _bool_value(name: str, value: str) -> bool:
    """A submit boolean: a ClassAd expression evaluating to a bool or number (spec 06 §4.1)."""
    try:
        result = _evaluate(value)
    except CedarError:
        result = None
    if isinstance(result, bool):
        return result
    if isinstance(result, (int, float)):
        return result != 0
    raise SubmitError(f"{name}={value} is invalid, must eval to a boolean.")


def _join(directory: str, name: str) -> str:
    if name.startswith("/"):
        return name
    return re.sub(r"/+", "/", f"{directory}/{name}")


def _size_kib(path: str) -> int:
    try:
        if os.path.isdir(path):
            total = 0
            for root, _dirs, files in os.walk(path):
                for f in files:
                    with contextlib.suppress(OSError):
                        total += math.ceil(os.path.getsize(os.path.join(root, f)) / 1024)
            return total
        return math.ceil(os.path.getsize(path) / 1024)
    except OSError:
        return 0


# --------------------------------------------------------------------------- settings


@dataclass
class SubmitSettings:
    """Configuration the translation depends on (spec 06 §5.7); defaults as compiled in."""

    filesystem_domain: str = ""
    arch: str = "X86_64"
    opsys: str = "LINUX"
    default_universe: str = "vanilla"
    default_request_cpus: str = "1"
    default_request_memory: str = "128"
    default_request_disk: str = DEFAULT_REQUEST_DISK
    default_lease_duration: str = "2400"
    default_job_max_retries: str = "2"
    submit_method: int | None = None
    condor_version: str = CONDOR_VERSION
    condor_platform: str = CONDOR_PLATFORM
    user: str = ""
    spool: str = ""

    @classmethod
    def from_config(cls, config: Any | None = None) -> SubmitSettings:
        """Settings from the HTCondor configuration (subsystem SUBMIT) when it can be read."""
        settings = cls()
        try:
            import pwd

            settings.user = pwd.getpwuid(os.getuid()).pw_name
        except (ImportError, KeyError):
            settings.user = os.environ.get("USER", "")
        try:
            import platform
            import socket

            machine = platform.machine().lower()
            settings.arch = {"x86_64": "X86_64", "amd64": "X86_64", "aarch64": "aarch64"}.get(
                machine, machine.upper()
            )
            settings.opsys = {"linux": "LINUX", "darwin": "MACOSX", "windows": "WINDOWS"}.get(
                platform.system().lower(), platform.system().upper()
            )
            settings.filesystem_domain = socket.getfqdn()
        except OSError:
            pass
        lookup = _config_lookup(config)
        if lookup is not None:
            for knob, attr in (
                ("FILESYSTEM_DOMAIN", "filesystem_domain"),
                ("DEFAULT_UNIVERSE", "default_universe"),
                ("JOB_DEFAULT_REQUESTCPUS", "default_request_cpus"),
                ("JOB_DEFAULT_REQUESTMEMORY", "default_request_memory"),
                ("JOB_DEFAULT_REQUESTDISK", "default_request_disk"),
                ("JOB_DEFAULT_LEASE_DURATION", "default_lease_duration"),
                ("DEFAULT_JOB_MAX_RETRIES", "default_job_max_retries"),
                ("ARCH", "arch"),
                ("OPSYS", "opsys"),
                ("SPOOL", "spool"),
            ):
                value = lookup(knob)
                if value:
                    setattr(settings, attr, value)
        return settings


def _config_lookup(config: Any | None) -> Any:
    if config is None:
        from cedar.config import default_config

        try:
            config = default_config()
        except CedarError:
            return None
    return getattr(config, "get", None)


# --------------------------------------------------------------------------- the result


@dataclass
class JobAds:
    """What a submission sends: the cluster ad, then per proc only ``ProcId``, ``JobStatus``
    and attributes that differ from the cluster ad (spec 05 §4.7).  Values are wire text."""

    cluster_id: int
    cluster_ad: dict[str, str]
    proc_ads: list[dict[str, str]]
    warnings: list[str] = field(default_factory=list)

    @property
    def num_procs(self) -> int:
        """Number of proc ads (jobs)."""
        return len(self.proc_ads)

    def job_ad(self, proc: int) -> dict[str, str]:
        """The full ad of one job (cluster ad overlaid with its proc ad)."""
        merged = dict(self.cluster_ad)
        merged.update(self.proc_ads[proc])
        return merged


# --------------------------------------------------------------------------- Submit


class _Statements:
    """The parsed statements of a description: ("set", key, value) and ("queue", spec)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any, Any]] = []


class Submit(Mapping[str, str]):
    """A submit description: case-insensitive commands plus its ``queue`` statement(s).

    Build from text (``Submit("executable = /bin/echo\\nqueue 3")``), a mapping or keyword
    arguments (``Submit({"executable": "/bin/echo"})``), as ``htcondor2.Submit`` accepts.
    """

    def __init__(
        self,
        description: str | Mapping[str, str] | None = None,
        /,
        *,
        submit_file: str | None = None,
        **commands: str,
    ) -> None:
        self._keys: dict[str, str] = {}
        self._values: dict[str, str] = {}
        self._program: list[tuple[str, Any]] = []
        self._queues: list[QueueSpec] = []
        self.submit_file = submit_file
        if isinstance(description, str):
            self._parse(description)
        elif description is not None:
            for key, value in description.items():
                self[key] = value
        for key, value in commands.items():
            self[key] = value

    @classmethod
    def from_file(cls, path: str) -> Submit:
        """Read a submit file; relative ``include``/``from`` paths follow the current
        directory, as in ``condor_submit``."""
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise SubmitError(f"cannot read submit file {path}: {exc.strerror}") from None
        return cls(text, submit_file=path)

    # Mapping interface over the commands (last assignment wins).
    def __getitem__(self, key: str) -> str:
        return self._values[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys.values())

    def __len__(self) -> int:
        return len(self._values)

    def __setitem__(self, key: str, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"submit command {key} must be a string, not {type(value).__name__}")
        norm = self._normalize_key(key)
        self._keys[norm.lower()] = norm
        self._values[norm.lower()] = value
        self._program.append(("set", (norm, value)))

    def __delitem__(self, key: str) -> None:
        self._keys.pop(key.lower())
        del self._values[key.lower()]
        self._program = [
            (kind, arg)
            for kind, arg in self._program
            if not (kind == "set" and arg[0].lower() == key.lower())
        ]

    def __repr__(self) -> str:
        return f"Submit({dict(self.items())!r}, queue={self.queue_args!r})"

    def __str__(self) -> str:
        lines = [f"{k} = {v}" for k, v in self.items()]
        lines.append(f"queue {self.queue_args}".rstrip())
        return "\n".join(lines) + "\n"

    @property
    def queue_args(self) -> str:
        """The arguments of the first ``queue`` statement ("" when there is none)."""
        return self._queues[0].text if self._queues else ""

    def set_queue(self, args: str) -> None:
        """Replace the queue statement(s) by ``queue <args>``."""
        self._program = [item for item in self._program if item[0] != "queue"]
        spec = parse_queue(args)
        self._queues = [spec]
        self._program.append(("queue", spec))

    @staticmethod
    def _normalize_key(key: str) -> str:
        key = key.strip()
        if key.startswith("+"):
            return "MY." + key[1:].strip()
        if key[:3].lower() == "my.":
            return "MY." + key[3:]
        return key

    # ------------------------------------------------------------------ parsing

    def _parse(self, text: str) -> None:
        lines = text.split("\n")  # not splitlines(): 0x1E/0x1F are data in submit text
        conditions: list[list[bool]] = []  # per if-level: [active, any_branch_taken]
        i = 0
        while True:
            got = next_logical_line(lines, i)
            if got is None:
                break
            line_no, line, i = got
            lowered = line.lower()
            word = re.match(r"[A-Za-z_]+", line)
            keyword = word.group(0).lower() if word else ""
            rest = line[word.end() :] if word else ""
            is_stmt = word is not None and not re.match(r"\s*[+:]?=", rest)
            if is_stmt and keyword in ("if", "elif", "else", "endif"):
                self._conditional(keyword, rest.strip(), conditions, line_no)
                continue
            if conditions and not all(level[0] for level in conditions):
                continue
            if is_stmt and keyword == "queue":
                args = rest.strip()
                block: list[str] | None = None
                if args.endswith("(") and _KEYWORD.search(args):
                    block = []
                    while i < len(lines) and not lines[i].strip().startswith(")"):
                        block.append(lines[i])
                        i += 1
                    if i >= len(lines):
                        raise SubmitError(f"line {line_no}: queue item list has no closing )")
                    i += 1
                    args = args[:-1].rstrip() + " ("
                spec = self._queue_spec(args, block, line_no)
                self._queues.append(spec)
                self._program.append(("queue", spec))
                continue
            if is_stmt and keyword == "include" and re.match(r"\s*(ifexist\s*)?:", rest):
                ifexist = "ifexist" in rest.split(":", 1)[0].lower()
                path = self._expand_plain(rest.split(":", 1)[1].strip())
                try:
                    with open(path, encoding="utf-8") as handle:
                        self._parse(handle.read())
                except OSError as exc:
                    if not ifexist:
                        raise SubmitError(
                            f"line {line_no}: can't open file {path}: {exc.strerror}"
                        ) from None
                continue
            m = re.match(r"\s*([+-]?[A-Za-z0-9_./]+)\s*=(.*)\Z", line, re.S)
            if not m:
                raise SubmitError(f"line {line_no}: syntax error: {line}")
            key, value = m.group(1), m.group(2).strip()
            del lowered
            if key.startswith("-"):
                self[("MY." + key[1:])] = "undefined"
                continue
            norm = self._normalize_key(key)
            # Self reference is expanded at assignment time (spec 06 §1.4).
            if re.search(r"\$\(\s*" + re.escape(norm) + r"\s*[:)]", value, re.I):
                old = self._values.get(norm.lower(), "")
                value = re.sub(
                    r"\$\(\s*" + re.escape(norm) + r"\s*\)",
                    lambda _m, old=old: old,  # type: ignore[misc]
                    value,
                    flags=re.I,
                )
            self[norm] = value

    def _conditional(self, keyword: str, cond: str, stack: list[list[bool]], line_no: int) -> None:
        if keyword == "if":
            outer = all(level[0] for level in stack)
            value = outer and self._condition(cond, line_no)
            stack.append([value, value])
        elif not stack:
            raise SubmitError(f"line {line_no}: {keyword} without if")
        elif keyword == "elif":
            value = not stack[-1][1] and self._condition(cond, line_no)
            stack[-1] = [value, stack[-1][1] or value]
        elif keyword == "else":
            stack[-1] = [not stack[-1][1], True]
        else:
            stack.pop()

    def _condition(self, cond: str, line_no: int) -> bool:
        negate = cond.startswith("!")
        cond = cond[1:].strip() if negate else cond
        m = re.match(r"defined\s+(\S+)\Z", cond, re.I)
        if m:
            result = bool(self._expand_plain(self._values.get(m.group(1).lower(), "")))
        else:
            m2 = re.match(r"version\s*(==|>=|<=|!=|>|<)\s*(\S+)\Z", cond, re.I)
            if m2:
                try:
                    result = version_condition(m2.group(1), m2.group(2))
                except ValueError as exc:
                    raise SubmitError(f"line {line_no}: {exc}") from None
            else:
                text = self._expand_plain(cond) if "$" in cond else cond
                low = text.strip().lower()
                if low in ("true", "yes", "t"):
                    result = True
                elif low in ("false", "no", "f", ""):
                    result = False
                else:
                    try:
                        result = float(low) != 0
                    except ValueError:
                        raise SubmitError(
                            f"line {line_no}: {cond} is not a valid if condition"
                        ) from None
        return result != negate

    def _expand_plain(self, text: str) -> str:
        return MacroExpander(lambda name: self._values.get(name.lower()), _evaluate).expand(text)

    def _queue_spec(self, args: str, block: list[str] | None, line_no: int) -> QueueSpec:
        try:
            return parse_queue(args, block)
        except SubmitError as exc:
            raise SubmitError(f"line {line_no}: {exc}") from None

    # ------------------------------------------------------------------ items

    def itemdata(self, submit_dir: str | None = None) -> list[dict[str, str]]:
        """The item rows of the first queue statement (one dict per item)."""
        if not self._queues:
            return []
        spec = self._queues[0]
        names = spec.variables or ["Item"]
        rows = self._queue_items(
            spec, MacroExpander(self._raw_lookup({}), _evaluate), submit_dir or os.getcwd()
        )
        return [dict(zip(names, _split_row(row, len(names)), strict=False)) for _index, row in rows]

    def _raw_lookup(self, live: Mapping[str, str]) -> Any:
        def lookup(name: str) -> str | None:
            low = name.lower()
            if low in live:
                return live[low]
            return self._current.get(low) if hasattr(self, "_current") else self._values.get(low)

        return lookup

    def _queue_items(
        self, spec: QueueSpec, expander: MacroExpander, submit_dir: str
    ) -> list[tuple[int, str]]:
        if not spec.mode:
            return [(0, "")]
        items: list[str]
        if spec.mode == "from" and spec.source:
            path = _join(submit_dir, expander.expand(spec.source))
            try:
                with open(path, encoding="utf-8") as handle:
                    items = [line.rstrip("\r\n").strip(" \t") for line in handle]
            except OSError as exc:
                raise SubmitError(f"can't open file {path}: {exc.strerror}") from None
        elif spec.mode == "matching":
            items = []
            kinds = set(spec.qualifiers) & {"files", "dirs"}
            for pattern in spec.items:
                pattern = expander.expand(pattern)
                matches = sorted(glob.glob(pattern, root_dir=submit_dir))
                for found in matches:
                    full = os.path.join(submit_dir, found)
                    is_dir = os.path.isdir(full)
                    if kinds == {"files"} and is_dir or kinds == {"dirs"} and not is_dir:
                        continue
                    items.append(found + "/" if is_dir else found)
        else:
            items = [expander.expand(item) for item in spec.items]
        indexed = list(enumerate(items))
        if spec.slice is not None:
            indexed = indexed[slice(*spec.slice)]
        return indexed

    # ------------------------------------------------------------------ build

    def build(
        self,
        cluster_id: int = 1,
        *,
        count: int | None = None,
        itemdata: list[Mapping[str, str]] | None = None,
        settings: SubmitSettings | None = None,
        submit_dir: str | None = None,
        now: int | None = None,
        submit_method: int | None = None,
    ) -> JobAds:
        """Translate into the ads of cluster ``cluster_id``.

        ``count`` overrides the count of a plain queue (as ``Schedd.submit(count=)`` does);
        ``itemdata`` supplies the items instead of the queue statement.
        """
        settings = settings or SubmitSettings.from_config()
        submit_dir = os.path.abspath(submit_dir or os.getcwd())
        now = int(time.time()) if now is None else now
        method = submit_method if submit_method is not None else settings.submit_method
        translator = _Translator(self, settings, submit_dir, now, method, cluster_id)
        program = list(self._program)
        if not any(kind == "queue" for kind, _ in program):
            program.append(("queue", parse_queue("")))
        queue_seen = 0
        current: dict[str, str] = {}
        self._current = current
        try:
            for kind, arg in program:
                if kind == "set":
                    current[arg[0].lower()] = arg[1]
                    translator.keys[arg[0].lower()] = arg[0]
                    continue
                spec: QueueSpec = arg
                queue_seen += 1
                if queue_seen > 1:
                    translator.warnings.append(
                        "Use of multiple queue statements in a single submit file is deprecated"
                    )
                translator.run_queue(spec, dict(current), count, itemdata)
        finally:
            del self._current
        return translator.result()


class _Translator:
    """Builds the job ads statement by statement (spec 06 §5)."""

    def __init__(
        self,
        submit: Submit,
        settings: SubmitSettings,
        submit_dir: str,
        now: int,
        method: int | None,
        cluster_id: int,
    ) -> None:
        self.submit = submit
        self.settings = settings
        self.submit_dir = submit_dir
        self.now = now
        self.method = method
        self.cluster_id = cluster_id
        self.keys: dict[str, str] = {}
        self.cluster_ad: dict[str, str] | None = None
        self.proc_ads: list[dict[str, str]] = []
        self.warnings: list[str] = []
        self.next_proc = 0

    def result(self) -> JobAds:
        if self.cluster_ad is None:
            raise SubmitError("the submit description queues no jobs")
        return JobAds(self.cluster_id, self.cluster_ad, self.proc_ads, self.warnings)

    def run_queue(
        self,
        spec: QueueSpec,
        commands: dict[str, str],
        count_override: int | None,
        itemdata: list[Mapping[str, str]] | None,
    ) -> None:
        base = MacroExpander(self._lookup(commands, {}), _evaluate)
        if count_override is not None and not spec.mode and itemdata is None:
            count = count_override
        else:
            count_text = base.expand(spec.count).strip() or "1"
            try:
                count = int(count_text)
            except ValueError:
                try:
                    value = _evaluate(count_text)
                except CedarError:
                    value = None
                if isinstance(value, bool) or not isinstance(value, int):
                    raise SubmitError(f"queue count {count_text!r} is not an integer") from None
                count = value
        if count < 0:
            raise SubmitError(f"queue count {count} is negative")
        names = spec.variables or ["Item"]
        rows: list[tuple[int, dict[str, str]]]
        if itemdata is not None:
            rows = [
                (i, {k.lower(): str(v) for k, v in row.items()}) for i, row in enumerate(itemdata)
            ]
            item_named = False
        else:
            raw = self.submit._queue_items(spec, base, self.submit_dir)
            rows = []
            previous: dict[str, str] = {n.lower(): "" for n in names}
            for index, row in raw:
                if row.strip(" \t") == "" and spec.mode == "from":
                    values = dict(previous)
                else:
                    values = {
                        n.lower(): v
                        for n, v in zip(names, _split_row(row, len(names)), strict=False)
                    }
                    previous = values
                rows.append((index, values))
            item_named = bool(spec.variables)
        if len(rows) * count + self.next_proc > MAX_PROCS:
            raise SubmitError(f"refusing to queue more than {MAX_PROCS} jobs")
        for index, values in rows:
            for step in range(count):
                live = dict(values)
                if not spec.mode or item_named:
                    live.setdefault("item", "")
                if not spec.mode:
                    live["item"] = ""
                proc = self.next_proc
                live.update(
                    {
                        "cluster": str(self.cluster_id),
                        "clusterid": str(self.cluster_id),
                        "process": str(proc),
                        "procid": str(proc),
                        "jobid": f"{self.cluster_id}.{proc}",
                        "step": str(step),
                        "itemindex": str(index),
                        "row": str(index),
                    }
                )
                live.setdefault("node", "")
                expander = MacroExpander(self._lookup(commands, live), _evaluate)
                ad = _JobBuilder(self, commands, expander).build(proc)
                self._add_job(proc, ad)
                self.next_proc += 1

    def _lookup(self, commands: Mapping[str, str], live: Mapping[str, str]) -> Any:
        t = time.localtime(self.now)
        predefined = {
            "submit_time": str(self.now),
            "year": f"{t.tm_year:04d}",
            "month": f"{t.tm_mon:02d}",
            "day": f"{t.tm_mday:02d}",
            "submit_file": self.submit.submit_file or "",
            "arch": self.settings.arch,
            "opsys": self.settings.opsys,
            "islinux": "1" if self.settings.opsys == "LINUX" else "0",
            "iswindows": "1" if self.settings.opsys == "WINDOWS" else "0",
            "spool": self.settings.spool,
        }

        def lookup(name: str) -> str | None:
            low = name.lower()
            if low in live:
                return live[low]
            if low in commands:
                return commands[low]
            return predefined.get(low)

        return lookup

    def _add_job(self, proc: int, ad: dict[str, str]) -> None:
        status = ad.pop("JobStatus", "1")
        ad.pop("ProcId", None)
        if self.cluster_ad is None:
            self.cluster_ad = {"ClusterId": str(self.cluster_id)}
            for name in sorted(ad, key=lambda n: (len(n), n.lower())):
                if name != "ClusterId":
                    self.cluster_ad[name] = ad[name]
            self.proc_ads.append({"ProcId": str(proc), "JobStatus": status})
            return
        proc_ad = {"ProcId": str(proc), "JobStatus": status}
        for name in sorted(ad, key=lambda n: (len(n), n.lower())):
            if name in ("ClusterId", "Owner", "JobUniverse"):
                continue
            if self.cluster_ad.get(name) != ad[name]:
                proc_ad[name] = ad[name]
        self.proc_ads.append(proc_ad)


class _JobBuilder:
    """Translates the commands of one job into its ad (spec 06 §5.1–§5.3)."""

    def __init__(
        self, translator: _Translator, commands: Mapping[str, str], expander: MacroExpander
    ) -> None:
        self.t = translator
        self.s = translator.settings
        self.commands = commands
        self.expander = expander
        self.ad: dict[str, str] = {}

    def get(self, *names: str) -> str | None:
        """Expanded value of the first given command; empty counts as absent."""
        for name in names:
            raw = self.commands.get(name.lower())
            if raw is not None:
                value = self.expander.expand(raw).strip()
                if value:
                    return value
        return None

    def has(self, name: str) -> bool:
        return name.lower() in self.commands

    def boolean(self, name: str, default: bool) -> bool:
        value = self.get(name)
        return default if value is None else _bool_value(name, value)

    def set_expr(self, attr: str, text: str) -> None:
        self.ad[attr] = reprint(text, attr)

    def set_str(self, attr: str, value: str) -> None:
        self.ad[attr] = quote(value)

    def build(self, proc: int) -> dict[str, str]:
        ad = self.ad
        ad["ClusterId"] = str(self.t.cluster_id)
        ad["ProcId"] = str(proc)
        universe_name, universe = self._universe()
        container = False
        docker_image = self.get("docker_image")
        container_image = self.get("container_image")
        if universe_name == "docker":
            ad["WantDocker"] = "true"
        if (
            universe_name == "container"
            or container_image
            or (docker_image and universe_name != "docker")
        ):
            container = True
            ad["WantContainer"] = "true"
        ad["JobUniverse"] = str(universe)
        if universe != 5:
            ad["KillSig"] = quote("SIGTERM")
        self._iwd()
        size = self._executable(universe_name, docker_image or container_image)
        self._arguments()
        self._environment()
        self._streams()
        self._log()
        self._requests(universe)
        self._misc()
        self._transfer(universe, universe_name)
        disk = size + self._input_sizes()
        if container_image:
            self._container(container_image)
        if docker_image:
            self.set_str("DockerImage", docker_image)
            if universe_name != "docker":
                ad["WantDockerImage"] = "true"
        self._hold()
        self._policy()
        self._custom_attrs()
        ad["ExecutableSize"] = str(size)
        image = self.get("image_size")
        if image is not None:
            units = parse_units(image, "K")
            ad["ImageSize"] = str(units) if units is not None else reprint(image, "ImageSize")
        else:
            ad["ImageSize"] = str(size)
        ad["DiskUsage"] = str(disk)
        ad["TransferInputSizeMB"] = str(math.ceil(disk / 1024))
        self._requirements(universe, universe_name, container)
        return ad

    # --- pieces --------------------------------------------------------------------------

    def _universe(self) -> tuple[str, int]:
        value = self.get("universe", "JobUniverse") or self.s.default_universe
        low = value.lower()
        if low.isdigit():
            number = int(low)
            names = {v: k for k, v in UNIVERSES.items() if k not in ("docker", "container")}
            if number not in names:
                raise SubmitError(f"unknown universe {value}")
            low = names[number]
        if low == "standard":
            raise SubmitError("'Standard' is not a supported universe.")
        if low not in UNIVERSES:
            raise SubmitError(f"I don't know about the '{value}' universe.")
        return low, UNIVERSES[low]

    def _iwd(self) -> None:
        value = self.get("initialdir", "iwd", "initial_dir", "job_iwd")
        iwd = self.t.submit_dir if value is None else _join(self.t.submit_dir, value)
        if value is not None and not os.path.isdir(iwd):
            raise SubmitError(f"No such directory: {iwd}")
        self.iwd = iwd
        self.set_str("Iwd", iwd)

    def _executable(self, universe_name: str, image: str | None) -> int:
        shell = self.get("shell")
        if shell is not None:
            self.set_str("Cmd", "/bin/sh")
            self.set_str("Arguments", "-c " + _v2_quote(shell).replace("'", "'", -1))
            self.ad["TransferExecutable"] = "false"
            return _size_kib("/bin/sh")
        value = self.get("executable")
        transfer = self.get("transfer_executable")
        no_transfer = transfer is not None and transfer[:1] in ("F", "f")
        if no_transfer:
            self.ad["TransferExecutable"] = "false"
        if value is None:
            if universe_name in ("docker", "container") or image:
                self.set_str("Cmd", "")
                self.ad["TransferExecutable"] = "false"
                return 0
            raise SubmitError("No 'executable' parameter was provided")
        if no_transfer:
            self.set_str("Cmd", value)
            return 0
        path = _join(self.t.submit_dir, value)
        if not os.path.exists(path):
            raise SubmitError(f"Can't access executable file {value}: No such file or directory")
        self.set_str("Cmd", path)
        return _size_kib(path)

    def _arguments(self) -> None:
        v2 = self.get("arguments2")
        if v2 is not None:
            self.set_str("Arguments", " ".join(_v2_quote(a) for a in _v2_tokens(v2)))
            return
        if self.has("shell"):
            return
        value = self.get("arguments", "args")
        if value is None:
            self.set_str("Arguments", "")
            return
        attr, text = encode_arguments(value)
        self.set_str(attr, text)

    def _environment(self) -> None:
        v2 = self.get("environment2")
        env_cmd = self.get("env")
        value = self.get("environment")
        chosen = value if value is not None else env_cmd
        entries: dict[str, str] = {}
        is_v2 = False
        if v2 is not None:
            entries, _ = _parse_environment('"' + v2 + '"')
            is_v2 = True
        elif chosen is not None:
            entries, is_v2 = _parse_environment(chosen)
        getenv = self.get("getenv")
        if getenv is not None and getenv.lower() != "false":
            inherited = self._getenv(getenv)
            for name, val in inherited.items():
                entries.setdefault(name, val)
        if env_cmd is not None and v2 is None and not _parse_environment(env_cmd)[1]:
            self.set_str("Env", ";".join(f"{k}={entries[k]}" for k in sorted(entries)))
            self.set_str("EnvDelim", ";")
            return
        del is_v2
        self.set_str("Environment", _encode_env_v2(entries))

    @staticmethod
    def _getenv(spec: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if "\n" not in v}
        if spec.lower() == "true":
            return env
        patterns = [p for p in re.split(r"[\s,;]+", spec) if p]
        include = [p for p in patterns if not p.startswith("!")]
        exclude = [p[1:] for p in patterns if p.startswith("!")]
        out = {}
        for name, value in env.items():
            low = name.lower()
            if any(fnmatch.fnmatchcase(low, p.lower()) for p in include) and not any(
                fnmatch.fnmatchcase(low, p.lower()) for p in exclude
            ):
                out[name] = value
        return out

    def _streams(self) -> None:
        for cmd, alias, attr, suffix in (
            ("input", "stdin", "In", "In"),
            ("output", "stdout", "Out", "Out"),
            ("error", "stderr", "Err", "Err"),
        ):
            name = self.get(cmd, alias)
            transfer = self.boolean(f"transfer_{cmd}", True)
            stream = self.boolean(f"stream_{cmd}", False)
            if name is None or name == "/dev/null":
                self.set_str(attr, "/dev/null")
                self.ad[f"Transfer{suffix}"] = "false"
                continue
            self.set_str(attr, name)
            if transfer:
                self.ad[f"Stream{suffix}"] = "true" if stream else "false"
            else:
                self.ad[f"Transfer{suffix}"] = "false"

    def _log(self) -> None:
        log = self.get("log")
        if log is not None:
            self.set_str("UserLog", _join(self.iwd, log))
        if self.get("log_xml") is not None:
            self.ad["UserLogUseXML"] = "true" if self.boolean("log_xml", False) else "false"
        dag_log = self.get("dagman_log")
        if dag_log is not None:
            self.set_str("DAGManNodesLog", _join(self.iwd, dag_log))

    def _requests(self, universe: int) -> None:
        grid_type = (self.get("grid_resource") or "").split()[:1]
        if universe == 9 and grid_type != ["condor"]:
            return
        cpus = self.get("request_cpus", "RequestCpus") or self.s.default_request_cpus
        if cpus.lower() != "undefined":
            self.set_expr("RequestCpus", cpus)
        memory = self.get("request_memory", "RequestMemory") or self.s.default_request_memory
        first, _, retry = memory.partition(",")
        units = parse_units(first, "M")
        self.ad["RequestMemory"] = (
            str(units) if units is not None else reprint(first, "RequestMemory")
        )
        if retry.strip():
            self.set_str("TransformOnEvict", "RequestMemory")
            self.set_str(
                "TransformBody_RequestMemory",
                "REQUIREMENTS (VacateReasonCode==21 || VacateReasonCode == 34) && "
                f"VacateReasonSubCode == 102\x1eSET RequestMemory {retry.strip()}",
            )
        disk = self.get("request_disk", "RequestDisk") or self.s.default_request_disk
        units = parse_units(disk, "K")
        self.ad["RequestDisk"] = str(units) if units is not None else reprint(disk, "RequestDisk")
        gpus = self.get("request_gpus", "RequestGPUs")
        if gpus is not None:
            self.set_expr("RequestGPUs", gpus)
        for low, key in self.t.keys.items():
            if not low.startswith("request_") or low in (
                "request_cpus",
                "request_memory",
                "request_disk",
                "request_gpus",
            ):
                continue
            tag = key[len("request_") :]
            if len(tag) < 2 or tag.startswith("_"):
                continue
            value = self.get(key)
            if value is not None:
                self.set_expr("Request" + tag, value)

    def _misc(self) -> None:
        ad = self.ad
        rank = self.get("rank", "preferences")
        ad["Rank"] = reprint(rank, "Rank") if rank is not None else "0.0"
        prio = self.get("priority", "prio")
        if prio is not None:
            value = _evaluate(prio)
            if isinstance(value, bool) or not isinstance(value, int):
                raise SubmitError(f"priority = {prio} is not an integer")
            ad["JobPrio"] = str(value)
        else:
            ad["JobPrio"] = "0"
        notification = self.get("notification")
        if notification is not None:
            if notification.lower() not in NOTIFICATION:
                raise SubmitError(
                    "Notification must be 'Never', 'Always', 'Complete', 'Start', or 'Error'"
                )
            ad["JobNotification"] = str(NOTIFICATION[notification.lower()])
        else:
            ad["JobNotification"] = "0"
        for cmd, attr in (
            ("notify_user", "NotifyUser"),
            ("description", "JobDescription"),
            ("remote_initialdir", "RemoteIwd"),
            ("job_machine_attrs", "JobMachineAttrs"),
            ("job_ad_information_attrs", "JobAdInformationAttrs"),
            ("transfer_checkpoint_files", "TransferCheckpoint"),
            ("kill_sig", "KillSig"),
            ("remove_kill_sig", "RemoveKillSig"),
            ("hold_kill_sig", "HoldKillSig"),
            ("submit_event_notes", "SubmitEventNotes"),
            ("dag_node_name", "DAGNodeName"),
            ("docker_network_type", "DockerNetworkType"),
            ("docker_pull_policy", "DockerPullPolicy"),
        ):
            value = self.get(cmd)
            if value is not None:
                self.set_str(attr, value)
        for cmd, attr in (
            ("batch_name", "JobBatchName"),
            ("batch_id", "JobBatchId"),
            ("jobset", "JobSetName"),
        ):
            value = self.get(cmd)
            if value is not None:
                self.set_str(attr, value.strip('"'))
        emails = self.get("email_attributes")
        if emails is not None:
            self.set_str("EmailAttributes", ",".join(_split_items(emails)))
        limits = self.get("concurrency_limits")
        if limits is not None:
            items = sorted(p.strip().lower() for p in limits.split(",") if p.strip())
            self.set_str("ConcurrencyLimits", ",".join(items))
        for cmd, attr in (
            ("job_max_vacate_time", "JobMaxVacateTime"),
            ("max_job_retirement_time", "MaxJobRetirementTime"),
            ("want_graceful_removal", "WantGracefulRemoval"),
            ("allowed_job_duration", "AllowedJobDuration"),
            ("allowed_execute_duration", "AllowedExecuteDuration"),
            ("keep_claim_idle", "KeepClaimIdle"),
            ("next_job_start_delay", "NextJobStartDelay"),
            ("max_transfer_input_mb", "MaxTransferInputMB"),
            ("max_transfer_output_mb", "MaxTransferOutputMB"),
            ("stack_size", "StackSize"),
            ("job_max_retries", "JobMaxRetries"),
            ("leave_in_queue", "LeaveJobInQueue"),
            ("periodic_hold", "PeriodicHold"),
            ("periodic_hold_reason", "PeriodicHoldReason"),
            ("periodic_hold_subcode", "PeriodicHoldSubCode"),
            ("periodic_release", "PeriodicRelease"),
            ("periodic_remove", "PeriodicRemove"),
            ("periodic_vacate", "PeriodicVacate"),
            ("on_exit_hold_reason", "OnExitHoldReason"),
            ("on_exit_hold_subcode", "OnExitHoldSubCode"),
            ("max_idle", "JobMaterializeMaxIdle"),
        ):
            value = self.get(cmd)
            if value is not None:
                self.set_expr(attr, value)
        for cmd, attr in (
            ("run_as_owner", "RunAsOwner"),
            ("load_profile", "LoadProfile"),
            ("want_io_proxy", "WantIOProxy"),
            ("preserve_relative_paths", "PreserveRelativePaths"),
            ("encrypt_execute_directory", "EncryptExecuteDirectory"),
        ):
            if self.get(cmd) is not None:
                self.ad[attr] = "true" if self.boolean(cmd, False) else "false"
        for cmd, attr in (("coresize", "CoreSize"), ("kill_sig_timeout", "KillSigTimeout")):
            value = self.get(cmd)
            if value is not None:
                number = _evaluate(value)
                if isinstance(number, bool) or not isinstance(number, int):
                    raise SubmitError(f"{cmd} = {value} is not an integer")
                self.ad[attr] = str(number)
        self._accounting()
        ad.setdefault("LeaveJobInQueue", "false")
        for attr, value in (
            ("MyType", quote("Job")),
            ("TargetType", quote("Machine")),
            ("Owner", "undefined"),
            ("QDate", str(self.t.now)),
            ("EnteredCurrentStatus", str(self.t.now)),
            ("MinHosts", "1"),
            ("MaxHosts", "1"),
            ("CurrentHosts", "0"),
            ("ExitBySignal", "false"),
            ("CondorVersion", quote(self.s.condor_version)),
            ("SubmitVersion", quote(self.s.condor_version)),
            ("CondorPlatform", quote(self.s.condor_platform)),
        ):
            ad[attr] = value
        for attr in (
            "NumCkpts",
            "NumJobStarts",
            "NumJobCompletions",
            "NumRestarts",
            "NumSystemHolds",
            "ExitStatus",
            "CommittedTime",
            "CommittedSlotTime",
            "CumulativeSlotTime",
            "TotalSuspensions",
            "LastSuspensionTime",
            "CumulativeSuspensionTime",
            "CommittedSuspensionTime",
        ):
            ad[attr] = "0"
        for attr in (
            "RemoteWallClockTime",
            "RemoteUserCpu",
            "RemoteSysCpu",
            "CumulativeRemoteUserCpu",
            "CumulativeRemoteSysCpu",
        ):
            ad[attr] = "0.0"
        if self.t.method is not None:
            ad["JobSubmitMethod"] = str(self.t.method)
        if self.t.submit.submit_file:
            self.set_str("JobSubmitFile", self.t.submit.submit_file)

    def _accounting(self) -> None:
        group = self.get("accounting_group")
        user = self.get("accounting_group_user")
        nice = self.get("nice_user") is not None and self.boolean("nice_user", False)
        if nice:
            self.ad["MaxJobRetirementTime"] = "0"
            if group is None:
                group = "nice-user"
        if group is None and user is None:
            return
        if user is None:
            user = self.s.user
        if group is not None:
            self.set_str("AcctGroup", group)
        self.set_str("AcctGroupUser", user)
        self.set_str("AccountingGroup", f"{group}.{user}" if group is not None else user)

    def _transfer(self, universe: int, universe_name: str) -> None:
        stf = self.get("should_transfer_files")
        wtto = self.get("when_to_transfer_output")
        explicit = stf is not None
        stf = (stf or "IF_NEEDED").upper()
        if stf not in ("YES", "NO", "IF_NEEDED"):
            raise SubmitError(f"should_transfer_files = {stf} is invalid")
        if wtto is not None:
            wtto = wtto.upper()
            if wtto not in ("ON_EXIT", "ON_EXIT_OR_EVICT", "ON_SUCCESS"):
                raise SubmitError(f"when_to_transfer_output = {wtto} is invalid")
        inputs = self.get("transfer_input_files")
        outputs = self.get("transfer_output_files")
        if stf == "NO":
            if wtto is not None:
                raise SubmitError(
                    f"WhenToTransferOutput specified as {wtto} yet ShouldTransferFiles "
                    "defined as NO"
                )
            if inputs is not None or outputs is not None:
                raise SubmitError("transfer of files requested, but ShouldTransferFiles is NO")
        if wtto == "ON_EXIT_OR_EVICT" and stf == "IF_NEEDED":
            if explicit:
                raise SubmitError(
                    "ShouldTransferFiles IF_NEEDED cannot be combined with ON_EXIT_OR_EVICT"
                )
            stf = "YES"
        self.stf = stf
        self.set_str("ShouldTransferFiles", stf)
        if stf != "NO":
            self.set_str("WhenToTransferOutput", wtto or "ON_EXIT")
        if stf != "YES":
            self.set_str("FileSystemDomain", self.s.filesystem_domain)
        if universe in (5, 10, 11, 13) and (self.get("job_lease_duration") is None):
            if self.s.default_lease_duration:
                self.ad["JobLeaseDuration"] = self.s.default_lease_duration
        elif self.get("job_lease_duration") is not None:
            self.set_expr("JobLeaseDuration", self.get("job_lease_duration") or "")
        self.schemes: list[str] = []
        if inputs is not None:
            items = [p.strip() for p in inputs.split(",") if p.strip()]
            self.input_items = items
            self.set_str("TransferInput", ",".join(items))
            for item in items:
                self._scheme(item)
        else:
            self.input_items = []
        if outputs is not None:
            self.set_str(
                "TransferOutput", ",".join(p.strip() for p in outputs.split(",") if p.strip())
            )
        remaps = self.get("transfer_output_remaps")
        if remaps is not None:
            remaps = remaps.strip('"')
            self.set_str("TransferOutputRemaps", remaps)
            for part in remaps.split(";"):
                self._scheme(part.partition("=")[2].strip())
        dest = self.get("output_destination")
        if dest is not None:
            self.set_str("OutputDestination", dest)
            self._scheme(dest)
        if self.schemes:
            self.set_str("WantTransferPluginMethods", ",".join(self._sorted_schemes()))

    def _scheme(self, item: str) -> None:
        m = _SCHEME.match(item)
        if m and m.group(1).lower() not in [s.lower() for s in self.schemes]:
            self.schemes.append(m.group(1))

    def _sorted_schemes(self) -> list[str]:
        return sorted(self.schemes, key=str.lower)

    def _input_sizes(self) -> int:
        total = 0
        for item in self.input_items:
            if _SCHEME.match(item):
                continue
            total += _size_kib(_join(self.iwd, item))
        return total

    def _container(self, image: str) -> None:
        self.set_str("ContainerImage", image)
        if image.startswith("docker://"):
            self.set_str("ContainerImageSource", "docker")
            self.ad["WantDockerImage"] = "true"
            self.image_kind = "docker"
        else:
            self.image_kind = "sif" if image.endswith(".sif") else "sandbox"
            self.set_str("ContainerImageSource", "cedar")
            self.ad["WantSIF" if self.image_kind == "sif" else "WantSandboxImage"] = "true"

    def _hold(self) -> None:
        if self.get("hold") is not None and self.boolean("hold", False):
            self.ad["JobStatus"] = "5"
            self.set_str("HoldReason", HOLD_REASON)
            self.ad["HoldReasonCode"] = "15"
        else:
            self.ad["JobStatus"] = "1"

    def _policy(self) -> None:
        retries = self.get("max_retries")
        success = self.get("success_exit_code")
        until = self.get("retry_until")
        on_exit_remove = self.get("on_exit_remove")
        on_exit_hold = self.get("on_exit_hold")
        if retries is None and success is None and until is None:
            if on_exit_remove is not None:
                self.set_expr("OnExitRemove", on_exit_remove)
            if on_exit_hold is not None:
                self.set_expr("OnExitHold", on_exit_hold)
            return
        self.set_expr("JobMaxRetries", retries or self.s.default_job_max_retries)
        self.set_expr("OnExitHold", on_exit_hold or "false")
        code = "0"
        if success is not None:
            self.set_expr("JobSuccessExitCode", success)
            code = "JobSuccessExitCode"
        text = f"NumJobCompletions > JobMaxRetries || ExitCode =?= {code}"
        if until is not None:
            text += f" || ExitCode =?= {until}" if until.strip().isdigit() else f" || {until}"
        if on_exit_remove is not None:
            text += f" || {on_exit_remove}"
        self.set_expr("OnExitRemove", text)

    def _custom_attrs(self) -> None:
        for low, key in self.t.keys.items():
            if not low.startswith("my."):
                continue
            name = key[3:]
            if not _ATTR_NAME.match(name):
                raise SubmitError(f"invalid attribute name {name}")
            raw = self.commands.get(low)
            if raw is None:
                continue
            value = self.expander.expand(raw).strip()
            self.ad[name] = reprint(value, name) if value else "undefined"

    # --- Requirements (spec 06 §5.3) -----------------------------------------------------

    def _requirements(self, universe: int, universe_name: str, container: bool) -> None:
        ad = self.ad
        user = self.get("requirements")
        if "my.requirements" in self.t.keys:
            return  # +Requirements: used verbatim, no synthesis
        clauses: list[str] = []
        if user is not None:
            clauses.append(f"({user})")
        grid = (self.get("grid_resource") or "").split()[:1]
        if universe == 9 and grid != ["condor"]:
            ad["Requirements"] = reprint(" && ".join(clauses) or "true", "Requirements")
            return
        refs = _references(" && ".join(clauses)) if clauses else set()
        arch = f'(TARGET.Arch == "{self.s.arch}")'
        opsys_refs = {
            "opsys",
            "opsysandver",
            "opsyslongname",
            "opsysshortname",
            "opsysname",
            "opsyslegacy",
        }
        if universe == 10:
            clauses.append("TARGET.HasJava")
        elif universe_name == "docker":
            clauses.append(f"{arch} && TARGET.HasDocker")
        elif container:
            kind = getattr(self, "image_kind", "docker")
            extra = {
                "docker": "TARGET.HasDockerURL",
                "sif": "TARGET.HasSIF",
                "sandbox": "TARGET.HasSandboxImage",
            }[kind]
            clauses.append(f"{arch} && TARGET.HasContainer && {extra}")
        else:
            if "arch" not in refs:
                clauses.append(arch)
            if not refs & opsys_refs:
                clauses.append(f'(TARGET.OpSys == "{self.s.opsys}")')
        vanilla_like = universe == 5
        disk = ad.get("RequestDisk")
        if disk is not None and self._positive(disk):
            if "disk" in refs:
                clauses.append("(TARGET.Disk >= RequestDisk)")
            elif vanilla_like:
                clauses.append(
                    '(versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || '
                    "(TARGET.Disk >= RequestDisk))"
                )
            else:
                clauses.append("(TARGET.Disk >= RequestDisk)")
        memory = ad.get("RequestMemory")
        if memory is not None and self._positive(memory, 1):
            clauses.append("(TARGET.Memory >= RequestMemory)")
        cpus = ad.get("RequestCpus")
        if cpus is not None and "cpus" not in refs and self._positive(cpus, 1):
            clauses.append("(TARGET.Cpus >= RequestCpus)")
        for name in sorted(ad, key=str.lower):
            if not name.lower().startswith("request") or name.lower() in (
                "requestcpus",
                "requestmemory",
                "requestdisk",
            ):
                continue
            tag = name[len("Request") :]
            if len(tag) < 2 or tag.startswith("_") or tag.lower() in refs:
                continue
            value = _literal_value(ad[name])
            if isinstance(value, str):
                if value:
                    clauses.append(f"regexp({name},TARGET.{tag})")
            elif (
                value is None
                or isinstance(value, bool)
                or (isinstance(value, (int, float)) and value > 0)
                or type(value).__name__ == "UndefinedType"
            ):
                require = next((a for a in ad if a.lower() == f"require{tag.lower()}"), None)
                if require:
                    clauses.append(f"(countMatches(MY.{require},TARGET.Available{tag}) >= {name})")
                else:
                    clauses.append(f"(TARGET.{tag} >= {name})")
        if universe in (5, 8, 10, 11, 13):
            transfer = "TARGET.HasFileTransfer"
            for scheme in self._sorted_schemes():
                transfer += f' && stringListIMember("{scheme}",TARGET.HasFileTransferPluginMethods)'
            if self.stf == "NO":
                clauses.append("(TARGET.FileSystemDomain == MY.FileSystemDomain)")
            elif self.stf == "YES":
                clauses.append(f"({transfer})")
            else:
                clauses.append(
                    f"((TARGET.FileSystemDomain == MY.FileSystemDomain) || ({transfer}))"
                )
        ad["Requirements"] = reprint(" && ".join(clauses), "Requirements")

    @staticmethod
    def _positive(text: str, threshold: float = 0) -> bool:
        value = _literal_value(text)
        if value is None:
            return True  # non-literal
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return value > threshold
