"""Every recorded capture decodes completely and runs the commands its index names."""

from __future__ import annotations

import pytest

from cedar.capture import dissect
from cedar.numbers import Command

from .conftest import CAPTURES, capture_index

_STATUS_TYPES = {
    "-schedd": Command.QUERY_SCHEDD_ADS,
    "-any": Command.QUERY_ANY_ADS,
    "-master": Command.QUERY_MASTER_ADS,
    "-collector": Command.QUERY_COLLECTOR_ADS,
    "-negotiator": Command.QUERY_NEGOTIATOR_ADS,
    "-submitters": Command.QUERY_SUBMITTOR_ADS,
}


def expected_commands(name: str, command: str) -> list[int | None]:
    """The command sequence a tool invocation of the index must produce."""
    words = command.split()
    tool = words[0] if words[0] != "python" else words[1]
    if tool == "condor_status":
        chosen: list[int | None] = [c for flag, c in _STATUS_TYPES.items() if flag in words]
        return chosen or [Command.QUERY_STARTD_ADS]
    if tool == "condor_q":
        # condor_q asks for "my jobs" (authenticated, 519) unless -all (spec 05 §3.1).
        return [Command.QUERY_JOB_ADS if "-all" in words else Command.QUERY_JOB_ADS_WITH_AUTH]
    if tool == "condor_submit" and "-spool" in words:
        # 488 runs on the session of the 1112, then RESCHEDULE (spec 07 §2.2)
        return [Command.QMGMT_WRITE_CMD, Command.SPOOL_JOB_FILES_WITH_PERMS, Command.RESCHEDULE]
    if tool == "condor_transfer_data":
        return [Command.TRANSFER_DATA_WITH_PERMS]
    if tool == "spool-bindings.py":
        return _spool_bindings(words[2])
    if tool == "condor_submit":
        # RESCHEDULE follows on its own connection; over UDP to the super port and then
        # encrypted with the session's legacy key, so its command is not visible (None).
        return [Command.QMGMT_WRITE_CMD, None if name.endswith("-aes") else Command.RESCHEDULE]
    if tool in ("condor_hold", "condor_rm"):
        return [Command.ACT_ON_JOBS]
    if tool == "condor_release":
        return [Command.ACT_ON_JOBS, Command.RESCHEDULE]  # observed: a UDP RESCHEDULE follows
    if tool == "condor_qedit":
        return [Command.QMGMT_WRITE_CMD]
    if tool == "condor_ping":
        return [Command.DC_SEC_QUERY]
    if tool == "history.py":
        return [Command.QUERY_SCHEDD_HISTORY]
    if tool == "condor_history":
        # -startd asks the startd itself (GET_HISTORY), everything else the schedd (spec 08 §2.1)
        return [Command.GET_HISTORY if "-startd" in words else Command.QUERY_SCHEDD_HISTORY]
    if tool == "bindings.py":
        return [
            Command.QUERY_JOB_ADS,
            Command.QUERY_JOB_ADS,
            Command.QMGMT_WRITE_CMD,
            Command.RESCHEDULE,
        ]
    raise AssertionError(f"index entry {command!r} has no expectation")


def _spool_bindings(scenario: str) -> list[int | None]:
    """spool-bindings.py: submit(spool=True) (1112 + 421), spool() (488), a query (516)."""
    if scenario in ("retrieve", "nomatch"):
        return [Command.TRANSFER_DATA_WITH_PERMS]
    submit = [Command.QMGMT_WRITE_CMD, Command.RESCHEDULE]
    spools = [Command.SPOOL_JOB_FILES_WITH_PERMS] * (2 if scenario == "twice" else 1)
    edit = [Command.QMGMT_WRITE_CMD] if scenario == "heldother" else []
    return submit + edit + spools + [Command.QUERY_JOB_ADS]


ROWS = capture_index()


def test_index_lists_every_capture_in_the_repo() -> None:
    names = {row["name"] for row in ROWS}
    files = {p.stem for p in CAPTURES.glob("*.pcap")}
    assert names == files
    assert len(names) == 52


