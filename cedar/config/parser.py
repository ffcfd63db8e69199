"""Reading configuration sources: files, ``cmd |``, local dirs, statements (spec 06 §1.2-§1.5).

:class:`ConfigParser` is the reading half of :class:`cedar.config.Config`: the parser subset
spec 06 §1.11 recommends (assignments, includes, ``if``/``elif``/``else``/``endif``, the
``SECURITY``/``ROLE`` metaknobs, ``error``/``warning``) over the shared line reader of
:mod:`cedar.config.macros`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping

from cedar.config.defaults import (
    DEFAULT_EXCLUDE_REGEXP,
    EMULATED_VERSION,
    METAKNOBS,
    OTHER_METAKNOB_CATEGORIES,
)
from cedar.config.discovery import home_of
from cedar.config.knobs import FALSE_WORDS, TRUE_WORDS, Knobs
from cedar.config.macros import NAME_RE, next_logical_line, split_list
from cedar.errors import ConfigError
from cedar.lazy import LazyLogger
from cedar.record import Record

log = LazyLogger("cedar.config")

_MAX_INCLUDE_DEPTH = 20
_MAX_IF_DEPTH = 63


class _Source(Record, frozen=True):
    """Where a line came from, for error messages."""

    __slots__ = ("name", "line")
    name: str
    line: int

    def __init__(self, name: str, line: int) -> None:
        self._set(name, line)


def read_text(path: str) -> str:
    """A configuration file's text, undecodable bytes kept as surrogates (plain ``open``:
    ``pathlib`` costs a client ~2 ms of start-up)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as file:
        return file.read()


#: ``NAME @= tag``: the first line of a multi-line value.
_MULTI_LINE = re.compile(r"([^\s=:+@]+)\s*@=\s*(\S+)")


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Logical lines (spec 06 §1.3) plus the configuration's ``NAME @= tag`` multi-line values."""
    physical = text.split("\n")
    i = 0
    while True:
        got = next_logical_line(physical, i)
        if got is None:
            return
        number, line, i = got
        multi = _MULTI_LINE.fullmatch(line) if "@=" in line else None
        if multi:
            tag = "@" + multi.group(2)
            body: list[str] = []
            while True:
                if i >= len(physical):
                    raise ConfigError(
                        f"end of file before {tag} (multi-line value of line {number})"
                    )
                item = physical[i].strip()
                i += 1
                if item == tag:
                    break
                if item and not item.startswith("#"):
                    body.append(item)
            line = f"{multi.group(1)} @= " + "\n".join(body)
        yield number, line


