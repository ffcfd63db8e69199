"""The file-transfer sub-protocol of spec 07 §7, both roles, clear and AES-GCM.

One module because it is one sub-protocol whose two roles must stay mirror images: the uploader and
the downloader coroutines read each other's messages and share its constants.

One job's sandbox travels as: a header (``I(final) AD{SandboxSize}``), items (command, name, a
go-ahead exchange before the first body, the body), ``I(0)``, and the two reports.
:func:`upload_sandbox` is the sender, :func:`download_sandbox` the receiver; both are protocol
coroutines, so 488 and 489 (client and server) and the tests run the same code.

Files are streamed: a body is read and written in chunks of :data:`CHUNK_SIZE`, never whole.
The receiver writes each file under a temporary name and renames it only when every announced
byte arrived, refuses names that are absolute or contain ``..`` (it drains their bytes to keep
the stream in step and fails the transfer, as the reference does), and bounds the number of
items and bytes a peer may send.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import BinaryIO

from cedar.classad_wire import ClassAd, get_classad, parse_expr, put_classad
from cedar.commands.errors import FileTransferError
from cedar.errors import ProtocolError
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol, Receive, ReceiveRaw, Send, SendRaw

#: Mode sent for a source that could not be stat'ed (spec 07 §7.5.3).
MISSING_FILE_PERMISSIONS = 0x1000000
#: The marker message that follows a zero-length file body (spec 07 §7.5.1).
ZERO_LENGTH_MARKER = 666
#: Chunk size announced and used under AES-GCM (spec 01 §7.3).
AES_CHUNK_SIZE = 262144
#: Read/write granularity of file bodies in clear mode.
CHUNK_SIZE = 262144
#: The alive interval both reference roles send, in seconds (spec 07 §7.3).
ALIVE_INTERVAL = 300
#: Go-ahead ``Result`` values.
GO_AHEAD_ALWAYS = 2
GO_AHEAD_WAIT = 0
#: Hold codes of the reports (spec 07 §7.6).
HOLD_DOWNLOAD_FILE_ERROR = 12
HOLD_UPLOAD_FILE_ERROR = 13
HOLD_MAX_OUTPUT_EXCEEDED = 33
#: Default bounds on what a peer may send in one job's sandbox.
DEFAULT_MAX_ITEMS = 100_000
#: How many "keep waiting" go-ahead ads are accepted before giving up.
MAX_GO_AHEAD_WAITS = 1000
#: Prefix of the temporary names files are written under until complete.
PARTIAL_PREFIX = ".cedar-partial-"


class TransferCommand(IntEnum):
    """Item commands of the sub-protocol (spec 07 §7.4)."""

    FINISHED = 0
    FILE = 1
    FILE_ENCRYPTED = 2
    FILE_UNENCRYPTED = 3
    X509_DELEGATION = 4
    URL = 5
    MKDIR = 6
    CLASSAD = 999


_FILE_COMMANDS = (
    TransferCommand.FILE,
    TransferCommand.FILE_ENCRYPTED,
    TransferCommand.FILE_UNENCRYPTED,
)


# --------------------------------------------------------------------------- progress, reports


@dataclass(frozen=True)
class TransferProgress:
    """One progress step: ``name`` has ``file_done`` of ``file_size`` bytes; the job's sandbox
    ``total_done`` of ``total_size`` (``SandboxSize``, as announced)."""

    name: str
    file_done: int
    file_size: int
    total_done: int
    total_size: int


ProgressCallback = Callable[[TransferProgress], None]


@dataclass
class TransferReport:
    """The outcome of one job's sandbox transfer as this side saw it."""

    ok: bool
    files: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    bytes: int = 0
    sandbox_size: int = 0
    peer_report: ClassAd | None = None
    error: str | None = None
    code: int | None = None
    subcode: int | None = None

    def raise_for_failure(self, what: str) -> None:
        """Raise :class:`FileTransferError` describing the failure (no-op on success)."""
        if self.ok:
            return
        reason = self.error or "the transfer failed"
        if self.peer_report is not None and not self.error:
            peer = self.peer_report.get("HoldReason")
            if isinstance(peer, str):
                reason = peer
        raise FileTransferError(
            f"{what}: {reason}", code=self.code, subcode=self.subcode, report=self.peer_report
        )


