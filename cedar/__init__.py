"""htc-cedar: a pure-Python, async-first implementation of HTCondor's CEDAR protocol.

The names here are the public API; see the README for a tour::

    import cedar
    slots = cedar.Collector("cm.example.org").query("startd", projection=["Name", "Memory"])
    jobs = cedar.Schedd(name="submit.example.org").query("JobStatus == 1")
"""

from cedar.auth import ClientSecurity, SecurityConfig
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
from cedar.commands.collector import (
    AdType,
    AsyncCollector,
    Collector,
    DaemonLocation,
    DaemonType,
)
from cedar.commands.fanout import DaemonResult, query_all, query_all_async
from cedar.commands.ping import PingResult, ping, ping_async
from cedar.commands.schedd import ActResult, AsyncSchedd, JobAction, Schedd, SubmitResult
from cedar.commands.submit_lang import Submit
from cedar.config import Config
from cedar.errors import *  # noqa: F403
from cedar.errors import __all__ as _errors_all

__version__ = "0.1.0"
__all__ = [
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
    "JobAction",
    "PingResult",
    "RelTime",
    "Schedd",
    "SecurityConfig",
    "Submit",
    "SubmitResult",
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
