"""The pool's gauges for ``/metrics``: jobs by status (the schedd's summary ad) and slots by
state (the startds' ``State``), read as an anonymous caller at most once per
``CEDAR_SERVE_METRICS_INTERVAL`` seconds whatever the scrape rate, so scrapers cost the pool
one summary query and one collector query an interval.  A read that fails keeps the last
gauges and says so in ``cedar_serve_pool_up`` and ``cedar_serve_pool_errors_total``.

Each successful reading is also kept in a bounded ring (:data:`HISTORY` readings, in memory:
it starts empty when the server starts) that the web page's pool page draws as jobs by status
over time; :func:`watch` (started by ``cedar serve``) reads once an interval, so the series
covers the time the server has run, not only the moments someone looked.

:data:`DAEMON_CALLS` counts the process's round trips to the daemons (every command a client
ran, heard through :func:`cedar.commands.base.observe_commands`) by daemon type and command,
their seconds, and their errors by kind: labels from fixed tables (command names, daemon
types, error classes), never a job id, a user or an address.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from cedar.commands.base import observe_commands
from cedar.errors import CedarError
from cedar.numbers import JOB_SUMMARY_COUNTERS, AdType, Command
from cedar.service_core import Caller, PoolAccess

#: The summary ad's counters, in the order they are shown.
JOB_STATES = tuple(dict.fromkeys(JOB_SUMMARY_COUNTERS.values()))


#: Readings kept for the pool page's chart (at the default 15 s interval: the last 3 hours).
HISTORY = 720


@dataclass
class PoolGauges:
    """The last reading and when it was made (monotonic); one per process."""

    read_at: float | None = None
    jobs: dict[str, int] = field(default_factory=dict)
    slots: Counter[str] = field(default_factory=Counter)
    #: Per slot state: {"slots", "cpus", "memory" (MB)}.
    resources: dict[str, dict[str, int]] = field(default_factory=dict)
    up: bool = False
    errors: int = 0
    #: (wall-clock time, jobs by status) of each successful reading, oldest first.
    history: deque[tuple[int, dict[str, int]]] = field(
        default_factory=lambda: deque(maxlen=HISTORY)
    )

    def to_json(self) -> dict[str, Any]:
        """What the web page's pool page draws."""
        return {
            "up": self.up,
            "jobs": self.jobs,
            "slots": self.resources,
            "history": [{"time": t, "jobs": j} for t, j in self.history],
        }


async def refresh(access: PoolAccess, gauges: PoolGauges, interval: float) -> None:
    """Read the pool again if the last reading is older than ``interval`` seconds."""
    now = time.monotonic()
    if gauges.read_at is None or now - gauges.read_at >= interval:
        gauges.read_at = now
        try:
            await _read(access, gauges)
            gauges.up = True
            gauges.history.append((int(time.time()), dict(gauges.jobs)))
        except CedarError:
            gauges.up = False
            gauges.errors += 1


async def watch(access: PoolAccess, gauges: PoolGauges, interval: float) -> None:
    """Read the pool once every ``interval`` seconds until cancelled (the same one-reading-an-
    interval budget scrapes share: a scrape in between finds a fresh reading and reads nothing)."""
    import trio

    while True:  # a scrape or the page at start-up reads at once; the watcher keeps time after
        await trio.sleep(interval)
        try:
            await refresh(access, gauges, interval)
        except Exception:  # a sampler's surprise must not end the server it runs in
            gauges.up = False
            gauges.errors += 1


async def pool_lines(access: PoolAccess, gauges: PoolGauges, interval: float) -> list[str]:
    """The pool's gauges in the Prometheus text format, read again if older than
    ``interval`` seconds."""
    await refresh(access, gauges, interval)
    lines = [
        "# HELP cedar_serve_pool_up Whether the last reading of the pool succeeded.",
        "# TYPE cedar_serve_pool_up gauge",
        f"cedar_serve_pool_up {int(gauges.up)}",
        "# HELP cedar_serve_pool_errors_total Readings of the pool that failed.",
        "# TYPE cedar_serve_pool_errors_total counter",
        f"cedar_serve_pool_errors_total {gauges.errors}",
        "# HELP cedar_serve_pool_jobs Jobs in the schedd's queue by status.",
        "# TYPE cedar_serve_pool_jobs gauge",
    ]
    lines += [f'cedar_serve_pool_jobs{{status="{s}"}} {n}' for s, n in gauges.jobs.items()]
    lines += [
        "# HELP cedar_serve_pool_slots Slots the collector knows by state.",
        "# TYPE cedar_serve_pool_slots gauge",
    ]
    lines += [
        f'cedar_serve_pool_slots{{state="{_label(s)}"}} {n}'
        for s, n in sorted(gauges.slots.items())
    ]
    return lines