def report_ad(
    ok: bool,
    *,
    size: int = 0,
    count: int = 0,
    code: int | None = None,
    subcode: int | None = None,
    reason: str | None = None,
) -> ClassAd:
    """The end-of-job report of spec 07 §7.6 (``Result`` 0 or -1, stats, hold info)."""
    ad = ClassAd()
    ad["Result"] = 0 if ok else -1
    if not ok:
        ad["HoldReason"] = (reason or "file transfer failed").replace("\n", "\\n")
    protocols = '"cedar"' if count else '""'
    stats = f"[ Protocols = {protocols}; CedarSizeBytes = {size}; CedarFilesCount = {count} ]"
    ad.set_expr("TransferStats", parse_expr(stats))
    if not ok:
        ad["HoldReasonCode"] = code if code is not None else HOLD_DOWNLOAD_FILE_ERROR
        ad["HoldReasonSubCode"] = subcode or 0
    return ad


def _int_attr(ad: ClassAd, name: str) -> int | None:
    value = ad.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _report_ok(ad: ClassAd, role: str) -> bool:
    result = _int_attr(ad, "Result")
    if result is None:
        raise ProtocolError(f"the {role}'s transfer report has no integer Result")
    return result == 0


def _ad_message(conn: CedarConnection, ad: ClassAd) -> Send:
    writer = conn.writer()
    put_classad(writer, ad)
    return Send(writer)


def _int_message(conn: CedarConnection, *values: int) -> Send:
    writer = conn.writer()
    for value in values:
        writer.put_int(value)
    return Send(writer)


# --------------------------------------------------------------------------- names


def check_name(name: str) -> str | None:
    """Why ``name`` may not be written by a receiver (absolute, ``..``, empty), or ``None``."""
    if not name:
        return "an empty file name"
    if "\0" in name:
        return "a file name with a NUL byte"
    if name.startswith("/") or name.startswith("\\") or (len(name) > 1 and name[1] == ":"):
        return f"an absolute file name {name!r}"
    parts = name.replace("\\", "/").split("/")
    if any(part == ".." for part in parts):
        return f"a file name with '..' {name!r}"
    return None


# --------------------------------------------------------------------------- what is uploaded


@dataclass(frozen=True)
class UploadItem:
    """One item to send: ``name`` on the wire, ``source`` on the local disk.

    ``directory`` items are sent as mkdir (their contents follow as separate items).
    """

    name: str
    source: Path
    directory: bool = False


def _is_url(entry: str) -> bool:
    head, sep, _ = entry.partition("://")
    return bool(sep) and head.replace("+", "").replace("-", "").isalnum()


