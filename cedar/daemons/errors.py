"""The mock daemons' one exception: a request the daemon refuses, with the errno it sends.

The job queue, the factories and the schedd's handlers all raise :class:`QueueError`; the
handler that owns the wire turns it into the reply (an errno for qmgmt).  Errors the clients
see are :mod:`cedar.errors`; this one never leaves the mock.
"""

from __future__ import annotations


class QueueError(Exception):
    """A refused queue or factory operation; ``errno`` is what the schedd sends."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.errno = code


__all__ = ["QueueError"]
