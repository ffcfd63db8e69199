"""Reading a job's user log (the text event log a job's ``log = FILE`` writes).

Each event is a header line ``NNN (CCC.PPP.SSS) YYYY-MM-DD HH:MM:SS text`` and body lines up to a
line ``...``.  An event becomes a ClassAd with the attributes the bindings' ``JobEvent`` shows
(``MyType``, ``EventTypeNumber``, ``Cluster``, ``Proc``, ``Subproc``, ``EventTime`` and the
event's own: ``ReturnValue``, ``HoldReason``, ...), found by reading real logs of an HTCondor 25
pool with the reference ``htcondor2.JobEventLog`` side by side.  A reader keeps its offset, so
repeated :meth:`JobEventLog.events` calls return only new events; an event still being written
(no ``...`` yet) is left for the next call.
"""

from __future__ import annotations

import contextlib
import enum
import os
import re
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from cedar.compat.errors import ClassAdException, HTCondorIOError

if TYPE_CHECKING:
    from cedar.compat.classad2 import ClassAd


class JobEventType(enum.IntEnum):
    """The event numbers of the user log."""

    SUBMIT = 0
    EXECUTE = 1
    EXECUTABLE_ERROR = 2
    CHECKPOINTED = 3
    JOB_EVICTED = 4
    JOB_TERMINATED = 5
    IMAGE_SIZE = 6
    SHADOW_EXCEPTION = 7
    GENERIC = 8
    JOB_ABORTED = 9
    JOB_SUSPENDED = 10
    JOB_UNSUSPENDED = 11
    JOB_HELD = 12
    JOB_RELEASED = 13
    NODE_EXECUTE = 14
    NODE_TERMINATED = 15
    POST_SCRIPT_TERMINATED = 16
    GLOBUS_SUBMIT = 17
    GLOBUS_SUBMIT_FAILED = 18
    GLOBUS_RESOURCE_UP = 19
    GLOBUS_RESOURCE_DOWN = 20
    REMOTE_ERROR = 21
    JOB_DISCONNECTED = 22
    JOB_RECONNECTED = 23
    JOB_RECONNECT_FAILED = 24
    GRID_RESOURCE_UP = 25
    GRID_RESOURCE_DOWN = 26
    GRID_SUBMIT = 27
    JOB_AD_INFORMATION = 28
    JOB_STATUS_UNKNOWN = 29
    JOB_STATUS_KNOWN = 30
    JOB_STAGE_IN = 31
    JOB_STAGE_OUT = 32
    ATTRIBUTE_UPDATE = 33
    PRESKIP = 34
    CLUSTER_SUBMIT = 35
    CLUSTER_REMOVE = 36
    FACTORY_PAUSED = 37
    FACTORY_RESUMED = 38
    NONE = 39
    FILE_TRANSFER = 40
    RESERVE_SPACE = 41
    RELEASE_SPACE = 42
    FILE_COMPLETE = 43
    FILE_USED = 44
    FILE_REMOVED = 45
    DATAFLOW_JOB_SKIPPED = 46
    COMMON_FILES = 47
    EP_STARTUP = 100
    EP_READY = 101
    EP_RECONFIG = 102
    EP_SHUTDOWN = 103
    EP_REQUEST_CLAIM = 104
    EP_RELEASE_CLAIM = 105
    EP_ACTIVATE_CLAIM = 106
    EP_DEACTIVATE_CLAIM = 107
    EP_VACATE_CLAIM = 108
    EP_DRAIN = 109
    EP_RESOURCE_BREAK = 110
    EP_RESOURCE_MEND = 111


