"""Late materialization: the job factory a submission sends instead of its procs
(docs/late-materialization.md; spec 05 §4.9 and 06 §5.4 give the outline).

With ``max_idle``/``max_materialize`` the client sends the cluster ad (the proc-0 ad), the
item rows (SendMaterializeData) and a *digest*: submit-language text holding only the
commands that differ between procs, the user variables they use, ``max_materialize`` and
``universe``, then ``Queue``.  The schedd builds each proc from the cluster ad plus the digest.
Both roles use this module: the client writes the digest, the mock schedd materializes from it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from cedar.submit_language.description import Submit
from cedar.submit_language.errors import SubmitError
from cedar.submit_language.jobad import JobAds
from cedar.submit_language.queue import QueueSpec, split_row
from cedar.submit_language.settings import SubmitSettings

__all__ = [
    "ITEM_SEPARATOR",
    "JobFactory",
    "digest_queue",
    "item_bytes",
    "job_factory",
    "materialize",
    "max_materialize",
    "parse_item_bytes",
]

#: Separates the fields of one item row in SendMaterializeData (a line per row).
ITEM_SEPARATOR = "\x1f"
#: Macros whose value differs from proc to proc: a command using one goes into the digest.
PER_JOB_MACROS = frozenset({"process", "procid", "step", "row", "itemindex", "item", "node"})
#: Commands the digest always carries when the description has them (seen in condor_submit's).
ALWAYS_KEPT = ("max_materialize", "materialize_max", "universe")
#: A macro reference ``$(name)``, ``$F(name)``, ``$INT(name,fmt)``, ``$(name:default)``.
_REFERENCE = re.compile(r"\$[A-Za-z_]*\(\s*([A-Za-z_][A-Za-z0-9_.]*)")
#: A plain ``$(name)`` reference (the only form the digest expands).
_PLAIN_REFERENCE = re.compile(r"\$\(\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\)")
#: How deeply user variables may refer to each other in a digest value.
MAX_EXPANSION_DEPTH = 32
#: The digest's queue statement for item rows: ``Queue <count> <vars> from <spool file>``.
_QUEUE_FROM = re.compile(r"^queue\s+(\d+)\s+(.*?)\s+from\s+(\S.*)$", re.IGNORECASE)
_QUEUE_COUNT = re.compile(r"^queue\s+(\d+)\s*$", re.IGNORECASE)
#: A digest line the schedd side accepts: ``name=value`` (``FACTORY.``/``MY.``/``+`` names too).
_ASSIGNMENT = re.compile(r"^\s*\+?[A-Za-z_][A-Za-z0-9_.]*\s*=")
#: Names that would make the submit reader do more than assign (statements, the environment).
_REFUSED_NAMES = frozenset({"include", "if", "elif", "else", "endif", "error", "warning", "getenv"})
_ENVIRONMENT = re.compile(r"\$ENV\s*\(", re.IGNORECASE)


@dataclass
class JobFactory:
    """What a late-materialization submission sends after NewCluster (no NewProc)."""

    cluster_ad: dict[str, str]
    #: SetJobFactory's limit: ``min(max_materialize, total procs)``, else the total.
    maximum: int
    #: The procs the factory will make in all.
    total_procs: int
    #: The digest text without its queue statement (ends with a blank line).
    digest_head: str
    count: int
    variables: list[str]
    #: The item rows (None: a plain ``queue N``, no SendMaterializeData).
    items: list[list[str]] | None

    def digest(self, items_file: str | None = None) -> str:
        """The whole digest; ``items_file`` is the spool file SendMaterializeData named."""
        if self.items is None:
            return f"{self.digest_head}Queue {self.count} \n"
        if not items_file:
            raise SubmitError("the digest of an item queue needs the schedd's items file")
        names = ",".join(self.variables)
        return f"{self.digest_head}Queue {self.count} {names} from {items_file}\n"

    def item_data(self) -> bytes:
        """SendMaterializeData's payload (empty without items)."""
        return item_bytes(self.items or [])


def item_bytes(rows: Iterable[Sequence[str]]) -> bytes:
    """One line per row, its fields joined by :data:`ITEM_SEPARATOR`."""
    return b"".join((ITEM_SEPARATOR.join(row) + "\n").encode() for row in rows)


def parse_item_bytes(data: bytes, nvars: int) -> list[list[str]]:
    """The rows of SendMaterializeData (the inverse of :func:`item_bytes`)."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [split_row(line, max(nvars, 1)) for line in lines]


def max_materialize(submit: Submit) -> int | None:
    """The description's ``max_materialize`` (or ``materialize_max``), if any."""
    for knob in ("max_materialize", "materialize_max"):
        text = submit.get(knob, "").strip()
        if text:
            try:
                value = int(text)
            except ValueError:
                raise SubmitError(f"{knob} = {text!r} is not an integer") from None
            if value < 1:
                raise SubmitError(f"{knob} must be at least 1, not {value}")
            return value
    return None


def _references(text: str) -> set[str]:
    return {name.lower() for name in _REFERENCE.findall(text)}


