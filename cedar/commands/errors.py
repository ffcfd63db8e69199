"""The exceptions of the clients in :mod:`cedar.commands`: the one module of the package that
defines any (the hierarchy's roots are in :mod:`cedar.errors`).

Each class carries the fields its failure has (a hold code, a qmgmt ``errno``, a history
``ErrorCode``, ...).  The modules that raise them import them from here and keep exporting them
under their old names (``cedar.commands.qmgmt.QmgmtError`` is this class).
"""

from __future__ import annotations

from cedar.classad_wire import ClassAd
from cedar.errors import CedarConnectionError, CommandError, PermissionDenied
from cedar.numbers import JobStatus

__all__ = [
    "FINAL_STATES",
    "CcbRefused",
    "FileTransferError",
    "HistoryError",
    "InvalidRequest",
    "JobNotFound",
    "JobNotRunning",
    "PeekError",
    "PeekFileError",
    "PeekRefused",
    "QmgmtError",
    "QmgmtPermissionDenied",
    "SpoolRefused",
    "SubmitRejected",
]

#: Job states after which a job will not run again (a peek's following stops).
FINAL_STATES = frozenset({JobStatus.REMOVED, JobStatus.COMPLETED})


# -- file transfer (cedar.commands.filetransfer) --------------------------------------------


class FileTransferError(CommandError):
    """A sandbox transfer failed; ``report`` is the failing side's report ad (if any).

    ``code``/``subcode`` are the hold code and errno the reference would put the job on hold with.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        subcode: int | None = None,
        report: ClassAd | None = None,
    ) -> None:
        self.code = code
        self.subcode = subcode
        self.report = report
        super().__init__(message)


# -- history (cedar.commands.history) -------------------------------------------------------


class HistoryError(CommandError):
    """A daemon refused a history request: with an error ad (``code``, ``reason``: its
    ``ErrorCode``/``ErrorString``) or by closing the connection without a reply (``code`` None).
    """

    def __init__(self, message: str, *, code: int | None = None, reason: str | None = None):
        self.code = code
        self.reason = reason
        super().__init__(message)


# -- peeking at a running job (cedar.commands.peek) -----------------------------------------


class PeekError(CommandError):
    """The schedd or the starter would not let us look into the job; ``retry``: it said that
    trying again later may work (the job is starting, or between runs)."""

    def __init__(self, message: str, *, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


class JobNotRunning(PeekError):
    """The job has no running starter to peek at (idle, held, completed, unknown, ...).

    ``job_status`` is the schedd's ``JobStatus`` when it said (``None`` otherwise),
    ``hold_reason`` its ``HoldReason`` for a held job.
    """

    def __init__(
        self,
        message: str,
        *,
        retry: bool = False,
        job_status: int | None = None,
        hold_reason: str | None = None,
    ) -> None:
        super().__init__(message, retry=retry)
        self.job_status = job_status
        self.hold_reason = hold_reason

    @property
    def finished(self) -> bool:
        """The job will not run again (removed, completed, or no longer in the queue)."""
        return not self.retry and (self.job_status is None or self.job_status in FINAL_STATES)


class PeekFileError(PeekError):
    """A file asked for cannot be sent: the starter refuses it (not the job's stdout, stderr or
    one of its ``transfer_output_files``), or it does not exist in the sandbox."""

    def __init__(self, message: str, *, name: str | None = None, retry: bool = False) -> None:
        super().__init__(message, retry=retry)
        self.name = name
        #: What the peek brought for the other files (a :class:`~cedar.commands.peek.PeekResult`),
        #: when it got that far; typed loosely so that this module imports nothing of peek's.
        self.result: object | None = None


class PeekRefused(PeekError):
    """The schedd, the transfer queue or the starter refused the request."""


# -- queue management (cedar.commands.qmgmt) ------------------------------------------------


class QmgmtError(CommandError):
    """The schedd refused a queue-management call.

    ``rval`` is the call's return value, ``errno`` the schedd's error number (may be 0 or,
    after a NoAck failure, negative), ``reason`` the text of an error ad when one came.
    """

    def __init__(
        self, message: str, *, rval: int = -1, errno: int = 0, reason: str | None = None
    ) -> None:
        self.rval = rval
        self.errno = errno
        self.reason = reason
        if reason:
            message = f"{message}: {reason}"
        super().__init__(message)


class QmgmtPermissionDenied(QmgmtError, PermissionDenied):
    """EACCES/EPERM: not the job's owner, an immutable attribute, or not authenticated."""


class JobNotFound(QmgmtError, LookupError):
    """ENOENT: no such job, or a constraint that matched nothing."""


class InvalidRequest(QmgmtError, ValueError):
    """EINVAL: a bad attribute name or value, or the job is in the wrong state."""


class SubmitRejected(QmgmtError):
    """NewCluster/NewProc or the commit failed (limits, submit requirements, …)."""


# -- spooling (cedar.commands.spool) --------------------------------------------------------


class SpoolRefused(CommandError):
    """The schedd closed a 488 without a word: unknown job, not the owner, already spooled, or
    held for another reason (spec 07 §5.3)."""


class CcbRefused(CedarConnectionError):
    """A CCB broker answered ``Result = false`` (no daemon with that id, streaming disabled,
    the target failed to connect back): that broker gives no connection (spec 09 §5.4)."""