#: ``MyType`` of the events programs look at most (others get ``<Name>Event``).
_MY_TYPE = {
    0: "SubmitEvent",
    1: "ExecuteEvent",
    2: "ExecutableErrorEvent",
    3: "CheckpointedEvent",
    4: "JobEvictedEvent",
    5: "JobTerminatedEvent",
    6: "JobImageSizeEvent",
    7: "ShadowExceptionEvent",
    8: "GenericEvent",
    9: "JobAbortedEvent",
    10: "JobSuspendedEvent",
    11: "JobUnsuspendedEvent",
    12: "JobHeldEvent",
    13: "JobReleaseEvent",
    22: "JobDisconnectedEvent",
    23: "JobReconnectedEvent",
    24: "JobReconnectFailedEvent",
    28: "JobAdInformationEvent",
    33: "AttributeUpdateEvent",
    40: "FileTransferEvent",
}

_HEADER = re.compile(
    r"^(\d{3}) \((\d+)\.(\d+)\.(\d+)\) (\d{4}-\d{2}-\d{2}|\d{2}/\d{2}) "
    r"(\d{2}:\d{2}:\d{2})(?:\.\d+)?"
    r"(?:[+-]\d{2}:?\d{2}|Z)? ?(.*)$"
)
_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_COLON = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*):\s*(.*)$")
_DASHED = re.compile(r"^\s*(\S+)\s+-\s+(.+?)\s*$")
_RESOURCE = re.compile(r"^\s*(\w+)(?:\s*\(\w+\))?\s*:\s*(.*)$")
#: The "N  -  what" lines of terminated/evicted events and their attribute names.
_DASHED_NAMES = {
    "Run Bytes Sent By Job": "SentBytes",
    "Run Bytes Received By Job": "ReceivedBytes",
    "Total Bytes Sent By Job": "TotalSentBytes",
    "Total Bytes Received By Job": "TotalReceivedBytes",
    "Run Remote Usage": "RunRemoteUsage",
    "Run Local Usage": "RunLocalUsage",
    "Total Remote Usage": "TotalRemoteUsage",
    "Total Local Usage": "TotalLocalUsage",
    "MemoryUsage of job (MB)": "MemoryUsage",
    "ResidentSetSize of job (KB)": "ResidentSetSize",
}
_FLOAT_NAMES = {"SentBytes", "ReceivedBytes", "TotalSentBytes", "TotalReceivedBytes"}


def _scalar(text: str) -> object:
    from cedar.classad_wire.syntax import simple_value

    text = text.strip()
    value = simple_value(text)
    if value is not None or text == "undefined":
        return value
    try:
        from cedar.compat.classad2 import ExprTree

        return ExprTree(text).eval()
    except Exception:  # noqa: BLE001 - anything unparsable stays text
        return text


def _timestamp(date: str, clock: str) -> tuple[str, int]:
    if "/" in date:  # the old "MM/DD" form: the current year
        month, day = date.split("/")
        date = f"{time.localtime().tm_year}-{month}-{day}"
    moment = time.strptime(f"{date} {clock}", "%Y-%m-%d %H:%M:%S")
    return f"{date}T{clock}", int(time.mktime(moment))


def parse_event(lines: list[str]) -> ClassAd:
    """One event's lines (header first, without the ``...`` line) as its ClassAd."""
    from cedar.compat.classad2 import ClassAd

    match = _HEADER.match(lines[0])
    if match is None:
        raise HTCondorIOError(f"not a job event log header: {lines[0][:80]!r}")
    number, cluster, proc, subproc, date, clock, text = match.groups()
    kind = int(number)
    ad = ClassAd()
    ad["MyType"] = _MY_TYPE.get(kind, _type_name(kind))
    ad["EventTypeNumber"] = kind
    ad["Cluster"], ad["Proc"], ad["Subproc"] = int(cluster), int(proc), int(subproc)
    event_time, _ = _timestamp(date, clock)
    ad["EventTime"] = event_time
    _event_body(kind, text, lines[1:], ad)
    return ad


def _type_name(kind: int) -> str:
    try:
        name = JobEventType(kind).name
    except ValueError:
        return "GenericEvent"
    return "".join(part.capitalize() for part in name.split("_")) + "Event"


