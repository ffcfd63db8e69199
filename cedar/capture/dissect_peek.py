"""Dissecting what ``condor_tail`` and ``condor_ssh_to_job`` say (spec 08 §8).

GET_JOB_CONNECT_INFO (509), TRANSFER_QUEUE_REQUEST (507), STARTER_PEEK (1503) and START_SSHD
(1502).  A 509 reply seen in clear carries the claim id: its session key (derived as
:class:`cedar.commands.peek.StarterClaim` does) is *learned* for the conversations that follow,
so the AES-GCM peek at the starter decrypts without ``--key``.  The claim id itself is not
shown.  File contents are only in the payload (``cedar decode -vv``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from cedar.capture.dissect_model import inline
from cedar.capture.tcp import S2C
from cedar.commands.filetransfer import ZERO_LENGTH_MARKER
from cedar.commands.peek import StarterClaim
from cedar.errors import CedarError, ProtocolError

if TYPE_CHECKING:
    from cedar.capture.dissect_model import DecodedMessage, FlowBase
    from cedar.capture.messages import WireMessage
    from cedar.stream.primitives import MessageReader

Step = Generator[None, "tuple[WireMessage, DecodedMessage]", None]
_STREAMS = {0: "stdout", 1: "stderr"}


def connect_info(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Step:
    """509: the job id asked for, then the connect info (claim redacted, key learned)."""
    if (
        yield from flow.request_ad(command, first, "connect-info request", label="for job")
    ) is None:
        return
    d, reply = yield from flow.reply_ad("connect info")
    if reply is None:
        yield from flow.unexpected_rest()
        return
    claim = reply.get("ClaimId")
    learned = ""
    if isinstance(claim, str):
        try:
            session = StarterClaim.parse(claim).session(None)
        except CedarError as exc:
            learned = f" (claim id not usable: {exc})"
        else:
            if session.key is not None:
                flow.conv.learned_keys.append(session.key)
                learned = " (claim-id session key learned for the starter conversations)"
        reply["ClaimId"] = f"<claim id, {len(claim)} characters>"
    flow.note(
        d,
        "CONNECT_INFO",
        f"{'' if reply.get('Result') is True else 'refused: '}{inline(reply)}{learned}",
    )
    yield from flow.unexpected_rest()


def transfer_queue(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Step:
    """507: the request, the go-ahead, then the client's I/O reports and the closing ``""``."""
    if (yield from flow.request_ad(command, first, "transfer-queue request", label="for")) is None:
        return
    while True:
        d = yield from flow.next_message()
        r = flow.reader(d)
        if r is None:
            flow.encrypted_note(d, "transfer-queue message")
            continue
        if d.direction == S2C:
            answer = flow.ad(r, "transfer-queue answer", d)
            flow.end(r, "transfer-queue answer")
            flow.note(d, "GO_AHEAD", f"transfer queue {inline(answer)}")
            continue
        try:
            text = r.get_string()
        except CedarError as exc:
            raise ProtocolError(f"transfer-queue report: {exc}") from None
        flow.end(r, "transfer-queue report")
        if text:
            flow.note(d, "IO_REPORT", f"I/O report {text!r}")
        else:
            flow.note(d, "RELEASE", "transfer-queue slot given back (empty string)")


def starter_peek(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Step:
    """1503: the request ad, the reply ad, per item its size (+ chunk size), data or 666, and
    the count of files sent (a size-0 file shares its message with what follows)."""
    if (yield from flow.request_ad(command, first, "peek request", label="request")) is None:
        return
    d, reply = yield from flow.reply_ad("peek reply")
    if reply is None:
        yield from flow.payload_encrypted(command)
        return
    flow.note(d, "PEEK_REPLY", f"peek reply {inline(reply)}")
    if reply.get("Result") is not True:
        yield from flow.unexpected_rest()
        return
    items = reply.get("TransferFiles")
    names = [
        _STREAMS.get(item, str(item)) if isinstance(item, int) else str(item)
        for item in (items if isinstance(items, list) else [])
    ]
    state = _PeekFiles(names, flow.encrypting)
    while True:
        d = yield from flow.next_message()
        r = flow.expect(d, S2C, "peek file message")
        if r is None:
            continue
        if state.pending:
            flow.note(d, "FILE_DATA", state.data(r.remaining))
            continue
        parts = []
        while not r.at_end():
            parts.append(state.take(flow.int_field(r, "peek file message")))
        flow.note(d, "FILE_COUNT" if state.expect == "end" else "FILE_HEADER", "; ".join(parts))


class _PeekFiles:
    """Where a peek reply is: the next integer's meaning, or body bytes still to come."""

    def __init__(self, names: list[str], encrypted: bool) -> None:
        self.names = names
        self.encrypted = encrypted
        self.index = 0
        self.expect = "size" if names else "count"
        self.pending = 0
        self.size = 0

    def _after_file(self) -> str:
        self.index += 1
        return "size" if self.index < len(self.names) else "count"

    def take(self, value: int) -> str:
        """Describe one integer of the reply's file part."""
        name = self.names[self.index] if self.index < len(self.names) else "?"
        if self.expect == "size":
            self.size = value
            if self.encrypted:
                self.expect = "chunk"
            elif value:
                self.pending, self.expect = value, self._after_file()
            else:
                self.expect = "marker"
            return f"{name}: {value} bytes"
        if self.expect == "chunk":
            if self.size:
                self.pending, self.expect = self.size, self._after_file()
            else:
                self.expect = "marker"
            return f"(chunks of {value})"
        if self.expect == "marker":
            if value != ZERO_LENGTH_MARKER:
                raise ProtocolError(f"expected 666 after the empty {name}, got {value}")
            self.expect = self._after_file()
            return "666 (empty file)"
        if self.expect == "count":
            self.expect = "end"
            return f"{value} files sent (of {len(self.names)})"
        raise ProtocolError("message after the count of files sent")

    def data(self, size: int) -> str:
        name = self.names[self.index - 1] if 0 < self.index <= len(self.names) else "?"
        self.pending -= min(size, self.pending)
        return f"{size} bytes of {name}"


def start_sshd(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Step:
    """1502: the request ad and the starter's answer (its key material is not shown)."""
    if (yield from flow.request_ad(command, first, "start-sshd request", label="request")) is None:
        return
    d, reply = yield from flow.reply_ad("start-sshd reply")
    if reply is None:
        yield from flow.payload_encrypted(command)
        return
    for name in ("SSHPrivateClientKey", "SSHPublicServerKey"):
        if name in reply:
            reply[name] = "<key, not shown>"
    flow.note(d, "SSHD_REPLY", f"start-sshd reply {inline(reply)}")
    yield from flow.opaque("ssh session data")
