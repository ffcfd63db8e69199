"""The exception hierarchy of cedar.

Every failure that comes from the network, a peer, or bad input is a :class:`CedarError`, so a
caller can catch one class.  The subclasses say *what kind* of thing went wrong; the message says
what happened and, where there is one, what to do about it.  Messages never contain secrets
(keys, tokens, session ids).
"""

from __future__ import annotations


class CedarError(Exception):
    """Base class of every error raised by cedar."""


class InvalidArgument(CedarError, ValueError):
    """A caller passed something cedar cannot use: an unknown name (ad type, daemon type, job
    action, command), a malformed constraint, job id or address.

    Also a :class:`ValueError`, because that is what Python code catches for a bad value.
    """


class ProtocolError(CedarError):
    """The peer sent bytes that do not follow the CEDAR protocol (malformed framing or data)."""

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        self.offset = offset
        if offset is not None:
            message = f"{message} (at byte offset {offset})"
        super().__init__(message)


class ClassAdError(CedarError):
    """A ClassAd or ClassAd expression could not be parsed, built or evaluated."""


class EvaluationBudgetExceeded(ClassAdError):
    """An evaluation used up the step or time budget of its request (a constraint too costly)."""


class ClassAdParseError(ClassAdError, ValueError):
    """ClassAd expression text is not valid."""

    def __init__(self, message: str, *, text: str | None = None, position: int | None = None):
        self.text = text
        self.position = position
        if position is not None:
            message = f"{message} (at position {position})"
        super().__init__(message)


class RegexError(ClassAdError, ValueError):
    """A ``regexp()`` pattern is not valid (the built-in functions give Error for it)."""


class RegexBudgetExceeded(ClassAdError, RuntimeError):
    """A ``regexp()`` match took more steps than its limit (the built-in functions give Error)."""


class CedarConnectionError(CedarError):
    """Base for connection-level failures (named so it does not shadow the builtin)."""


class ConnectionClosed(CedarConnectionError):
    """The peer closed (or reset) the connection.

    ``mid_message`` tells a stream cut inside a packet or message (a broken peer) from a close
    at a message boundary (how a daemon refuses a command).
    """

    def __init__(self, message: str, *, mid_message: bool = False) -> None:
        self.mid_message = mid_message
        super().__init__(message)


class CedarTimeout(CedarConnectionError):
    """A network wait took longer than the configured timeout."""


class IntegrityError(CedarConnectionError):
    """An AES-GCM packet failed authentication: the stream was tampered with or keys disagree."""


class NotCedarPeer(ProtocolError, CedarConnectionError):
    """The peer's very first bytes are not a CEDAR packet: it is some other service (a web
    server, ssh...) on that port, so no daemon of the pool can be reached there."""


class SecurityError(CedarError):
    """Base for failures of security negotiation."""


class AuthenticationError(SecurityError):
    """No authentication method succeeded, or a method failed."""


class PermissionDenied(SecurityError):
    """The server refused the command at the requested permission level."""


class ResultLimitExceeded(CedarError):
    """A peer sent more results than the call accepts (``max_results``)."""


class CommandError(CedarError):
    """A daemon answered a command with an error."""


class ConfigError(CedarError):
    """HTCondor configuration could not be read or is invalid."""


__all__ = [
    "AuthenticationError",
    "CedarConnectionError",
    "CedarError",
    "CedarTimeout",
    "ClassAdError",
    "ClassAdParseError",
    "CommandError",
    "ConfigError",
    "ConnectionClosed",
    "EvaluationBudgetExceeded",
    "IntegrityError",
    "InvalidArgument",
    "NotCedarPeer",
    "PermissionDenied",
    "ProtocolError",
    "RegexBudgetExceeded",
    "RegexError",
    "ResultLimitExceeded",
    "SecurityError",
]


class FrozenRecordError(AttributeError):
    """Assigning to a field of a frozen :class:`cedar.record.Record` (an ``AttributeError``, as
    ``dataclasses.FrozenInstanceError`` is: a programming error, not a :class:`CedarError`)."""