def _event_body(kind: int, text: str, body: list[str], ad: ClassAd) -> None:
    if kind == JobEventType.SUBMIT:
        ad["SubmitHost"] = text.removeprefix("Job submitted from host: ").strip()
        _submit_notes(body, ad)
        return
    if kind == JobEventType.FILE_TRANSFER:
        _file_transfer(text, body, ad)
        return
    elif kind == JobEventType.EXECUTE:
        ad["ExecuteHost"] = text.removeprefix("Job executing on host: ").strip()
    elif kind == JobEventType.IMAGE_SIZE:
        ad["Size"] = _scalar(text.rsplit(":", 1)[-1])
    elif kind in (JobEventType.JOB_HELD, JobEventType.JOB_RELEASED, JobEventType.JOB_ABORTED):
        _reason_event(kind, body, ad)
        return
    elif kind == JobEventType.GENERIC:
        ad["Info"] = text.strip()
    elif kind == JobEventType.JOB_EVICTED:
        _eviction(text, body, ad)
    props: dict[str, object] = {}
    resources = False
    for line in body:
        stripped = line.strip()
        if not stripped:
            continue
        if kind in (JobEventType.JOB_TERMINATED, JobEventType.JOB_EVICTED) and stripped.startswith(
            "("
        ):
            _termination(stripped, ad)
            continue
        if stripped.startswith("Partitionable Resources"):
            resources = True
            continue
        if resources:
            if kind != JobEventType.JOB_EVICTED:  # the reference drops an eviction's table
                _resource_line(stripped, ad)
            continue
        dashed = _DASHED.match(line)
        if dashed and dashed.group(2) in _DASHED_NAMES:
            name = _DASHED_NAMES[dashed.group(2)]
            value = _scalar(dashed.group(1))
            ad[name] = float(value) if name in _FLOAT_NAMES else value  # type: ignore[arg-type]
            continue
        usage = re.match(r"^(Usr .*?)\s+-\s+(.+)$", stripped)
        if usage and usage.group(2) in _DASHED_NAMES:
            ad[_DASHED_NAMES[usage.group(2)]] = usage.group(1)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            target = props if kind == JobEventType.EXECUTE else ad
            target[assign.group(1)] = _scalar(assign.group(2))
            continue
        colon = _COLON.match(line)
        if colon:
            ad[colon.group(1)] = _scalar(colon.group(2))
    if props:
        from cedar.compat.classad2 import ClassAd

        ad["ExecuteProps"] = ClassAd(props)


def _eviction(text: str, body: list[str], ad: ClassAd) -> None:
    """The eviction header's ``Code N Subcode M`` and the first body line's checkpoint and
    requeue flags, as the reference reader sets them."""
    code = re.search(r"Code (-?\d+) Subcode (-?\d+)", text)
    if code:
        ad["ReasonCode"] = int(code.group(1))
        if int(code.group(2)):
            ad["ReasonSubCode"] = int(code.group(2))
    first = next((line.strip() for line in body if line.strip()), "")
    ad["Checkpointed"] = first.startswith("(1)")
    ad["TerminatedAndRequeued"] = "requeued" in first.lower()
    ad["TerminatedNormally"] = "normal termination" in first.lower()


def _submit_notes(body: list[str], ad: ClassAd) -> None:
    """The submit event's note lines: ``LogNotes`` (submit's ``submit_event_notes`` or the
    batch name ad, which the reference also hands out parsed as ``StructuredNotes``), then
    ``UserNotes``."""
    from cedar.compat.classad2 import ClassAd

    notes = [line.strip() for line in body if line.strip()]
    if notes:
        ad["LogNotes"] = notes[0]
        if notes[0].startswith("["):
            with contextlib.suppress(ClassAdException):
                ad["StructuredNotes"] = ClassAd(notes[0])
    if len(notes) > 1:
        ad["UserNotes"] = notes[1]


