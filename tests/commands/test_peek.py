"""Peek and follow, client side, against the condor_tail recordings (spec 08 §8, §9.5).

The ``tail-*-raw`` recordings carry the claim id in clear, so the claim-id session key is known
and the AES-GCM STARTER_PEEK conversations can be replayed byte for byte: with the recorded
nonce, cedar's resume message is the very one ``condor_tail`` sent, so the starter's recorded
encrypted answer authenticates against cedar's transcript.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import Any

import pytest

from cedar.auth.client import CommandSession, start_command
from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.capture import load_conversations
from cedar.capture.messages import Conversation, WireMessage
from cedar.classad_wire import ClassAd, get_classad
from cedar.commands import peek
from cedar.commands.base import command_protocol, resolve_address
from cedar.commands.peek import (
    ConnectInfo,
    FollowState,
    JobNotRunning,
    PeekFileError,
    PeekRefused,
    PeekResult,
    PeekTarget,
    StarterClaim,
)
from cedar.errors import InvalidArgument, ProtocolError
from cedar.numbers import Command, JobStatus
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import ReplayChannel
from cedar.stream.primitives import MessageReader
from cedar.stream.protocol import Protocol
from tests.support import CAPTURES

TAIL = CAPTURES / "tail"
VERSION_25_13 = "$CondorVersion: 25.13.2 2026-11-24 $"
JOB = (7, 0)


def conversations(name: str) -> list[Conversation]:
    return load_conversations(str(TAIL / f"{name}.pcap"))


def sides(conv: Conversation) -> tuple[list[WireMessage], list[WireMessage]]:
    """(client messages, server messages) of a conversation."""
    client = [m for m in conv.messages if m.direction == conv.messages[0].direction]
    server = [m for m in conv.messages if m.direction != conv.messages[0].direction]
    return client, server


def by_command(name: str, command: int) -> list[Conversation]:
    """The conversations whose command (after the preamble) is ``command``."""
    found = []
    for conv in conversations(name):
        client, _ = sides(conv)
        first = client[1] if len(client) > 1 else client[0]
        reader = MessageReader(first.body)
        number = reader.get_int()
        if number == 60010:  # a resumption: the command is in the ad
            number = int(get_classad(reader)["Command"])
        if number == command:
            found.append(conv)
    return found


def connect_info(name: str, index: int = 0) -> tuple[ConnectInfo, Conversation]:
    """Replay the 509 body against the recorded reply (the in-band FS before it is the
    framework's business); returns what cedar made of it."""
    conv = by_command(name, Command.GET_JOB_CONNECT_INFO)[index]
    client, server = sides(conv)
    channel = ReplayChannel(server[-1].wire)
    session = CommandSession(channel.conn, Command.GET_JOB_CONNECT_INFO, raw=False)
    session.authenticated_user = "testuser@minicondor"
    info = channel.run(peek.connect_info_body(JOB)(session))
    assert channel.sent == [client[-1].wire]  # byte for byte the tool's request
    return info, conv


def _recorded_nonce(resume: WireMessage) -> bytes:
    reader = MessageReader(resume.body)
    assert reader.get_int() == 60010
    return base64.b64decode(str(get_classad(reader)["Nonce"]))


class _Decryptor:
    """The starter's view of a resumed conversation, to read what the client encrypted."""

    def __init__(self, key: bytes, resume: bytes, response: WireMessage) -> None:
        self.conn = CedarConnection()
        self.conn.receive_data(resume)
        assert self.conn.next_message() is not None
        assert self.conn.send_message(response.body) == response.wire
        self.conn.install_aes_key(key)

    def read(self, wire: bytes) -> bytes:
        self.conn.receive_data(wire)
        message = self.conn.next_message()
        assert message is not None
        return message.get_bytes(message.remaining)


def replay_starter(
    conv: Conversation,
    info: ConnectInfo,
    body: Callable[[CommandSession], Protocol[Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Any, bytes, bytes]:
    """Run ``body`` over the claim-id session against a recorded starter conversation.

    Returns (result, cedar's request plaintext, the tool's request plaintext).
    """
    client, server = sides(conv)
    preamble, resume = client[0], client[1]
    nonce = _recorded_nonce(resume)
    real = os.urandom
    monkeypatch.setattr("cedar.auth.client.urandom", lambda n: nonce if n == 33 else real(n))
    security = ClientSecurity(SecurityConfig(version=VERSION_25_13, methods=["FS"]))
    own = peek.claim_security(info, security)
    channel = ReplayChannel(b"".join(m.wire for m in server))
    target = resolve_address(info.starter_address)
    proto = command_protocol(
        channel.conn, target, Command.STARTER_PEEK, body, security=own, raw=False, deadline=60
    )
    try:
        result: Any = channel.run(proto)
    except Exception as exc:  # noqa: BLE001  (the caller checks the error)
        result = exc
    assert channel.sent[0] == preamble.wire
    assert channel.sent[1] == resume.wire  # the very resume message condor_tail sent
    key = info.claim.session(info.owner).key
    assert key is not None
    ours = _Decryptor(key, resume.wire, server[0]).read(channel.sent[2])
    theirs = _Decryptor(key, resume.wire, server[0]).read(client[2].wire)
    return result, ours, theirs


def request_ad(plaintext: bytes) -> ClassAd:
    reader = MessageReader(plaintext, crypto=True)
    ad = get_classad(reader)
    reader.end_of_message()
    return ad


def without_version(ad: ClassAd) -> dict[str, str]:
    return {name: ad.raw_text(name) for name in ad if name != "CondorVersion"}


# -- the claim id ------------------------------------------------------------------------------


def test_key_derivation_test_vector_of_spec_08() -> None:
    claim = StarterClaim.parse(
        'df3fc39c2ef526b0c136bbeed6644ae044d9ba54948da10b#[Encryption="YES";Integrity="YES";]'
        '[Integrity="YES";Encryption="YES";ShortVersion="25.13.2";CryptoMethods="BLOWFISH";'
        'CryptoMethodsList="AES.BLOWFISH.3DES";]'
        "dfa67a888b05d149e8b5b549fd0b7692a61cf695e1e2b6b0151e4b3e60253c56"
    )
    assert claim.session_id == "df3fc39c2ef526b0c136bbeed6644ae044d9ba54948da10b"
    assert claim.crypto_method() == "AES"  # CryptoMethodsList wins over the legacy CryptoMethods
    session = claim.session("testuser")
    assert session.key is not None
    assert session.key.hex() == "a52813e837fbece2c4a488d5486ae545a2393420fdc006aa8d6f94d64b6f8bf3"
    assert session.remote_version == "$CondorVersion: 25.13.2 $"
    assert Command.STARTER_PEEK in session.valid_commands
    for text in (repr(claim), repr(session)):
        assert "dfa67a" not in text and "df3fc3" not in text


@pytest.mark.parametrize(
    "claim_id",
    ["no-hash-here", "#[A=1;]key", "sid#A=1;]key", "sid#[A=1;]", 'sid#[A="1;]key'],
)
def test_malformed_claim_ids_are_protocol_errors_that_do_not_quote_them(claim_id: str) -> None:
    with pytest.raises(ProtocolError) as err:
        StarterClaim.parse(claim_id)
    assert claim_id not in str(err.value)


def test_a_starter_without_aes_is_refused_clearly() -> None:
    claim = StarterClaim.parse('sid#[CryptoMethodsList="BLOWFISH.3DES";]key')
    with pytest.raises(Exception, match="cedar speaks AES-GCM"):
        claim.session("u")
    assert StarterClaim.parse("sid#key").key_text == "key"  # no session info: after the '#'


# -- replaying the recordings ------------------------------------------------------------------


def test_connect_info_from_the_recording() -> None:
    info, _ = connect_info("tail-stdout-raw")
    assert info.starter_address.endswith("sock=slot1_24666_2da4_11>")
    assert info.remote_host == "slot1@vm"
    assert info.version == VERSION_25_13
    assert info.owner == "testuser"
    assert info.claim.session_id.startswith("df3fc39c")
    assert "df3fc39c" not in repr(info) and "ClaimId" not in repr(info)


def test_held_job_is_not_running_with_the_schedds_reason() -> None:
    convs = by_command("tail-held-raw", Command.GET_JOB_CONNECT_INFO)
    assert len(convs) == 2  # condor_tail asked twice (and would forever)
    client, server = sides(convs[0])
    channel = ReplayChannel(server[-1].wire)
    session = CommandSession(channel.conn, Command.GET_JOB_CONNECT_INFO, raw=False)
    with pytest.raises(JobNotRunning) as err:
        channel.run(peek.connect_info_body((12, 0))(session))
    assert channel.sent == [client[-1].wire]
    assert str(err.value) == "Job 12.0 is not running."
    assert err.value.retry and err.value.job_status == JobStatus.HELD
    assert err.value.hold_reason == "submitted on hold at user's request"
    assert not err.value.finished


def test_transfer_queue_request_and_release_as_the_tool() -> None:
    (conv,) = by_command("tail-stdout-raw", Command.TRANSFER_QUEUE_REQUEST)
    client, server = sides(conv)
    channel = ReplayChannel(server[0].wire)

    def proto() -> Protocol[Any]:
        session = yield from start_command(channel.conn, Command.TRANSFER_QUEUE_REQUEST, raw=True)
        slot = yield from peek.transfer_queue_body(JOB, "stdout", "testuser")(session)
        yield from peek.release_slot(channel.conn, slot)
        return slot

    slot = channel.run(proto())
    assert slot.report_interval == 10
    assert channel.sent[0] == client[1].wire  # raw: the command int and the ad in one message
    report = MessageReader(MessageReader(channel.sent[1][5:]).get_bytes(len(channel.sent[1]) - 5))
    fields = report.get_string().split()
    theirs = MessageReader(client[2].body).get_string().split()
    assert len(fields) == len(theirs) == 8 and all(f.isdigit() for f in fields)
    assert channel.sent[2] == client[3].wire  # the empty string that gives the slot back


def test_refused_transfer_queue_is_a_clear_error() -> None:
    (conv,) = by_command("tail-refused-raw", Command.TRANSFER_QUEUE_REQUEST)
    client, server = sides(conv)
    assert server == []  # the schedd closed at once
    channel = ReplayChannel(b"")

    def proto() -> Protocol[Any]:
        session = yield from start_command(channel.conn, Command.TRANSFER_QUEUE_REQUEST, raw=True)
        return (yield from peek.transfer_queue_body(JOB, "stdout", "testuser")(session))

    with pytest.raises(Exception, match="closed"):
        channel.run(proto())
    assert channel.sent == [client[1].wire]
    printed = (TAIL / "tail-refused-raw.out").read_text().splitlines()[0]
    assert printed.startswith("Failed to receive transfer queue response")


def test_peek_stdout_replays_byte_for_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    info, _ = connect_info("tail-stdout-raw")
    (conv,) = by_command("tail-stdout-raw", Command.STARTER_PEEK)
    target = PeekTarget()
    result, ours, theirs = replay_starter(conv, info, peek.peek_body(target, 30), monkeypatch)
    assert isinstance(result, PeekResult)
    assert without_version(request_ad(ours)) == without_version(request_ad(theirs))
    assert request_ad(theirs)["MaxTransferBytes"] == 30
    (stdout,) = result.files
    assert (stdout.name, stdout.offset) == ("stdout", 3894)
    assert stdout.data == b"dout line 251\nstdout line 252\n"
    assert stdout.data.decode() == (TAIL / "tail-stdout-raw.out").read_text().rsplit("exit", 1)[0]
    assert result.offsets == {"stdout": 3924}


def test_peek_stderr_and_a_named_file_share_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    info, _ = connect_info("tail-stderr-file-raw")
    (conv,) = by_command("tail-stderr-file-raw", Command.STARTER_PEEK)
    target = peek.make_target(False, True, ["progress.txt"], None)
    result, ours, theirs = replay_starter(conv, info, peek.peek_body(target, 40), monkeypatch)
    assert without_version(request_ad(ours)) == without_version(request_ad(theirs))
    assert [(f.name, f.offset, len(f.data)) for f in result.files] == [
        ("stderr", 3916, 40),
        ("progress.txt", 13, 0),  # budget used up: sent empty (its 666 shares the count's message)
    ]
    printed = (TAIL / "tail-stderr-file-raw.out").read_text().rsplit("exit", 1)[0]
    assert result.files[0].data.decode() == printed
    assert result.missing == []


def test_a_file_outside_the_transfer_list_is_a_file_error(monkeypatch: pytest.MonkeyPatch) -> None:
    info, _ = connect_info("tail-badfile-raw")
    (conv,) = by_command("tail-badfile-raw", Command.STARTER_PEEK)
    target = peek.make_target(False, False, ["tailjob.sh"], None)
    error, ours, theirs = replay_starter(conv, info, peek.peek_body(target, 1024), monkeypatch)
    assert without_version(request_ad(ours)) == without_version(request_ad(theirs))
    assert isinstance(error, PeekFileError) and error.name == "tailjob.sh"
    assert str(error) == "File tailjob.sh requested but not authorized to be sent."
    printed = (TAIL / "tail-badfile-raw.out").read_text()
    assert str(error) in printed


def test_follow_reads_on_where_condor_tail_rereads(monkeypatch: pytest.MonkeyPatch) -> None:
    """tail-follow-raw: the starter answers offset 0 to the second request (quirk 1); the
    tool then asks for byte 20 and prints the file's start.  cedar continues after byte 4008."""
    info, _ = connect_info("tail-follow-raw")
    convs = by_command("tail-follow-raw", Command.STARTER_PEEK)
    state = FollowState(PeekTarget())
    shown = b""
    asked = []
    for conv in convs[:2]:
        target = state.next_target()
        asked.append(target.offset("stdout"))
        result, ours, theirs = replay_starter(conv, info, peek.peek_body(target, 20), monkeypatch)
        assert request_ad(ours)["OutOffset"] == request_ad(theirs)["OutOffset"]
        shown += b"".join(piece.data for piece in state.take(result))
    assert asked == [-1, 3988]
    tool = (TAIL / "tail-follow-raw.out").read_text().rsplit("exit", 1)[0].encode()
    assert shown == tool[:40]  # the first two peeks: the same 40 bytes
    assert state.next_target().offset("stdout") == 4008  # condor_tail asked for 20 instead
    assert tool[40:].startswith(b" line 2\n")  # ...and printed bytes 20.. of the file


def test_ssh_to_job_first_exchange(monkeypatch: pytest.MonkeyPatch) -> None:
    (qmgmt,) = by_command("ssh-to-job-raw", Command.QMGMT_READ_CMD)
    assert MessageReader(sides(qmgmt)[0][1].body).get_int() == Command.QMGMT_READ_CMD
    info, _ = connect_info("ssh-to-job-raw")
    (conv,) = by_command("ssh-to-job-raw", Command.START_SSHD)

    body = peek.start_sshd_body(info.remote_host)
    client, server = sides(conv)
    nonce = _recorded_nonce(client[1])
    real = os.urandom
    monkeypatch.setattr("cedar.auth.client.urandom", lambda n: nonce if n == 33 else real(n))
    own = peek.claim_security(info, ClientSecurity(SecurityConfig(version=VERSION_25_13)))
    channel = ReplayChannel(b"".join(m.wire for m in server))
    target = resolve_address(info.starter_address)
    proto = command_protocol(
        channel.conn, target, Command.START_SSHD, body, security=own, raw=False, deadline=60
    )
    with pytest.raises(PeekRefused) as err:
        channel.run(proto)
    assert channel.sent[1] == client[1].wire
    key = info.claim.session(info.owner).key
    assert key is not None
    ours = _Decryptor(key, client[1].wire, server[0]).read(channel.sent[2])
    theirs = _Decryptor(key, client[1].wire, server[0]).read(client[2].wire)
    assert ours == theirs  # { Name = "slot1@vm"; Shell = "/bin/bash" }
    printed = (TAIL / "ssh-to-job-raw.out").read_text().splitlines()[0]
    assert printed == f"slot1@vm: {err.value}"


# -- the pure pieces ----------------------------------------------------------------------------


def test_job_ids() -> None:
    assert peek.job_id_of("7.0") == (7, 0)
    assert peek.job_id_of("7") == (7, 0)
    assert peek.job_id_of(7) == (7, 0)
    assert peek.job_id_of((7, 3)) == (7, 3)
    for bad in ("7.0 8.0", "Owner == 1", "x", "7.x"):
        with pytest.raises(InvalidArgument):
            peek.job_id_of(bad)


def test_arguments_are_checked() -> None:
    with pytest.raises(InvalidArgument, match="nothing to peek at"):
        peek.make_target(False, False, (), None)
    with pytest.raises(InvalidArgument):
        peek.make_target(True, False, ("",), None)
    with pytest.raises(InvalidArgument):
        peek.make_target(True, False, (), {"stdout": "1"})  # type: ignore[dict-item]
    for bad in (-1, peek.MAX_PEEK_BYTES + 1, True, 1.5):
        with pytest.raises(InvalidArgument):
            peek.check_max_bytes(bad)  # type: ignore[arg-type]
    assert peek.make_target(True, False, "a.txt", None).files == ("a.txt",)


def test_requests_are_split_around_the_starters_offset_quirk() -> None:
    one = PeekTarget(True, True, ("a", "b"), {"a": -1, "b": -1})
    assert peek.split_requests(one) == [one]
    two = PeekTarget(True, False, ("a", "b", "c"), {"a": 5, "c": 9})
    parts = peek.split_requests(two)
    assert [(p.stdout, p.files) for p in parts] == [
        (True, ("b",)),
        (False, ("a",)),
        (False, ("c",)),
    ]
    three = PeekTarget(False, False, ("a", "b"), {"a": 5, "b": 9})
    assert [p.files for p in peek.split_requests(three)] == [("a",), ("b",)]


def test_effective_offset() -> None:
    assert peek.effective_offset(-1, 3894) == 3894
    assert peek.effective_offset(3988, 0) == 3988  # quirk 1: stdout offset not echoed
    assert peek.effective_offset(100, 100) == 100
    assert peek.effective_offset(0, 0) == 0


def test_follow_state_starts_a_new_run_from_the_beginning() -> None:
    state = FollowState(PeekTarget(True, True))
    info = ConnectInfo(JOB, "<127.0.0.1:1?sock=a>", None, None, StarterClaim("s", {}, "k"))
    assert not state.new_run(info)
    fresh = state.take(PeekResult([peek.PeekedFile("stdout", 10, b"abc")]))
    assert [(p.offset, p.data) for p in fresh] == [(10, b"abc")]
    overlap = state.take(PeekResult([peek.PeekedFile("stdout", 11, b"bcde")]))
    assert [(p.offset, p.data) for p in overlap] == [(13, b"de")]
    other = ConnectInfo(JOB, "<127.0.0.1:1?sock=b>", None, None, StarterClaim("t", {}, "k"))
    assert state.new_run(other)
    assert state.next_target().offsets == {"stdout": 0, "stderr": 0}


def _reply(*messages: bytes) -> bytes:
    conn = CedarConnection()
    return b"".join(conn.send_message(m) for m in messages)


def _run_reply(target: PeekTarget, budget: int, *messages: bytes) -> PeekResult:
    channel = ReplayChannel(_reply(*messages))
    result: PeekResult = channel.run(peek.read_peek_reply(channel.conn, target, budget))
    return result


def _ad(**attrs: object) -> bytes:
    from cedar.classad_wire import put_classad
    from cedar.stream.primitives import MessageWriter

    writer = MessageWriter()
    put_classad(writer, ClassAd(attrs))
    return writer.getvalue()


def _ints(*values: int) -> bytes:
    from cedar.stream.primitives import MessageWriter

    writer = MessageWriter()
    for value in values:
        writer.put_int(value)
    return writer.getvalue()


def test_a_missing_file_is_reported_not_lost() -> None:
    target = PeekTarget(True, False, ("nosuch",))
    # clear mode: size message, raw bytes, then the missing file as an empty one, count 1
    reply = _reply(_ad(Result=True, TransferFiles=[0, "nosuch"], TransferOffsets=[0, 0]),
                   _ints(3)) + b"abc" + _reply(_ints(0), _ints(666, 1))  # fmt: skip
    channel = ReplayChannel(reply)
    result: PeekResult = channel.run(peek.read_peek_reply(channel.conn, target, 100))
    assert result["stdout"].data == b"abc" and result.missing == ["nosuch"]
    with pytest.raises(PeekFileError, match="nosuch: no such file") as err:
        result.raise_for_missing()
    assert err.value.result is result and err.value.retry


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ((_ad(Result=True, TransferFiles=[0], TransferOffsets=[0]), _ints(500)), "more than"),
        ((_ad(Result=True, TransferFiles=[2], TransferOffsets=[0]),), "unknown item"),
        ((_ad(Result=True, TransferFiles=["x"], TransferOffsets=[0]),), "not asked for"),
        ((_ad(Result=True, TransferFiles=[0]),), "matching"),
        ((_ad(Result=True, TransferFiles=[0], TransferOffsets=[0]), _ints(0), _ints(7)), "666"),
        ((_ad(Result=True, TransferFiles=[0], TransferOffsets=[0]), _ints(-1)), "negative"),
        ((_ad(Result=True, TransferFiles=[0], TransferOffsets=[0]), _ints(0), _ints(666, 5)), "5"),
    ],
)
def test_bad_replies_are_protocol_errors(messages: tuple[bytes, ...], match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        _run_reply(PeekTarget(), 100, *messages)


@pytest.mark.parametrize(
    ("reply", "error", "retry"),
    [
        ({"ErrorString": "Rejecting request, because the job is finished."}, JobNotRunning, False),
        (
            {"ErrorString": "Retrying request, because job not yet initialized.", "Retry": True},
            JobNotRunning,
            True,
        ),  # fmt: skip
        ({"ErrorString": "Rejecting request, because ENABLE_PEEK_JOB=false"}, PeekRefused, False),
        (
            {
                "ErrorString": "Unable to resolve file /x/scratch/stdout to real path. "
                "(errno=2, No such file or directory)",
                "Retry": True,
            },
            PeekFileError,
            True,
        ),  # fmt: skip
        ({}, PeekRefused, False),
    ],
)
def test_starter_refusals(reply: dict[str, object], error: type, retry: bool) -> None:
    """The texts of spec 08 §8.5 (the "Unable to resolve" one as observed on the real pool)."""
    with pytest.raises(error) as err:
        _run_reply(PeekTarget(), 100, _ad(Result=False, **reply))
    assert err.value.retry is retry


@pytest.mark.parametrize(
    ("reply", "error", "finished"),
    [
        ({"ErrorString": "No such job: 7.0"}, JobNotRunning, True),
        ({"ErrorString": "Job 7.0 is not running.", "JobStatus": 4}, JobNotRunning, True),
        (
            {"ErrorString": "Job 7.0 is not running.", "JobStatus": 1, "Retry": True},
            JobNotRunning,
            False,
        ),  # fmt: skip
        (
            {"ErrorString": "u is not authorized for access to the starter for job 7.0"},
            PeekRefused,
            None,
        ),  # fmt: skip
    ],
)
def test_schedd_refusals(reply: dict[str, Any], error: type, finished: bool | None) -> None:
    with pytest.raises(error) as err:
        peek.connect_info_reply(JOB, ClassAd({"Result": False, **reply}), "u@d")
    if finished is not None:
        assert err.value.finished is finished
