"""The CEDAR dissector: what each recorded message means.

Dissection is stateful per conversation: a message can only be read knowing what came before
(raw or negotiated start, which command runs, which authentication method was chosen, whether
AES-GCM is on, which QMGMT call a reply answers).  :class:`Dissector` is written like the protocol
coroutines of :mod:`cedar.stream.protocol`: a generator that is sent each message in the order
the peers saw them and annotates it.  A message that does not fit is reported in place and the
rest of the conversation is shown undecoded, so one surprise never hides the whole transcript.

Numbers come from :mod:`cedar.numbers`, method bits from :mod:`cedar.auth.methods`,
ClassAds are read with :mod:`cedar.classad_wire`.

The parts: the records and shared plumbing in :mod:`cedar.capture.dissect_model`, the
command start and security handshake in :mod:`cedar.capture.dissect_handshake`, the command
payloads in :mod:`cedar.capture.dissect_payloads` (file transfer in
:mod:`cedar.capture.dissect_transfer`); :class:`Dissector` puts them together.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO

from cedar.capture.dissect_handshake import HandshakeFlow
from cedar.capture.dissect_model import (
    DecodedMessage,
    DissectedConversation,
    Flow,
    command_name,
)
from cedar.capture.dissect_payloads import PayloadFlow
from cedar.capture.errors import CaptureError, Undecodable
from cedar.capture.messages import Conversation, load_conversations
from cedar.errors import CedarError

__all__ = [
    "DecodedMessage",
    "DissectedConversation",
    "Flow",
    "check",
    "command_name",
    "dissect",
    "dissect_conversation",
    "iter_messages",
]


class Dissector(HandshakeFlow, PayloadFlow):
    """The dissection state machine of one conversation."""


def dissect_conversation(
    conv: Conversation, keys: list[bytes] | None = None
) -> DissectedConversation:
    """Decode every message of one conversation."""
    result = DissectedConversation(
        conv.number, conv.transport, conv.client, conv.server, conv.first_frame, conv.first_time
    )
    flow = Dissector(result, list(keys or []))
    running = flow.run()
    next(running)
    gen: Flow | None = running
    for index, wire in enumerate(conv.messages, start=1):
        decoded = DecodedMessage(
            conversation=conv.number,
            index=index,
            direction=wire.direction,
            offset=wire.offset,
            frame=wire.frame,
            time=wire.time,
            wire_size=len(wire.wire),
            size=len(wire.body),
            packets=len(wire.packets),
            wire=wire.wire,
            raw=wire.raw,
        )
        result.messages.append(decoded)
        if gen is None:
            decoded.kind = "UNDECODED"
            decoded.encrypted = flow.encrypting
            if any(m.problem for m in result.messages):
                decoded.summary = f"{decoded.size} bytes (not decoded after an earlier problem)"
            else:
                decoded.problem = "message after the end of the exchange"
                decoded.summary = f"{decoded.size} bytes"
            continue
        try:
            gen.send((wire, decoded))
        except StopIteration:
            gen = None  # the flow ended with this message; more would be flagged below
        except (Undecodable, CedarError, UnicodeError, ValueError) as exc:
            gen = None
            decoded.problem = str(exc)
        if decoded.problem and not decoded.summary:
            decoded.kind = decoded.kind or "UNDECODED"
            decoded.summary = f"{decoded.size} bytes"
    result.error = conv.error
    result.session_key = flow.decryptor.key
    return result


def dissect(
    source: str | os.PathLike[str] | bytes | BinaryIO,
    *,
    keys: list[bytes] | None = None,
    strict: bool = False,
) -> list[DissectedConversation]:
    """Decode a whole capture.

    ``keys`` are AES session keys to try on encrypted conversations; a claim id seen in clear
    (GET_JOB_CONNECT_INFO) adds its session's key for the conversations after it.  With
    ``strict`` the first framing error or undecodable message raises :class:`CaptureError`
    (naming conversation, direction and offset); otherwise problems are reported on the
    conversations.
    """
    known = list(keys or [])
    result = []
    for conv in load_conversations(source):
        dissected = dissect_conversation(conv, known)
        known += [k for k in dissected.learned_keys if k not in known]  # claim ids seen in clear
        result.append(dissected)
    if strict:
        check(result)
    return result


def check(conversations: list[DissectedConversation]) -> None:
    """Raise :class:`CaptureError` for the first problem in dissected conversations."""
    for conv in conversations:
        for m in conv.messages:
            if m.problem:
                raise CaptureError(
                    f"message {m.index} cannot be decoded: {m.problem}",
                    conversation=conv.number,
                    direction=m.direction,
                    offset=m.offset,
                )
        if conv.error is not None:
            raise conv.error


def iter_messages(conversations: list[DissectedConversation]) -> Iterator[DecodedMessage]:
    """All messages of all conversations, conversation by conversation."""
    for conv in conversations:
        yield from conv.messages