#: The file-transfer event's header text -> its ``Type`` (``FileTransferEventType`` values).
_TRANSFER_TYPES = {
    ("input", "queued"): 1,
    ("input", "started"): 2,
    ("input", "finished"): 3,
    ("output", "queued"): 4,
    ("output", "started"): 5,
    ("output", "finished"): 6,
}


def _file_transfer(text: str, body: list[str], ad: ClassAd) -> None:
    lowered = text.lower()
    direction = "input" if "input" in lowered else "output"
    for (side, stage), number in _TRANSFER_TYPES.items():
        if side == direction and stage in lowered:
            ad["Type"] = number
    for line in body:
        stripped = line.strip()
        if stripped.startswith("Transferring to host:"):
            ad["Host"] = stripped.removeprefix("Transferring to host:").strip()
        elif stripped.startswith("Seconds spent in queue:"):
            ad["QueueingDelay"] = _scalar(stripped.rsplit(":", 1)[1])


def _reason_event(kind: int, body: list[str], ad: ClassAd) -> None:
    reason_attr = "HoldReason" if kind == JobEventType.JOB_HELD else "Reason"
    lines = [line.strip() for line in body if line.strip()]
    if lines:
        ad[reason_attr] = lines[0]
    for line in lines[1:]:
        code = re.match(r"^Code (-?\d+) Subcode (-?\d+)$", line)
        if code:
            ad["HoldReasonCode"] = int(code.group(1))
            ad["HoldReasonSubCode"] = int(code.group(2))
            continue
        assign = _ASSIGN.match(line)
        if assign:
            ad[assign.group(1)] = _scalar(assign.group(2))


def _termination(line: str, ad: ClassAd) -> None:
    normal = re.search(r"Normal termination \(return value (-?\d+)\)", line)
    if normal:
        ad["TerminatedNormally"] = True
        ad["ReturnValue"] = int(normal.group(1))
        return
    signal = re.search(r"Abnormal termination \(signal (\d+)\)", line)
    if signal:
        ad["TerminatedNormally"] = False
        ad["TerminatedBySignal"] = int(signal.group(1))
    if "Job was not checkpointed" in line or "checkpointed" in line:
        ad["Checkpointed"] = "not checkpointed" not in line


def _resource_line(line: str, ad: ClassAd) -> None:
    match = _RESOURCE.match(line)
    if match is None:
        return
    name, rest = match.groups()
    numbers = rest.split()
    # Columns: Usage Request Allocated [Assigned]; blank columns are missing on the left.
    columns = ["Usage", "Request", "Allocated"][-len(numbers) :] if numbers else []
    if name in ("TimeExecute", "TimeSlotBusy") and numbers:
        ad[f"{name}Usage"] = _scalar(numbers[0])
        return
    for column, text in zip(columns, numbers[:3], strict=False):
        attr = {"Usage": f"{name}Usage", "Request": f"Request{name}", "Allocated": name}[column]
        ad[attr] = _scalar(text)


def _event_text(lines: list[str]) -> str:
    """``str(event)``: the event as the reference prints it back (without the ``...`` line;
    an eviction without its resource table, which the reference does not keep)."""
    if lines[0].startswith("004 "):
        cut = next((i for i, line in enumerate(lines) if "Partitionable Resources" in line), None)
        lines = lines if cut is None else lines[:cut]
    return "\n".join(lines) + "\n"


