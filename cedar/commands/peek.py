"""Looking into a running job's sandbox: ``condor_tail``, without its garbage (spec 08 §8).

Four steps, each its own connection (the drivers are in :mod:`cedar.commands._async.peek`):

1. ``GET_JOB_CONNECT_INFO`` (509) at the schedd: the starter's address and a *claim id*;
2. ``TRANSFER_QUEUE_REQUEST`` (507) at the schedd: a slot in the transfer queue, kept open;
3. ``STARTER_PEEK`` (1503) at the starter, over a security session that both ends derive from
   the claim id (no handshake: the client resumes a session it never negotiated);
4. on the 507 connection: an I/O report, then an empty string.

This module holds what does no I/O: request ads, the claim-id session, the protocols of each
step, the reply reader and the offset bookkeeping of :class:`FollowState`, which follows files
correctly where the 25.13.2 starter's reply offsets are wrong (spec 08 §8.5, quirks 1 and 2).

The claim id is a credential (whoever holds it is the job owner at the starter): it is kept in
:class:`StarterClaim`, whose ``repr`` shows nothing of it, and never logged or put in an error.
"""

from __future__ import annotations

import dataclasses
import getpass
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cedar.auth.client import CommandSession
from cedar.auth.client_config import ClientSecurity, default_security
from cedar.auth.session import ClientSessionCache, Session
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.commands.base import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES  # its home; exported
from cedar.commands.base import FOLLOW_INTERVAL as FOLLOW_INTERVAL
from cedar.commands.base import Body, resolve_address
from cedar.commands.errors import (
    JobNotRunning,
    PeekError,
    PeekFileError,
    PeekRefused,
)
from cedar.commands.filetransfer import AES_CHUNK_SIZE, CHUNK_SIZE, ZERO_LENGTH_MARKER
from cedar.errors import InvalidArgument, ProtocolError, SecurityError
from cedar.jobid import match_job_id
from cedar.numbers import Command, JobStatus
from cedar.stream.connection import CedarConnection
from cedar.stream.crypto import derive_session_key
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol, Receive, ReceiveRaw, Send
from cedar.version import VERSION_STRING

#: The largest budget cedar asks for: what one peek may bring into memory.
MAX_PEEK_BYTES = 64 << 20
#: Failed peeks in a row, the schedd still saying the job runs, before a follow gives up.
MAX_FOLLOW_FAILURES = 5
#: Most items one peek reply may announce (stdout, stderr and the named files).
MAX_PEEK_ITEMS = 64
#: What the client asks the starter's session to be (``condor_tail`` sends exactly this).
SESSION_INFO = '[Encryption="YES";Integrity="YES";]'
#: Commands the claim-id session is used for at the starter.
STARTER_COMMANDS = frozenset({Command.STARTER_PEEK, Command.START_SSHD})
#: Transfer-queue answers (spec 08 §8.4).
GO_AHEAD = 1
NO_GO = 0
#: The two streams a peek names by number on the wire (spec 08 §8.5 "Items").
STDOUT = "stdout"
STDERR = "stderr"
_STREAM_ITEMS = {0: STDOUT, 1: STDERR}


# -- what to look at --------------------------------------------------------------------------


def job_id_of(job: str | int | tuple[int, int]) -> tuple[int, int]:
    """``(cluster, proc)`` of one job: ``"7.0"``, ``(7, 0)``, or a cluster (``"7"``, ``7``:
    its proc 0, as ``condor_tail`` takes it)."""
    if isinstance(job, tuple):
        return int(job[0]), int(job[1])
    if isinstance(job, int) and not isinstance(job, bool):
        return job, 0
    parsed = match_job_id(str(job).strip())
    if parsed is None:
        raise InvalidArgument(f"{job!r} is not one job id (CLUSTER or CLUSTER.PROC)")
    return parsed.cluster, parsed.proc or 0


