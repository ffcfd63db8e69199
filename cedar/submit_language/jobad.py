"""From a parsed description to job ads (spec 06 §5, spec 05 §4.7): settings, the result,
and the translator that runs the ``queue`` statements.

:class:`Translator` walks the queue statements, expands macros per proc and hands each job to
:class:`~.builder.JobBuilder`; :class:`JobAds` holds the cluster ad and what each proc adds.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cedar.config.macros import Lookup
from cedar.errors import CedarError
from cedar.submit_language.builder import JobBuilder
from cedar.submit_language.encodings import evaluate_text
from cedar.submit_language.errors import SubmitError
from cedar.submit_language.parts import SubmitMacros
from cedar.submit_language.queue import QueueSpec, queue_items, split_row
from cedar.submit_language.settings import (
    SubmitSettings,
)

MAX_PROCS = 100_000
#: Commands that ask the schedd to materialize the procs itself (late materialization).
LATE_MATERIALIZATION = ("max_idle", "materialize_max_idle", "max_materialize", "materialize_max")
#: Built-in macros whose value changes from one step of a queue row to the next.
PER_STEP_MACROS = frozenset({"process", "procid", "jobid", "step"})
#: Macro functions that give another value at each use (``$RANDOM_CHOICE``, ``$RANDOM_INTEGER``).
RANDOM_MACRO = "$RANDOM_"
#: Attributes a proc ad never repeats, even when a later queue statement changes them.
_CLUSTER_ONLY = frozenset({"ClusterId", "Owner", "JobUniverse"})


# --------------------------------------------------------------------------- the result


@dataclass
class JobAds:
    """What a submission sends: the cluster ad, then per proc only ``ProcId``, ``JobStatus``
    and attributes that differ from the cluster ad (spec 05 §4.7).  Values are wire text."""

    cluster_id: int
    cluster_ad: dict[str, str]
    proc_ads: list[dict[str, str]]
    warnings: list[str] = field(default_factory=list)
    #: ``max_idle``/``max_materialize`` asked the schedd to materialize the procs itself:
    #: ``Schedd.submit`` then sends a job factory (:mod:`.factory`), not these proc ads.
    late_materialization: bool = False
    #: The description's own lines (``key = value``, as condor_submit prints them) that no
    #: part of the translation read: condor_submit warns "was unused ... Is it a typo?".
    unused: list[str] = field(default_factory=list)

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


class Translator:
    """Builds the job ads statement by statement (spec 06 §5)."""

    def __init__(
        self,
        submit_file: str | None,
        settings: SubmitSettings,
        submit_dir: str,
        now: int,
        method: int | None,
        cluster_id: int,
        spool: bool = False,
    ) -> None:
        self.submit_file = submit_file
        self.settings = settings
        self.submit_dir = submit_dir
        self.now = now
        self.method = method
        self.cluster_id = cluster_id
        self.keys: dict[str, str] = {}
        self.values: dict[str, str] = {}  # the last value of each key, for "unused" lines
        self.consulted: set[str] = set()  # keys a part of the translation read
        self.cluster_ad: dict[str, str] | None = None
        self.proc_ads: list[dict[str, str]] = []
        self.warnings: list[str] = []
        self.next_proc = 0
        self.spool = spool
        self.late_materialization = False
        self.predefined = self._predefined()

    def result(self) -> JobAds:
        if self.cluster_ad is None:
            # Every queue statement produced no item (e.g. "matching" found no file):
            # condor_submit warns and submits nothing.
            self.warnings.append("the submit description queues no jobs")
            return JobAds(self.cluster_id, {}, [], self.warnings)
        return JobAds(
            self.cluster_id,
            self.cluster_ad,
            self.proc_ads,
            self.warnings,
            unused=self._unused(),
            late_materialization=self.late_materialization,
        )

    def run_queue(
        self,
        spec: QueueSpec,
        commands: dict[str, str],
        count_override: int | None,
        itemdata: list[Mapping[str, str]] | None,
    ) -> None:
        commands = _Consulted(commands, self.consulted)
        base = SubmitMacros(self._lookup(commands, {}))
        if any(base.expand(commands.get(knob, "")).strip() for knob in LATE_MATERIALIZATION):
            self.late_materialization = True
        if count_override is not None and not spec.mode and itemdata is None:
            count = count_override
        else:
            count_text = base.expand(spec.count).strip() or "1"
            try:
                count = int(count_text)
            except ValueError:
                try:
                    value = evaluate_text(count_text)
                except CedarError:
                    value = None
                if isinstance(value, bool) or not isinstance(value, int):
                    raise SubmitError(f"queue count {count_text!r} is not an integer") from None
                count = value
        if count < 0:
            raise SubmitError(f"queue count {count} is out of range")
        if count == 0:
            count = 1  # condor_submit queues one job for "queue 0" (observed)
        names = spec.variables or ["Item"]
        rows: list[tuple[int, dict[str, str]]]
        if itemdata is not None:
            rows = [
                (i, {k.lower(): str(v) for k, v in row.items()}) for i, row in enumerate(itemdata)
            ]
            item_named = False
        else:
            raw = queue_items(spec, base, self.submit_dir)
            rows = []
            previous: dict[str, str] = {n.lower(): "" for n in names}
            for index, row in raw:
                if row.strip(" \t") == "" and spec.mode == "from":
                    values = dict(previous)
                else:
                    values = {
                        n.lower(): v
                        for n, v in zip(names, split_row(row, len(names)), strict=False)
                    }
                    previous = values
                rows.append((index, values))
            item_named = bool(spec.variables)
        if len(rows) * count + self.next_proc > MAX_PROCS:
            raise SubmitError(f"refusing to queue more than {MAX_PROCS} jobs")
        random = any(RANDOM_MACRO in text for text in commands.values())
        node = self._node_macro(commands)
        for index, values in rows:
            # The steps of one row differ only through the per-step macros: when building
            # the first one looked none of them up, the others are that job again (one build,
            # not one per proc: the cost of a large "queue N").
            same_as: dict[str, str] | None = None
            row_random = random or any(RANDOM_MACRO in text for text in values.values())
            for step in range(count):
                proc = self.next_proc
                if same_as is not None:
                    self.proc_ads.append({**same_as, "ProcId": str(proc)})
                    self.next_proc += 1
                    continue
                items = dict(values)
                if not spec.mode or item_named:
                    items.setdefault("item", "")
                if not spec.mode:
                    items["item"] = ""
                builtins = {
                    "cluster": str(self.cluster_id),
                    "clusterid": str(self.cluster_id),
                    "process": str(proc),
                    "procid": str(proc),
                    "jobid": f"{self.cluster_id}.{proc}",
                    "step": str(step),
                    "itemindex": str(index),
                    "row": str(index),
                    "node": node,
                }
                used: set[str] = set()
                expander = SubmitMacros(self._lookup(commands, items, builtins, used))
                ad = JobBuilder(self, commands, expander).build(proc)
                self._add_job(proc, ad)
                self.next_proc += 1
                if not row_random and PER_STEP_MACROS.isdisjoint(used):
                    same_as = self.proc_ads[-1]

    def _unused(self) -> list[str]:
        """The lines condor_submit calls unused: keys nothing read, except custom attributes
        (``+A``/``MY.A``) and custom resource requests (``request_X``), which are read by
        scanning every key."""
        lines = []
        for low, key in self.keys.items():
            if low in self.consulted or low.startswith(("my.", "+", "request_")):
                continue
            lines.append(f"{key} = {self.values.get(low, '')}")
        return lines

    def _node_macro(self, commands: Mapping[str, str]) -> str:
        """``$(Node)``: in the parallel universe the marker the starter replaces with the node
        number (observed in condor_submit's ads), elsewhere empty."""
        universe = commands.get("universe") or self.settings.default_universe
        if "$" in universe:
            expander = SubmitMacros(self._lookup(commands, {}))
            universe = expander.expand(universe)
        return "#pArAlLeLnOdE#" if universe.strip().lower() == "parallel" else ""

    def _predefined(self) -> dict[str, str]:
        """Macros every job of the submission sees (spec 06 §4.2), computed once."""
        t = time.localtime(self.now)
        return {
            "submit_time": str(self.now),
            "year": f"{t.tm_year:04d}",
            "month": f"{t.tm_mon:02d}",
            "day": f"{t.tm_mday:02d}",
            "submit_file": self.submit_file or "",
            "arch": self.settings.arch,
            "opsys": self.settings.opsys,
            "islinux": "1" if self.settings.opsys == "LINUX" else "0",
            "iswindows": "1" if self.settings.opsys == "WINDOWS" else "0",
            "spool": self.settings.spool,
        }

    def _lookup(
        self,
        commands: Mapping[str, str],
        items: Mapping[str, str],
        builtins: Mapping[str, str] | None = None,
        used: set[str] | None = None,
    ) -> Lookup:
        """Macro lookup of one job: the queue statement's variables, then the description's
        own definitions (which override even ``$(Process)``: condor_submit does so), then the
        per-job built-ins, then the per-submission ones.  The per-job built-ins looked up are
        added to ``used``."""
        predefined = self.predefined
        per_job = builtins or {}
        seen = used if used is not None else set()

        noted = commands.seen if isinstance(commands, _Consulted) else set()

        def lookup(name: str) -> str | None:
            low = name.lower()
            noted.add(low)  # a $(name) uses the line, whatever answers it
            if low in items:
                return items[low]
            if low in commands:
                return commands[low]
            if low in per_job:
                seen.add(low)
                return per_job[low]
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
        cluster_ad = self.cluster_ad
        differ = [
            name
            for name, value in ad.items()
            if cluster_ad.get(name) != value and name not in _CLUSTER_ONLY
        ]
        for name in sorted(differ, key=lambda n: (len(n), n.lower())):
            proc_ad[name] = ad[name]
        self.proc_ads.append(proc_ad)


class _Consulted(dict[str, str]):
    """The commands, noting every key a part of the translation looks up (for the "unused"
    warning); iterating does not count."""

    def __init__(self, commands: Mapping[str, str], seen: set[str]) -> None:
        super().__init__(commands)
        self.seen = seen

    def get(self, key: str, default: Any = None) -> Any:
        self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.seen.add(key)
        return super().__contains__(key)
