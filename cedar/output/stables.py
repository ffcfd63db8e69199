"""condor_status's default tables, per ad type, with their Total footers, as condor_status
25.13.2 prints them (``docs/output.md``; ``condor_status -diagnose`` shows each print mask).

A table is a list of :class:`Col` (heading, width, alignment, auto-sized or not, and how a cell
is computed from an ad) plus an optional footer.  condor_status sorts every ad (by ``Machine``,
then ``Name``, digits compared as numbers) and sizes auto-sized columns from the data, so a
table needs all its rows before it prints: rows are kept as short strings, not ads.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cedar.classad_wire.classad import ClassAd
from cedar.errors import CedarError
from cedar.output.dates import short_date
from cedar.output.memo import Memo, RawTexts, literal_key
from cedar.output.values import value_text

__all__ = [
    "STATUS_TABLES",
    "StatusTable",
    "natural_key",
    "status_sort_key",
]


_SCALARS = frozenset((int, float, str, bool))


def _get(ad: ClassAd, name: str) -> Any:
    """An attribute's value (``None`` when absent, undefined or an error): a literal with one
    lookup, an expression through the evaluator."""
    try:
        value = ad[name]
    except KeyError:  # absent: undefined, without the evaluator
        return None
    except CedarError:  # unparsable text: the evaluator decides
        value = None
    if value.__class__ in _SCALARS:
        return value
    try:
        value = ad.eval(name)
    except (CedarError, KeyError):
        return None
    return None if value.__class__.__name__ in ("UndefinedType", "ErrorType") else value


def _number(ad: ClassAd, name: str) -> int | float | None:
    value = _get(ad, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _text(ad: ClassAd, name: str) -> str:
    value = _get(ad, name)
    if value.__class__ is str:
        return value
    return "" if value is None else value_text(value)


_DIGITS = re.compile(r"\d+")


def natural_key(text: str) -> str:
    """A sort key in which runs of digits compare by value (``slot9`` before ``slot10``)."""
    return _DIGITS.sub(_padded, text)


def _machine_key(text: str) -> str:
    """:func:`natural_key` of a Machine, kept: the slots of a machine share it."""
    key = _NATURAL.get(text)
    if key is None:
        key = _DIGITS.sub(_padded, text)
        if len(_NATURAL) >= 4096:
            _NATURAL.clear()
        _NATURAL[text] = key
    return key


def _padded(match: re.Match[str]) -> str:
    return match.group().zfill(24)


#: natural_key of recent texts: the slots of a machine share their Machine.
_NATURAL: dict[str, str] = {}


def status_sort_key(ad: ClassAd) -> tuple[str, str]:
    """condor_status's order: ``Machine``, then ``Name``, natural (observed, 100 000 slots)."""
    return (_machine_key(_text(ad, "Machine")), _DIGITS.sub(_padded, _text(ad, "Name")))


