"""Shared pieces of the robustness harness: settings, recording real conversations, mutators."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from cedar.auth import ClientSecurity, SecurityConfig, start_command
from cedar.auth.policy import Requirement
from cedar.auth.server_policy import LevelPolicy, ServerPolicy
from cedar.daemons.daemon import Daemon
from cedar.errors import CedarError
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import MemoryPair, ReplayChannel
from cedar.stream.framing import frame_plain
from cedar.stream.primitives import MessageReader, MessageWriter
from cedar.stream.protocol import Protocol

#: Every fuzz test: reproducible in CI (no example database, derandomized), no deadline.
FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: ``CEDAR_FUZZ_SCALE=N`` multiplies every fuzz test's example count and draws fresh random
#: inputs (the maintainers' long run, see docs/security-findings.md); unset, CI runs the
#: fixed, derandomized count.
FUZZ_SCALE = max(1, int(os.environ.get("CEDAR_FUZZ_SCALE", "1") or "1"))


def fuzz(examples: int) -> Any:
    """``@fuzz(n)``: :data:`FUZZ` with ``n`` examples (times :data:`FUZZ_SCALE`)."""
    return settings(FUZZ, max_examples=examples * FUZZ_SCALE, derandomize=FUZZ_SCALE == 1)


#: Small messages keep a runaway allocation visible as an error instead of a slow test.
MAX_MESSAGE = 1 << 20

#: A handler body run after the handshake: ``body(session) -> Protocol[T]``.
Body = Callable[[Any], Protocol[Any]]


def plain_policy(**kwargs: Any) -> ServerPolicy:
    """Negotiated CLAIMTOBE, no crypto: replies replay byte-for-byte (no ECDH randomness)."""
    level = LevelPolicy(
        methods=["CLAIMTOBE"],
        authentication="OPTIONAL",
        encryption="OPTIONAL",
        integrity="OPTIONAL",
        crypto_methods=[],
    )
    kwargs.setdefault("uid_domain", "example.net")
    kwargs.setdefault("trust_domain", "example.net")
    return ServerPolicy(levels={"DEFAULT": level}, **kwargs)


#: The fixed "now" of recordings, so recorded bytes (and hypothesis' draws) never vary.
FIXED_NOW = 1_700_000_000.0


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """Fixed clock and session ids while recording a conversation."""
    ids = itertools.count()
    with (
        mock.patch("time.time", return_value=FIXED_NOW),
        mock.patch("cedar.auth.server.new_session_id", lambda: f"host:1:1:{next(ids)}"),
    ):
        yield


def client_security() -> ClientSecurity:
    """A fresh client (empty session cache) that authenticates with CLAIMTOBE in clear."""
    config = SecurityConfig(
        authentication=Requirement.REQUIRED,
        encryption=Requirement.NEVER,
        integrity=Requirement.NEVER,
        negotiation=Requirement.REQUIRED,
        methods=["CLAIMTOBE"],
        crypto_methods=[],
        resume_sessions=False,
        uid_domain="example.net",
        options={"SEC_CLAIMTOBE_USER": "alice"},
    )
    return ClientSecurity(config)


def client_protocol(command: int, body: Body, *, raw: bool = False) -> Callable[..., Any]:
    """A factory ``conn -> Protocol`` running the client handshake then ``body``."""

    def make(conn: CedarConnection) -> Protocol[Any]:
        session = yield from start_command(
            conn,
            command,
            security=client_security(),
            raw=raw,
            target="<127.0.0.1:9618>",
            local_address=("127.0.0.1", 40000),
            peer_address=("127.0.0.1", 9618),
        )
        return (yield from body(session))

    return make


@dataclass
class Recording:
    """Payloads each side sent, in order, and the client's result and emitted values."""

    client_payloads: list[bytes] = field(default_factory=list)
    server_payloads: list[bytes] = field(default_factory=list)
    result: Any = None
    emitted: list[Any] = field(default_factory=list)


def server_protocol(daemon: Daemon, conn: CedarConnection) -> Protocol[Any]:
    """The daemon's whole side of one connection."""
    return daemon.connection_protocol(
        conn, local_address=("127.0.0.1", 9618), peer_address=("127.0.0.1", 40000)
    )


def converse(daemon: Daemon, client: Callable[..., Protocol[Any]]) -> Recording:
    """Run a client protocol against ``daemon`` in memory and record every payload."""
    pair = MemoryPair(
        CedarConnection(max_message_size=MAX_MESSAGE), CedarConnection(max_message_size=MAX_MESSAGE)
    )
    result, _ = pair.run(client(pair.client_conn), server_protocol(daemon, pair.server_conn))
    return Recording(
        client_payloads=[payload for d, payload in pair.log if d == "c2s"],
        server_payloads=[payload for d, payload in pair.log if d == "s2c"],
        result=result,
        emitted=pair.emitted["client"],
    )


def frame(payloads: list[bytes]) -> bytes:
    """Wire bytes of plain messages (empty payloads are dropped: CEDAR never sends one)."""
    return b"".join(frame_plain(p) for p in payloads if p)


def replay_client(client: Callable[..., Protocol[Any]], server_payloads: list[bytes]) -> Any:
    """Run a client against recorded server messages; only CedarErrors may escape."""
    channel = ReplayChannel(
        frame(server_payloads), conn=CedarConnection(max_message_size=MAX_MESSAGE)
    )
    emitted: list[Any] = []
    result = channel.run(client(channel.conn), on_emit=emitted.append)
    return result, emitted


