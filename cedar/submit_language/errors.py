"""The submit language's error type (its own module so every part can raise it)."""

from __future__ import annotations

from cedar.errors import InvalidArgument


class SubmitError(InvalidArgument):
    """A submit description is invalid (the message says which line or command, and why).

    An :class:`InvalidArgument`: the description is the caller's input, so a service answers
    400 with this message (not 502, as for a daemon's failure).  ``cedar submit`` still exits 1
    for it, as ``condor_submit`` does (``cedar.cli.common.exit_code``).
    """


__all__ = ["SubmitError"]