def job_factory(
    submit: Submit,
    ads: JobAds,
    *,
    max_materialize: int | None,
    itemdata: Sequence[Mapping[str, str]] | None = None,
    submit_dir: str | None = None,
) -> JobFactory:
    """The factory of a built submission (``ads``: every proc, as the client computed them)."""
    specs = submit.queue_specs()
    if len(specs) > 1:
        raise SubmitError("late materialization allows only one queue statement")
    spec = specs[0] if specs else QueueSpec()
    variables = list(spec.variables) or ["Item"]
    rows: list[list[str]] | None = None
    if itemdata is not None:
        variables = list(itemdata[0]) if itemdata else variables
        rows = [[str(item.get(name, "")) for name in variables] for item in itemdata]
    elif spec.mode:
        named = submit.itemdata(submit_dir)
        rows = [[row.get(name, "") for name in variables] for row in named]
    count = max(1, _count(spec, ads, rows))
    per_job = set(PER_JOB_MACROS) | {v.lower() for v in variables}
    commands = {key.lower(): (key, submit[key]) for key in submit}
    kept: dict[str, tuple[str, str]] = {}
    # A command varies per job when it uses a per-job macro or a variable that does.
    changed = True
    varying = set(per_job)
    while changed:
        changed = False
        for low, (_key, value) in commands.items():
            if low not in varying and _references(value) & varying:
                varying.add(low)
                changed = True
    for low, entry in commands.items():
        if low in varying and low not in per_job:
            kept[low] = entry
    # ... and the user variables those commands use (transitively).
    pending = [value for _key, value in kept.values()]
    while pending:
        for name in _references(pending.pop()):
            if name in commands and name not in kept and name not in per_job:
                kept[name] = commands[name]
                pending.append(commands[name][1])
    for knob in ALWAYS_KEPT:
        if knob in commands:
            kept[knob] = commands[knob]
    user = {low: value for low, (_key, value) in commands.items() if low not in per_job}
    entries = [(key, _expand(value, user)) for key, value in kept.values()]
    iwd = ads.cluster_ad.get("Iwd", "")
    if len(iwd) >= 2 and iwd[0] == iwd[-1] == '"':
        entries.append(("FACTORY.Iwd", iwd[1:-1]))
    # condor_submit's order: the requirements line, the rest by name (any case), then Item=
    lines = ["FACTORY.Requirements=MY.Requirements"]
    lines += [f"{key}={value}" for key, value in sorted(entries, key=lambda e: e[0].lower())]
    if rows is None:
        lines.append("Item=")
    total = ads.num_procs
    maximum = total if max_materialize is None else min(max_materialize, total)
    return JobFactory(
        dict(ads.cluster_ad),
        maximum,
        total,
        "\n".join(lines) + "\n\n",
        count,
        variables,
        rows,
    )


def _expand(value: str, user: Mapping[str, str], depth: int = 0) -> str:
    """Expand the ``$(name)`` references to user variables, leaving the per-job ones (and
    anything else) for the schedd, as condor_submit's digest does (``run_$(Process).out``)."""
    if depth >= MAX_EXPANSION_DEPTH:
        raise SubmitError("the submit variables refer to each other too deeply")

    def one(match: re.Match[str]) -> str:
        name = match.group(1).lower()
        if name not in user:
            return match.group(0)
        return _expand(user[name], user, depth + 1)

    return _PLAIN_REFERENCE.sub(one, value)


def _count(spec: QueueSpec, ads: JobAds, rows: list[list[str]] | None) -> int:
    if rows:
        return ads.num_procs // len(rows)
    return ads.num_procs


def digest_queue(digest: str) -> tuple[int, list[str], str | None]:
    """The digest's queue statement: (count, item variables, items file or None)."""
    for line in reversed(digest.splitlines()):
        text = line.strip()
        if not text:
            continue
        match = _QUEUE_FROM.match(text)
        if match:
            names = [n for n in re.split(r"[\s,]+", match.group(2)) if n]
            return int(match.group(1)), names or ["Item"], match.group(3).strip()
        match = _QUEUE_COUNT.match(text)
        if match:
            return int(match.group(1)), [], None
        break
    raise SubmitError("the factory digest does not end with a Queue statement")


def check_digest(digest: str) -> list[str]:
    """The digest's assignments (queue line dropped); anything else is a :class:`SubmitError`.

    The digest comes from the network: no ``include``/``if``, no command (``|``), nothing that
    reads the receiver's environment may reach the submit reader."""
    lines = digest.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    body = lines[:-1]  # digest_queue checked the last line
    for number, line in enumerate(body, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        name = text.split("=", 1)[0].strip().lstrip("+").lower()
        if not _ASSIGNMENT.match(text) or name in _REFUSED_NAMES or text.endswith("\\"):
            raise SubmitError(f"digest line {number} is not a plain assignment")
        if _ENVIRONMENT.search(text):
            raise SubmitError(f"digest line {number} reads the environment")
    return body


def materialize(
    digest: str,
    cluster_ad: Mapping[str, str],
    cluster: int,
    rows: Sequence[Sequence[str]] | None,
    *,
    settings: SubmitSettings | None = None,
) -> list[dict[str, str]]:
    """Every proc a factory makes, as the attributes that differ from the cluster ad
    (plus ``ProcId``): the digest is built once for all procs and each proc keeps what
    differs from proc 0, whose ad the cluster ad is."""
    count, names, _items_file = digest_queue(digest)
    body = check_digest(digest)
    text = "\n".join(line for line in body if not line.startswith("FACTORY."))
    cmd = cluster_ad.get("Cmd", '"/bin/true"')
    submit = Submit(f"executable = {cmd.strip(chr(34))}\n{text}\n")
    submit.set_queue(str(count))
    itemdata: list[Mapping[str, str]] | None = None
    if rows is not None:
        itemdata = [dict(zip(names, row, strict=False)) for row in rows]
    iwd = cluster_ad.get("Iwd", '"/"').strip('"')
    ads = submit.build(cluster, itemdata=itemdata, settings=settings, submit_dir=iwd, now=0)
    first = ads.job_ad(0)
    procs = []
    for proc in range(ads.num_procs):
        job = ads.job_ad(proc)
        own = {k: v for k, v in job.items() if first.get(k) != v}
        own["ProcId"] = str(proc)
        procs.append(own)
    return procs