def _walk(source: Path, name: str) -> Iterator[UploadItem]:
    try:
        entries = sorted(os.scandir(source), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        child = f"{name}/{entry.name}" if name else entry.name
        yield from _expand_one(path, child, keep_dir=True)


def _expand_one(source: Path, name: str, *, keep_dir: bool) -> Iterator[UploadItem]:
    try:
        info = os.lstat(source)
    except OSError:
        yield UploadItem(name, source)  # sent as missing: the transfer fails (spec 07 §8.1)
        return
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.stat(source)
        except OSError:
            yield UploadItem(name, source)
            return
        if stat.S_ISDIR(target.st_mode):
            yield UploadItem(name, source)  # a symlink to a directory fails, as in the reference
            return
        info = target
    if stat.S_ISDIR(info.st_mode):
        if keep_dir:
            yield UploadItem(name, source, directory=True)
            yield from _walk(source, name)
        else:
            yield from _walk(source, "")
        return
    if stat.S_ISREG(info.st_mode):
        yield UploadItem(name, source)
    # sockets, FIFOs and devices are skipped (spec 07 §8.1)


def expand_inputs(entries: Iterable[str | Path], base: str | Path) -> list[UploadItem]:
    """The items for a list of input paths, as the reference expands ``TransferInput`` (§8.1).

    Relative entries are relative to ``base`` (the job's ``Iwd``); URLs are dropped; a
    directory becomes a mkdir item and its contents, a directory named with a trailing ``/``
    only its contents; later duplicates of a name replace earlier ones.
    """
    items: dict[str, UploadItem] = {}
    for entry in entries:
        text = str(entry).strip()
        if not text or _is_url(text):
            continue
        source = Path(base) / text
        stripped = text.rstrip("/")
        name = os.path.basename(stripped) if stripped else ""
        for item in _expand_one(source, name, keep_dir=not text.endswith("/")):
            items.pop(item.name, None)
            items[item.name] = item
    return list(items.values())


# --------------------------------------------------------------------------- upload (sender)


def _sandbox_size(items: list[UploadItem]) -> int:
    total = 0
    for item in items:
        if item.directory:
            continue
        with contextlib.suppress(OSError):
            total += os.stat(item.source).st_size
    return total


def _upload_go_ahead(conn: CedarConnection) -> Protocol[int]:
    """The uploader's half of the go-ahead exchange; returns the peer's MaxTransferBytes."""
    yield _int_message(conn, ALIVE_INTERVAL)
    for _ in range(MAX_GO_AHEAD_WAITS):
        ad = get_classad((yield Receive()))
        result = _int_attr(ad, "Result")
        if result is None:
            raise ProtocolError("the go-ahead ad has no integer Result")
        if result == GO_AHEAD_WAIT:
            continue
        if result < 0:
            reason = ad.get("HoldReason")
            raise FileTransferError(
                f"the receiver refused the transfer: {reason if isinstance(reason, str) else ''}",
                code=_int_attr(ad, "HoldReasonCode"),
                subcode=_int_attr(ad, "HoldReasonSubCode"),
                report=ad,
            )
        limit = _int_attr(ad, "MaxTransferBytes")
        break
    else:
        raise FileTransferError("the receiver kept the transfer waiting too long")
    reply = yield Receive()
    reply.get_int()  # the receiver's alive interval
    grant = ClassAd()
    grant["Result"] = GO_AHEAD_ALWAYS
    yield _ad_message(conn, grant)
    return -1 if limit is None else limit


@dataclass
class _Upload:
    conn: CedarConnection
    total: int
    progress: ProgressCallback | None
    done: int = 0
    sent_files: int = 0
    failure: tuple[int, int, str] | None = None  # (code, errno, text)

    def fail(self, code: int, err: int, text: str) -> None:
        if self.failure is None:
            self.failure = (code, err, text)


def _size_message(conn: CedarConnection, size: int, missing: bool = False) -> Send:
    if not conn.encrypted:
        return _int_message(conn, size)
    return _int_message(conn, size, 1 if missing else AES_CHUNK_SIZE)


def _send_empty(state: _Upload, missing: bool) -> Protocol[None]:
    yield _size_message(state.conn, 0, missing)
    yield _int_message(state.conn, ZERO_LENGTH_MARKER)


def _send_file(state: _Upload, item: UploadItem, limit: int) -> Protocol[None]:
    conn = state.conn
    try:
        info = os.stat(item.source)
    except OSError as exc:
        yield _int_message(conn, MISSING_FILE_PERMISSIONS)
        yield from _send_empty(state, missing=True)
        state.fail(HOLD_UPLOAD_FILE_ERROR, exc.errno or errno.ENOENT, _os_text(item, exc))
        return
    mode = stat.S_IMODE(info.st_mode) & 0o777
    try:
        handle: BinaryIO = open(item.source, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        yield _int_message(conn, mode)
        yield from _send_empty(state, missing=False)
        state.fail(HOLD_UPLOAD_FILE_ERROR, exc.errno or errno.EIO, _os_text(item, exc))
        return
    with handle:
        size = info.st_size
        if limit >= 0 and state.done + size > limit:
            size = max(0, limit - state.done)
            state.fail(HOLD_MAX_OUTPUT_EXCEEDED, 0, f"{item.name}: the receiver's size limit")
        yield _int_message(conn, mode)
        if size == 0:
            yield from _send_empty(state, missing=False)
            state.sent_files += 1
            return
        yield _size_message(conn, size)
        sent = 0
        while sent < size:
            chunk = handle.read(min(CHUNK_SIZE, size - sent))
            if not chunk:
                # The file shrank after it was announced: the stream cannot be kept in step.
                raise FileTransferError(
                    f"{item.name} shrank while it was being sent ({sent} of {size} bytes)",
                    code=HOLD_UPLOAD_FILE_ERROR,
                    subcode=errno.EIO,
                )
            yield Send(chunk) if conn.encrypted else SendRaw(chunk)
            sent += len(chunk)
            state.done += len(chunk)
            if state.progress is not None:
                state.progress(TransferProgress(item.name, sent, size, state.done, state.total))
        state.sent_files += 1


def _os_text(item: UploadItem, exc: OSError) -> str:
    return f"reading from file {item.source}: (errno {exc.errno}) {exc.strerror}"


def upload_sandbox(
    conn: CedarConnection,
    items: list[UploadItem],
    *,
    final_transfer: bool,
    progress: ProgressCallback | None = None,
    who: str = "cedar",
) -> Protocol[TransferReport]:
    """Send one job's items (spec 07 §7) and exchange the reports.

    A missing or unreadable source is sent as an empty file and fails the transfer at the end,
    as the reference does; the returned report says so (``ok`` false) rather than raising.
    """
    total = _sandbox_size(items)
    header = conn.writer().put_int(1 if final_transfer else 0)
    size_ad = ClassAd()
    size_ad["SandboxSize"] = total
    put_classad(header, size_ad)
    yield Send(header)
    state = _Upload(conn, total, progress)
    limit = -1
    report = TransferReport(ok=False, sandbox_size=total)
    for index, item in enumerate(items):
        command = TransferCommand.MKDIR if item.directory else TransferCommand.FILE
        yield _int_message(conn, command)
        yield Send(conn.writer().put_string(item.name))
        if index == 0:
            limit = yield from _upload_go_ahead(conn)
        if item.directory:
            try:
                mode = os.stat(item.source).st_mode
            except OSError:
                mode = stat.S_IFDIR | 0o700
            yield _int_message(conn, mode)
            report.directories.append(item.name)
        else:
            yield from _send_file(state, item, limit)
            report.files.append(item.name)
    yield _int_message(conn, TransferCommand.FINISHED)
    if state.failure is None:
        own = report_ad(True, size=state.done, count=state.sent_files)
    else:
        code, err, text = state.failure
        own = report_ad(
            False,
            size=state.done,
            count=state.sent_files,
            code=code,
            subcode=err,
            reason=f"{who} failed to send file(s): {text}",
        )
    yield _ad_message(conn, own)
    peer = get_classad((yield Receive()))
    report.peer_report = peer
    report.bytes = state.done
    peer_ok = _report_ok(peer, "receiver")
    report.ok = state.failure is None and peer_ok
    if state.failure is not None:
        report.code, report.subcode, report.error = state.failure
    elif not peer_ok:
        report.code = _int_attr(peer, "HoldReasonCode")
        report.subcode = _int_attr(peer, "HoldReasonSubCode")
    return report


# --------------------------------------------------------------------------- download (receiver)


class FileSink:
    """Where a receiver writes one file: a temporary name, renamed into place on :meth:`commit`."""

    def __init__(self, final: Path, mode: int | None) -> None:
        self.final = final
        self.mode = mode
        final.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.temp = final.parent / f"{PARTIAL_PREFIX}{secrets.token_hex(6)}-{final.name}"
        fd = os.open(
            self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
        self._handle: BinaryIO | None = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        assert self._handle is not None
        self._handle.write(data)

    def commit(self) -> None:
        """The file is complete: set its mode and give it its final name."""
        assert self._handle is not None
        self._handle.close()
        self._handle = None
        if self.mode:
            os.chmod(self.temp, self.mode)
        os.replace(self.temp, self.final)

    def abort(self) -> None:
        """The file is incomplete: remove every trace of it."""
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
        with contextlib.suppress(OSError):
            os.unlink(self.temp)


class SandboxDestination:
    """Maps received names to local paths below ``root`` (spec 07 §6.4, §8.3).

    ``remaps`` maps a received name to a destination (relative to ``root``; an absolute one only
    when ``allow_absolute_remaps``, i.e. when the paths come from the user's own job).  ``resolve``
    returns ``None`` with a reason for a name that would escape ``root``.
    """

    def __init__(
        self,
        root: str | Path,
        remaps: dict[str, str] | None = None,
        *,
        allow_absolute_remaps: bool = False,
        executable: str | None = None,
    ) -> None:
        self.root = Path(root)
        self.remaps = dict(remaps or {})
        self.allow_absolute_remaps = allow_absolute_remaps
        self.executable = executable

    def resolve(self, name: str) -> tuple[Path | None, str | None]:
        problem = check_name(name)
        if problem is not None:
            return None, problem
        target = self.remaps.get(name)
        if target is None:
            return self.root / name, None
        if os.path.isabs(target):
            if not self.allow_absolute_remaps:
                return None, f"an absolute remap destination for {name!r}"
            return Path(target), None
        problem = check_name(target)
        if problem is not None:
            return None, f"a remap of {name!r} to {problem}"
        return self.root / target, None

    def free_space(self) -> int | None:
        """Bytes free on the destination's file system (None if it cannot be told)."""
        probe = self.root
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        try:
            info = os.statvfs(probe)
        except (OSError, AttributeError):
            return None
        return info.f_bavail * info.f_frsize

    def open_file(self, name: str, mode: int | None) -> FileSink:
        path, problem = self.resolve(name)
        if path is None:
            raise PermissionError(errno.EPERM, f"refusing {problem}")
        self._check_inside(path)
        if self.executable is not None and name == self.executable:
            mode = 0o755
        return FileSink(path, mode)

    def mkdir(self, name: str, mode: int) -> None:
        path, problem = self.resolve(name)
        if path is None:
            raise PermissionError(errno.EPERM, f"refusing {problem}")
        self._check_inside(path)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.is_dir():
            path.mkdir(mode=0o700)
        os.chmod(path, mode or 0o700)

    def _check_inside(self, path: Path) -> None:
        """A name may not escape through a symlinked directory already in the destination."""
        if self.allow_absolute_remaps and not str(path).startswith(str(self.root)):
            return
        root = os.path.realpath(self.root)
        parent = os.path.realpath(path.parent)
        if parent != root and not parent.startswith(root + os.sep):
            raise PermissionError(
                errno.EPERM, f"refusing {path.name!r}: it leads outside {self.root}"
            )


@dataclass
class _Download:
    conn: CedarConnection
    destination: SandboxDestination
    total: int
    progress: ProgressCallback | None
    max_bytes: int | None
    done: int = 0
    failure: tuple[int, int, str] | None = None

    def fail(self, code: int, err: int, text: str) -> None:
        if self.failure is None:
            self.failure = (code, err, text)


def _download_go_ahead(conn: CedarConnection, max_bytes: int | None) -> Protocol[None]:
    """The downloader's half of the go-ahead exchange (spec 07 §7.3)."""
    asked = yield Receive()
    asked.get_int()
    grant = ClassAd()
    grant["Result"] = GO_AHEAD_ALWAYS
    grant["MaxTransferBytes"] = -1 if max_bytes is None else max_bytes
    yield _ad_message(conn, grant)
    yield _int_message(conn, ALIVE_INTERVAL)
    for _ in range(MAX_GO_AHEAD_WAITS):
        ad = get_classad((yield Receive()))
        result = _int_attr(ad, "Result")
        if result is None:
            raise ProtocolError("the go-ahead ad has no integer Result")
        if result == GO_AHEAD_WAIT:
            continue
        if result < 0:
            raise FileTransferError("the sender refused to go ahead", report=ad)
        return
    raise FileTransferError("the sender kept the transfer waiting too long")


def _receive_body(state: _Download, name: str, size: int, sink: FileSink | None) -> Protocol[None]:
    """Read ``size`` body bytes (raw in clear, chunk messages under AES) into ``sink``."""
    conn = state.conn
    got = 0
    while got < size:
        if conn.encrypted:
            message = yield Receive()
            data = message.get_bytes(message.remaining)
            if not data or got + len(data) > size:
                raise ProtocolError(f"a chunk of {name!r} runs past its announced size {size}")
        else:
            data = yield ReceiveRaw(min(CHUNK_SIZE, size - got))
        got += len(data)
        state.done += len(data)
        if state.max_bytes is not None and state.done > state.max_bytes:
            raise FileTransferError(
                f"the sender exceeded the {state.max_bytes}-byte limit of this transfer",
                code=HOLD_MAX_OUTPUT_EXCEEDED,
            )
        if sink is not None:
            try:
                sink.write(data)
            except OSError as exc:
                sink.abort()
                sink = None
                state.fail(
                    HOLD_DOWNLOAD_FILE_ERROR,
                    exc.errno or errno.EIO,
                    f"writing {name}: {exc.strerror}",
                )
        if state.progress is not None:
            state.progress(TransferProgress(name, got, size, state.done, state.total))
    if sink is not None:
        sink.commit()


def _receive_file(state: _Download, name: str, report: TransferReport) -> Protocol[None]:
    mode_message = yield Receive()
    mode = mode_message.get_int()
    size_message = yield Receive()
    size = size_message.get_int()
    if size < 0:
        raise ProtocolError(f"negative size {size} announced for {name!r}")
    if state.max_bytes is not None and state.done + size > state.max_bytes:
        raise FileTransferError(
            f"{name!r} ({size} bytes) exceeds the {state.max_bytes}-byte limit of this transfer",
            code=HOLD_MAX_OUTPUT_EXCEEDED,
        )
    free = state.destination.free_space()
    if free is not None and size > free:
        raise FileTransferError(
            f"{name!r} is announced with {size} bytes, more than the {free} bytes free below "
            f"{state.destination.root}",
            code=HOLD_DOWNLOAD_FILE_ERROR,
            subcode=errno.ENOSPC,
        )
    missing = mode == MISSING_FILE_PERMISSIONS
    sink: FileSink | None = None
    if not missing:
        try:
            sink = state.destination.open_file(name, mode & 0o777)
        except OSError as exc:
            state.fail(HOLD_DOWNLOAD_FILE_ERROR, exc.errno or errno.EIO, f"{name}: {exc.strerror}")
    try:
        if size == 0:
            marker = (yield Receive()).get_int()
            if marker != ZERO_LENGTH_MARKER:
                raise ProtocolError(
                    f"expected the zero-length marker 666 after {name!r}, got {marker}"
                )
            if sink is not None:
                sink.commit()
        else:
            yield from _receive_body(state, name, size, sink)
    except BaseException:
        if sink is not None:
            sink.abort()
        raise
    if sink is not None and not missing:
        report.files.append(name)


def download_sandbox(
    conn: CedarConnection,
    destination: SandboxDestination,
    *,
    progress: ProgressCallback | None = None,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_bytes: int | None = None,
    who: str = "cedar",
) -> Protocol[TransferReport]:
    """Receive one job's items into ``destination`` (spec 07 §7) and exchange the reports.

    Raises for a protocol violation or a peer exceeding ``max_items``/``max_bytes`` (the
    stream is then unusable and no partial file is left); local write errors and illegal
    names are reported at the end (``ok`` false), as the reference does.
    """
    header = yield Receive()
    header.get_int()  # final-transfer flag: where the files go is the caller's decision
    sandbox = get_classad(header)
    total = _int_attr(sandbox, "SandboxSize") or 0
    state = _Download(conn, destination, total, progress, max_bytes)
    report = TransferReport(ok=False, sandbox_size=total)
    first = True
    for _ in range(max_items + 1):
        command = (yield Receive()).get_int()
        if command == TransferCommand.FINISHED:
            break
        name = (yield Receive()).get_string()
        if first:
            yield from _download_go_ahead(conn, max_bytes)
            first = False
        if command in _FILE_COMMANDS:
            yield from _receive_file(state, name, report)
        elif command == TransferCommand.MKDIR:
            mode = (yield Receive()).get_int()
            try:
                destination.mkdir(name, mode & 0o777)
                report.directories.append(name)
            except OSError as exc:
                state.fail(
                    HOLD_DOWNLOAD_FILE_ERROR, exc.errno or errno.EIO, f"{name}: {exc.strerror}"
                )
        else:
            raise FileTransferError(
                f"the sender used transfer command {command} ({name!r}), which cedar does not "
                "implement (X.509 delegation, URLs and ClassAd items are not supported)",
                code=HOLD_DOWNLOAD_FILE_ERROR,
            )
    else:
        raise FileTransferError(
            f"the sender sent more than {max_items} items for one job; giving up",
            code=HOLD_DOWNLOAD_FILE_ERROR,
        )
    peer = get_classad((yield Receive()))
    report.peer_report = peer
    report.bytes = state.done
    peer_ok = _report_ok(peer, "sender")
    if state.failure is None and peer_ok:
        own = report_ad(True, size=state.done, count=len(report.files))
        report.ok = True
    else:
        if state.failure is not None:
            code, err, text = state.failure
        else:
            code = _int_attr(peer, "HoldReasonCode") or HOLD_UPLOAD_FILE_ERROR
            err = _int_attr(peer, "HoldReasonSubCode") or 0
            text = "the sender reported a failure"
        own = report_ad(
            False,
            size=state.done,
            count=len(report.files),
            code=code,
            subcode=err,
            reason=f"{who} failed to receive file(s): {text}",
        )
        report.code, report.subcode, report.error = code, err, text
        if state.failure is None:
            held = peer.get("HoldReason")
            report.error = held if isinstance(held, str) else text
    yield _ad_message(conn, own)
    return report


__all__ = [
    "ALIVE_INTERVAL",
    "MISSING_FILE_PERMISSIONS",
    "FileTransferError",
    "ProgressCallback",
    "SandboxDestination",
    "TransferCommand",
    "TransferProgress",
    "TransferReport",
    "UploadItem",
    "check_name",
    "download_sandbox",
    "expand_inputs",
    "report_ad",
    "upload_sandbox",
]
