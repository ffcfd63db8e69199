"""Dissecting SPOOL_JOB_FILES_WITH_PERMS (488) and TRANSFER_DATA_WITH_PERMS (489).

The file-transfer sub-protocol (spec 07 §7) is followed per direction: the uploader's messages
(header, item commands, names, go-ahead, modes, sizes, bodies, its report) and the
downloader's (go-ahead ads, its alive interval, its report) interleave in time, so each
message is decoded by the state of its own side.  File names, modes and sizes are shown; file
contents are only in the payload (``cedar decode -vv``).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cedar.capture.tcp import C2S, S2C
from cedar.commands.filetransfer import (
    MISSING_FILE_PERMISSIONS,
    ZERO_LENGTH_MARKER,
    TransferCommand,
)

if TYPE_CHECKING:
    from cedar.capture.dissect_model import DecodedMessage, FlowBase
    from cedar.capture.messages import WireMessage
    from cedar.stream.primitives import MessageReader

Step = Generator[None, "tuple[WireMessage, DecodedMessage]", None]

_COMMAND_NAMES = {c.value: c.name.lower() for c in TransferCommand}


def _mode(mode: int) -> str:
    if mode == MISSING_FILE_PERMISSIONS:
        return "missing (0x1000000)"
    return f"0{mode & 0o7777:o}" if mode < 0o10000 else f"0{mode:o}"


@dataclass
class _Sandbox:
    """What is known of one job's transfer while it is dissected."""

    uploader: str
    label: str
    state: str = "header"
    command: int = 0
    name: str = ""
    first: bool = True
    size: int = 0
    received: int = 0
    items: list[str] = field(default_factory=list)
    reports: int = 0

    @property
    def downloader(self) -> str:
        return S2C if self.uploader == C2S else C2S


def sandbox(
    flow: FlowBase, uploader: str, label: str
) -> Generator[None, tuple[WireMessage, DecodedMessage], None]:
    """One job's sub-protocol, until both reports have been seen."""
    box = _Sandbox(uploader, label)
    while box.reports < 2:
        d = yield from flow.next_message()
        r = flow.reader(d)
        if r is None:
            flow.encrypted_note(d, f"file transfer of {label}")
            continue
        if d.direction == box.uploader:
            _uploader_message(flow, box, d, r)
        else:
            _downloader_message(flow, box, d, r)


def _uploader_message(flow: FlowBase, box: _Sandbox, d: DecodedMessage, r: MessageReader) -> None:
    state = box.state
    who = "uploader"
    if state == "header":
        final = flow.int_field(r, "final-transfer flag")
        ad = flow.ad(r, "sandbox", d)
        flow.end(r, "transfer header")
        size = ad.get("SandboxSize")
        flow.note(
            d,
            "FT_HEADER",
            f"{box.label}: transfer header final={final} SandboxSize={size}",
            final_transfer=final,
            sandbox_size=size,
        )
        box.state = "command"
    elif state == "command":
        command = flow.int_field(r, "transfer command")
        flow.end(r, "transfer command")
        box.command = command
        name = _COMMAND_NAMES.get(command, str(command))
        flow.note(d, "FT_COMMAND", f"{who}: item command {command} ({name})", command=command)
        box.state = "report" if command == 0 else "name"
    elif state == "name":
        box.name = r.get_string()
        flow.end(r, "file name")
        flow.note(d, "FT_NAME", f"{who}: name {box.name!r}", name=box.name)
        box.items.append(box.name)
        if box.command not in (1, 2, 3, 6):
            box.state = "unknown"
        else:
            box.state = "g1" if box.first else "mode"
    elif state == "g1":
        alive = flow.int_field(r, "alive interval")
        flow.end(r, "go-ahead request")
        flow.note(d, "FT_GO_AHEAD_ASK", f"{who} asks to go ahead (alive {alive} s)", alive=alive)
        box.state = "g5"
    elif state == "g5":
        ad = flow.ad(r, "go-ahead", d)
        flow.end(r, "go-ahead")
        flow.note(
            d, "FT_GO_AHEAD", f"{who} grants: Result={ad.get('Result')}", result=ad.get("Result")
        )
        box.state, box.first = "mode", False
    elif state == "mode":
        mode = flow.int_field(r, "mode")
        flow.end(r, "mode")
        if box.command == TransferCommand.MKDIR:
            flow.note(d, "FT_MKDIR", f"mkdir {box.name!r} mode {_mode(mode)}", mode=mode)
            box.state = "command"
        else:
            flow.note(d, "FT_MODE", f"{box.name!r} mode {_mode(mode)}", mode=mode)
            box.state = "size"
    elif state == "size":
        size = flow.int_field(r, "file size")
        chunk = r.get_int() if not r.at_end() else None
        flow.end(r, "file size")
        box.size, box.received = size, 0
        text = f"{box.name!r} size {size}" + (f" (chunks of {chunk})" if chunk else "")
        flow.note(d, "FT_SIZE", text, size=size, chunk=chunk)
        box.state = "marker" if size == 0 else "body"
    elif state == "marker":
        marker = flow.int_field(r, "zero-length marker")
        flow.end(r, "zero-length marker")
        if marker != ZERO_LENGTH_MARKER:
            raise ValueError(f"expected the zero-length marker 666, got {marker}")
        flow.note(d, "FT_EMPTY", f"{box.name!r}: empty file (666)")
        box.state = "command"
    elif state == "body":
        count = len(d.payload or b"")
        box.received += count
        flow.note(
            d,
            "FT_BODY",
            f"{box.name!r}: {count} bytes of file body"
            + (" (raw, no packet header)" if d.raw else "")
            + f" [{box.received}/{box.size}]",
            name=box.name,
            bytes=count,
        )
        if box.received >= box.size:
            box.state = "command"
    elif state == "report":
        _report(flow, box, d, r, who)
    else:
        raise ValueError(f"item command {box.command} has no layout known to the dissector")


