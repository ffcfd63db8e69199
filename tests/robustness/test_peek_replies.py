"""A hostile starter: mutated STARTER_PEEK replies give a result or a CedarError, never more
bytes than the budget, and never a hang (spec 08 §8.5)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cedar.classad_wire import ClassAd, parse_expr, put_classad
from cedar.commands import peek
from cedar.commands.peek import PeekResult, PeekTarget
from cedar.errors import CedarError
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import ReplayChannel
from cedar.stream.primitives import MessageWriter

from .helpers import fuzz

KEY = bytes(range(32))
TARGET = PeekTarget(True, True, ("a.txt", "b.txt"))
BUDGET = 64


def _messages(crypto: bool) -> list[bytes]:
    """A valid reply: stdout 40 bytes, stderr 24, a.txt and b.txt empty (budget used up)."""
    ad = ClassAd({"Result": True})
    ad.set_expr("TransferFiles", parse_expr('{ 0, 1, "a.txt", "b.txt" }'))
    ad.set_expr("TransferOffsets", parse_expr("{ 100, 7, 3, 0 }"))
    writer = MessageWriter(crypto=crypto)
    put_classad(writer, ad)
    out = [writer.getvalue()]
    for size in (40, 24):
        out.append(MessageWriter(crypto=crypto).put_int(size).put_int(262144).getvalue())
        out.append(bytes(range(65, 65 + size)))
    # as the real starter: [size, chunk] EOM, then [666, next size, chunk], ..., [666, count]
    out.append(MessageWriter(crypto=crypto).put_int(0).put_int(262144).getvalue())
    out.append(MessageWriter(crypto=crypto).put_int(666).put_int(0).put_int(262144).getvalue())
    out.append(MessageWriter(crypto=crypto).put_int(666).put_int(4).getvalue())
    return out


def _run(messages: list[bytes]) -> PeekResult | CedarError:
    sender, receiver = CedarConnection(), CedarConnection(max_message_size=1 << 20)
    sender.install_aes_key(KEY)
    receiver.install_aes_key(KEY)
    wire = b"".join(sender.send_message(m) for m in messages if m)  # "" = a message left out
    channel = ReplayChannel(wire, conn=receiver)
    try:
        result: PeekResult = channel.run(peek.read_peek_reply(channel.conn, TARGET, BUDGET))
    except CedarError as exc:
        return exc
    return result


def test_the_unmutated_reply_reads() -> None:
    result = _run(_messages(True))
    assert isinstance(result, PeekResult)
    assert [(f.name, len(f.data)) for f in result.files] == [
        ("stdout", 40),
        ("stderr", 24),
        ("a.txt", 0),
        ("b.txt", 0),
    ]


@fuzz(300)
@given(
    index=st.integers(0, 7),
    position=st.integers(0, 200),
    value=st.binary(min_size=1, max_size=9),
    cut=st.booleans(),
)
def test_mutated_replies(index: int, position: int, value: bytes, cut: bool) -> None:
    """A peek fed a mutated or cut reply ends in a CedarError or a result within the byte
    budget that names no more files than were asked for."""
    messages = _messages(True)
    index %= len(messages)
    message = messages[index]
    position %= len(message) + 1
    if cut:
        messages[index] = message[:position]
    else:
        messages[index] = message[:position] + value + message[position + len(value) :]
    result = _run(messages)
    if isinstance(result, PeekResult):
        assert result.size <= BUDGET
        assert len(result.files) <= len(TARGET.names())


@fuzz(100)
@given(st.lists(st.binary(max_size=64), max_size=8))
def test_random_messages(messages: list[bytes]) -> None:
    """After a valid first reply, random messages end in a CedarError or a result within the
    byte budget."""
    result = _run([_messages(True)[0], *messages])
    if isinstance(result, PeekResult):
        assert result.size <= BUDGET
