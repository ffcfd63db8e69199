"""History sources: jobs, epochs, transfer records, startd and daemon history (spec 08 §2-§5).

This module does no I/O: the request ad, the streamed-reply protocol, the error mapping and the
pure reading of a history *file* (``condor_history -file``).  The clients that run the protocol
are :meth:`AsyncSchedd.history <cedar.commands.AsyncSchedd.history>` (QUERY_SCHEDD_HISTORY 515)
and :meth:`AsyncStartd.history <cedar.commands.AsyncStartd.history>` (GET_HISTORY 429).

Every source is one request ad; what selects it is ``HistoryRecordSource`` (which file the
daemon's helper reads) and ``HistoryAdTypeFilter`` (which record types of that file it returns).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

from cedar.auth.client import CommandSession
from cedar.classad_wire import ClassAd, get_classad, parse_expr, put_classad, unparse
from cedar.classad_wire.expr import Expr, Literal
from cedar.commands.base import AdWriter, Batcher, ShapedWriter, int_value, item_parser
from cedar.commands.constraint import Constraint, constraint_tree
from cedar.commands.errors import HistoryError
from cedar.errors import (
    ClassAdError,
    ConnectionClosed,
    InvalidArgument,
    ProtocolError,
)
from cedar.jobid import JobId, match_job_id
from cedar.stream.protocol import Emit, Protocol, Send, StreamedMessage

__all__ = [
    "HISTORY_ERRORS",
    "SOURCES",
    "TRANSFER_TYPES",
    "HistoryError",
    "HistoryRecord",
    "Selection",
    "history_protocol",
    "history_request",
    "iter_selected",
    "read_history_file",
    "record_type_filter",
    "select_records",
    "since_expression",
    "type_filter_of",
]

#: ``source=`` name -> ``HistoryRecordSource`` (None: the plain job history; spec 08 §2.1).
SOURCES: dict[str, str | None] = {
    "jobs": None,
    "epochs": "JOB_EPOCH",
    "transfer": "JOB_EPOCH",
    "startd": "STARTD",
    "daemon": "DAEMON",
}
#: The record types of the transfer history, in the order ``-transfer-history:IOC`` names them.
TRANSFER_TYPES = ("INPUT", "OUTPUT", "CHECKPOINT")
_TRANSFER_LETTERS = {"I": "INPUT", "O": "OUTPUT", "C": "CHECKPOINT"}
_TYPE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")

#: ``ErrorCode`` of the error final ad -> what it means (spec 08 §3.4).
HISTORY_ERRORS: dict[int, str] = {
    2: "the projection could not be evaluated",
    3: "the projection is not a list of attribute names",
    4: "the daemon could not start its history helper",
    5: "the daemon has no such history configured",
    6: "the request is incomplete or too long (daemon history needs a subsystem; a constraint "
    "or projection over 100000 characters is refused)",
    9: "the daemon is busy (more than 1000 history requests queued)",
    10: "remote history is disabled on the daemon (HISTORY_HELPER_MAX_CONCURRENCY = 0)",
}


@dataclass(frozen=True)
class HistoryRecord:
    """One record of a history *file*: its ad and the type its banner gives (``JOB`` when the
    banner names none; spec 08 §2.3)."""

    ad: ClassAd
    type: str


# --------------------------------------------------------------------------- the request


def record_type_filter(
    record_types: str | Iterable[str] | None = None,
    transfer_types: str | Iterable[str] | None = None,
) -> str | None:
    """The ``HistoryAdTypeFilter`` value: names upper-cased, ``TRANSFER`` expanded, sorted and
    comma-joined, as condor_history sends it (spec 08 §3.2).

    ``transfer_types`` also takes condor_history's letters (``"IO"``, ``"C"``); ``ALL`` passes
    through (no filtering on the daemon).  None: no filter (the source's default types).
    """
    names: set[str] = set()
    for given, letters in ((record_types, False), (transfer_types, True)):
        if given is None:
            continue
        words = re.split(r"[\s,]+", given) if isinstance(given, str) else [str(w) for w in given]
        for word in (w.strip() for w in words):
            if not word:
                continue
            upper = word.upper()
            if letters and upper not in TRANSFER_TYPES and upper != "TRANSFER":
                if not all(ch in _TRANSFER_LETTERS for ch in upper):
                    raise InvalidArgument(
                        f"unknown transfer record type {word!r}: use INPUT, OUTPUT, "
                        "CHECKPOINT or the letters I, O, C"
                    )
                names.update(_TRANSFER_LETTERS[ch] for ch in upper)
                continue
            if not _TYPE_WORD.match(upper):
                raise InvalidArgument(f"invalid history record type {word!r}")
            if upper == "TRANSFER":
                names.update(TRANSFER_TYPES)
            else:
                names.add(upper)
        if letters and not names.intersection(TRANSFER_TYPES) and given is not None:
            names.update(TRANSFER_TYPES)  # an empty selection means every transfer type
    if not names:
        return None
    return ",".join(sorted(names))


def since_expression(since: int | str) -> str:
    """The ``Since`` text: a job id ``C`` / ``C.P`` (as condor_history writes it), else the
    expression itself.  A literal that is not a job id is refused here: the daemon's helper
    would close the connection without a reply (spec 08 §3.1)."""
    if isinstance(since, bool):
        raise InvalidArgument("since must be a job id or an expression, not a boolean")
    if isinstance(since, int):
        return unparse(JobId(since).constraint(), old=True)
    job = match_job_id(since.strip())
    if job is not None:
        return unparse(job.constraint(), old=True)
    try:
        expr = parse_expr(since)
    except ClassAdError as exc:
        raise InvalidArgument(f"invalid since expression {since!r}: {exc}") from None
    if isinstance(expr, Literal):
        raise InvalidArgument(
            f"since {since!r} is a constant: give a job id (C or C.P) or an expression "
            "(the daemon drops the connection on any other literal)"
        )
    return since


def history_request(
    constraint: Constraint = None,
    projection: str | Iterable[str] = (),
    match: int = -1,
    since: int | str | None = None,
    *,
    stream: bool = True,
    forwards: bool = False,
    scan_limit: int | None = None,
    completed_since: int | str | None = None,
    source: str = "jobs",
    record_types: str | Iterable[str] | None = None,
    transfer_types: str | Iterable[str] | None = None,
    subsystem: str | None = None,
    from_dir: bool = False,
) -> ClassAd:
    """The history request ad (spec 08 §3.1), in condor_history's attribute order.

    ``projection``: a list is sent as a ClassAd list (the bindings' form), a string as is
    (condor_history's ``"A,B,C"``); empty means whole records.  ``match`` <= 0 means all.
    ``since`` (job id or expression) and ``completed_since`` (a time or expression: records
    with ``CompletionDate <=`` it end the scan) are exclusive, and neither goes with
    ``forwards`` (the daemon would close without a reply).  ``source``: ``jobs``, ``epochs``,
    ``transfer`` (INPUT/OUTPUT/CHECKPOINT records unless ``transfer_types`` narrows them),
    ``startd`` or ``daemon`` (with ``subsystem``, default ``SCHEDD``).
    """
    key = source.lower() if isinstance(source, str) else source
    if key not in SOURCES:
        raise InvalidArgument(f"unknown history source {source!r}: one of {', '.join(SOURCES)}")
    if since is not None and completed_since is not None:
        raise InvalidArgument("since and completed_since cannot be combined")
    if forwards and (since is not None or completed_since is not None):
        raise InvalidArgument("forwards cannot be combined with since or completed_since")
    if subsystem is not None and key != "daemon":
        raise InvalidArgument("subsystem applies only to source='daemon'")
    if transfer_types is not None and key != "transfer":
        raise InvalidArgument("transfer_types applies only to source='transfer'")
    ad = ClassAd()
    tree = constraint_tree(constraint)  # a tree passes unchanged: parsed once on its way
    if tree is not None:
        ad.set_expr("Requirements", tree)
    since_text: str | None = None
    if since is not None:
        since_text = since_expression(since)
    elif completed_since is not None:
        value = str(completed_since).strip()
        try:
            parse_expr(value)
        except ClassAdError as exc:
            raise InvalidArgument(f"invalid completed_since {value!r}: {exc}") from None
        since_text = f"CompletionDate <= {value}"
    if since_text is not None:
        ad.set_expr("Since", parse_expr(since_text))
    if isinstance(projection, str):
        if projection.strip():
            ad["Projection"] = projection
    else:
        names = [str(p) for p in projection]
        if names:
            ad["Projection"] = names
    ad["NumJobMatches"] = int(match) if int(match) > 0 else -1
    if scan_limit is not None:
        ad["ScanLimit"] = int(scan_limit)
    if forwards:
        ad["HistoryReadForwards"] = True
    if stream:
        ad["StreamResults"] = True
    if key == "transfer":
        ad["HistoryAdTypeFilter"] = record_type_filter(record_types, transfer_types or ())
    elif key == "daemon":
        subsystem = (subsystem or "SCHEDD").upper()
        if not _TYPE_WORD.match(subsystem):
            raise InvalidArgument(f"invalid daemon subsystem {subsystem!r}")
        ad["HistoryAdTypeFilter"] = record_type_filter(record_types) or subsystem
    else:
        type_filter = record_type_filter(record_types)
        if type_filter is not None:
            ad["HistoryAdTypeFilter"] = type_filter
    record_source = SOURCES[key]
    if record_source is not None:
        ad["HistoryRecordSource"] = record_source
    if key == "daemon":
        ad["DaemonHistorySubsys"] = subsystem
    if from_dir:
        ad["HistoryFromDir"] = True
    return ad


# --------------------------------------------------------------------------- the reply


def remote_history_error(ad: ClassAd, daemon: str) -> HistoryError:
    """The :class:`HistoryError` of an error final ad (``Owner = 0; ErrorCode = n``)."""
    code = int_value(ad, "ErrorCode")
    try:
        text = ad.get("ErrorString")
    except ClassAdError:
        text = None
    reason = text if isinstance(text, str) else None
    meaning = HISTORY_ERRORS.get(code or 0, "unknown error code")
    return HistoryError(
        f"the {daemon} refused the history request (ErrorCode {code}: {meaning}): "
        f"{reason or 'no reason given'}",
        code=code,
        reason=reason,
    )


def _silent_close(session: CommandSession, daemon: str, request: ClassAd) -> HistoryError:
    offered = session.policy.get("CryptoMethods") if session.policy else None
    crypto = (session.crypto_method or (offered if isinstance(offered, str) else "")).upper()
    crypto = crypto.replace(" ", "").split(",")[0]
    if crypto in ("BLOWFISH", "3DES", "TRIPLEDES"):
        why = (
            f"its history helper cannot write on a {crypto} session (use AES or no session; "
            "spec 08 §3.4)"
        )
    elif "Since" in request and request.get("HistoryReadForwards") is True:
        why = "it refuses Since together with HistoryReadForwards"
    else:
        why = (
            "it drops a request it cannot parse, a Since that is neither an expression nor a "
            "job id, Since with forwards, a session with a legacy cipher, or a command it does "
            "not know (a schedd does not answer GET_HISTORY, a startd not QUERY_SCHEDD_HISTORY)"
        )
    return HistoryError(
        f"the {daemon} closed the connection without answering the history request: {why}"
    )


#: ``Owner`` of a history reply's streaming header (one message per record follows) and of
#: its final ad; a record has any other (spec 08 §4).
_HEADER, _FINAL = 1, 0


def _marker(ad: ClassAd) -> int | None:
    """:data:`_HEADER` or :data:`_FINAL` for the reply's header or final ad; None for a record."""
    owner = int_value(ad, "Owner")
    return owner if owner in (_HEADER, _FINAL) else None


def checked_final(ad: ClassAd, count: int, daemon: str) -> ClassAd:
    """The final ad after ``count`` records, or the error it tells of: a remote error
    (``ErrorCode``), malformed records, or a record count other than the one announced
    (``NumJobMatches``), checked as condor_history does."""
    if int_value(ad, "ErrorCode"):
        raise remote_history_error(ad, daemon)
    malformed = int_value(ad, "MalformedAds") or 0
    matches = int_value(ad, "NumJobMatches")
    if malformed:
        raise HistoryError(f"the {daemon}'s history holds {malformed} malformed record(s)")
    if matches is not None and matches != count:
        raise ProtocolError(
            f"the {daemon} sent {count} history records but announced {matches} "
            "(client and server do not agree on the number of ads sent)"
        )
    return ad


def _history_reply(
    session: CommandSession,
    request: ClassAd,
    daemon: str,
    records: Callable[[StreamedMessage], Protocol[ClassAd]],
    count: Callable[[], int],
) -> Protocol[ClassAd]:
    """Send a history request; run ``records`` (emits the records, returns the final ad) on
    the reply; return the final ad, checked.  Either framing is read (spec 08 §4):
    ``StreamResults`` (a header ad, one message per record, the final ad) or every ad in one
    message, of any size; messages the connection holds are read without a driver trip.

    ``count()`` is the records read so far: a close before any (and before the final ad) is the
    daemon refusing the request silently -- unless a resumed session was forgotten (nothing
    received at all), which the driver retries."""
    writer = session.payload_writer()
    put_classad(writer, request)
    yield Send(writer)
    stream = StreamedMessage(conn=session.conn)
    try:
        final = yield from records(stream)
    except ConnectionClosed as exc:
        if exc.mid_message or count() or (session.pipelined and session.conn.received_bytes == 0):
            raise  # a broken reply, or a forgotten resumed session (the driver retries)
        raise _silent_close(session, daemon, request) from None
    return checked_final(final, count(), daemon)


def history_protocol(
    session: CommandSession, request: ClassAd, daemon: str = "schedd"
) -> Protocol[ClassAd]:
    """Send a history request; emit each record; return the final ad (spec 08 §4)."""
    emitted = [0]

    def records(stream: StreamedMessage) -> Protocol[ClassAd]:
        while True:
            ad = yield from stream.read(get_classad)
            marker = _marker(ad)
            if marker is None:
                emitted[0] += 1
                yield Emit(ad)
            elif marker == _FINAL:
                return ad

    return (yield from _history_reply(session, request, daemon, records, lambda: emitted[0]))


def history_chunks_protocol(
    session: CommandSession,
    request: ClassAd,
    shaped: ShapedWriter,
    other: AdWriter,
    chunk_size: int,
    max_results: int,
    daemon: str = "schedd",
) -> Protocol[ClassAd]:
    """:func:`history_protocol` for a reader that wants each record as bytes (a listing's
    JSON), as ``query_chunks_protocol`` is for a job query: a record of a recurring shape goes
    from the message's bytes to ``shaped`` with no ad made, any other to ``other``; emits lists
    of the results, about ``chunk_size`` bytes a list (:class:`~cedar.commands.base.Batcher`:
    one driver step per list, not per record, at most ``max_results`` records); returns the
    final ad."""
    batch = Batcher(chunk_size, max_results, f"the {daemon}", "history records")
    parse = item_parser(shaped, other, _ends, (b"0", b"1"))  # Owner of the final ad, the header
    return (
        yield from _history_reply(
            session,
            request,
            daemon,
            lambda stream: batch.protocol(stream, parse),
            lambda: batch.count,
        )
    )


def _ends(ad: ClassAd) -> bool | None:
    """For :func:`~cedar.commands.base.item_parser`: the final ad ends the reply, the
    streaming header is skipped, anything else is a record."""
    marker = _marker(ad)
    if marker is None:
        return False
    return True if marker == _FINAL else None


# --------------------------------------------------------------------------- selection


def type_filter_of(request: ClassAd) -> frozenset[str] | None:
    """The record types a request selects (None: every type; spec 08 §2.3)."""
    value = request.get("HistoryAdTypeFilter")
    if isinstance(value, str) and value.strip():
        names = {n.upper() for n in re.split(r"[\s,]+", value) if n}
        if "ALL" in names:
            return None
        if "TRANSFER" in names:
            names = (names - {"TRANSFER"}) | set(TRANSFER_TYPES)
        return frozenset(names)
    source = request.get("HistoryRecordSource")
    source = source.upper() if isinstance(source, str) else ""
    if source == "JOB_EPOCH":
        return frozenset({"EPOCH"})
    if source == "DAEMON":
        subsystem = request.get("DaemonHistorySubsys")
        return frozenset({subsystem.upper() if isinstance(subsystem, str) else "SCHEDD"})
    return frozenset({"JOB"})


def since_of(request: ClassAd) -> Expr | None:
    """The request's ``Since`` as the daemon reads it: a literal is a job id (spec 08 §3.1).
    :class:`~cedar.errors.InvalidArgument` for any other literal (the daemon closes)."""
    expr = request.get_expr("Since")
    if expr is None or not isinstance(expr, Literal):
        return expr
    if match_job_id(request.raw_text("Since").strip()) is None:
        raise InvalidArgument(f"Since = {request.raw_text('Since')} is not a job id")
    return parse_expr(since_expression(request.raw_text("Since")))


@dataclass
class Selection:
    """What a scan examined (``AdCount``) and what it returned."""

    examined: int = 0
    selected: list[ClassAd] = field(default_factory=list)


def select_records(
    records: Iterable[tuple[ClassAd, str]],
    request: ClassAd,
    test: Callable[[Expr | None, ClassAd], bool],
) -> Selection:
    """:func:`iter_selected`, collected."""
    result = Selection()
    result.selected = list(iter_selected(records, request, test, result))
    return result


def iter_selected(
    records: Iterable[tuple[ClassAd, str]],
    request: ClassAd,
    test: Callable[[Expr | None, ClassAd], bool],
    counts: Selection | None = None,
) -> Iterator[ClassAd]:
    """Apply a request to records in scan order, as the daemon's helper does (spec 08 §2.3,
    §3.1), yielding each selected record as it is found: records of other types are skipped
    uncounted, ``Since`` ends the scan (counted, not returned), ``ScanLimit`` and
    ``NumJobMatches`` (> 0) bound it.  ``test(expr, ad)`` says whether an expression is true
    for a record (None: no constraint); ``counts.examined`` is the final ad's ``AdCount``.

    Reading forwards, the 25.13.2 helper applies **no** type filter (observed on the real
    pool: ``-epochs -forwards`` and ``-transfer-history -forwards`` return every SPAWN, EPOCH,
    INPUT and OUTPUT record, remotely and with ``-file``); this does the same.
    """
    counts = counts if counts is not None else Selection()
    forwards = request.get("HistoryReadForwards") is True
    types = None if forwards else type_filter_of(request)
    requirements = request.get_expr("Requirements")
    since = since_of(request)
    limit = int_value(request, "NumJobMatches") or -1
    scan_limit = int_value(request, "ScanLimit") or -1
    sent = 0
    for ad, kind in records:
        if types is not None and kind != "*" and kind not in types:
            continue
        if 0 < scan_limit <= counts.examined or 0 < limit <= sent:
            break
        counts.examined += 1
        if since is not None and test(since, ad):
            break
        if test(requirements, ad):
            sent += 1
            yield ad


# --------------------------------------------------------------------------- history files

_BANNER_PAIR = re.compile(r"(\w+)\s*=\s*(\"(?:[^\"\\]|\\.)*\"|\S+)")
#: A history file record larger than this is refused (bounded memory on a bad file).
MAX_RECORD_BYTES = 16 << 20


def _banner_type(banner: str) -> str | None:
    """The record type a ``*** ...`` banner names (None: a banner without key=value pairs,
    accepted by any filter; spec 08 §2.3)."""
    body = banner[3:].strip()
    first, _, rest = body.partition(" ")
    if first and "=" not in first and _TYPE_WORD.match(first) and not rest.startswith("="):
        return first.upper()
    return "JOB" if _BANNER_PAIR.search(body) else None


def read_history_file(handle: IO[bytes], *, forwards: bool = False) -> Iterator[HistoryRecord]:
    """The records of a history file (``condor_history -file``), newest first unless
    ``forwards``.  Each record is ``Name = value`` lines ended by a ``*** ...`` banner line.

    ``handle`` is a binary file; newest first it must be seekable (the file is read backwards
    in blocks).  Memory stays bounded by the largest record (:data:`MAX_RECORD_BYTES`) either
    way, and values are parsed only when used.
    """
    blocks = _blocks_forwards(handle) if forwards else _blocks_backwards(handle)
    for body, banner in blocks:
        if len(body) > MAX_RECORD_BYTES:
            raise InvalidArgument(f"a history file record is larger than {MAX_RECORD_BYTES} bytes")
        if banner is None:
            if body.strip():
                raise InvalidArgument(
                    "the history file ends inside a record (no closing *** banner)"
                )
            continue
        text = body.decode("utf-8", "surrogateescape")
        if text.strip():
            yield _record(text, _banner_type(banner.decode("utf-8", "surrogateescape")))


def _record(text: str, kind: str | None) -> HistoryRecord:
    try:
        ad = ClassAd.from_raw_text(text)
    except ClassAdError as exc:
        raise InvalidArgument(f"not a history file record: {exc}") from None
    return HistoryRecord(ad, kind or "*")


_BLOCK = 1 << 16


class _Backwards:
    """A seekable file read from its end in blocks: ``data`` is ``file[position:limit]``."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.position = handle.seek(0, 2)
        self.data = b""

    def more(self) -> bool:
        if self.position == 0:
            return False
        size = min(_BLOCK, self.position)
        self.position -= size
        self.handle.seek(self.position)
        self.data = self.handle.read(size) + self.data
        return True

    def last_banner(self) -> int:
        """Where the last banner line of ``data`` starts, reading more as needed (-1: the file
        has none before ``data``'s end)."""
        while True:
            at = self.data.rfind(b"\n***")
            if at >= 0:
                return at + 1
            if self.position == 0:
                return 0 if self.data.startswith(b"***") else -1
            if len(self.data) > MAX_RECORD_BYTES:
                raise InvalidArgument(
                    f"a history file record is larger than {MAX_RECORD_BYTES} bytes"
                )
            self.more()


def _blocks_backwards(handle: IO[bytes]) -> Iterator[tuple[bytes, bytes | None]]:
    """``(record body, its closing banner line)``, last record first; a trailing body without
    a banner comes first, with ``None``."""
    reader = _Backwards(handle)
    start = reader.last_banner()
    if start < 0:
        yield reader.data, None
        return
    end = reader.data.find(b"\n", start)
    end = len(reader.data) if end < 0 else end
    yield reader.data[end + 1 :], None  # what follows the last banner (blank in a good file)
    banner = reader.data[start:end]
    reader.data = reader.data[:start]
    while True:
        previous = reader.last_banner()
        if previous < 0:
            yield reader.data, banner
            return
        end = reader.data.find(b"\n", previous)
        yield reader.data[end + 1 :], banner
        banner = reader.data[previous:end]
        reader.data = reader.data[:previous]


def _blocks_forwards(handle: IO[bytes]) -> Iterator[tuple[bytes, bytes | None]]:
    """``(record body, its closing banner line)`` in file order; a trailing body without a
    banner comes last with ``None``."""
    body: list[bytes] = []
    size = 0
    for line in handle:
        if line.startswith(b"***"):
            yield b"".join(body), line.rstrip(b"\r\n")
            body, size = [], 0
            continue
        size += len(line)
        if size > MAX_RECORD_BYTES:
            raise InvalidArgument(f"a history file record is larger than {MAX_RECORD_BYTES} bytes")
        body.append(line)
    yield b"".join(body), None