def _downloader_message(flow: FlowBase, box: _Sandbox, d: DecodedMessage, r: MessageReader) -> None:
    who = "downloader"
    if box.state == "report" and box.reports == 1:
        _report(flow, box, d, r, who)
        return
    if len(d.payload or b"") == 8:
        alive = flow.int_field(r, "alive interval")
        flow.note(d, "FT_GO_AHEAD_ASK", f"{who} asks to go ahead (alive {alive} s)", alive=alive)
        return
    ad = flow.ad(r, "go-ahead", d)
    flow.end(r, "go-ahead")
    result = ad.get("Result")
    extra = {k: ad.get(k) for k in ("MaxTransferBytes", "Timeout") if k in ad}
    flow.note(
        d,
        "FT_GO_AHEAD",
        f"{who} {'grants' if result == 2 else 'answers'}: Result={result}"
        + "".join(f" {k}={v}" for k, v in extra.items()),
        result=result,
        **{k.lower(): v for k, v in extra.items()},
    )


def _report(flow: FlowBase, box: _Sandbox, d: DecodedMessage, r: MessageReader, who: str) -> None:
    ad = flow.ad(r, "report", d)
    flow.end(r, "transfer report")
    result = ad.get("Result")
    text = f"{who}'s report: Result={result}"
    if result != 0:
        code, subcode = ad.get("HoldReasonCode"), ad.get("HoldReasonSubCode")
        text += f" HoldReasonCode={code} HoldReasonSubCode={subcode}"
    flow.note(d, "FT_REPORT", text, result=result, role=who)
    box.reports += 1


def spool(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Generator[None, tuple[WireMessage, DecodedMessage], None]:
    """488: version and count, the job ids, a sandbox per job (client uploads), ``I(1)``."""
    d, r = yield from flow.request(command, first, "spool request")
    if r is None:
        yield from flow.payload_encrypted(command)
        return
    version = r.get_string()
    count = flow.int_field(r, "job count")
    flow.end(r, "spool request")
    flow.note(
        d,
        "SPOOL_REQUEST",
        f"spool files of {count} job(s), client {version!r}",
        jobs=count,
        version=version,
    )
    d = yield from flow.next_message()
    r = flow.expect(d, C2S, "job ids")
    if r is None:
        yield from flow.payload_encrypted(command)
        return
    ids = []
    for _ in range(max(0, min(count, 100_000))):
        ids.append(f"{flow.int_field(r, 'cluster')}.{flow.int_field(r, 'proc')}")
    flow.end(r, "job ids")
    flow.note(d, "SPOOL_JOB_IDS", "jobs " + ", ".join(ids), jobs=ids)
    for job in ids:
        yield from sandbox(flow, C2S, f"job {job}")
    d = yield from flow.next_message()
    r = flow.expect(d, S2C, "spool result")
    if r is not None:
        ok = flow.int_field(r, "spool result")
        flow.end(r, "spool result")
        flow.note(d, "SPOOL_RESULT", f"schedd: {'OK' if ok == 1 else 'NOT OK'} ({ok})", result=ok)
    yield from flow.unexpected_rest()


def transfer_data(
    flow: FlowBase, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
) -> Generator[None, tuple[WireMessage, DecodedMessage], None]:
    """489: version and constraint, a count, per job its ad and a sandbox (schedd uploads),
    then the client's ``I(1)``."""
    d, r = yield from flow.request(command, first, "transfer-data request")
    if r is None:
        yield from flow.payload_encrypted(command)
        return
    version = r.get_string()
    constraint = r.get_string()
    flow.end(r, "transfer-data request")
    flow.note(
        d,
        "TRANSFER_DATA_REQUEST",
        f"fetch output of jobs matching {constraint!r}, client {version!r}",
        constraint=constraint,
        version=version,
    )
    d = yield from flow.next_message()
    r = flow.expect(d, S2C, "job count")
    if r is None:
        yield from flow.payload_encrypted(command)
        return
    count = flow.int_field(r, "job count")
    flow.end(r, "job count")
    flow.note(d, "TRANSFER_DATA_COUNT", f"{count} job(s) to send", jobs=count)
    for _ in range(max(0, min(count, 100_000))):
        d = yield from flow.next_message()
        r = flow.expect(d, S2C, "job ad")
        if r is None:
            continue
        ad = flow.ad(r, "job", d)
        flow.end(r, "job ad")
        job = f"{ad.get('ClusterId')}.{ad.get('ProcId')}"
        flow.note(d, "JOB_AD", f"job ad {job} ({len(ad)} attributes)", job=job)
        yield from sandbox(flow, S2C, f"job {job}")
    d = yield from flow.next_message()
    r = flow.expect(d, C2S, "client's acknowledgement")
    if r is not None:
        ok = flow.int_field(r, "acknowledgement")
        flow.end(r, "acknowledgement")
        flow.note(
            d, "TRANSFER_DATA_ACK", f"client: {'OK' if ok == 1 else 'NOT OK'} ({ok})", result=ok
        )
    yield from flow.unexpected_rest()


__all__ = ["sandbox", "spool", "transfer_data"]
