"""``queue`` statements of the submit language (spec 06 §4.3): parsing, item rows, slices.

:func:`parse_queue` turns a statement into a :class:`QueueSpec`; :func:`queue_items` produces
its item rows (``in``/``from``/``matching`` lists, files, globs, slices); :func:`split_row`
splits one row among the statement's variables.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

from cedar.config.macros import MacroExpander
from cedar.submit_language.encodings import join_path
from cedar.submit_language.errors import SubmitError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
#: Seconds a ``cmd |`` may run.
COMMAND_TIMEOUT = 60
QUEUE_KEYWORD = re.compile(r"(?<![\w.])(in|from|matching)(?![\w.])", re.IGNORECASE)


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


def split_items(text: str) -> list[str]:
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
    multi-line ``( … )`` item list, if the statement opened one.  Arguments of several lines
    (``x in (`` then items) carry their list themselves, as a description's lines do."""
    if block is None and "\n" in args:
        first, _, more = args.partition("\n")
        opened = item_block(first, more.split("\n"))
        return parse_queue(first) if opened is None else parse_queue(*opened[:2])
    spec, rest = _parse_head(args)
    if not spec.mode:
        return spec
    if block is not None:
        if spec.mode == "from":
            spec.items = [line.strip(" \t") for line in block if not line.strip().startswith("#")]
        else:
            spec.items = [
                piece
                for line in block
                if not line.strip().startswith("#")
                for piece in split_items(line)
            ]
        return spec
    if rest.startswith("("):
        close = rest.rfind(")")
        if close < 0:
            raise SubmitError("queue item list has no closing )")
        inner = rest[1:close]
        if spec.mode == "from":
            spec.items = [inner.strip(" \t")]
        else:
            spec.items = split_items(inner)
        return spec
    if spec.mode == "from":
        spec.source = rest
    else:
        spec.items = split_items(rest)
    return spec


def item_block(
    args: str, lines: Sequence[str], start: int = 0
) -> tuple[str, list[str], int] | None:
    """Where a statement's arguments ``args`` open a ``(`` list they do not close: the
    arguments up to that ``(``; the list's lines (the text after the ``(`` when any, then
    ``lines`` from ``start`` up to one starting with ``)``); and the index after that one.
    None when ``args`` open no such list.  As condor_submit, a list never closed is refused."""
    spec, rest = _parse_head(args)
    if not spec.mode or not rest.startswith("(") or ")" in rest:
        return None
    head = args.rstrip()[: len(args.rstrip()) - len(rest)].rstrip() + " ("
    block = [rest[1:]] if rest[1:].strip() else []
    for index in range(start, len(lines)):
        if lines[index].strip().startswith(")"):
            return head, block, index + 1
        block.append(lines[index])
    raise SubmitError("queue item list has no closing )")


def _parse_head(args: str) -> tuple[QueueSpec, str]:
    """A statement's count, variables, mode and qualifiers; and what follows them."""
    spec = QueueSpec(text=args.strip())
    match = QUEUE_KEYWORD.search(args)
    if not match:
        spec.count = args.strip() or "1"
        return spec, ""
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
    return spec, rest


def split_row(row: str, nvars: int) -> list[str]:
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


def command_output(command: str, cwd: str | None = None) -> str:
    """The output of ``cmd |`` in ``include : cmd |`` and ``queue … from cmd |`` (run by the
    shell, as condor_submit does: a submit file is code, read only trusted ones)."""
    try:
        done = subprocess.run(
            command,
            shell=True,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SubmitError(f"command {command!r} failed: {exc}") from None
    if done.returncode != 0:
        raise SubmitError(f"command {command!r} exited with status {done.returncode}")
    return done.stdout


def queue_items(spec: QueueSpec, expander: MacroExpander, submit_dir: str) -> list[tuple[int, str]]:
    """The ``(item index, row text)`` pairs a queue statement produces (one empty row when the
    statement has no item list)."""
    if not spec.mode:
        return [(0, "")]
    items: list[str]
    if spec.mode == "from" and spec.source.rstrip().endswith("|"):
        output = command_output(expander.expand(spec.source.rstrip()[:-1]), submit_dir)
        items = [line.rstrip("\r").strip(" \t") for line in output.split("\n")]
        if items and items[-1] == "":
            items.pop()
    elif spec.mode == "from" and spec.source:
        path = join_path(submit_dir, expander.expand(spec.source))
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
