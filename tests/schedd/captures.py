"""Helpers to replay the clear-text schedd captures of the repository's captures/."""

from __future__ import annotations

import pytest

from cedar.capture.messages import WireMessage, load_conversations
from tests.support import CAPTURES


def messages(name: str, conversation: int = 0) -> list[WireMessage]:
    """The messages of one conversation of ``NAME.pcap`` (skips when captures are absent)."""
    path = CAPTURES / f"{name}.pcap"
    if not path.exists():
        pytest.skip(f"capture {path} is not available")
    return load_conversations(path)[conversation].messages


def after_payload_start(
    msgs: list[WireMessage], first_client_payload: bytes
) -> tuple[list[WireMessage], list[WireMessage]]:
    """Split into (client, server) messages from the first client message starting with
    ``first_client_payload`` on (i.e. after the security handshake)."""
    start = next(
        i
        for i, m in enumerate(msgs)
        if m.direction == "C→S" and m.body.startswith(first_client_payload)
    )
    rest = msgs[start:]
    return ([m for m in rest if m.direction == "C→S"], [m for m in rest if m.direction == "S→C"])


def frame(payload: bytes) -> bytes:
    """A single-packet clear message."""
    return b"\x01" + len(payload).to_bytes(4, "big") + payload