@dataclass(frozen=True)
class PeekTarget:
    """The files one peek asks for, each with the byte offset to read from (-1: the end)."""

    stdout: bool = True
    stderr: bool = False
    files: tuple[str, ...] = ()
    offsets: Mapping[str, int] = field(default_factory=dict)

    def names(self) -> list[str]:
        """The items in the order the starter sends them: stdout, stderr, the named files."""
        names = [STDOUT] if self.stdout else []
        if self.stderr:
            names.append(STDERR)
        return names + [f for f in self.files if f not in names]

    def offset(self, name: str) -> int:
        return int(self.offsets.get(name, -1))


def make_target(
    stdout: bool,
    stderr: bool,
    files: Iterable[str],
    offsets: Mapping[str, int] | None,
) -> PeekTarget:
    """Check what a caller asked for and freeze it."""
    if isinstance(files, str):
        files = (files,)
    names = tuple(dict.fromkeys(str(f) for f in files))
    for name in names:
        if not name or "\0" in name:
            raise InvalidArgument(f"{name!r} is not a file name")
    if not (stdout or stderr or names):
        raise InvalidArgument("nothing to peek at: ask for stdout, stderr or a file")
    wanted = dict(offsets or {})
    for name, value in wanted.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidArgument(f"offset of {name!r} must be an integer, not {value!r}")
    return PeekTarget(bool(stdout), bool(stderr), names, wanted)


def check_max_bytes(max_bytes: int) -> int:
    """A budget cedar may ask for: 0 .. :data:`MAX_PEEK_BYTES` (the starter's "-1 = whole
    file" is not offered: memory stays bounded)."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise InvalidArgument(f"max_bytes must be an integer, not {max_bytes!r}")
    if not 0 <= max_bytes <= MAX_PEEK_BYTES:
        raise InvalidArgument(f"max_bytes must be between 0 and {MAX_PEEK_BYTES}, not {max_bytes}")
    return max_bytes


def split_requests(target: PeekTarget) -> list[PeekTarget]:
    """The starter requests that read ``target`` correctly: a named file read from an offset
    of its own goes alone.

    The 25.13.2 starter uses only the last ``TransferOffsets`` entry, for the first named file,
    and tails every other one (spec 08 §8.5 quirk 2).  A request whose named files are all
    tailed, or that names one file, means the same to that starter and to a fixed one.
    """
    seeking = [f for f in target.files if target.offset(f) >= 0]
    tailed = tuple(f for f in target.files if target.offset(f) < 0)
    if len(target.files) <= 1 or not seeking:
        return [target]
    if not tailed:
        tailed, seeking = (seeking[0],), seeking[1:]
    requests = [PeekTarget(target.stdout, target.stderr, tailed, target.offsets)]
    requests += [PeekTarget(False, False, (name,), target.offsets) for name in seeking]
    return requests


# -- step 1: GET_JOB_CONNECT_INFO (509) ------------------------------------------------------


@dataclass(repr=False)
class StarterClaim:
    """A claim id split as spec 08 §8.3 says: session id, session info, key text.  Secret."""

    session_id: str
    info: dict[str, str]
    key_text: str

    @classmethod
    def parse(cls, claim_id: str) -> StarterClaim:
        """Split ``<session id>#[info...]<key>``; a malformed id is a :class:`ProtocolError`
        that does not quote it."""
        sid, sep, rest = claim_id.rpartition("#")
        if not sep or not sid:
            raise ProtocolError("the schedd's claim id has no '#' (not a claim id)")
        info_text, bracket, key = rest.rpartition("]")
        if bracket:
            if not info_text.startswith("["):
                raise ProtocolError("the session info of the schedd's claim id is malformed")
            info = _session_info(info_text + "]")
        else:
            info, key = {}, rest
        if not key:
            raise ProtocolError("the schedd's claim id carries no key")
        return cls(sid, info, key)

    def crypto_method(self) -> str:
        """AES when the starter offers it (``CryptoMethodsList`` over the legacy
        ``CryptoMethods``); cedar speaks nothing else."""
        listed = self.info.get("cryptomethodslist") or self.info.get("cryptomethods") or "AES"
        methods = [m.strip().upper() for m in listed.replace(",", ".").split(".") if m.strip()]
        if "AES" not in methods:
            raise SecurityError(
                f"the starter's session offers only {', '.join(methods)}; cedar speaks AES-GCM"
            )
        return "AES"

    def session(self, owner: str | None) -> Session:
        """The client's half of the claim-id session, as if it had been negotiated."""
        method = self.crypto_method()
        short = self.info.get("shortversion", "")
        return Session(
            sid=self.session_id,
            key=derive_session_key(self.key_text.encode("utf-8")),
            crypto_method=method,
            user=owner or "",
            method="CLAIMID",
            valid_commands=frozenset(int(c) for c in STARTER_COMMANDS),
            policy={k: v for k, v in self.info.items() if k in ("encryption", "integrity")},
            remote_version=f"$CondorVersion: {short} $" if short else None,
        )

    def __repr__(self) -> str:
        return "<StarterClaim (secret)>"


