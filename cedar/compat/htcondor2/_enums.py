"""The enums of ``htcondor2`` (and the reference's plural aliases), values as the reference's.

Apart from :mod:`cedar.compat.htcondor2` (which re-exports every one) because they are data
that the classes there only read; the reference keeps them in private modules of its own too.
"""

from __future__ import annotations

import enum


class DaemonType(enum.IntEnum):
    none = 0
    Any = 1
    Master = 2
    Schedd = 3
    Startd = 4
    Collector = 5
    Negotiator = 6
    Credd = 13
    Placementd = 15
    HAD = 17
    Generic = 18


class AdType(enum.IntEnum):
    Startd = 0
    Schedd = 1
    Master = 2
    StartdPrivate = 5
    Submitter = 6
    Collector = 7
    License = 8
    Any = 10
    Negotiator = 13
    HAD = 14
    Generic = 15
    Credd = 16
    Grid = 19
    Placementd = 20
    Defrag = 22
    Accounting = 23
    Slot = 24
    StartDaemon = 25


class JobAction(enum.IntEnum):
    Hold = 1
    Release = 2
    Remove = 3
    RemoveX = 4
    Vacate = 5
    VacateFast = 6
    Suspend = 8
    Continue = 9


class JobStatus(enum.IntEnum):
    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7


class SubmitMethod(enum.IntEnum):
    CondorSubmit = 0
    DAGMan = 1
    PythonBindings = 2
    HTCondorJobSubmit = 3
    HTCondorDagSubmit = 4
    HTCondorJobSetSubmit = 5
    UserSet = 100


class TransactionFlag(enum.IntFlag):
    Default = 0
    NonDurable = 1
    SetDirty = 4
    ShouldLog = 8


class QueryOpt(enum.IntFlag):
    Default = 0
    AutoCluster = 1
    GroupBy = 2
    DefaultMyJobsOnly = 4
    SummaryOnly = 8
    IncludeClusterAd = 16
    IncludeJobsetAds = 32


class DrainType(enum.IntEnum):
    Graceful = 0
    Quick = 10
    Fast = 20


class VacateType(enum.IntEnum):
    Graceful = 0
    Fast = 1


class CompletionType(enum.IntEnum):
    Nothing = 0
    Resume = 1
    Exit = 2
    Restart = 3
    Reconfig = 4


class HistorySrc(enum.IntEnum):
    ScheddJob = 0
    StartdJob = 1
    JobEpoch = 2
    Daemon = 3


class SubsystemType(enum.IntEnum):
    Master = 1
    Collector = 2
    Negotiator = 3
    Schedd = 4
    Shadow = 5
    Startd = 6
    Starter = 7
    GAHP = 8
    Dagman = 9
    SharedPort = 10
    Daemon = 11
    Tool = 12
    Submit = 13
    Job = 14
    Auto = 15


class FileTransferEventType(enum.IntEnum):
    IN_QUEUED = 1
    IN_STARTED = 2
    IN_FINISHED = 3
    OUT_QUEUED = 4
    OUT_STARTED = 5
    OUT_FINISHED = 6


#: The pre-10 plural spellings are the same enums.
DaemonTypes = DaemonType
AdTypes = AdType
QueryOpts = QueryOpt
TransactionFlags = TransactionFlag
DrainTypes = DrainType


class CredType(enum.IntEnum):
    Password = 36
    Kerberos = 32
    OAuth = 40


CredTypes = CredType


class DaemonCommand(enum.IntEnum):
    """Commands :func:`send_command` sends to a daemon (values as the reference's)."""

    DaemonOn = 469
    DaemonOff = 467
    DaemonOffFast = 468
    DaemonsOn = 483
    DaemonsOff = 454
    DaemonsOffFast = 461
    DaemonsOffPeaceful = 484
    OffFast = 60006
    OffForce = 60042
    OffGraceful = 60005
    OffPeaceful = 60015
    Reconfig = 60004
    Restart = 453
    RestartPeaceful = 485
    SetForceShutdown = 60041
    SetPeacefulShutdown = 60016


DaemonCommands = DaemonCommand


class LogLevel(enum.IntEnum):
    """``log()`` levels and header flags (values as the reference's)."""

    Always = 0
    Error = 1
    Status = 2
    Job = 4
    Machine = 5
    Config = 6
    Protocol = 7
    Priv = 8
    DaemonCore = 9
    Verbose = 10
    Security = 11
    Network = 14
    Hostname = 22
    Audit = 24
    FullDebug = 1024
    SubSecond = 67108864
    Timestamp = 134217728
    PID = 268435456
    NoHeader = 2147483648


__all__ = [
    "AdType",
    "AdTypes",
    "CompletionType",
    "CredType",
    "CredTypes",
    "DaemonCommand",
    "DaemonCommands",
    "DaemonType",
    "DaemonTypes",
    "DrainType",
    "DrainTypes",
    "FileTransferEventType",
    "HistorySrc",
    "JobAction",
    "JobStatus",
    "LogLevel",
    "QueryOpt",
    "QueryOpts",
    "SubmitMethod",
    "SubsystemType",
    "TransactionFlag",
    "TransactionFlags",
    "VacateType",
]
