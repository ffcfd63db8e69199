"""A mock starter, and the schedd's side of reaching it: ``cedar pool`` jobs can be tailed.

Spec 08 §8 in the server role.  :func:`attach_peek` registers GET_JOB_CONNECT_INFO (509) and
TRANSFER_QUEUE_REQUEST (507) on a :class:`~cedar.daemons.schedd.MockSchedd`; the
:class:`MockStarter` serves STARTER_PEEK (1503) for every job the mock queue runs, over the
claim-id sessions the schedd makes for it (the real schedd asks the starter to make one with
CREATE_JOB_OWNER_SEC_SESSION; here both live in one process, so it is a call).

What a simulated job writes is a pure function of its ad and how long it has run
(:func:`simulated_stdout`): one line a second, so a follow sees output grow.  Its stderr is
empty and each of its ``transfer_output_files`` holds one line, as the mock's spooled output.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from cedar.auth.server_policy import ServerPolicy, real_pool_policy
from cedar.auth.session import Session
from cedar.auth.version import CEDAR_VERSION, CEDAR_VERSION_STRING
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.daemons.daemon import CommandRequest, Daemon
from cedar.daemons.job_queue import HELD, RUNNING, JobQueue, int_attr, owner_of
from cedar.errors import ProtocolError
from cedar.numbers import Command
from cedar.stream.crypto import derive_session_key
from cedar.stream.primitives import MessageWriter
from cedar.stream.protocol import Protocol, Receive, Send

#: How long a claim-id session lives at the mock starter (seconds).
CLAIM_SESSION_LIFETIME = 3600.0
#: Most claim sessions the mock starter keeps (older ones are forgotten first).
MAX_CLAIMS = 1024
#: The most bytes one simulated stdout grows to.
MAX_SIMULATED_OUTPUT = 1 << 20
#: The chunk size the starter announces for AES-framed files (01 §7.3).
CHUNK = 262144
#: What 1503/1502 accept on a claim session.
CLAIM_COMMANDS = frozenset({int(Command.STARTER_PEEK), int(Command.START_SSHD)})


def simulated_stdout(ad: ClassAd, elapsed: float) -> bytes:
    """The stdout of a simulated job ``elapsed`` seconds into its run: one line a second."""
    command = str(ad.get("Cmd") or "job")
    args = str(ad.get("Arguments") or ad.get("Args") or "").strip()
    label = f"{command} {args}".strip()
    lines = []
    size = 0
    for second in range(int(max(elapsed, 0)) + 1):
        line = f"{label}: output line {second + 1}\n"
        size += len(line)
        if size > MAX_SIMULATED_OUTPUT:
            break
        lines.append(line)
    return "".join(lines).encode("utf-8", "replace")


def _transfer_outputs(ad: ClassAd) -> list[str]:
    listed = ad.get("TransferOutput")
    if not isinstance(listed, str):
        return []
    return [name.strip() for name in listed.split(",") if name.strip()]


class MockStarter(Daemon):
    """The starter of every job the mock queue runs (one daemon, one claim per run)."""

    def __init__(
        self,
        queue: JobQueue,
        name: str = "starter",
        *,
        policy: ServerPolicy | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Any = time.time,
    ) -> None:
        super().__init__(name, "STARTER", policy=policy or real_pool_policy(), host=host, port=port)
        self.queue = queue
        self.clock = clock
        #: claim session id -> the job it was made for.
        self.claims: dict[str, tuple[int, int]] = {}
        self.register(Command.STARTER_PEEK, self._handle_peek, permission="READ")
        self.register(Command.START_SSHD, self._handle_sshd, permission="READ")

    def create_claim(self, job: tuple[int, int], owner: str, session_info: str) -> str:
        """A claim id for ``job``, its session already known here (spec 08 §8.3's form)."""
        sid = secrets.token_hex(24)
        key = secrets.token_hex(32)
        policy = (
            f'[Integrity="YES";Encryption="YES";ShortVersion="{CEDAR_VERSION}";'
            'CryptoMethods="AES";CryptoMethodsList="AES";]'
        )
        domain = self.policy.uid_domain
        self.sessions.add(
            Session(
                sid=sid,
                key=derive_session_key(key.encode("ascii")),
                crypto_method="AES",
                user=owner if "@" in owner else f"{owner}@{domain}",
                method="CLAIMID",
                valid_commands=CLAIM_COMMANDS,
                duration=CLAIM_SESSION_LIFETIME,
            )
        )
        self.claims[sid] = job
        while len(self.claims) > MAX_CLAIMS:
            self.claims.pop(next(iter(self.claims)))
        return f"{sid}#{session_info}{policy}{key}"

    def _job(self, request: CommandRequest) -> tuple[tuple[int, int] | None, ClassAd | None]:
        session = request.session
        key = self.claims.get(session.sid) if session is not None else None
        if key is None:
            return None, None
        return key, self.queue.merged(*key)

    def _handle_peek(self, request: CommandRequest) -> Protocol[None]:
        key, ad = self._job(request)
        asked = get_classad((yield from request.read_payload()))
        if key is None:
            return  # not a claim session: the real starter closes without a word
        if ad is None or int_attr(ad, "JobStatus") != RUNNING:
            yield Send(_refusal(request, "Rejecting request, because the job is finished."))
            return
        started = self.queue.started.get(key, self.clock())
        files: dict[str, bytes] = {
            "stdout": simulated_stdout(ad, self.clock() - started),
            "stderr": b"",
        }
        for name in _transfer_outputs(ad):
            files[name] = f"output {name} of job {key[0]}.{key[1]}\n".encode()
        yield from _send_peek(request, asked, files)

    def _handle_sshd(self, request: CommandRequest) -> Protocol[None]:
        yield from request.read_payload()
        text = "Failed, because the mock starter cannot start sshd."
        yield Send(_refusal(request, text))


def _refusal(request: CommandRequest, text: str, retry: bool = False) -> MessageWriter:
    reply = ClassAd({"Result": False, "ErrorString": text})
    if retry:
        reply["Retry"] = True
    writer = request.writer()
    put_classad(writer, reply)
    return writer


def _int(ad: ClassAd, name: str, default: int = -1) -> int:
    value = ad.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _send_peek(request: CommandRequest, asked: ClassAd, files: dict[str, bytes]) -> Protocol[None]:
    """The 25.13.2 starter's answer (spec 08 §8.5), without its offset quirks: offsets are echoed
    and each named file gets its own."""
    items: list[tuple[int | str, str, int]] = []
    if asked.get("Out") is True:
        items.append((0, "stdout", _int(asked, "OutOffset")))
    if asked.get("Err") is True:
        items.append((1, "stderr", _int(asked, "ErrOffset")))
    named = asked.get("TransferFiles")
    offsets = asked.get("TransferOffsets")
    if isinstance(named, list):
        offsets = offsets if isinstance(offsets, list) else []
        for index, name in enumerate(named):
            if not isinstance(name, str) or name not in files or name in ("stdout", "stderr"):
                text = f"File {name} requested but not authorized to be sent."
                yield Send(_refusal(request, text))
                return
            offset = offsets[index] if index < len(offsets) else -1
            items.append((name, name, offset if isinstance(offset, int) else -1))
    budget = _int(asked, "MaxTransferBytes", 1024)
    if budget < 0:
        budget = 1 << 62
    pieces: list[bytes] = []
    reply_offsets: list[int] = []
    for _, name, offset in items:
        data = files[name]
        size = len(data)
        start = max(size - budget, 0) if offset < 0 else min(offset, size)
        piece = data[start : start + budget]
        budget -= len(piece)
        pieces.append(piece)
        reply_offsets.append(start)
    reply = ClassAd({"Result": True})
    reply["TransferFiles"] = [item for item, _, _ in items]
    reply["TransferOffsets"] = reply_offsets
    writer = request.writer()
    put_classad(writer, reply)
    yield Send(writer)
    pending = request.writer()
    for piece in pieces:
        if not request.encrypted:
            raise ProtocolError("the mock starter sends files only over an encrypted session")
        yield Send(pending.put_int(len(piece)).put_int(CHUNK))
        pending = request.writer()
        if piece:
            yield Send(request.writer().put_bytes(piece))
        else:
            pending.put_int(666)  # its message goes on with what follows (spec 08 §8.5)
    yield Send(pending.put_int(len(pieces)))


# -- the schedd's side ---------------------------------------------------------------------------


def attach_peek(schedd: Daemon, queue: JobQueue, starter: MockStarter) -> None:
    """Serve GET_JOB_CONNECT_INFO and TRANSFER_QUEUE_REQUEST on ``schedd`` for ``starter``."""

    def connect_info(request: CommandRequest) -> Protocol[None]:
        asked = get_classad((yield from request.read_payload()))
        cluster, proc = _int(asked, "ClusterId"), _int(asked, "ProcId")
        session_info = asked.get("SessionInfo")
        reply = ClassAd({"Result": False})
        ad = queue.merged(cluster, proc) if cluster >= 0 and proc >= 0 else None
        owner = owner_of(request.user)
        job_text = f"{cluster}.{proc}"
        if cluster < 0 or proc < 0:
            reply["ErrorString"] = "Job id missing from GET_JOB_CONNECT_INFO request"
        elif ad is None:
            reply["ErrorString"] = f"No such job: {job_text}"
        elif owner is None or (owner != ad.get("Owner") and owner not in queue.superusers):
            reply["ErrorString"] = (
                f"{request.user} is not authorized for access to the starter for job {job_text}"
            )
        elif int_attr(ad, "JobStatus") != RUNNING:
            status = int_attr(ad, "JobStatus")
            reply["Retry"] = True
            reply["JobStatus"] = status
            if status == HELD and isinstance(ad.get("HoldReason"), str):
                reply["HoldReason"] = ad["HoldReason"]
            reply["ErrorString"] = f"Job {job_text} is not running."
        else:
            info = session_info if isinstance(session_info, str) else ""
            claim = starter.create_claim((cluster, proc), str(ad.get("Owner")), info)
            reply = ClassAd({"Result": True})
            reply["ClaimId"] = claim
            reply["RemoteHost"] = str(ad.get("RemoteHost") or f"slot1@{queue.name}")
            reply["CondorVersion"] = CEDAR_VERSION_STRING
            reply["StarterIpAddr"] = starter.address
        writer = request.writer()
        put_classad(writer, reply)
        yield Send(writer)

    def transfer_queue(request: CommandRequest) -> Protocol[None]:
        get_classad((yield from request.read_payload()))
        writer = request.writer()
        put_classad(writer, ClassAd({"Result": 1, "ReportInterval": 10}))
        yield Send(writer)
        for _ in range(16):  # I/O reports, then "" gives the slot back
            message = yield Receive()
            if not message.get_string():
                return

    schedd.register(Command.GET_JOB_CONNECT_INFO, connect_info, permission="WRITE")
    schedd.register(Command.TRANSFER_QUEUE_REQUEST, transfer_queue, permission="WRITE")


__all__ = ["MockStarter", "attach_peek", "simulated_stdout"]