def _session_info(text: str) -> dict[str, str]:
    """``[A="x";B=y;][C="z";]`` -> lower-case name -> value (quotes removed; later wins)."""
    out: dict[str, str] = {}
    item: list[str] = []
    quoted = escaped = False
    for ch in text:
        if quoted:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
                continue
            elif ch == '"':
                quoted = False
                continue
            item.append(ch)
            continue
        if ch == '"':
            quoted = True
        elif ch in ";[]":
            _add_item(out, "".join(item))
            item.clear()
        else:
            item.append(ch)
    if quoted:
        raise ProtocolError("the session info of the schedd's claim id is malformed")
    _add_item(out, "".join(item))
    return out


def _add_item(out: dict[str, str], item: str) -> None:
    name, eq, value = item.partition("=")
    if eq and name.strip():
        out[name.strip().lower()] = value.strip()


@dataclass(repr=False)
class ConnectInfo:
    """What the schedd said about reaching a running job's starter (the claim is secret)."""

    job: tuple[int, int]
    starter_address: str
    remote_host: str | None
    version: str | None
    claim: StarterClaim
    owner: str | None = None

    def __repr__(self) -> str:
        return (
            f"<ConnectInfo job={self.job[0]}.{self.job[1]} starter={self.starter_address} "
            f"host={self.remote_host}>"
        )


def connect_info_request(job: tuple[int, int], sub_proc: int | None = None) -> ClassAd:
    """The 509 request, in ``condor_tail``'s attribute order."""
    ad = ClassAd()
    ad["ProcId"] = job[1]
    ad["ClusterId"] = job[0]
    if sub_proc is not None:
        ad["SubProcId"] = sub_proc
    ad["SessionInfo"] = SESSION_INFO
    return ad


def connect_info_body(job: tuple[int, int], sub_proc: int | None = None) -> Body[ConnectInfo]:
    """The 509 exchange after the command start: the request, then the reply as
    :class:`ConnectInfo` or a :class:`PeekError`."""

    def body(session: CommandSession) -> Protocol[ConnectInfo]:
        writer = session.payload_writer()
        put_classad(writer, connect_info_request(job, sub_proc))
        yield Send(writer)
        reply = get_classad((yield Receive()))
        return connect_info_reply(job, reply, session.authenticated_user)

    return body


