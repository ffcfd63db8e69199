"""The submit description: commands, ``if``/``include`` statements and ``queue`` statements
(spec 06 §4), as ``htcondor2.Submit`` holds it; :meth:`Submit.build` makes the job ads."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from cedar.config import version_condition
from cedar.config.macros import next_logical_line
from cedar.submit_language.errors import SubmitError
from cedar.submit_language.jobad import JobAds, Translator
from cedar.submit_language.parts import SubmitMacros
from cedar.submit_language.queue import (
    QueueSpec,
    command_output,
    item_block,
    parse_queue,
    queue_items,
    split_row,
)
from cedar.submit_language.settings import SubmitSettings

#: How deeply ``include`` statements may nest.
MAX_INCLUDE_DEPTH = 20


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
        #: The lines the last :meth:`build` did not use (condor_submit's "Is it a typo?").
        self.unused: list[str] = []
        self._referenced: set[str] = set()  # names the if/include statements expanded
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
    def from_command_line(
        cls,
        text: str,
        *,
        submit_file: str | None = None,
        macros: Sequence[tuple[str, str]] = (),
        appended: Sequence[str] = (),
        queue: str | None = None,
    ) -> Submit:
        """A description as condor_submit reads it with its command line (observed, 25.13.2):
        ``NAME=VALUE`` arguments (``macros``) are defined before ``text``, which may change
        them and whose ``if`` statements see them; ``-append`` lines come after it, and where
        it has ``queue`` statements they are set before each one, over its own values;
        ``queue`` (``-queue ARGS``) is the queue statement of a text that has none."""
        submit = cls(submit_file=submit_file)
        for name, value in macros:
            submit[name] = value
        submit._parse(text)
        if appended and not submit._queues:
            submit._parse("\n".join(appended))  # more lines of the text
        elif appended:
            extra = cls("\n".join(appended))
            if extra._queues:
                raise SubmitError("only one -queue command allowed")
            sets = [item for item in extra._program if item[0] == "set"]
            program: list[tuple[str, Any]] = []
            for item in submit._program:
                if item[0] == "queue":
                    program.extend(sets)
                program.append(item)
            submit._program = program
            for _kind, (name, value) in sets:
                submit._keys[name.lower()] = name
                submit._values[name.lower()] = value
        if queue is not None:
            if submit._queues:
                raise SubmitError("-queue argument conflicts with queue statement in submit file")
            submit.set_queue(queue)
        return submit

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

    def queue_specs(self) -> list[QueueSpec]:
        """The parsed ``queue`` statements, in order (a copy)."""
        return list(self._queues)

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

    def _parse(self, text: str, included: int = 0) -> None:
        """Read description text; ``included`` is the include depth (a ``queue`` statement is
        not allowed in an included file or command output, as in condor_submit)."""
        lines = text.split("\n")  # not splitlines(): 0x1E/0x1F are data in submit text
        conditions: list[list[bool]] = []  # per if-level: [active, any_branch_taken]
        i = 0
        while True:
            got = next_logical_line(lines, i)
            if got is None:
                if conditions:
                    # Observed: condor_submit reads up to each queue statement; one that runs
                    # closes every open if (an endif after it has no if), and the file must
                    # not end inside an if.
                    last = len(lines) - (lines[-1] == "")
                    raise SubmitError(f"line {last}: endif(s) not found before end-of-file")
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
                if included:
                    raise SubmitError(
                        f"line {line_no}: Queue statement not allowed in include file or command"
                    )
                args, block = rest.strip(), None
                try:
                    opened = item_block(args, lines, i)
                except SubmitError as exc:
                    raise SubmitError(f"line {line_no}: {exc}") from None
                if opened is not None:
                    args, block, i = opened
                spec = self._queue_spec(args, block, line_no)
                conditions.clear()
                self._queues.append(spec)
                self._program.append(("queue", spec))
                continue
            if is_stmt and keyword == "include" and re.match(r"\s*(ifexist\s*)?:", rest):
                ifexist = "ifexist" in rest.split(":", 1)[0].lower()
                path = self._expand_plain(rest.split(":", 1)[1].strip())
                if included >= MAX_INCLUDE_DEPTH:
                    raise SubmitError(f"line {line_no}: includes nested too deeply")
                if path.endswith("|"):
                    self._parse(command_output(path[:-1]), included + 1)
                    continue
                try:
                    with open(path, encoding="utf-8") as handle:
                        self._parse(handle.read(), included + 1)
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
                    lambda _m, old=old: old,
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
            self._referenced.add(m.group(1).lower())
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
        def lookup(name: str) -> str | None:
            self._referenced.add(name.lower())  # used, for the "unused" warning
            return self._values.get(name.lower())

        return SubmitMacros(lookup).expand(text)

    def _queue_spec(self, args: str, block: list[str] | None, line_no: int) -> QueueSpec:
        try:
            return parse_queue(args, block)
        except SubmitError as exc:
            raise SubmitError(f"line {line_no}: {exc}") from None

    # ------------------------------------------------------------------ items

    def itemdata(
        self, submit_dir: str | None = None, queue: QueueSpec | None = None
    ) -> list[dict[str, str]]:
        """The item rows of the first queue statement, or of ``queue`` (one dict per item)."""
        if queue is None and not self._queues:
            return []
        spec = queue or self._queues[0]
        names = spec.variables or ["Item"]
        expander = SubmitMacros(self._raw_lookup({}))
        rows = queue_items(spec, expander, submit_dir or os.getcwd())
        return [dict(zip(names, split_row(row, len(names)), strict=False)) for _index, row in rows]

    def _raw_lookup(self, live: Mapping[str, str]) -> Any:
        def lookup(name: str) -> str | None:
            low = name.lower()
            if low in live:
                return live[low]
            return self._current.get(low) if hasattr(self, "_current") else self._values.get(low)

        return lookup

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
        spool: bool = False,
    ) -> JobAds:
        """Translate into the ads of cluster ``cluster_id``.

        ``count`` overrides the count of a plain queue (as ``Schedd.submit(count=)`` does);
        ``itemdata`` supplies the items instead of the queue statement.  ``spool`` builds the
        ads ``condor_submit -spool`` sends (the job waits on the spooling hold, spec 07).
        """
        settings = settings or SubmitSettings.from_config()
        submit_dir = os.path.abspath(submit_dir or os.getcwd())
        now = int(time.time()) if now is None else now
        method = submit_method if submit_method is not None else settings.submit_method
        translator = Translator(
            self.submit_file, settings, submit_dir, now, method, cluster_id, spool
        )
        translator.consulted.update(self._referenced)
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
                    # observed: the first spelling names the attribute (+foo, then +FOO)
                    translator.keys.setdefault(arg[0].lower(), arg[0])
                    translator.values[arg[0].lower()] = arg[1].strip()
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
        result = translator.result()
        self.unused = result.unused
        return result