def duration(seconds: int | float) -> str:
    """``D+HH:MM:SS`` (condor's ``%T``)."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    return f"{days}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


class Col:
    """One column: heading, minimal width, left-aligned or not, auto-sized or not, and the
    cell function (``None`` prints an empty cell)."""

    __slots__ = ("auto", "cell", "head", "inputs", "left", "width")

    def __init__(
        self,
        head: str,
        width: int,
        cell: Callable[[ClassAd], str | None],
        *,
        left: bool = False,
        auto: bool = False,
        inputs: Sequence[str] | None = None,
    ) -> None:
        #: The attributes the cell reads, when it reads nothing else (not even the clock):
        #: such cells are computed once per distinct set of their texts.
        self.inputs = inputs
        self.head = head
        self.width = width
        self.cell = cell
        self.left = left
        self.auto = auto


def _attr(name: str) -> Callable[[ClassAd], str | None]:
    return lambda ad: _text(ad, name)


def _int_cell(name: str) -> Callable[[ClassAd], str | None]:
    def cell(ad: ClassAd) -> str | None:
        value = _number(ad, name)
        return None if value is None else str(int(value))

    return cell


def _load(ad: ClassAd) -> str | None:
    value = _number(ad, "CondorLoadAvg")
    return None if value is None else f"{value:.3f}"


def _elapsed(name: str, *clocks: str) -> Callable[[ClassAd], str | None]:
    """The time since ``name`` (a timestamp) by the ad's clock: the first of ``clocks`` it has
    (by default ``LastHeardFrom``, when the collector last heard from the daemon), else now
    (``%T``, ELAPSED_TIME).  condor_status -state's query asks for ``LastHeardFrom``, not
    ``MyCurrentTime``, and the two can differ by a second (observed)."""
    clocks = clocks or ("LastHeardFrom",)

    def cell(ad: ClassAd) -> str | None:
        entered = _number(ad, name)
        if entered is None:
            return None
        now = next((t for t in (_number(ad, clock) for clock in clocks) if t), None)
        return duration((now or time.time()) - entered)

    return cell


#: The slot table's ActvtyTime: by the daemon's own clock first.
_activity_time = _elapsed("EnteredCurrentActivity", "MyCurrentTime", "LastHeardFrom")


def _seconds(name: str) -> Callable[[ClassAd], str | None]:
    """A number of seconds as ``D+HH:MM:SS`` (condor's TIME)."""

    def cell(ad: ClassAd) -> str | None:
        value = _number(ad, name)
        return None if value is None else duration(value)

    return cell


def _int_or_unknown(name: str, width: int) -> Callable[[ClassAd], str | None]:
    """An integer, or ``[???]`` filling the column when the ad has none (condor_status
    -server's Mips and KFlops, observed)."""
    unknown = "[" + "?" * (width - 2) + "]"

    def cell(ad: ClassAd) -> str:
        value = _number(ad, name)
        return unknown if value is None else str(int(value))

    return cell


_VERSION = re.compile(r"\$CondorVersion:\s*(\S+)")


def _version(ad: ClassAd) -> str | None:
    text = _text(ad, "CondorVersion")
    match = _VERSION.search(text)
    return match.group(1) if match else text


def _readable_mb(ad: ClassAd) -> str | None:
    value = _number(ad, "DetectedMemory")
    if value is None:
        return None
    for unit in ("MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.1f} {unit}" if unit != "MB" else f"{int(value)} MB"
        value /= 1024
    return None  # pragma: no cover


def _date(name: str) -> Callable[[ClassAd], str | None]:
    def cell(ad: ClassAd) -> str | None:
        value = _number(ad, name)
        return None if not value else short_date(value)

    return cell


_ARCH_SHORT = {"X86_64": "x64", "INTEL": "x86", "AARCH64": "arm64", "PPC64LE": "ppc64le"}


def platform(ad: ClassAd) -> str:
    """condor_status's Platform column: short arch / OS and version (``x64/Debian12``)."""
    arch = _text(ad, "Arch")
    system = _text(ad, "OpSysAndVer") or _text(ad, "OpSys")
    return f"{_ARCH_SHORT.get(arch, arch.lower())}/{system}"


def _or_none(name: str, default: str) -> Callable[[ClassAd], str | None]:
    return lambda ad: _text(ad, name) or default


class StatusTable:
    """A default table: the query's projection, the columns, an optional footer."""

    def __init__(
        self,
        projection: Sequence[str],
        columns: Sequence[Col],
        footer: Callable[[Sequence[ClassAd]], str] | None = None,
        constraint: str | None = None,
    ) -> None:
        self.projection = sorted(projection, key=str.lower)
        self.columns = list(columns)
        self.footer = footer
        #: What this view adds to the query (``-avail``, ``-claimed``).
        self.constraint = constraint

    def render(self, ads: Iterable[ClassAd], totals_only: bool = False, sort: bool = True) -> str:
        """The whole table (``totals_only``: the footer alone, as ``-total``); ``sort=False``
        when the ads are already in condor_status's order."""
        if totals_only:  # no rows; the slot footer orders its own lines: no sort either
            if self.footer is None:
                return ""
            if self.footer is _slot_footer or not sort:
                listed = ads if isinstance(ads, list) else list(ads)
            else:
                listed = sorted(ads, key=status_sort_key)
            return self.footer(listed) if listed else ""
        columns = self.columns
        shared = [index for index, col in enumerate(columns) if col.inputs is not None]
        own = [index for index, col in enumerate(columns) if col.inputs is None]
        # the cells read from each ad, and the ones shared by ads that hold the same texts
        own_cells = [columns[index].cell for index in own]
        shared_cells = [columns[index].cell for index in shared]

        def shared_row(ad: ClassAd) -> tuple[str, ...]:
            return tuple([cell(ad) or "" for cell in shared_cells])

        names = sorted({name for i in shared for name in columns[i].inputs or ()})
        memo = Memo(names, shared_row)
        # each ad's sort key and cells at once (its Name is read once, while it is fresh)
        keyed = [
            (
                status_sort_key(ad) if sort else ("", ""),
                ad,
                tuple([cell(ad) or "" for cell in own_cells]),
                memo(ad) if shared else (),
            )
            for ad in ads
        ]
        if not keyed:
            return ""
        if sort:
            keyed.sort(key=_first)
        ordered = [item[1] for item in keyed]
        rows = [(item[2], item[3]) for item in keyed]
        del keyed
        distinct = {id(row[1]): row[1] for row in rows}
        widths = []
        for index, col in enumerate(columns):
            width = max(col.width, len(col.head))
            if col.auto:
                if index in own:
                    at = own.index(index)
                    width = max([width, *(len(row[0][at]) for row in rows)])
                else:
                    at = shared.index(index)
                    width = max([width, *(len(cells[at]) for cells in distinct.values())])
            widths.append(width)

        def pad(index: int, cell: str) -> str:
            width = widths[index]
            return cell.ljust(width) if columns[index].left else cell.rjust(width)

        head = " ".join(col.head.ljust(w) for col, w in zip(columns, widths, strict=True))
        lines = [head, ""]
        padded = {
            key: [pad(index, cell) for index, cell in zip(shared, cells, strict=True)]
            for key, cells in distinct.items()
        }
        # each line: the columns in order, from the ad's own cells and the shared ones
        order = [
            (0, own.index(i)) if i in own else (1, shared.index(i)) for i in range(len(columns))
        ]
        own_pads = [(columns[i].left, widths[i]) for i in own]
        if shared and own == [0]:  # Name first, then the shared cells (the slot tables)
            left, width = own_pads[0]
            joined = {key: " " + " ".join(cells) if cells else "" for key, cells in padded.items()}
            lines += [
                (row[0][0].ljust(width) if left else row[0][0].rjust(width)) + joined[id(row[1])]
                for row in rows
            ]
        else:
            for own_row, shared_row_cells in rows:
                mine = [
                    cell.ljust(width) if left else cell.rjust(width)
                    for cell, (left, width) in zip(own_row, own_pads, strict=True)
                ]
                parts = (mine, padded[id(shared_row_cells)]) if shared else (mine, [])
                lines.append(" ".join([parts[source][at] for source, at in order]))
        text = "\n".join(lines) + "\n"
        if self.footer is not None:
            text += self.footer(ordered)
        return text


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


# -- footers ------------------------------------------------------------------------------------

_SLOT_STATES = ("Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drained", "Backfill")


def _slot_footer(ads: Sequence[ClassAd]) -> str:
    """The per-platform state summary after the slot table (and all of ``-total``)."""
    # the slots that hold the same four texts count alike: count them, classify once
    read = RawTexts(["Arch", "OpSys", "State", "Activity"])
    seen: dict[Any, list[Any]] = {}
    for ad in ads:
        key: Any = read(ad)
        entry = seen.get(key)
        if entry is None:
            if not literal_key(key):  # an expression may read other attributes: on its own
                key = id(ad)
            seen[key] = [1, ad]
        else:
            entry[0] += 1
    rows: dict[str, list[int]] = {}
    for number, ad in seen.values():
        label = f"{_text(ad, 'Arch')}/{_text(ad, 'OpSys')}"
        counts = rows.setdefault(label, [0] * 9)
        counts[0] += number
        state = _text(ad, "State")
        if state in _SLOT_STATES:
            counts[1 + _SLOT_STATES.index(state)] += number
            if state == "Backfill" and _text(ad, "Activity") == "Idle":
                counts[8] += number
    columns = ("Total", "Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drain",
               "Backfill", "BkIdle")  # fmt: skip
    return _counts_table(rows, columns, (5, 5, 7, 9, 7, 10, 6, 8, 6))


def _counts_table(
    rows: dict[str, list[int]],
    columns: Sequence[str],
    widths: Sequence[int],
    head_widths: Sequence[int] | None = None,
) -> str:
    """condor_status's summary after a slot table: the column names (in ``head_widths`` when
    they differ), a line of counts a label (sorted), the Total line.  Each count is right-aligned
    in its width plus one, with no other separator: a 6-digit total touches the label (observed
    with 100 000 slots)."""
    total = (
        [sum(column) for column in zip(*rows.values(), strict=True)] if rows else [0] * len(widths)
    )
    label_width = max([14, *(len(label) + 2 for label in rows)])

    def summary(label: str, values: Sequence[Any], widths: Sequence[int] = widths) -> str:
        cells = "".join(f"{v:>{w + 1}}" for v, w in zip(values, widths, strict=True))
        return f"{label:>{label_width}}{cells}"

    lines = ["", summary("", columns, head_widths or widths), ""]
    lines += [summary(label, counts) for label, counts in sorted(rows.items())]
    lines += ["", summary("Total", total)]
    return "\n".join(lines) + "\n"


#: condor_status -state's summary columns, and the State each counts (Drain: Drained).
_STATE_COLUMNS = ("Total", "Owner", "Unclaimed", "Claimed", "Preempting", "Matched", "Drain",
                  "Backfill", "BkIdle")  # fmt: skip
_STATE_COUNTED = {"Owner": 1, "Unclaimed": 2, "Claimed": 3, "Preempting": 4, "Matched": 5,
                  "Drained": 6, "Backfill": 7}  # fmt: skip


def _state_footer(ads: Sequence[ClassAd]) -> str:
    """``condor_status -state``'s summary: a line of state counts per Activity.  Its Total
    column is 0 on every line, as condor_status 25.13.2 prints it (observed with claimed and
    unclaimed slots)."""
    rows: dict[str, list[int]] = {}
    for ad in ads:
        activity = _text(ad, "Activity")
        counts = rows.setdefault(activity, [0] * len(_STATE_COLUMNS))
        state = _text(ad, "State")
        if state in _STATE_COUNTED:
            counts[_STATE_COUNTED[state]] += 1
            if state == "Backfill" and activity == "Idle":
                counts[8] += 1
    return _counts_table(rows, _STATE_COLUMNS, (5, 5, 9, 7, 10, 7, 6, 8, 6))


def _server_footer(ads: Sequence[ClassAd]) -> str:
    """``condor_status -server``'s summary per platform: slots, available ones (not in the
    Owner state: inferred, no Owner slot was observed), and the Memory, Disk, Mips and KFlops
    sums; the Memory heading is 4 columns left of its numbers, as condor_status prints it.  An
    ad without one of the four numbers is counted as "malformed" in a last line."""
    rows: dict[str, list[int]] = {}
    malformed = 0
    for ad in ads:
        row = rows.setdefault(f"{_text(ad, 'Arch')}/{_text(ad, 'OpSys')}", [0] * 6)
        row[0] += 1
        row[1] += _text(ad, "State") != "Owner"
        numbers = [_number(ad, name) for name in ("Memory", "Disk", "Mips", "KFlops")]
        malformed += any(value is None for value in numbers)
        for index, value in enumerate(numbers):
            row[2 + index] += int(value or 0)
    heads = ("Slots", "Avail", "Memory", "Disk", "MIPS", "KFLOPS")
    text = _counts_table(rows, heads, (8, 5, 11, 11, 11, 11), (8, 5, 7, 11, 11, 11))
    if malformed:
        width = max([14, *(len(label) + 2 for label in rows)])
        text += (
            f"\n{'':{width}}(Omitted {malformed} malformed ads in computed attribute totals)\n\n"
        )
    return text


def _sum(ads: Sequence[ClassAd], name: str) -> int:
    return sum(int(_number(ad, name) or 0) for ad in ads)


def _schedd_footer(ads: Sequence[ClassAd]) -> str:
    names = ("TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs")
    values = [_sum(ads, name) for name in names]
    return (
        f"\n{'':14}  {names[0]:>16}{names[1]:>19}{names[2]:>19}\n\n{'':14}\n"
        f"{'Total':>14}{values[0]:>18}{values[1]:>19}{values[2]:>19}\n"
    )


def _submitter_footer(ads: Sequence[ClassAd]) -> str:
    width = max([4, *(len(_text(a, "Name")) for a in ads)])
    per_user: dict[str, list[int]] = {}
    for ad in ads:
        user = per_user.setdefault(_text(ad, "Name"), [0, 0, 0])
        for index, name in enumerate(("RunningJobs", "IdleJobs", "HeldJobs")):
            user[index] += int(_number(ad, name) or 0)
    total = [sum(column) for column in zip(*per_user.values(), strict=True)]
    lines = ["", f"{'':<{width}}{'RunningJobs':>11} {'IdleJobs':>10} {'HeldJobs':>10}", ""]
    for name, values in per_user.items():
        lines.append(f"{name:<{width}}{values[0]:>11} {values[1]:>10} {values[2]:>10}")
    lines += ["", f"{'Total':>{width}}{total[0]:>11} {total[1]:>10} {total[2]:>10}"]
    return "\n".join(lines) + "\n"


def _startd_footer(ads: Sequence[ClassAd]) -> str:
    """``condor_status -startd``'s per-platform summary of the StartD daemon ads."""
    sums = ("TotalSlots", "TotalCpus", "TotalInUseCpus", "TotalBackfillInUseCpus", "TotalGPUs",
            "TotalInUseGPUs", "TotalBackfillInUseGPUs")  # fmt: skip
    rows: dict[str, list[float]] = {}
    for ad in ads:
        row = rows.setdefault(platform(ad), [0.0] * 11)
        row[0] += 1
        for index, name in enumerate(sums):
            row[1 + index] += _number(ad, name) or 0
        row[8] += _number(ad, "TotalMemory") or 0
        row[9] += _number(ad, "TotalInUseMemory") or 0
        row[10] += _number(ad, "TotalBackfillInUseMemory") or 0
    total = [sum(column) for column in zip(*rows.values(), strict=True)]

    def line(label: str, row: Sequence[float]) -> str:
        memory = row[8] or 1
        cells = [f"{int(value):>8}" for value in row[:8]]
        cells += [f"{row[9] * 100 / memory:>7.2f}%", f"{row[10] * 100 / memory:>7.2f}%"]
        return f"{label:>14}" + cells[0] + "".join(" " + cell for cell in cells[1:])

    heads = ("Machines", "Slots", "Cpus", "BusyCpus", "BkCpus", "GPUs", "BusyGPUs", "BkGPUs",
             "Memory%", "BkMem%")  # fmt: skip
    lines = ["", f"{'':>14}{heads[0]:>8}" + "".join(f" {head:>8}" for head in heads[1:]), ""]
    lines += [line(label, row) for label, row in sorted(rows.items())]
    lines += ["", line("Total", total)]
    return "\n".join(lines) + "\n"


def _member_count(ad: ClassAd) -> str | None:
    value = _get(ad, "DetectedGPUs")
    if isinstance(value, str):
        count = len([item for item in value.replace(",", " ").split() if item])
        return str(count) if count else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if value else None
    return None


# -- the tables ---------------------------------------------------------------------------------

_SLOT_COLUMNS = [
    Col("Name", 34, _attr("Name"), left=True, auto=True),
    Col("OpSys", 10, _attr("OpSys"), left=True, inputs=["OpSys"]),
    Col("Arch", 8, _attr("Arch"), left=True, inputs=["Arch"]),
    Col("State", 5, _attr("State"), left=True, auto=True, inputs=["State"]),
    Col("Activity", 8, _attr("Activity"), left=True, inputs=["Activity"]),
    Col("LoadAv", 6, _load, inputs=["CondorLoadAvg"]),
    Col("Mem", 6, _int_cell("Memory"), inputs=["Memory"]),
    # the clock only when both times are absent (never seen): one reading per distinct texts
    Col(" ActvtyTime", 11, _activity_time,
        inputs=["EnteredCurrentActivity", "MyCurrentTime", "LastHeardFrom"]),
]  # fmt: skip
_SLOT_PROJECTION = ["Activity", "Arch", "CondorLoadAvg", "EnteredCurrentActivity",
                    "LastHeardFrom", "Machine", "Memory", "MyCurrentTime", "Name", "OCU", "OpSys",
                    "State"]  # fmt: skip

STATUS_TABLES: dict[str, StatusTable] = {
    "slots": StatusTable(_SLOT_PROJECTION, _SLOT_COLUMNS, _slot_footer),
    "avail": StatusTable(
        _SLOT_PROJECTION,
        _SLOT_COLUMNS,
        _slot_footer,
        constraint='State == "Unclaimed" && Cpus > 0 && Memory > 0',
    ),
    "claimed": StatusTable(
        [
            "Arch",
            "ClientMachine",
            "CondorLoadAvg",
            "KFlops",
            "LoadAvg",
            "Machine",
            "Mips",
            "Name",
            "OCU",
            "OpSys",
            "RemoteUser",
        ],  # fmt: skip
        [
            Col("Name", 34, _attr("Name"), left=True, auto=True),
            Col("OpSys", 10, _attr("OpSys"), left=True),
            Col("Arch", 8, _attr("Arch"), left=True),
            Col("LoadAv", 6, _load),
            Col("RemoteUser", 20, _attr("RemoteUser"), left=True),
            Col("ClientMachine", 16, _attr("ClientMachine"), left=True),
        ],
        None,
        constraint='State == "Claimed"',
    ),
    "state": StatusTable(
        [
            "Activity",
            "CondorLoadAvg",
            "Cpus",
            "EnteredCurrentActivity",
            "EnteredCurrentState",
            "KeyboardIdle",
            "LastHeardFrom",
            "Machine",
            "Memory",
            "Name",
            "OCU",
            "State",
        ],  # fmt: skip
        [
            Col("Name", 34, _attr("Name"), left=True, auto=True),
            Col("Cpu", 3, _attr("Cpus"), left=True, auto=True),
            Col(" Mem", 5, lambda ad: None),  # condor_status -state prints no value here
            Col("LoadAv", 6, _load),
            Col("  KbdIdle", 12, _seconds("KeyboardIdle")),
            Col("State", 7, _attr("State"), left=True),
            Col("  StateTime", 12, _elapsed("EnteredCurrentState")),
            Col("Activ", 5, _attr("Activity"), left=True, auto=True),
            Col("  ActvtyTime", 12, _elapsed("EnteredCurrentActivity")),
        ],
        _state_footer,
    ),
    "server": StatusTable(
        [
            "Arch",
            "CondorLoadAvg",
            "Disk",
            "KFlops",
            "Machine",
            "Memory",
            "Mips",
            "Name",
            "OCU",
            "OpSys",
            "State",
        ],  # fmt: skip
        [
            Col("Name", 34, _attr("Name"), left=True, auto=True),
            Col("OpSys", 10, _attr("OpSys"), left=True),
            Col("Arch", 8, _attr("Arch"), left=True),
            Col("LoadAv", 6, _load),
            Col("Memory", 8, _int_or_unknown("Memory", 8)),
            Col("Disk", 9, _int_or_unknown("Disk", 9)),
            Col("Mips", 7, _int_or_unknown("Mips", 7)),
            Col("KFlops", 9, _int_or_unknown("KFlops", 9)),
        ],
        _server_footer,
    ),
    "run": StatusTable(
        [
            "Machine",
            "Name",
            "OCU",
            "RecentJobsCompleted",
            "RecentJobsStarted",
            "ShadowsRunning",
            "TotalJobAds",
            "TotalSchedulerJobsIdle",
            "TotalSchedulerJobsRunning",
        ],  # fmt: skip
        [
            Col("Name", 15, _attr("Name"), left=True, auto=True),
            Col("TotalJobs", 9, _int_cell("TotalJobAds")),
            Col("Shadows", 7, _int_cell("ShadowsRunning")),
            Col("ActiveDAGs", 10, _int_cell("TotalSchedulerJobsRunning")),
            Col("IdleDAGs", 8, _int_cell("TotalSchedulerJobsIdle")),
            Col("RcntDone", 8, _int_cell("RecentJobsCompleted")),
            Col("RcntStart", 9, _int_cell("RecentJobsStarted")),
        ],
        constraint="((ShadowsRunning + TotalSchedulerJobsRunning) > 0)",
    ),
    "schedd": StatusTable(
        ["Machine", "Name", "OCU", "TotalHeldJobs", "TotalIdleJobs", "TotalRunningJobs"],
        [
            Col("Name", 15, _attr("Name"), left=True, auto=True),
            Col("Machine", 12, _attr("Machine"), left=True, auto=True),
            Col("RunningJobs", 11, _int_cell("TotalRunningJobs")),
            Col("  IdleJobs", 10, _int_cell("TotalIdleJobs")),
            Col("  HeldJobs", 10, _int_cell("TotalHeldJobs")),
        ],
        _schedd_footer,
    ),
    "submitters": StatusTable(
        ["HeldJobs", "IdleJobs", "Machine", "Name", "OCU", "RunningJobs"],
        [
            Col("Name", 15, _attr("Name"), left=True, auto=True),
            Col("Machine", 12, _attr("Machine"), left=True, auto=True),
            Col("RunningJobs", 11, _int_cell("RunningJobs")),
            Col("  IdleJobs", 10, _int_cell("IdleJobs")),
            Col("  HeldJobs", 10, _int_cell("HeldJobs")),
        ],
        _submitter_footer,
    ),
    "master": StatusTable(
        [
            "CondorVersion",
            "DaemonStartTime",
            "DetectedCpus",
            "DetectedMemory",
            "LastHeardFrom",
            "Machine",
            "Name",
            "OCU",
        ],  # fmt: skip
        [
            Col("Name", 12, _attr("Name"), left=True, auto=True),
            Col("Version", 14, _version, left=True),
            Col("Cpus", 4, _int_cell("DetectedCpus")),
            Col("  Memory", 10, _readable_mb),
            Col("   Uptime", 13, _elapsed("DaemonStartTime")),
        ],
    ),
    "collector": StatusTable(
        ["HostsTotal", "IdleJobs", "Machine", "Name", "OCU", "RunningJobs"],
        [
            Col("Name", 4, _attr("Name"), left=True, auto=True),
            Col("Machine", 18, _attr("Machine"), left=True),
            Col("RunningJobs", 11, _int_cell("RunningJobs")),
            Col("  IdleJobs", 10, _int_cell("IdleJobs")),
            Col("HostsTotal", 10, _int_cell("HostsTotal")),
        ],
    ),
    "negotiator": StatusTable(
        [
            "LastNegotiationCycleActiveSubmitterCount0",
            "LastNegotiationCycleCandidateSlots0",
            "LastNegotiationCycleDuration0",
            "LastNegotiationCycleEnd0",
            "LastNegotiationCycleMatches0",
            "LastNegotiationCycleNumIdleJobs0",
            "LastNegotiationCycleNumSchedulers0",
            "LastNegotiationCycleRejections0",
            "Machine",
            "Name",
            "OCU",
        ],  # fmt: skip
        [
            Col("Name", 12, _attr("Name"), left=True, auto=True),
            Col("LastCycleEnd", 12, _date("LastNegotiationCycleEnd0")),
            Col("(Sec)", 5, _int_cell("LastNegotiationCycleDuration0")),
            Col("  Slots", 7, _int_cell("LastNegotiationCycleCandidateSlots0")),
            Col("Submitrs", 8, _int_cell("LastNegotiationCycleActiveSubmitterCount0")),
            Col("Schedds", 7, _int_cell("LastNegotiationCycleNumSchedulers0")),
            Col("   Jobs", 7, _int_cell("LastNegotiationCycleNumIdleJobs0")),
            Col("Matches", 7, _int_cell("LastNegotiationCycleMatches0")),
            Col("Rejections", 10, _int_cell("LastNegotiationCycleRejections0")),
        ],
    ),
    "startd": StatusTable(
        [
            "Arch",
            "CondorVersion",
            "DaemonStartTime",
            "DetectedCpus",
            "DetectedGPUs",
            "DetectedMemory",
            "LastHeardFrom",
            "Machine",
            "Name",
            "NumDynamicSlots",
            "OCU",
            "OpSys",
            "OpSysAndVer",
            "OpSysShortName",
            "TotalBackfillInUseCpus",
            "TotalBackfillInUseDisk",
            "TotalBackfillInUseGPUs",
            "TotalBackfillInUseMemory",
            "TotalCpus",
            "TotalGPUs",
            "TotalInUseCpus",
            "TotalInUseDisk",
            "TotalInUseGPUs",
            "TotalInUseMemory",
            "TotalMemory",
            "TotalSlots",
        ],  # fmt: skip
        [
            Col("Name", 4, _attr("Name"), left=True, auto=True),
            Col("Platform", 8, platform, left=True, auto=True),
            Col("Version", 7, _version, left=True, auto=True),
            Col("Cpus", 4, _int_cell("DetectedCpus")),
            Col("  Memory", 10, _readable_mb),
            Col("GPUs", 5, _member_count),
            Col("   Uptime", 13, _elapsed("DaemonStartTime")),
        ],
        _startd_footer,
    ),
    "any": StatusTable(
        ["Machine", "MyType", "Name", "OCU", "TargetType"],
        [
            Col("MyType", 18, _or_none("MyType", "None"), left=True),
            Col("TargetType", 18, _or_none("TargetType", "None"), left=True),
            Col("Name", 41, _attr("Name"), left=True),
        ],
    ),
}
