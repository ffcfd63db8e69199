"""The dissector's payload part: each command's own exchange after the handshake.

Collector queries and updates, job queries, history, ACT_ON_JOBS, the QMGMT calls and their
replies (layouts from :mod:`cedar.numbers`), CONFIG_VAL, CCB's 67-69
(:mod:`cedar.capture.dissect_ccb`), and the file-transfer commands 488/489
(:mod:`cedar.capture.dissect_transfer`); a command whose layout is not known is shown as data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cedar.capture import dissect_ccb, dissect_peek, dissect_transfer
from cedar.capture.dissect_model import (
    DecodedMessage,
    Flow,
    FlowBase,
    command_name,
    inline,
    quote,
)
from cedar.capture.errors import Undecodable
from cedar.capture.tcp import C2S, S2C
from cedar.classad_wire import ClassAd
from cedar.errors import CedarError
from cedar.numbers import (
    SET_ATTRIBUTE_FLAG_NAMES,
    Command,
    JobAction,
    QmgmtCall,
    expects_reply,
    read_arguments,
)
from cedar.stream.primitives import MessageReader


def _qmgmt_name(number: int) -> str:
    try:
        return QmgmtCall(number).name
    except ValueError:
        return f"rpc {number}"


def _action_label(action: object) -> str:
    """``remove-x`` for JobAction 4 (the spelling of ``cedar`` action commands)."""
    if isinstance(action, int) and not isinstance(action, bool):
        try:
            return re.sub(r"(?<=[a-z])(?=[A-Z])", "-", JobAction(action).name).lower()
        except ValueError:
            pass
    return str(action)


def _flag_names(flags: int) -> str:
    names = [name for bit, name in SET_ATTRIBUTE_FLAG_NAMES.items() if flags & bit]
    rest = flags & ~sum(SET_ATTRIBUTE_FLAG_NAMES)
    if rest:
        names.append(f"{rest:#x}")
    return "|".join(names) or "0"


class PayloadFlow(FlowBase):
    """The command exchanges of one conversation."""

    # -- command payloads ----------------------------------------------------------------------

    def payload(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        """Decode the command's own exchange; ``first`` is a raw start's request message."""
        if self.encrypting and self.decryptor.key is None and not self.decryptor.keys and not first:
            yield from self.payload_encrypted(command)
            return
        handler = self._payload_handlers().get(command) if command is not None else None
        if handler is None and command is not None:
            try:
                name = Command(command).name
            except ValueError:
                name = ""
            if name.startswith("QUERY_"):
                handler = self.collector_query
            elif name.startswith(("UPDATE_", "INVALIDATE_", "MERGE_")):
                handler = self.update
            elif name.startswith("DC_NOP") or command in (
                Command.RESCHEDULE,
                Command.DC_RECONFIG,
                Command.DC_RECONFIG_FULL,
            ):
                handler = self.no_payload
        if handler is None:
            handler = self.generic
        yield from handler(command, first)

    def _payload_handlers(
        self,
    ) -> dict[int, Callable[[int | None, tuple[DecodedMessage, MessageReader] | None], Flow]]:
        return {
            Command.QUERY_JOB_ADS: self.job_query,
            Command.QUERY_JOB_ADS_WITH_AUTH: self.job_query,
            Command.QUERY_USERREC_ADS: self.job_query,
            Command.QUERY_SCHEDD_HISTORY: self.history,
            Command.GET_HISTORY: self.history,
            Command.ACT_ON_JOBS: self.act_on_jobs,
            Command.QMGMT_READ_CMD: self.qmgmt,
            Command.QMGMT_WRITE_CMD: self.qmgmt,
            Command.CONFIG_VAL: self.config_val,
            Command.DC_CONFIG_VAL: self.config_val,
            Command.SPOOL_JOB_FILES_WITH_PERMS: lambda c, f: dissect_transfer.spool(self, c, f),
            Command.TRANSFER_DATA_WITH_PERMS: lambda c, f: dissect_transfer.transfer_data(
                self, c, f
            ),
            Command.GET_JOB_CONNECT_INFO: lambda c, f: dissect_peek.connect_info(self, c, f),
            Command.TRANSFER_QUEUE_REQUEST: lambda c, f: dissect_peek.transfer_queue(self, c, f),
            Command.STARTER_PEEK: lambda c, f: dissect_peek.starter_peek(self, c, f),
            Command.START_SSHD: lambda c, f: dissect_peek.start_sshd(self, c, f),
            Command.CCB_REGISTER: lambda c, f: dissect_ccb.register(self, c, f),
            Command.CCB_REQUEST: lambda c, f: dissect_ccb.request(self, c, f),
            Command.CCB_REVERSE_CONNECT: lambda c, f: dissect_ccb.reverse(self, c, f),
        }

    def collector_query(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        started = yield from self.request_ad(
            command, first, "query ad", name="query", label="query"
        )
        if started is None:
            return
        d, query = started
        d = yield from self.next_message()
        r = self.expect(d, S2C, "query results")
        if r is None:
            yield from self.unexpected_rest()
            return
        names = []
        count = 0
        while True:
            more = self.int_field(r, "result flag")
            if not more:
                break
            count += 1
            ad = self.ad(r, f"result {count}", d)
            names.append(_ad_name(ad))
        self.end(r, "query results")
        self.note(
            d,
            "QUERY_RESULT",
            f"{command_name(command)} result: {count} ad{'s' if count != 1 else ''}"
            + (
                f" ({', '.join(n for n in names[:6] if n)}{', …' if len(names) > 6 else ''})"
                if any(names)
                else ""
            ),
            ads=count,
        )
        yield from self.unexpected_rest()

    def job_query(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        if (
            yield from self.request_ad(
                command, first, "job query ad", name="job query", label="request"
            )
        ) is None:
            return
        count = 0
        while True:
            d = yield from self.next_message()
            r = self.expect(d, S2C, "job ad")
            if r is None:
                continue
            ad = self.ad(r, "job", d)
            self.end(r, "job ad")
            if _int_attr(ad, "Owner") == 0:
                error = ad.get("ErrorCode", 0)
                kind = "summary" if error == 0 else "error"
                self.note(
                    d,
                    "JOB_QUERY_END",
                    f"final {kind} ad after {count} job ad{'s' if count != 1 else ''}: "
                    + inline(
                        ad,
                        ["ErrorCode", "ErrorString", "Jobs", "Idle", "Running", "Held", "MyName"],
                    ),
                    job_ads=count,
                    error_code=error,
                )
                break
            count += 1
            self.note(d, "JOB_AD", f"job ad {_job_id(ad)} ({len(ad)} attributes)", job=_job_id(ad))
        yield from self.unexpected_rest()

    def history(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        if (yield from self.request_ad(command, first, "history request", label="request")) is None:
            return
        records = 0
        while True:
            d = yield from self.next_message()
            r = self.expect(d, S2C, "history records")
            if r is None:
                continue
            parts = []
            final = None
            while not r.at_end():
                ad = self.ad(r, "history record", d)
                owner = _int_attr(ad, "Owner")
                if owner == 0:
                    final = ad
                elif owner == 1:
                    parts.append("streaming header")
                else:
                    records += 1
                    parts.append(f"record {_job_id(ad)}")
            if final is not None:
                parts.append(
                    "final ad "
                    + inline(
                        final,
                        ["NumJobMatches", "AdCount", "MalformedAds", "ErrorCode", "ErrorString"],
                    )
                )
            self.note(d, "HISTORY", "history: " + "; ".join(parts), records=records)
            if final is not None:
                break
        yield from self.unexpected_rest()

    def act_on_jobs(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        started = yield from self.request_ad(command, first, "job action ad", name="job action")
        if started is None:
            return
        d, request = started
        action = request.get("JobAction")
        label = _action_label(action)
        self.note_request(d, command, label, request)
        d = yield from self.next_message()
        r = self.expect(d, S2C, "job action result")
        if r is None:
            yield from self.unexpected_rest()
            return
        if r.remaining == 8:
            value = r.get_int()
            self.note(d, "ACT_RESULT", f"ACT_ON_JOBS refused (int {value})", refused=True)
            yield from self.unexpected_rest()
            return
        result = self.ad(r, "job action result", d)
        self.end(r, "job action result")
        totals = {n: result.get(n) for n in result if str(n).startswith(("result_total_", "job_"))}
        success = result.get("ActionResult")
        self.note(
            d,
            "ACT_RESULT",
            "ACT_ON_JOBS result "
            + inline(result, ["ActionResult", "TotalJobAds"])
            + " "
            + " ".join(f"{k}={v}" for k, v in totals.items() if v),
            action_result=success,
        )
        if success != 1:
            yield from self.unexpected_rest()
            return
        d = yield from self.next_message()
        r = self.expect(d, C2S, "commit confirmation")
        if r is not None:
            value = self.int_field(r, "confirmation")
            self.end(r, "confirmation")
            self.note(d, "ACT_CONFIRM", f"ACT_ON_JOBS client confirms ({value})", value=value)
        d = yield from self.next_message()
        r = self.expect(d, S2C, "commit result")
        if r is not None:
            value = self.int_field(r, "commit result")
            self.end(r, "commit result")
            self.note(d, "ACT_CONFIRM", f"ACT_ON_JOBS committed ({value})", value=value)
        yield from self.unexpected_rest()

    def qmgmt(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        pending: list[tuple[int, str]] = []  # calls awaiting a reply, oldest first
        if first is not None:
            d, r = first
            if not r.at_end():
                call = self._qmgmt_call(d, r, prefix=f"RAW {command_name(command)} ")
                if call is not None:
                    pending.append(call)
        while True:
            d = yield from self.next_message()
            reader = self.reader(d)
            if reader is None:
                self.encrypted_note(d, "QMGMT call" if d.direction == C2S else "QMGMT reply")
                continue
            if d.direction == C2S:
                call = self._qmgmt_call(d, reader)
                if call is not None:
                    pending.append(call)
            else:
                if not pending:
                    raise Undecodable("QMGMT reply without a pending call")
                rpc, label = pending.pop(0)
                self._qmgmt_reply(d, reader, rpc, label)

    def _qmgmt_call(
        self, d: DecodedMessage, r: MessageReader, prefix: str = ""
    ) -> tuple[int, str] | None:
        rpc = self.int_field(r, "QMGMT call number")
        name = _qmgmt_name(rpc)
        values = read_arguments(rpc, r)
        fields: dict[str, Any] = {"rpc": rpc, **values}
        a = {k: v.decode("latin-1") if isinstance(v, bytes) else v for k, v in values.items()}
        if rpc in (QmgmtCall.SetAttribute, QmgmtCall.SetAttribute2):
            fields.setdefault("flags", 0)
            args = f"{a['cluster']}.{a['proc']} {a['name']} = {a['value']}"
            if rpc == QmgmtCall.SetAttribute2:
                args += f" flags={_flag_names(int(a['flags']))}"
        elif rpc in (QmgmtCall.SetAttributeByConstraint, QmgmtCall.SetAttributeByConstraint2):
            fields.setdefault("flags", 0)
            args = f"[{a['constraint']}] {a['name']} = {a['value']}"
            if rpc == QmgmtCall.SetAttributeByConstraint2:
                args += f" flags={_flag_names(int(a['flags']))}"
        elif rpc in (QmgmtCall.SetTimerAttribute,):
            args = f"{a['cluster']}.{a['proc']} {a['name']} {a['duration']}s"
        elif set(a) == {"cluster", "proc"} or set(a) == {"cluster", "proc", "name"}:
            args = " ".join(
                [f"{a['cluster']}.{a['proc']}", *([str(a["name"])] if "name" in a else [])]
            )
        elif rpc in (QmgmtCall.GetNextJobByConstraint, QmgmtCall.GetNextDirtyJobByConstraint):
            args = f"init={a['init']} [{a['constraint']}]"
        elif rpc == QmgmtCall.GetAllJobsByConstraint:
            args = f"[{a['constraint']}] projection={quote(str(a['projection']))}"
        elif rpc in (QmgmtCall.SetJobFactory, QmgmtCall.SetMaterializeData):
            args = (
                f"{a['cluster']} max={a['maximum']} file={quote(str(a['filename']))} "
                f"digest={len(str(a['digest']))} chars"
            )
        elif rpc == QmgmtCall.SendMaterializeData:
            data = fields.pop("data")
            fields["items"] = data.decode("latin-1")
            items = data.count(b"\n")
            args = f"{a['cluster']} flags={a['flags']} items={items} ({len(data)} bytes)"
        elif rpc == QmgmtCall.SendJobQueueAd:
            ad = self.ad(r, "job queue ad", d)
            args = f"{a['cluster']} type={a['ad_type']} flags={a['flags']} " + inline(ad)
        elif rpc == QmgmtCall.SendSpoolFileIfNeeded:
            args = inline(self.ad(r, "spool ad", d))
        elif len(a) == 1:
            # One int (NewProc, GetCapabilities, ...) or one string (SetEffectiveOwner, ...).
            (value,) = a.values()
            args = quote(value) if isinstance(value, str) else str(value)
            if isinstance(value, int):
                fields = {"rpc": rpc, "arg": value}
        else:
            # NewCluster, CommitTransactionNoFlags, Begin/AbortTransaction take no argument.
            args = ""
        expects = expects_reply(rpc, values)
        self.end(r, name)
        label = f"{name}({args})"
        self.note(
            d,
            "QMGMT_CALL",
            f"{prefix}QMGMT {label}" + ("" if expects else "  [no reply expected]"),
            **fields,
        )
        return (rpc, label) if expects else None

    def _qmgmt_reply(self, d: DecodedMessage, r: MessageReader, rpc: int, label: str) -> None:
        fields: dict[str, Any] = {"rpc": rpc}
        if rpc == QmgmtCall.GetCapabilities:
            ad = self.ad(r, "capabilities", d)
            text = inline(ad)
        elif rpc == QmgmtCall.SendMaterializeData:
            fields["spool_file"], fields["rows"] = r.get_string(), r.get_int()
            fields["rval"] = r.get_int()
            text = f"spool file {quote(fields['spool_file'])} rows={fields['rows']}"
            text += f" rval={fields['rval']}"
            if not r.at_end():
                fields["errno"] = r.get_int()
                text += f" errno={fields['errno']}"
        elif rpc == QmgmtCall.GetAllJobsByConstraint:
            jobs = []
            while True:
                rval = r.get_int()
                if rval < 0:
                    errno = r.get_int()
                    break
                jobs.append(_job_id(self.ad(r, "job", d)))
            text = f"{len(jobs)} job ads, end errno={errno}"
        else:
            rval = r.get_int()
            fields["rval"] = rval
            if rval < 0:
                errno = r.get_int()
                fields["errno"] = errno
                text = f"rval={rval} errno={errno}"
                if not r.at_end():
                    ad = self.ad(r, "error", d)
                    text += " " + inline(ad)
            elif rpc == QmgmtCall.GetAttributeFloat:
                text = f"rval={rval} value={r.get_double()}"
            elif rpc == QmgmtCall.GetAttributeInt:
                text = f"rval={rval} value={r.get_int()}"
            elif rpc in (QmgmtCall.GetAttributeString, QmgmtCall.GetAttributeExpr):
                text = f"rval={rval} value={quote(r.get_string())}"
            elif rpc in (
                QmgmtCall.GetJobAd,
                QmgmtCall.GetJobByConstraint,
                QmgmtCall.GetNextJobByConstraint,
                QmgmtCall.GetNextJob,
                QmgmtCall.GetDirtyAttributes,
                QmgmtCall.GetNextDirtyJobByConstraint,
            ):
                ad = self.ad(r, "job", d)
                text = f"rval={rval} job ad {_job_id(ad)} ({len(ad)} attributes)"
            elif rpc in (QmgmtCall.CommitTransaction, QmgmtCall.CommitTransactionNoFlags):
                text = f"rval={rval}"
                if not r.at_end():
                    ad = self.ad(r, "commit result", d)
                    text += " " + (inline(ad) if len(ad) else "+ empty ad")
            else:
                text = f"rval={rval}"
        self.end(r, f"{_qmgmt_name(rpc)} reply")
        self.note(d, "QMGMT_REPLY", f"QMGMT {label} → {text}", **fields)

    def update(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        """UPDATE_*/INVALIDATE_*: ads; later messages on the connection repeat ``int cmd`` + ads."""
        d, r = yield from self.request(command, first, "update ad")
        current = command
        while True:
            if r is not None:
                if d.direction == S2C:
                    value = self.int_field(r, "acknowledgement")
                    self.end(r, "acknowledgement")
                    self.note(d, "UPDATE_ACK", f"{command_name(current)} acknowledged ({value})")
                else:
                    prefix = "RAW " if d.kind == "RAW_COMMAND" else ""
                    if d.kind == "":
                        current = self.int_field(r, "command")
                        prefix = ""
                    ads: list[ClassAd] = []
                    while not r.at_end():
                        ads.append(self.ad(r, f"ad {len(ads) + 1}", d))
                    self.note(
                        d,
                        d.kind or "UPDATE",
                        f"{prefix}{command_name(current)} " + "; ".join(inline(a) for a in ads),
                    )
            d = yield from self.next_message()
            r = self.reader(d)
            if r is None:
                self.encrypted_note(d, f"{command_name(current)} message")

    def config_val(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        d, r = yield from self.request(command, first, "knob name")
        if r is None:
            yield from self.payload_encrypted(command)
            return
        knob = r.get_string()
        self.end(r, "knob name")
        self.note(d, d.kind or "REQUEST", f"{command_name(command)} knob={quote(knob)}")
        d = yield from self.next_message()
        r = self.expect(d, S2C, "configuration value")
        if r is not None:
            values = []
            while not r.at_end():
                values.append(r.get_nullable_string())
            self.note(d, "CONFIG_VALUE", f"{command_name(command)} reply {values}")
        yield from self.unexpected_rest()

    def no_payload(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        if first is not None:
            d, r = first
            self.end(r, command_name(command))
        yield from self.unexpected_rest()

    def generic(
        self, command: int | None, first: tuple[DecodedMessage, MessageReader] | None
    ) -> Flow:
        if first is not None:
            d, r = first
            if not r.at_end():
                d.summary += f" + {r.remaining} payload bytes (layout not known to the dissector)"
        while True:
            d = yield from self.next_message()
            if d.payload is None:
                self.encrypted_note(d, f"{command_name(command)} message")
            else:
                self.note(
                    d,
                    "DATA",
                    f"{command_name(command)} message, {d.size} bytes "
                    f"(layout not known to the dissector)",
                )


def _int_attr(ad: ClassAd, name: str) -> int | None:
    try:
        value = ad.get(name)
    except CedarError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _job_id(ad: ClassAd) -> str:
    cluster, proc = _int_attr(ad, "ClusterId"), _int_attr(ad, "ProcId")
    if cluster is None:
        return "(no ClusterId)"
    return f"{cluster}.{proc}" if proc is not None else str(cluster)


def _ad_name(ad: ClassAd) -> str:
    for key in ("Name", "MyType"):
        if key in ad:
            try:
                return str(ad.get(key))
            except CedarError:
                return ad.raw_text(key)
    return ""
