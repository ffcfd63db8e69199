"""htc-cedar: a pure-Python, async-first implementation of HTCondor's CEDAR protocol.

The names here are the public API; see the README for a tour::

    import cedar
    slots = cedar.Collector("cm.example.org").query("startd", projection=["Name", "Memory"])
    jobs = cedar.Schedd(name="submit.example.org").query("JobStatus == 1")
"""

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.auth.client import CommandDenied, SessionRejected
from cedar.auth.scitoken import SciTokenError
from cedar.auth.signing_key import CredentialError
from cedar.auth.tls import TlsFailure
from cedar.auth.token import TokenError
from cedar.classad_wire import (
    AbsTime,
    ClassAd,
    Error,
    Expr,
    RelTime,
    Undefined,
    evaluate,
    parse_ads,
    parse_next,
)
from cedar.commands import (
    DEFAULT_TIMEOUT,
    MAX_RESULTS,
    AsyncCollector,
    AsyncJobQuery,
    AsyncSchedd,
    Collector,
    DaemonResult,
    JobQuery,
    Schedd,
    ping,
    ping_async,
    query_all,
    query_all_async,
)
from cedar.commands.collector import DaemonLocation
from cedar.commands.filetransfer import FileTransferError, TransferProgress
from cedar.commands.ping import PingResult
from cedar.commands.qmgmt import (
    InvalidRequest,
    JobNotFound,
    QmgmtError,
    QmgmtPermissionDenied,
    SubmitRejected,
)
from cedar.commands.schedd import ActResult, SubmitResult
from cedar.commands.spool import RetrievedJob, SpooledJob, SpoolRefused
from cedar.commands.submit import Submit
from cedar.config import Config
from cedar.errors import *  # noqa: F403
from cedar.errors import __all__ as _errors_all
from cedar.numbers import AdType, DaemonType, JobAction, JobStatus

__version__ = "0.1.0"
__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_RESULTS",
    "AsyncJobQuery",
    "CommandDenied",
    "CredentialError",
    "InvalidRequest",
    "JobNotFound",
    "JobQuery",
    "JobStatus",
    "QmgmtError",
    "QmgmtPermissionDenied",
    "SciTokenError",
    "SessionRejected",
    "SubmitRejected",
    "TlsFailure",
    "TokenError",
    "AbsTime",
    "ActResult",
    "AdType",
    "AsyncCollector",
    "AsyncSchedd",
    "ClassAd",
    "ClientSecurity",
    "Collector",
    "Config",
    "DaemonLocation",
    "DaemonResult",
    "DaemonType",
    "Error",
    "Expr",
    "FileTransferError",
    "JobAction",
    "PingResult",
    "RelTime",
    "RetrievedJob",
    "Schedd",
    "SecurityConfig",
    "SpoolRefused",
    "SpooledJob",
    "Submit",
    "SubmitResult",
    "TransferProgress",
    "Undefined",
    "evaluate",
    "parse_ads",
    "parse_next",
    "ping",
    "ping_async",
    "query_all",
    "query_all_async",
    *_errors_all,
]