class JobEvent:
    """One event: ``type``, ``cluster``, ``proc``, ``timestamp`` and its attributes by name."""

    def __init__(self, data: ClassAd, event_text: str = "") -> None:
        self._data = data
        self._text = event_text

    @property
    def type(self) -> JobEventType:
        return JobEventType(self._int("EventTypeNumber"))

    @property
    def cluster(self) -> int:
        return self._int("Cluster")

    @property
    def proc(self) -> int:
        return self._int("Proc")

    def _int(self, name: str) -> int:
        value = self._data[name]
        return value if isinstance(value, int) else int(str(value))

    @property
    def timestamp(self) -> int:
        date, clock = str(self._data["EventTime"]).split("T")
        return _timestamp(date, clock[:8])[1]

    def __getitem__(self, key: str) -> object:
        return self._data[key]

    def get(self, key: str, default: object = None) -> object:
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> list[str]:
        return list(self._data)

    def values(self) -> list[object]:
        return [self._data[key] for key in self._data]

    def items(self) -> list[tuple[str, object]]:
        return [(key, self._data[key]) for key in self._data]

    def __repr__(self) -> str:
        return f"JobEvent(type={self.type!r}, cluster={self.cluster}, proc={self.proc})"

    def __str__(self) -> str:
        return self._text


class JobEventLog:
    """Iterate over the events of a job's user log, following it as it grows."""

    def __init__(self, filename: str) -> None:
        self._filename = os.fspath(filename)
        try:
            self._file = open(self._filename, "rb")  # noqa: SIM115 - closed by close()/__exit__
        except OSError as exc:
            raise HTCondorIOError(f"cannot open job event log {filename}: {exc.strerror}") from None
        self._deadline: float | None = None

    def events(self, stop_after: int | None = None) -> JobEventLog:
        """Iterate; ``stop_after`` seconds to wait for new events (``None``: forever)."""
        self._deadline = None if stop_after is None else time.monotonic() + stop_after
        return self

    def close(self) -> None:
        self._file.close()

    def __getstate__(self) -> dict[str, object]:
        """Pickled as the file name and the read position (htmap pickles its reader, as the
        reference allows); unpickling reopens the file there."""
        return {"filename": self._filename, "offset": self._file.tell()}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(str(state["filename"]))  # type: ignore[misc]
        self._file.seek(int(state["offset"]))  # type: ignore[call-overload]

    def __iter__(self) -> JobEventLog:
        return self

    def __next__(self) -> JobEvent:
        while True:
            event = self._read_event()
            if event is not None:
                return event
            if self._deadline is not None and time.monotonic() >= self._deadline:
                raise StopIteration
            time.sleep(0.2 if self._deadline is None else min(0.2, self._remaining()))

    def _remaining(self) -> float:
        assert self._deadline is not None
        return max(0.0, self._deadline - time.monotonic())

    def _read_event(self) -> JobEvent | None:
        start = self._file.tell()
        lines: list[str] = []
        while True:
            raw = self._file.readline()
            if not raw.endswith(b"\n"):  # end of file, maybe mid-event: try again later
                self._file.seek(start)
                return None
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith("..."):
                if not lines:
                    start = self._file.tell()
                    continue
                return JobEvent(parse_event(lines), _event_text(lines))
            if not lines and not line.strip():
                start = self._file.tell()
                continue
            lines.append(line)

    def __enter__(self) -> JobEventLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


#: At most this many events are read from one log (bounded memory for a runaway log).
MAX_EVENTS = 10_000


def event_dicts(lines: Iterable[str], limit: int = MAX_EVENTS) -> list[dict[str, Any]]:
    """Each event of a user log's ``lines`` as an ad in the one mapping (``MyType`` is the
    event's name, e.g. ``ExecuteEvent``); at most ``limit`` events, the first ones.  The one
    reader the REST API (``GET /api/v1/jobs/{id}/events``) and the MCP server share."""
    from cedar.classad_wire import parse_one
    from cedar.service_core.adjson import ad_dict

    events: list[dict[str, Any]] = []
    block: list[str] = []
    for line in lines:
        if line.startswith("..."):
            if block:
                # (through old-syntax text: the compat ad's printJson fails on its expression
                # members)
                text = parse_event(block).printOld()
                events.append(ad_dict(parse_one(text, syntax="old")))
                if len(events) >= limit:
                    break
            block = []
        elif line.strip() or block:
            block.append(line.rstrip("\n"))
    return events


__all__ = ["JobEvent", "JobEventLog", "JobEventType", "event_dicts", "parse_event"]
