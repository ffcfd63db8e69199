"""The submit language's error type (its own module so every part can raise it)."""

from __future__ import annotations

from cedar.errors import CedarError


class SubmitError(CedarError, ValueError):
    """A submit description is invalid (the message says which line or command, and why)."""


__all__ = ["SubmitError"]