def replay_server(daemon: Daemon, client_payloads: list[bytes], wire: bytes = b"") -> list[bytes]:
    """Feed recorded (possibly mutated) client messages to ``daemon``; returns what it sent."""
    channel = ReplayChannel(
        wire or frame(client_payloads), conn=CedarConnection(max_message_size=MAX_MESSAGE)
    )
    with contextlib.suppress(CedarError):
        channel.run(server_protocol(daemon, channel.conn))
    return channel.sent


# --------------------------------------------------------------------------- mutations

#: Interesting 8-byte integers: CEDAR counts, lengths and ids are all 64-bit on the wire.
EDGE_INTS = [
    0, 1, 2, 7, 100, 101, 255, 4096, 1 << 20, 1_000_000, 1_000_001, 10_000_001, 1 << 31,
    (1 << 31) - 1, 1 << 32, (1 << 63) - 1, -1, -2, -(1 << 31), -(1 << 63),
]  # fmt: skip


def _edge_bytes(value: int) -> bytes:
    return (value & ((1 << 64) - 1)).to_bytes(8, "big")


@st.composite
def mutated(draw: st.DrawFn, payload: bytes) -> bytes:
    """One payload with one to three structure-aware mutations."""
    data = bytearray(payload)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(["truncate", "flip", "int", "insert", "delete", "string", "extend"])
        )
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "truncate":
            del data[pos:]
        elif kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "int":
            # Overwrite an aligned 8-byte field (ints and counts sit at 8-byte offsets early on).
            pos = draw(st.sampled_from(sorted({0, 8, 16, 24, pos - pos % 8, pos})))
            data[pos : pos + 8] = _edge_bytes(draw(st.sampled_from(EDGE_INTS)))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del data[pos : pos + draw(st.integers(1, 16))]
        elif kind == "string":
            text = draw(
                st.sampled_from(
                    [b"", b"A", b"A = ", b"A = ((", b"=", b"ZKM", b"\xad", b'A = "x', b"A = 1e999",
                     b"A = " + b"9" * 5000, b"A = " + b"{" * 600, b"A = a" + b".b" * 600,
                     b"Owner = 0", b"Owner = 1", b"Owner = \"x\"", b"ErrorCode = 7",
                     b"JobAction = 99", b"result_total_x = 1", b"job_a_b = 1", b"job_1_2_3 = 1",
                     b"NumJobMatches = -1", b"MalformedAds = 1", b"ActionResult = 1"]
                )
            )  # fmt: skip
            data[pos:pos] = text + b"\0"
        elif kind == "extend":
            data += draw(st.binary(max_size=24))
    return bytes(data)


@st.composite
def mutated_conversation(draw: st.DrawFn, payloads: list[bytes]) -> list[bytes]:
    """A recorded message list with one message mutated (and maybe the tail dropped)."""
    out = list(payloads)
    index = draw(st.integers(0, len(out) - 1))
    out[index] = draw(mutated(out[index]))
    if draw(st.booleans()):
        out = out[: draw(st.integers(index + 1, len(out)))]
    return out


def reader_of(payload: bytes, crypto: bool = False) -> MessageReader:
    """A reader over one payload."""
    return MessageReader(payload, crypto=crypto)


#: Values of the wrong type or range for whatever attribute they replace.
HOSTILE_VALUES = [
    "0", "1", "-1", "2", "99", "-9223372036854775808", "9223372036854775807", "1e999", "-1e999",
    '""', '"x"', '"1"', "undefined", "error", "true", "false", "{ 1,2 }", "[ a = 1 ]",
    'absTime("2020-01-01")', 'relTime("1:00")', "a.b.c", "1 / 0", "Owner", "(", '"\\',
    'real("NaN")', '"' + "x" * 300 + '"', "9" * 30,
]  # fmt: skip


def _split_ad(payload: bytes) -> tuple[bytes, list[str], bytes] | None:
    """``(prefix, lines, suffix)`` when the payload is ``[int] ad ...`` in plain mode."""
    for start in (0, 8):
        reader = MessageReader(payload[start:])
        try:
            count = reader.get_int()
            if not 0 <= count <= 200:
                continue
            lines = [reader.get_string() for _ in range(count)]
        except CedarError:
            continue
        if all("=" in line for line in lines):
            return payload[:start], lines, payload[start + reader.offset :]
    return None


@st.composite
def retyped(draw: st.DrawFn, payload: bytes) -> bytes:
    """The payload with one attribute of its ad given a hostile value (or dropped/duplicated)."""
    split = _split_ad(payload)
    if split is None or not split[1]:
        return draw(mutated(payload))
    prefix, lines, suffix = split
    index = draw(st.integers(0, len(lines) - 1))
    name = lines[index].split("=", 1)[0].strip()
    how = draw(st.sampled_from(["value", "value", "drop", "duplicate"]))
    if how == "value":
        lines[index] = f"{name} = {draw(st.sampled_from(HOSTILE_VALUES))}"
    elif how == "drop":
        del lines[index]
    else:
        lines.append(f"{name} = {draw(st.sampled_from(HOSTILE_VALUES))}")
    writer = MessageWriter().put_int(len(lines))
    for line in lines:
        writer.put_string(line)
    return prefix + writer.getvalue() + suffix


@st.composite
def retyped_conversation(draw: st.DrawFn, payloads: list[bytes]) -> list[bytes]:
    """A recorded message list where one ad got a value of the wrong type or range."""
    out = list(payloads)
    index = draw(st.integers(0, len(out) - 1))
    out[index] = draw(retyped(out[index]))
    return out