@pytest.mark.parametrize("row", ROWS, ids=[row["name"] for row in ROWS])
def test_capture_decodes_to_its_index(row: dict[str, str]) -> None:
    conversations = dissect(CAPTURES / f"{row['name']}.pcap", strict=True)
    # A connection that carried no CEDAR bytes at all (a stray segment) runs no command.
    commands = [c.command for c in conversations if c.messages or c.transport != "tcp"]
    assert commands == expected_commands(row["name"], row["command"])
    for conv in conversations:
        for message in conv.messages:
            assert message.kind and message.kind != "UNDECODED", message.summary
    security = row["security"]
    tcp = [c for c in conversations if c.transport == "tcp" and c.messages]
    if security == "raw":
        assert all(c.start == "raw" for c in tcp)
        assert not any(m.encrypted for c in tcp for m in c.messages)
    else:
        assert tcp[0].start == "negotiated"
        encrypted = any(m.encrypted for c in tcp for m in c.messages)
        assert encrypted == security.endswith("-aes")
    if security == "plain":
        assert tcp[0].facts["method"] == "CLAIMTOBE"
        assert tcp[0].facts["user"] == "testuser@minicondor"
    if security == "token-aes":
        assert tcp[0].facts["method"] == "TOKEN"
    # A tool run as testuser reaches the schedd through the shared port with the preamble
    # (README); the collector is the port's default target and needs none (spec 03 §8.5).
    has_preamble = "shared_port_id" in tcp[0].facts
    to_schedd = tcp[0].command not in (Command.DC_SEC_QUERY,) or "schedd" in row["command"]
    to_schedd = to_schedd and not row["command"].startswith("condor_status")
    assert has_preamble == (row["as_user"] == "testuser" and to_schedd)


def test_ping_reports_authorization_and_level() -> None:
    (conv,) = dissect(CAPTURES / "ping-collector-read-plain.pcap")
    assert conv.facts["auth_command"] == "DC_NOP_READ(60020)"
    last = conv.messages[-1]
    assert last.kind == "SEC_QUERY_RESULT"
    assert last.fields["authorized"] is True


def test_fs_rejection_and_token_fallback_are_visible() -> None:
    # The 25.14.1 bindings append ?sock= to the FS suffix; 25.13.2 rejects it (spec 04 §2.3).
    conv = dissect(CAPTURES / "bindings-query-twice-submit-fs-aes.pcap")[0]
    fs = [m for m in conv.messages if m.kind == "FS"]
    assert fs[1].fields["ext"] == "127.0.0.1:9618?sock=schedd_7324_5fc6"
    assert fs[2].fields["result"] == -1
    chosen = [m.fields["chosen"] for m in conv.messages if m.kind == "AUTH_CHOSEN"]
    assert chosen == [0x4, 0x800]
    assert conv.facts["method"] == "TOKEN"
    token = [m for m in conv.messages if m.kind == "TOKEN"][0]
    assert token.fields["token_claims"]["sub"] == "testuser@minicondor"
    assert "signature" not in token.summary


def test_submit_decodes_every_qmgmt_call() -> None:
    conv = dissect(CAPTURES / "submit-2procs-plain.pcap")[0]
    calls = [m.fields["rpc"] for m in conv.messages if m.kind == "QMGMT_CALL"]
    assert calls[:3] == [10036, 10002, 10003]
    assert calls[-2:] == [10007, 10028]
    replies = [m for m in conv.messages if m.kind == "QMGMT_REPLY"]
    assert [r.fields["rpc"] for r in replies] == [10036, 10002, 10003, 10003, 10007]
    assert replies[1].fields["rval"] == 15  # the new cluster id
    set_attrs = {
        (m.fields["proc"], m.fields["name"]): m.fields["value"]
        for m in conv.messages
        if m.fields.get("rpc") == 10027
    }
    assert set_attrs[(-1, "Cmd")] == '"/bin/sleep"'
    assert set_attrs[(1, "ProcId")] == "1"


def test_query_results_are_counted() -> None:
    (conv,) = dissect(CAPTURES / "status-startd-long-raw.pcap")
    reply = conv.messages[-1]
    assert reply.fields["ads"] == 4
    assert len(reply.ads) == 4
    assert all(len(ad) > 100 for _, ad in reply.ads)
    assert conv.messages[-1].packets == 6  # 21 597 bytes in 4091-byte packets (spec 01 §2.4)


def test_udp_reschedule_of_condor_release() -> None:
    convs = dissect(CAPTURES / "release-cluster-plain.pcap")
    udp = convs[1]
    assert udp.transport == "udp"
    assert udp.start == "udp"
    assert udp.facts["session"] == convs[0].facts["session"]


def test_encrypted_udp_names_its_session() -> None:
    convs = dissect(CAPTURES / "submit-token-aes.pcap")
    (message,) = convs[1].messages
    assert message.kind == "UDP_ENCRYPTED"
    assert message.fields["session"] == "vm:7338:1795307160:48"
