"""The errors of capture handling: a capture that cannot be read, reassembled or dissected,
and a recording that does not show enough to replay it."""

from __future__ import annotations

from cedar.errors import CedarError, ProtocolError


class CaptureError(ProtocolError):
    """A capture file is malformed or truncated, or a conversation in it breaks CEDAR framing.

    The message says where: the conversation number, the direction and the byte offset in that
    direction's TCP stream, so a person can find the spot in Wireshark.  The location is kept in
    attributes and rendered on demand because conversations are renumbered after parsing.
    """

    def __init__(
        self,
        reason: str,
        *,
        conversation: int | None = None,
        direction: str | None = None,
        offset: int | None = None,
        frame: int | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.conversation = conversation
        self.direction = direction
        self.offset = offset
        self.frame = frame

    def __str__(self) -> str:
        where = []
        if self.conversation is not None:
            where.append(f"conversation {self.conversation}")
        if self.direction is not None:
            where.append(self.direction)
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        return f"{', '.join(where)}: {self.reason}" if where else self.reason


class Unreconstructible(CedarError):
    """The recording does not show enough of the server's state to rebuild it."""


class Undecodable(Exception):
    """A message does not have the layout the conversation state predicts (the dissector
    notes it on the message and goes on; it never leaves the dissector)."""


__all__ = ["CaptureError", "Undecodable", "Unreconstructible"]