class ConfigParser(Knobs):
    """Reads configuration sources into the raw table of :class:`Knobs`."""

    sources: list[str]
    warnings: list[str]

    def _read_source(self, source: str, *, required: bool) -> bool:
        """Read one file or ``cmd |`` source; ``False`` if unreadable and not required."""
        if source.rstrip().endswith("|"):
            command = source.rstrip()[:-1]
            import subprocess  # here: rare, and ~2 ms to import

            try:
                output = subprocess.run(
                    command, shell=True, check=True, capture_output=True, text=True, timeout=60
                ).stdout
            except (OSError, subprocess.SubprocessError) as exc:
                raise ConfigError(f"configuration command {command!r} failed: {exc}") from None
            self.sources.append(source)
            self.parse_text(output, source)
            return True
        try:
            text = read_text(source)
        except OSError as exc:
            if required:
                raise ConfigError(f"Can't read config source {source}: {exc.strerror}") from None
            return False
        self.sources.append(source)
        self.parse_text(text, source)
        return True

    def _local_dir_entries(self, directory: str) -> list[str]:
        exclude = re.compile(self.get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP") or DEFAULT_EXCLUDE_REGEXP)
        try:
            names = os.listdir(directory)
        except OSError:
            return []
        paths = [
            os.path.join(directory, n)
            for n in names
            if not exclude.search(n) and not os.path.isdir(os.path.join(directory, n))
        ]
        return sorted(paths, key=lambda p: p.encode("utf-8", "surrogateescape"))

    def _read_local_dirs(self) -> None:
        for directory in split_list(self.get("LOCAL_CONFIG_DIR")):
            for path in self._local_dir_entries(directory):
                self._read_source(path, required=True)

    def _read_local_sources(self) -> None:
        """``LOCAL_CONFIG_DIR``, ``LOCAL_CONFIG_FILE`` and the re-scans of spec 06 §1.2."""
        dirs_before = self.get("LOCAL_CONFIG_DIR")
        self._read_local_dirs()
        require = self.get_bool("REQUIRE_LOCAL_CONFIG_FILE", True)
        done: set[str] = set()
        while True:
            value = self.get("LOCAL_CONFIG_FILE")
            if not value:
                break
            entries = [value] if "|" in value else split_list(value)
            pending = [e for e in entries if e not in done]
            if not pending:
                break
            entry = pending[0]
            done.add(entry)
            if not self._read_source(entry, required=require):
                log.debug("skipping unreadable LOCAL_CONFIG_FILE entry %s", entry)
        if self.get("LOCAL_CONFIG_DIR") != dirs_before:
            self._read_local_dirs()

    def _read_user_config(self) -> None:
        name = self.get("USER_CONFIG_FILE")
        if not name:
            return
        if not os.path.isabs(name):
            home = home_of()
            if home is None:
                return
            name = os.path.join(home, ".condor", name)
        if os.access(name, os.R_OK):
            self._read_source(name, required=False)

    def _apply_environment(self, env: Mapping[str, str]) -> None:
        """``_condor_NAME=value`` overrides, applied like assignments (spec 06 §1.7)."""
        for var, value in env.items():
            if var[:8].lower() == "_condor_" and NAME_RE.fullmatch(var[8:]):
                self._assign(var[8:], value.lstrip(), "=")

    def parse_text(self, text: str, name: str = "<string>", *, _depth: int = 0) -> None:
        """Parse configuration text into this object (spec 06 §1.3-§1.5)."""
        lines = list(logical_lines(text))
        self._run_lines(lines, name, _depth, args=None)

    def _run_lines(
        self,
        lines: list[tuple[int, str]],
        name: str,
        depth: int,
        args: list[str] | None,
    ) -> None:
        # Each conditional frame: [active, any_branch_taken, parent_active]
        stack: list[list[bool]] = []
        for number, line in lines:
            where = _Source(name, number)
            active = all(frame[0] for frame in stack)
            keyword, _, rest = line.partition(" ")
            lowered = keyword.lower()
            if lowered in {"if", "elif", "else", "endif"} and (
                lowered in {"else", "endif"} and not rest.strip() or lowered in {"if", "elif"}
            ):
                if lowered == "if":
                    if len(stack) >= _MAX_IF_DEPTH:
                        raise self._error(where, "if nesting too deep")
                    value = self._condition(rest, where, args) if active else False
                    stack.append([value, value, active])
                elif lowered == "elif":
                    if not stack:
                        raise self._error(where, "elif without if")
                    frame = stack[-1]
                    if frame[1] or not frame[2]:
                        frame[0] = False
                    else:
                        frame[0] = self._condition(rest, where, args)
                        frame[1] = frame[0]
                elif lowered == "else":
                    if not stack:
                        raise self._error(where, "else without if")
                    frame = stack[-1]
                    frame[0] = frame[2] and not frame[1]
                    frame[1] = True
                else:
                    if not stack:
                        raise self._error(where, "endif without if")
                    stack.pop()
                continue
            if not active:
                continue
            if stack and line.startswith(":"):
                line = line[1:]
                if line[:1].isspace():
                    raise self._error(where, "Illegal Identifier")
            self._statement(line, where, depth, args)
        if stack:
            raise ConfigError(f'Config source "{name}": if without matching endif')

    def _error(self, where: _Source, message: str) -> ConfigError:
        return ConfigError(
            f"Configuration Error Line {where.line} while reading config source {where.name}: "
            f"{message}"
        )

    def _condition(self, text: str, where: _Source, args: list[str] | None) -> bool:
        """The simple ``if`` conditions of spec 06 §1.5."""
        cond = text.strip()
        if args is not None:
            cond = self._substitute_args(cond, args)
        negate = False
        if cond.startswith("!"):
            negate = True
            cond = cond[1:].strip()
        result = self._simple_condition(cond, where)
        return result != negate

    def _simple_condition(self, cond: str, where: _Source) -> bool:
        lowered = cond.lower()
        if lowered in TRUE_WORDS:
            return True
        if lowered in FALSE_WORDS:
            return False
        if re.fullmatch(r"[-+]?\d+(\.\d*)?", cond):
            return float(cond) != 0
        m = re.fullmatch(r"defined\s+(.*)", cond, re.IGNORECASE)
        if m:
            target = m.group(1).strip()
            use = re.fullmatch(r"use\s+([A-Za-z_]+)(?:\s*:\s*(\S+))?", target, re.IGNORECASE)
            if use:
                category = METAKNOBS.get(use.group(1).upper())
                if category is None:
                    return use.group(1).upper() in OTHER_METAKNOB_CATEGORIES and not use.group(2)
                return use.group(2) is None or use.group(2).upper() in category
            return self.get(self.expand(target)) is not None
        m = re.fullmatch(r"version\s*(==|>=|<=|!=|>|<)\s*(\S+)", cond, re.IGNORECASE)
        if m:
            return self._version_condition(m.group(1), m.group(2), where)
        if "$" in cond and re.fullmatch(r"(\$\([^()]*\)\s*)+", cond):
            expanded = self.expand(cond).strip()
            if not expanded:
                return False
            if "$" not in expanded and (
                expanded.lower() in TRUE_WORDS | FALSE_WORDS
                or re.fullmatch(r"[-+]?\d+(\.\d*)?", expanded)
                or expanded.lower().startswith(("defined", "version"))
            ):
                return self._simple_condition(expanded, where)
            raise self._error(
                where,
                f"{cond} is not a valid if condition because expression is not a conditional",
            )
        raise self._error(
            where,
            f"{cond} is not a valid if condition because complex conditionals are not supported",
        )

    def _version_condition(self, op: str, literal: str, where: _Source) -> bool:
        try:
            return version_condition(op, literal)
        except ValueError as exc:
            raise self._error(where, str(exc)) from None

    @staticmethod
    def _substitute_args(text: str, args: list[str]) -> str:
        """Metaknob argument references ``$(N)``, ``$(N:default)``, ``$(N+)``, ``$(N?)``."""

        def repl(m: re.Match[str]) -> str:
            index = int(m.group(1))
            modifier = m.group(2) or ""
            if modifier == "+":
                return ",".join(args[index - 1 :]) if index >= 1 else ",".join(args)
            value = args[index - 1] if 1 <= index <= len(args) else ""
            if index == 0:
                value = ",".join(args)
            if modifier == "?":
                return "1" if value else "0"
            if modifier.startswith(":") and not value:
                return modifier[1:]
            return value

        return re.sub(r"\$\((\d+)(\+|\?|:[^)]*)?\)", repl, text)

    _OPERATOR_RE = re.compile(
        r"^(?P<name>[^\s=:+@]*)\s*(?P<op>=|:|\+=|\+(?P<sep>[,;|&*])(?P=sep)?=|@=)\s*"
        r"(?P<value>.*)$",
        re.DOTALL,
    )

    def _statement(self, line: str, where: _Source, depth: int, args: list[str] | None) -> None:
        if args is not None:
            line = self._substitute_args(line, args)
        bare = line[1:] if line.lower().startswith(("@include", "@use")) else line
        keyword_m = re.match(r"([A-Za-z]+)(?=[\s:]|$)(.*)$", bare, re.DOTALL)
        if keyword_m and keyword_m.group(1).lower() in {"include", "use", "error", "warning"}:
            rest = keyword_m.group(2)
            if not re.match(r"\s*(=|\+)", rest):
                self._special(keyword_m.group(1).lower(), rest, where, depth, args)
                return
        if line.startswith("[") and not re.search(r"\s", line) and not re.search(r"[=:]", line):
            return  # INI-style section header
        m = self._OPERATOR_RE.match(line)
        if not m or not m.group("name"):
            raise self._error(where, f"syntax error in {line[:60]!r}")
        name = self.expand(m.group("name"))
        if not NAME_RE.fullmatch(name):
            raise self._error(where, f"Illegal Identifier {name!r}")
        op = m.group("op")
        value = m.group("value").strip()
        if op == ":":
            self.warnings.append(
                f"Config source \"{where.name}\", Line {where.line}: obsolete use of ':' for "
                f"parameter assignment of {name}"
            )
            op = "="
        self._assign(name, value, op)

    def _assign(self, name: str, value: str, op: str) -> None:
        key = name.upper()
        current = self._raw_lookup(key, include_defaults=True)
        # Self references expand at once to the current raw value (spec 06 §1.4).
        if f"$({key}" in value.upper() and re.search(
            rf"\$\({re.escape(name)}(:[^)]*)?\)", value, re.IGNORECASE
        ):
            value = re.sub(
                rf"\$\({re.escape(name)}(?::([^)]*))?\)",
                lambda m: current if current else (m.group(1) or ""),
                value,
                flags=re.IGNORECASE,
            )
        if op == "+=":
            value = f"{current} {value}" if current else value
        elif op.startswith("+") and op != "+=":
            sep = op[1:-1]
            if current:
                value = f"{current} {sep} {value}" if len(sep) == 2 else f"{current}{sep}{value}"
        self._table[key] = value
        self.spellings.setdefault(key, name)

    def _special(
        self, keyword: str, rest: str, where: _Source, depth: int, args: list[str] | None
    ) -> None:
        text = rest.strip()
        if keyword in {"error", "warning"}:
            head, _, message = text.partition(":")
            message = self.expand(message.strip() if _ else head.strip())
            if keyword == "error":
                raise ConfigError(
                    f'Config source Error "{where.name}", Line {where.line}: {message}'
                )
            warning = f'Config source Warning "{where.name}", Line {where.line}: {message}'
            log.warning("%s", warning)
            self.warnings.append(warning)
            return
        if keyword == "include":
            options, sep, target = text.partition(":")
            if not sep:
                raise self._error(where, "include needs ': <file>'")
            flags = options.lower().split()
            target = self.expand(target.strip())
            if depth >= _MAX_INCLUDE_DEPTH:
                raise self._error(where, "includes nested too deeply")
            if "command" in flags or target.endswith("|"):
                raise self._error(where, "include of a command's output is not supported by cedar")
            try:
                content = read_text(target)
            except OSError as exc:
                if "ifexist" in flags:
                    return
                raise self._error(where, f"can't open file {target}: {exc.strerror}") from None
            self.sources.append(target)
            self._run_lines(list(logical_lines(content)), target, depth + 1, args=None)
            return
        # use CATEGORY : NAME [NAME ...]
        category, sep, names = text.partition(":")
        if not sep:
            raise self._error(where, "use needs 'CATEGORY : NAME'")
        category = category.strip().upper()
        table = METAKNOBS.get(category)
        for item in re.findall(r"[A-Za-z0-9_.]+(?:\([^)]*\))?", self.expand(names)):
            knob, _, arglist = item.partition("(")
            knob_args = [a.strip() for a in arglist.rstrip(")").split(",")] if arglist else []
            knob_args = [a for a in knob_args if a]
            if table is None:
                log.debug("ignoring metaknob 'use %s : %s' (not used by clients)", category, knob)
                continue
            body = table.get(knob.upper())
            if body is None:
                raise self._error(where, f"unknown metaknob {category}:{knob}")
            source = f"use {category}:{knob}"
            self._run_lines(list(logical_lines(body)), source, depth + 1, knob_args)


def version_condition(op: str, literal: str) -> bool:
    """``if version <op> X.Y[.Z]`` of the config and submit languages (spec 06 §1.5, §4.1).

    Compares with :data:`EMULATED_VERSION`; a missing ``.Z`` is taken from it.  An invalid
    literal (not numbers, fewer than two or more than three parts, major < 6) raises
    ``ValueError("the version literal is invalid")``.
    """
    try:
        numbers = [int(part) for part in literal.split(".")]
    except ValueError:
        raise ValueError("the version literal is invalid") from None
    if not 2 <= len(numbers) <= 3 or numbers[0] < 6:
        raise ValueError("the version literal is invalid")
    if len(numbers) == 2:
        numbers.append(EMULATED_VERSION[2])
    mine, theirs = EMULATED_VERSION, tuple(numbers)
    return {
        "==": mine == theirs,
        "!=": mine != theirs,
        ">=": mine >= theirs,
        "<=": mine <= theirs,
        ">": mine > theirs,
        "<": mine < theirs,
    }[op]


__all__ = ["ConfigParser", "logical_lines", "version_condition"]
