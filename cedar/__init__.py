"""htc-cedar: a pure-Python, async-first implementation of HTCondor's CEDAR protocol.

The names here are the public API; see the README for a tour::

    import cedar
    slots = cedar.Collector("cm.example.org").query("startd", projection=["Name", "Memory"])
    jobs = cedar.Schedd(name="submit.example.org").query("JobStatus == 1")
"""

import sys as _sys


def _quiet_interrupt(kind: type[BaseException], value: BaseException, tb: object) -> None:
    """Ctrl-C while a ``cedar`` console script is still importing: no traceback (from the
    first statement of the package on; :func:`cedar.cli.common.guarded` takes over later)."""
    if not issubclass(kind, KeyboardInterrupt):
        _sys.__excepthook__(kind, value, tb)  # type: ignore[arg-type]
        return
    import os

    os._exit(130)  # the documented exit code of an interrupt


if getattr(_sys, "argv", None) and _sys.argv[0].rsplit("/", 1)[-1] in (
    "cedar",
    "cedar-ping",
    "cedar-query",
):
    _sys.excepthook = _quiet_interrupt

from typing import TYPE_CHECKING  # noqa: E402 - after the hook: imports may be interrupted

from cedar.errors import *  # noqa: E402, F403 - light (no third-party import)
from cedar.errors import __all__ as _errors_all  # noqa: E402
from cedar.lazy import lazy_exports  # noqa: E402
from cedar.old_names import register as _register_old_names  # noqa: E402
from cedar.version import __version__ as __version__  # noqa: E402 - the one package version

_register_old_names()  # the package names before issue 37 stay importable

#: Public name -> the module that defines it, imported on first use (PEP 562), so that
#: ``import cedar`` and the CLIs start without Trio, cryptography or the protocol layers.
_LAZY = {
    "ClientSecurity": "cedar.auth",
    "SecurityConfig": "cedar.auth",
    "CommandDenied": "cedar.auth.client",
    "SessionRejected": "cedar.auth.client",
    "SciTokenError": "cedar.auth.scitoken",
    "CredentialError": "cedar.auth.signing_key",
    "TlsFailure": "cedar.auth.tls",
    "TokenError": "cedar.auth.token",
    "AbsTime": "cedar.classad_wire",
    "ClassAd": "cedar.classad_wire",
    "Error": "cedar.classad_wire",
    "Expr": "cedar.classad_wire",
    "RelTime": "cedar.classad_wire",
    "Undefined": "cedar.classad_wire",
    "evaluate": "cedar.classad_wire",
    "parse_ads": "cedar.classad_wire",
    "parse_next": "cedar.classad_wire",
    "DEFAULT_TIMEOUT": "cedar.commands",
    "MAX_RESULTS": "cedar.commands",
    "AsyncCollector": "cedar.commands",
    "AsyncJobQuery": "cedar.commands",
    "AsyncSchedd": "cedar.commands",
    "Collector": "cedar.commands",
    "DaemonResult": "cedar.commands",
    "JobQuery": "cedar.commands",
    "Schedd": "cedar.commands",
    "ping": "cedar.commands",
    "ping_async": "cedar.commands",
    "whoami": "cedar.commands",
    "whoami_async": "cedar.commands",
    "query_all": "cedar.commands",
    "query_all_async": "cedar.commands",
    "DaemonLocation": "cedar.commands.collector",
    "FileTransferError": "cedar.commands.filetransfer",
    "TransferProgress": "cedar.commands.filetransfer",
    "PingResult": "cedar.commands.ping",
    "Identity": "cedar.commands.ping",
    "InvalidRequest": "cedar.commands.qmgmt",
    "JobNotFound": "cedar.commands.qmgmt",
    "QmgmtError": "cedar.commands.qmgmt",
    "QmgmtPermissionDenied": "cedar.commands.qmgmt",
    "SubmitRejected": "cedar.commands.qmgmt",
    "ActResult": "cedar.commands.schedd",
    "SubmitResult": "cedar.commands.schedd",
    "RetrievedJob": "cedar.commands.spool",
    "SpooledJob": "cedar.commands.spool",
    "SpoolRefused": "cedar.commands.spool",
    "Submit": "cedar.submit_language",
    "AsyncHistoryQuery": "cedar.commands",
    "AsyncStartd": "cedar.commands",
    "HistoryError": "cedar.commands",
    "HistoryQuery": "cedar.commands",
    "Startd": "cedar.commands",
    "JobNotRunning": "cedar.commands.peek",
    "PeekError": "cedar.commands.peek",
    "PeekFileError": "cedar.commands.peek",
    "PeekRefused": "cedar.commands.peek",
    "PeekResult": "cedar.commands.peek",
    "PeekedFile": "cedar.commands.peek",
    "JobAnalysis": "cedar.analysis",
    "analyze_job": "cedar.analysis",
    "Config": "cedar.config",
    "AdType": "cedar.numbers",
    "DaemonType": "cedar.numbers",
    "JobAction": "cedar.numbers",
    "JobStatus": "cedar.numbers",
}

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from cedar.analysis import JobAnalysis, analyze_job
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
        AsyncHistoryQuery,
        AsyncJobQuery,
        AsyncSchedd,
        AsyncStartd,
        Collector,
        DaemonResult,
        HistoryError,
        HistoryQuery,
        JobQuery,
        Schedd,
        Startd,
        ping,
        ping_async,
        query_all,
        query_all_async,
        whoami,
        whoami_async,
    )
    from cedar.commands.collector import DaemonLocation
    from cedar.commands.filetransfer import FileTransferError, TransferProgress
    from cedar.commands.peek import (
        JobNotRunning,
        PeekedFile,
        PeekError,
        PeekFileError,
        PeekRefused,
        PeekResult,
    )
    from cedar.commands.ping import Identity, PingResult
    from cedar.commands.qmgmt import (
        InvalidRequest,
        JobNotFound,
        QmgmtError,
        QmgmtPermissionDenied,
        SubmitRejected,
    )
    from cedar.commands.schedd import ActResult, SubmitResult
    from cedar.commands.spool import RetrievedJob, SpooledJob, SpoolRefused
    from cedar.config import Config
    from cedar.numbers import AdType, DaemonType, JobAction, JobStatus
    from cedar.submit_language import Submit

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
    "whoami",
    "whoami_async",
    "Identity",
    "query_all",
    "AsyncHistoryQuery",
    "AsyncStartd",
    "HistoryError",
    "HistoryQuery",
    "Startd",
    "JobNotRunning",
    "PeekError",
    "PeekFileError",
    "PeekRefused",
    "PeekResult",
    "PeekedFile",
    "JobAnalysis",
    "analyze_job",
    "query_all_async",
    *_errors_all,
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