def connect_info_reply(job: tuple[int, int], reply: ClassAd, user: str | None) -> ConnectInfo:
    """Read a 509 reply: the connect info, or the schedd's refusal as a :class:`PeekError`."""
    job_text = f"{job[0]}.{job[1]}"
    if reply.get("Result") is not True:
        error = _text(reply.get("ErrorString")) or f"the schedd refused to reach job {job_text}"
        retry = reply.get("Retry") is True
        status = reply.get("JobStatus")
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        if retry or status is not None or "not running" in error or error.startswith("No such"):
            hold = _text(reply.get("HoldReason"))
            raise JobNotRunning(error, retry=retry, job_status=status, hold_reason=hold)
        raise PeekRefused(error, retry=retry)
    claim_text = reply.get("ClaimId")
    address = reply.get("StarterIpAddr")
    if not isinstance(claim_text, str) or not isinstance(address, str):
        raise ProtocolError(
            f"the schedd's connect info for job {job_text} lacks the claim id or starter address"
        )
    owner = user.partition("@")[0] if user else None
    return ConnectInfo(
        job=job,
        starter_address=address,
        remote_host=_text(reply.get("RemoteHost")),
        version=_text(reply.get("CondorVersion")),
        claim=StarterClaim.parse(claim_text),
        owner=owner,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


# -- step 2 and 4: TRANSFER_QUEUE_REQUEST (507) ---------------------------------------------


def transfer_queue_request(
    job: tuple[int, int], file_name: str, user: str | None = None
) -> ClassAd:
    """The 507 request: ``condor_tail``'s queue of its own (``<login>:condor_tail``)."""
    ad = ClassAd()
    ad["User"] = f"{user or _login()}:condor_tail"
    ad["JobId"] = f"{job[0]}.{job[1]}"
    ad["FileName"] = file_name
    ad["Downloading"] = True
    ad["SandboxSize"] = 0
    return ad


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry, no LOGNAME
        return "unknown"


@dataclass
class TransferSlot:
    """A granted transfer-queue slot; :meth:`report` is what is sent when it is given back."""

    report_interval: int
    granted: float = field(default_factory=time.monotonic)
    bytes_received: int = 0

    def report(self, now: float | None = None) -> str:
        """``now usec_since_go_ahead sent received file_read file_write net_read net_write``."""
        elapsed = int(((now or time.monotonic()) - self.granted) * 1_000_000)
        return f"{int(time.time())} {elapsed} 0 {self.bytes_received} 0 0 0 0"


def transfer_queue_body(
    job: tuple[int, int], file_name: str, user: str | None = None
) -> Body[TransferSlot]:
    """Ask for a slot and wait for the go-ahead (the schedd may answer much later)."""

    def body(session: CommandSession) -> Protocol[TransferSlot]:
        writer = session.payload_writer()
        put_classad(writer, transfer_queue_request(job, file_name, user))
        yield Send(writer)
        reply = get_classad((yield Receive()))
        result = reply.get("Result")
        if result != GO_AHEAD or isinstance(result, bool):
            why = _text(reply.get("ErrorString")) or f"answer {result!r}"
            raise PeekRefused(f"the schedd's transfer queue refused job {job[0]}.{job[1]}: {why}")
        interval = reply.get("ReportInterval")
        return TransferSlot(interval if isinstance(interval, int) else 0)

    return body


def release_slot(conn: CedarConnection, slot: TransferSlot) -> Protocol[None]:
    """Give the slot back on its connection: the I/O report (if asked for), then ``""``."""
    if slot.report_interval > 0:
        yield Send(conn.writer().put_string(slot.report()))
    yield Send(conn.writer().put_string(""))


# -- step 3: STARTER_PEEK (1503) ------------------------------------------------------------


def peek_request(target: PeekTarget, max_bytes: int, version: str = VERSION_STRING) -> ClassAd:
    """The 1503 request in ``condor_tail``'s order (``TransferFiles`` only when files are named)."""
    ad = ClassAd()
    ad["Err"] = target.stderr
    ad["Out"] = target.stdout
    ad["ErrOffset"] = target.offset(STDERR)
    ad["OutOffset"] = target.offset(STDOUT)
    if target.files:
        ad["TransferFiles"] = list(target.files)
        ad["TransferOffsets"] = [target.offset(name) for name in target.files]
    ad["CondorVersion"] = version
    ad["MaxTransferBytes"] = max_bytes
    return ad


@dataclass
class PeekedFile:
    """Bytes of one file of the sandbox: ``data`` starts at byte ``offset`` of the file."""

    name: str
    offset: int
    data: bytes

    @property
    def next_offset(self) -> int:
        """Where the next read of this file continues."""
        return self.offset + len(self.data)

    def __repr__(self) -> str:
        return f"<PeekedFile {self.name} offset={self.offset} bytes={len(self.data)}>"


@dataclass
class PeekResult:
    """What one peek brought, in the starter's order (stdout, stderr, the named files)."""

    files: list[PeekedFile] = field(default_factory=list)
    #: Files the starter could not open (not in the sandbox yet): sent empty, not counted.
    missing: list[str] = field(default_factory=list)

    def raise_for_missing(self) -> None:
        """:class:`PeekFileError` (carrying this result) if a file asked for does not exist."""
        if self.missing:
            error = PeekFileError(
                f"{', '.join(self.missing)}: no such file in the job's sandbox (yet)",
                name=self.missing[0],
                retry=True,
            )
            error.result = self
            raise error

    def __getitem__(self, name: str) -> PeekedFile:
        for peeked in self.files:
            if peeked.name == name:
                return peeked
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(peeked.name == name for peeked in self.files)

    @property
    def offsets(self) -> dict[str, int]:
        """The next offset of every file: pass it back as ``offsets=`` to read on."""
        return {peeked.name: peeked.next_offset for peeked in self.files}

    @property
    def size(self) -> int:
        return sum(len(peeked.data) for peeked in self.files)


class _Cursor:
    """Integers read across message boundaries: the starter's size-0 file leaves its 666 (and
    what follows it) in the message of the next item (spec 08 §8.5)."""

    def __init__(self) -> None:
        self.message: MessageReader | None = None

    def next_int(self) -> Protocol[int]:
        if self.message is None or self.message.at_end():
            if self.message is not None:
                self.message.end_of_message()
            self.message = yield Receive()
        assert self.message is not None
        return self.message.get_int()

    def finish(self) -> None:
        if self.message is not None:
            self.message.end_of_message()
            self.message = None


def peek_body(target: PeekTarget, max_bytes: int) -> Body[PeekResult]:
    """The 1503 exchange after the session resumed: request, reply ad, files, count."""

    def body(session: CommandSession) -> Protocol[PeekResult]:
        writer = session.payload_writer()
        put_classad(writer, peek_request(target, max_bytes))
        yield Send(writer)
        return (yield from read_peek_reply(session.conn, target, max_bytes))

    return body


def read_peek_reply(
    conn: CedarConnection, target: PeekTarget, max_bytes: int
) -> Protocol[PeekResult]:
    """The starter's answer: its reply ad, one ``put_file`` per item, the count sent."""
    reply = get_classad((yield Receive()))
    if reply.get("Result") is not True:
        raise _starter_refusal(reply, target)
    items = reply.get("TransferFiles")
    offsets = reply.get("TransferOffsets")
    if not isinstance(items, list) or not isinstance(offsets, list) or len(items) != len(offsets):
        raise ProtocolError("the starter's peek reply lacks matching TransferFiles/TransferOffsets")
    if len(items) > MAX_PEEK_ITEMS:
        raise ProtocolError(f"the starter announced {len(items)} files (at most {MAX_PEEK_ITEMS})")
    wanted = target.names()
    names = [_item_name(item) for item in items]
    strange = [n for n in names if n not in wanted]
    if strange or len(set(names)) != len(names):
        raise ProtocolError(f"the starter sent files that were not asked for: {strange or names}")
    cursor = _Cursor()
    budget = max_bytes
    result = PeekResult()
    sizes: list[int] = []
    for name, reply_offset in zip(names, offsets, strict=True):
        data = yield from _read_file(conn, cursor, name, budget)
        budget -= len(data)
        sizes.append(len(data))
        if not isinstance(reply_offset, int) or isinstance(reply_offset, bool):
            raise ProtocolError(f"the starter's offset for {name} is not an integer")
        offset = effective_offset(target.offset(name), reply_offset)
        result.files.append(PeekedFile(name, offset, data))
    count = yield from cursor.next_int()
    cursor.finish()
    missing = len(names) - count
    if missing < 0:
        raise ProtocolError(f"the starter says it sent {count} files, {len(names)} were announced")
    if missing:
        # A file the starter could not open goes out empty and is not counted (spec 08 §8.5).
        empty = [n for n, size in zip(names, sizes, strict=True) if size == 0]
        if len(empty) != missing:
            raise ProtocolError(f"the starter counted {count} of {len(names)} files sent")
        result.missing = empty
    return result


def _item_name(item: object) -> str:
    if isinstance(item, int) and not isinstance(item, bool) and item in _STREAM_ITEMS:
        return _STREAM_ITEMS[item]
    if isinstance(item, str) and item:
        return item
    raise ProtocolError(f"the starter's peek reply names an unknown item {item!r}")


def effective_offset(requested: int, reply: int) -> int:
    """Where the bytes really start.

    The 25.13.2 starter answers offset 0 for stdout whatever offset was asked (quirk 1 of spec
    08 §8.5; ``condor_tail -follow`` then reprints the file from byte 20 or so); the bytes still
    come from the offset asked.  So a reply of 0 to a positive request is taken as the request.
    """
    if requested > 0 and reply == 0:
        return requested
    return reply


def _read_file(conn: CedarConnection, cursor: _Cursor, name: str, budget: int) -> Protocol[bytes]:
    """One ``put_file`` (01 §7.2/§7.3); more bytes than the remaining budget is an error."""
    size = yield from cursor.next_int()
    if size < 0:
        raise ProtocolError(f"the starter announced a negative size for {name}")
    if size > budget:
        raise ProtocolError(
            f"the starter announced {size} bytes of {name}, more than the {budget} left to send"
        )
    if conn.encrypted:
        chunk = yield from cursor.next_int()
        if not 0 < chunk <= AES_CHUNK_SIZE and size:
            raise ProtocolError(f"the starter announced chunks of {chunk} bytes")
    if size == 0:
        marker = yield from cursor.next_int()
        if marker != ZERO_LENGTH_MARKER:
            raise ProtocolError(f"expected the zero-length marker 666 after {name}, got {marker}")
        return b""
    cursor.finish()
    parts: list[bytes] = []
    got = 0
    while got < size:
        if conn.encrypted:
            message = yield Receive()
            data = message.get_bytes(message.remaining)
        else:
            data = yield ReceiveRaw(min(CHUNK_SIZE, size - got))
        if not data or got + len(data) > size:
            raise ProtocolError(f"a chunk of {name} runs past its announced size {size}")
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def _starter_refusal(reply: ClassAd, target: PeekTarget) -> PeekError:
    error = _text(reply.get("ErrorString")) or "the starter refused the peek"
    retry = reply.get("Retry") is True
    if "requested but not authorized" in error or "outside sandbox" in error:
        name = next((n for n in target.files if f"File {n} " in error or f"({n})" in error), None)
        return PeekFileError(error, name=name, retry=retry)
    if error.startswith("Unable to resolve file "):
        # A named file not (yet) in the sandbox (observed, 25.13.2; condor_tail then retries
        # forever without a word): the full path is in the text, the name is ours.
        path = error.removeprefix("Unable to resolve file ").partition(" to real path")[0]
        name = next((n for n in target.files if path.endswith("/" + n) or path == n), None)
        what = f"{name} does not exist" if name else "a file asked for does not exist"
        return PeekFileError(f"{what} in the job's sandbox (yet): {error}", name=name, retry=True)
    if "job is finished" in error:
        return JobNotRunning(error, retry=False, job_status=int(JobStatus.COMPLETED))
    if retry:
        return JobNotRunning(error, retry=True)
    return PeekRefused(error, retry=retry)


# -- START_SSHD (1502): the first exchange of condor_ssh_to_job ------------------------------


def start_sshd_request(
    remote_host: str | None, shell: str = "/bin/bash", keygen_args: str | None = None
) -> ClassAd:
    """``condor_ssh_to_job``'s request (spec 08 §8.6); the ssh session that follows a success
    on the same connection is not implemented."""
    ad = ClassAd()
    if remote_host:
        ad["Name"] = remote_host
    ad["Shell"] = shell
    if keygen_args:
        ad["SSHKeyGenArgs"] = keygen_args
    return ad


def start_sshd_body(
    remote_host: str | None, shell: str = "/bin/bash", keygen_args: str | None = None
) -> Body[ClassAd]:
    """Send START_SSHD and read the starter's answer: the success ad (keys: secrets), or its
    refusal as :class:`PeekRefused` (or :class:`JobNotRunning` when it says retry)."""

    def body(session: CommandSession) -> Protocol[ClassAd]:
        writer = session.payload_writer()
        put_classad(writer, start_sshd_request(remote_host, shell, keygen_args))
        yield Send(writer)
        reply = get_classad((yield Receive()))
        if reply.get("Result") is not True:
            error = _text(reply.get("ErrorString")) or "the starter refused to start sshd"
            if reply.get("Retry") is True:
                raise JobNotRunning(error, retry=True)
            raise PeekRefused(error)
        return reply

    return body


def claim_security(info: ConnectInfo, security: ClientSecurity | None) -> ClientSecurity:
    """A client security holding only the claim-id session, stored for the starter's address,
    so that the command start resumes it (spec 08 §8.3); the caller's policy otherwise."""
    config = (security or default_security()).config
    config = dataclasses.replace(config, resume_sessions=True, cache_tag=None)
    own = ClientSecurity(config, ClientSessionCache(max_sessions=1))
    own.sessions.store(info.claim.session(info.owner), str(resolve_address(info.starter_address)))
    return own


# -- following --------------------------------------------------------------------------------


class FollowState:
    """The offsets of a follow: where each file continues, and what is new in a result.

    The first peek tails (offset -1, the last ``max_bytes``); later ones ask for the bytes after
    what was already seen.  A new run of the job (another starter) starts at byte 0 again.
    """

    def __init__(self, target: PeekTarget) -> None:
        self.target = target
        self.offsets: dict[str, int] = dict(target.offsets)
        self.starter: str | None = None

    def next_target(self) -> PeekTarget:
        return PeekTarget(self.target.stdout, self.target.stderr, self.target.files, self.offsets)

    def new_run(self, info: ConnectInfo) -> bool:
        """Note the starter in use; True (and offsets reset to the start) when it changed."""
        if self.starter is None:
            self.starter = info.starter_address
            return False
        if info.starter_address == self.starter:
            return False
        self.starter = info.starter_address
        self.offsets = {name: 0 for name in self.target.names()}
        return True

    def take(self, result: PeekResult) -> list[PeekedFile]:
        """The new bytes of a result (non-empty pieces only); offsets move past them."""
        fresh = []
        for peeked in result.files:
            seen = self.offsets.get(peeked.name, -1)
            data, offset = peeked.data, peeked.offset
            if 0 <= offset < seen:  # overlap (should not happen): drop what was shown
                data, offset = data[seen - offset :], seen
            self.offsets[peeked.name] = offset + len(data)
            if data:
                fresh.append(PeekedFile(peeked.name, offset, data))
        return fresh


__all__ = [
    "DEFAULT_MAX_BYTES",
    "FOLLOW_INTERVAL",
    "MAX_FOLLOW_FAILURES",
    "MAX_PEEK_BYTES",
    "STDERR",
    "STDOUT",
    "ConnectInfo",
    "FollowState",
    "JobNotRunning",
    "PeekError",
    "PeekFileError",
    "PeekRefused",
    "PeekResult",
    "PeekTarget",
    "PeekedFile",
    "StarterClaim",
    "TransferSlot",
    "check_max_bytes",
    "claim_security",
    "connect_info_body",
    "connect_info_reply",
    "connect_info_request",
    "effective_offset",
    "job_id_of",
    "make_target",
    "peek_body",
    "peek_request",
    "read_peek_reply",
    "release_slot",
    "split_requests",
    "start_sshd_body",
    "start_sshd_request",
    "transfer_queue_body",
    "transfer_queue_request",
]