async def _read(access: PoolAccess, gauges: PoolGauges) -> None:
    caller = Caller.anonymous()
    schedd = await access.schedd(caller)
    query = schedd.query_iter(None, ["JobStatus"], summary_only=True)
    async for _ in query:
        pass
    summary = query.summary
    jobs = {}
    for name in JOB_STATES:
        value = summary.get(name) if summary is not None else None
        jobs[name] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    slots: Counter[str] = Counter()
    resources: dict[str, dict[str, int]] = {}
    names = ["State", "Cpus", "Memory"]
    async for ad in access.collector(caller).query_iter("startd", None, names):
        state = ad.get("State")
        state = state if isinstance(state, str) else "Unknown"
        slots[state] += 1
        row = resources.setdefault(state, {"slots": 0, "cpus": 0, "memory": 0})
        row["slots"] += 1
        for key, attr in (("cpus", "Cpus"), ("memory", "Memory")):
            value = ad.get(attr)
            if isinstance(value, int) and not isinstance(value, bool):
                row[key] += value
    gauges.jobs, gauges.slots, gauges.resources = jobs, slots, resources


def _label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")[:64]


def _collector_commands() -> frozenset[int]:
    """The collector's commands: every ad type's query, update and invalidate commands."""
    numbers: set[int] = set()
    for ad_type in AdType:
        info = ad_type.value
        for name in ("command", "update", "invalidate"):
            number = getattr(info, name, None)
            if isinstance(number, int):
                numbers.add(number)
    extra = {Command.QUERY_ANY_ADS, Command.QUERY_MULTIPLE_PVT_ADS, Command.MERGE_STARTD_AD}
    return frozenset(numbers | extra | {Command.UPDATE_STARTD_AD_WITH_ACK})


_COLLECTOR = _collector_commands()
_STARTER = frozenset({Command.STARTER_PEEK, Command.CREATE_JOB_OWNER_SEC_SESSION})
#: Distinct error kinds counted by name at most; others are counted as ``other``.
MAX_ERROR_KINDS = 64


def daemon_of(command: int) -> str:
    """The daemon type a client command goes to (``any`` for DaemonCore's own commands)."""
    if command in _COLLECTOR:
        return "collector"
    if command in _STARTER:
        return "starter"
    if command >= Command.DC_RAISESIGNAL:
        return "any"
    return "schedd"  # every other command cedar's clients send (queue, actions, sandboxes)


def _command_name(command: int) -> str:
    try:
        return Command(command).name
    except ValueError:
        return "other"


@dataclass
class DaemonCalls:
    """Round trips to the daemons by (daemon type, command), seconds, errors by kind."""

    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    errors: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    def record(self, command: int, error: BaseException | None, seconds: float) -> None:
        """One command ended (an observer of :func:`observe_commands`)."""
        key = (daemon_of(command), _command_name(command))
        self.calls[key] += 1
        self.seconds[key] = self.seconds.get(key, 0.0) + seconds
        if isinstance(error, Exception):  # not a cancellation or an early stop
            kind = type(error).__name__
            kinds = {k for _, _, k in self.errors}
            if kind not in kinds and len(kinds) >= MAX_ERROR_KINDS:
                kind = "other"
            self.errors[(key[0], key[1], kind)] += 1

    def lines(self) -> list[str]:
        """The counters in the Prometheus text format."""
        families: list[tuple[str, str, dict[Any, Any], str]] = [
            ("requests", "Commands sent to the pool's daemons.", dict(self.calls), "{}"),
            ("request_seconds", "Time those commands took.", self.seconds, "{:.6f}"),
            ("errors", "Commands that failed, by kind of error.", dict(self.errors), "{}"),
        ]
        out: list[str] = []
        for family, meaning, values, shown in families:
            name = f"cedar_serve_daemon_{family}_total"
            out += [f"# HELP {name} {meaning}", f"# TYPE {name} counter"]
            for key, value in sorted(values.items()):
                labels = ",".join(
                    f'{label}="{text}"' for label, text in zip(_LABELS, key, strict=False)
                )
                out.append(f"{name}{{{labels}}} {shown.format(value)}")
        return out


#: The labels of the counters' keys, in order.
_LABELS = ("daemon", "command", "kind")


#: This process's round trips to the daemons (every client command, whichever mouth ran it).
DAEMON_CALLS = DaemonCalls()
observe_commands(DAEMON_CALLS.record)
