"""Every number and message layout of the protocol, declared once (the bottom layer).

One module because it is the one table of protocol facts every layer reads; split, the facts would
scatter again.

Command numbers (spec 03 §10), ad and daemon types with their query/update/invalidate
commands (spec 05 §2.1), job status and job actions (spec 05 §5), queue-management call
numbers, their flag bits and argument layouts (spec 05 §4.3-§4.4), and the legacy key
protocols of the handshake (spec 03 §5).  Client, mock servers and dissector all read and
write through these tables, so a fact lives here and nowhere else.

This module imports nothing from cedar except :mod:`cedar.errors`: any layer may use it.
Enum members answer to cedar's spelling and to the ``htcondor2`` one (``AdType.SCHEDD`` is
``AdType.Schedd``, ``JobAction.Hold`` is ``JobAction.HOLD``).
"""

from __future__ import annotations

from enum import Enum, IntEnum, IntFlag
from typing import Protocol as _Protocol

from cedar.errors import InvalidArgument, ProtocolError
from cedar.record import Record


class Command(IntEnum):
    """Daemon command numbers (spec 03 §10)."""

    UPDATE_STARTD_AD = 0
    UPDATE_SCHEDD_AD = 1
    UPDATE_MASTER_AD = 2
    QUERY_STARTD_ADS = 5
    QUERY_SCHEDD_ADS = 6
    QUERY_MASTER_ADS = 7
    QUERY_STARTD_PVT_ADS = 10
    UPDATE_SUBMITTOR_AD = 11
    QUERY_SUBMITTOR_ADS = 12
    INVALIDATE_STARTD_ADS = 13
    INVALIDATE_SCHEDD_ADS = 14
    INVALIDATE_MASTER_ADS = 15
    INVALIDATE_SUBMITTOR_ADS = 18
    UPDATE_COLLECTOR_AD = 19
    QUERY_COLLECTOR_ADS = 20
    INVALIDATE_COLLECTOR_ADS = 21
    UPDATE_LICENSE_AD = 42
    QUERY_LICENSE_ADS = 43
    INVALIDATE_LICENSE_ADS = 44
    UPDATE_STORAGE_AD = 45
    QUERY_STORAGE_ADS = 46
    INVALIDATE_STORAGE_ADS = 47
    QUERY_ANY_ADS = 48
    UPDATE_NEGOTIATOR_AD = 49
    QUERY_NEGOTIATOR_ADS = 50
    INVALIDATE_NEGOTIATOR_ADS = 51
    QUERY_MULTIPLE_ADS = 53
    QUERY_MULTIPLE_PVT_ADS = 54
    UPDATE_HAD_AD = 55
    QUERY_HAD_ADS = 56
    INVALIDATE_HAD_ADS = 57
    UPDATE_AD_GENERIC = 58
    INVALIDATE_ADS_GENERIC = 59
    UPDATE_STARTD_AD_WITH_ACK = 60
    CCB_REGISTER = 67
    CCB_REQUEST = 68
    CCB_REVERSE_CONNECT = 69
    UPDATE_GRID_AD = 70
    QUERY_GRID_ADS = 71
    INVALIDATE_GRID_ADS = 72
    MERGE_STARTD_AD = 73
    QUERY_GENERIC_ADS = 74
    SHARED_PORT_CONNECT = 75
    SHARED_PORT_PASS_SOCK = 76
    UPDATE_ACCOUNTING_AD = 77
    QUERY_ACCOUNTING_ADS = 78
    INVALIDATE_ACCOUNTING_ADS = 79
    UPDATE_OWN_SUBMITTOR_AD = 80
    IMPERSONATION_TOKEN_REQUEST = 81
    CCB_PROXY_CONNECT = 82
    RESCHEDULE = 421
    GET_HISTORY = 429
    GET_PRIORITY = 451
    ALIVE = 441
    REQUEST_CLAIM = 442
    ACTIVATE_CLAIM = 444
    VACATE_ALL_CLAIMS = 447
    RESTART = 453
    DAEMONS_OFF = 454
    DAEMONS_ON = 455
    MASTER_OFF = 456
    CONFIG_VAL = 457
    DAEMONS_OFF_FAST = 461
    DAEMON_OFF = 467
    DAEMON_OFF_FAST = 468
    DAEMON_ON = 469
    ACT_ON_JOBS = 478
    STORE_CRED = 479
    SPOOL_JOB_FILES = 480
    DAEMON_OFF_PEACEFUL = 483
    DAEMONS_OFF_PEACEFUL = 484
    RESTART_PEACEFUL = 485
    TRANSFER_DATA = 486
    SPOOL_JOB_FILES_WITH_PERMS = 488
    TRANSFER_DATA_WITH_PERMS = 489
    TRANSFER_QUEUE_REQUEST = 507
    GET_JOB_CONNECT_INFO = 509
    CLEAR_DIRTY_JOB_ATTRS = 511
    DRAIN_JOBS = 512
    CANCEL_DRAIN_JOBS = 513
    QUERY_SCHEDD_HISTORY = 515
    QUERY_JOB_ADS = 516
    QUERY_JOB_ADS_WITH_AUTH = 519
    QUERY_USERREC_ADS = 540
    GET_CONTACT_INFO = 550
    QMGMT_READ_CMD = 1111
    QMGMT_WRITE_CMD = 1112
    CREATE_JOB_OWNER_SEC_SESSION = 1501
    START_SSHD = 1502
    STARTER_PEEK = 1503
    DC_RAISESIGNAL = 60000
    DC_CONFIG_PERSIST = 60002
    DC_CONFIG_RUNTIME = 60003
    DC_RECONFIG = 60004
    DC_OFF_GRACEFUL = 60005
    DC_OFF_FAST = 60006
    DC_CONFIG_VAL = 60007
    DC_CHILDALIVE = 60008
    DC_AUTHENTICATE = 60010
    DC_NOP = 60011
    DC_RECONFIG_FULL = 60012
    DC_FETCH_LOG = 60013
    DC_INVALIDATE_KEY = 60014
    DC_OFF_PEACEFUL = 60015
    DC_SET_PEACEFUL_SHUTDOWN = 60016
    DC_TIME_OFFSET = 60017
    DC_PURGE_LOG = 60018
    DC_NOP_READ = 60020
    DC_NOP_WRITE = 60021
    DC_NOP_NEGOTIATOR = 60022
    DC_NOP_ADMINISTRATOR = 60023
    DC_NOP_OWNER = 60024
    DC_NOP_CONFIG = 60025
    DC_NOP_DAEMON = 60026
    DC_NOP_ADVERTISE_STARTD = 60027
    DC_NOP_ADVERTISE_SCHEDD = 60028
    DC_NOP_ADVERTISE_MASTER = 60029
    DC_SEC_QUERY = 60040
    DC_SET_FORCE_SHUTDOWN = 60041
    DC_OFF_FORCE = 60042
    DC_QUERY_READY = 60044
    DC_QUERY_INSTANCE = 60045
    DC_GET_SESSION_TOKEN = 60046
    DC_START_TOKEN_REQUEST = 60047
    DC_FINISH_TOKEN_REQUEST = 60048
    DC_LIST_TOKEN_REQUEST = 60049
    DC_APPROVE_TOKEN_REQUEST = 60050
    DC_AUTO_APPROVE_TOKEN_REQUEST = 60051
    DC_EXCHANGE_SCITOKEN = 60052


#: Commands the reference registers with "force authentication" (spec 03 §10 "FA"): they need a
#: mapped identity, and a raw start carries the method mask in band (§2).  One set for the
#: dissector and the server framework's default.
FORCE_AUTHENTICATION: frozenset[int] = frozenset(
    {
        Command.IMPERSONATION_TOKEN_REQUEST,
        Command.ACT_ON_JOBS,
        Command.STORE_CRED,
        Command.SPOOL_JOB_FILES,
        Command.TRANSFER_DATA,
        Command.SPOOL_JOB_FILES_WITH_PERMS,
        Command.TRANSFER_DATA_WITH_PERMS,
        Command.GET_JOB_CONNECT_INFO,
        Command.QUERY_JOB_ADS_WITH_AUTH,
        Command.QUERY_USERREC_ADS,
        Command.GET_CONTACT_INFO,
        Command.QMGMT_WRITE_CMD,
        Command.DC_LIST_TOKEN_REQUEST,
        Command.DC_APPROVE_TOKEN_REQUEST,
        Command.DC_EXCHANGE_SCITOKEN,
    }
)


class QmgmtCall(IntEnum):
    """Queue-management RPC numbers sent inside QMGMT_READ_CMD / QMGMT_WRITE_CMD (spec 05 §4.3)."""

    InitializeConnection = 10001
    NewCluster = 10002
    NewProc = 10003
    DestroyCluster = 10004
    DestroyProc = 10005
    SetAttribute = 10006
    CommitTransactionNoFlags = 10007
    GetAttributeFloat = 10008
    GetAttributeInt = 10009
    GetAttributeString = 10010
    GetAttributeExpr = 10011
    DeleteAttribute = 10012
    GetNextJob = 10013
    SendSpoolFile = 10017
    GetJobAd = 10018
    GetJobByConstraint = 10019
    GetNextJobByConstraint = 10020
    SetAttributeByConstraint = 10021
    InitializeReadOnlyConnection = 10022
    BeginTransaction = 10023
    AbortTransaction = 10024
    SetTimerAttribute = 10025
    GetAllJobsByConstraint = 10026
    SetAttribute2 = 10027
    CloseSocket = 10028
    SendSpoolFileIfNeeded = 10029
    SetEffectiveOwner = 10030
    CommitTransaction = 10031
    SetAttributeByConstraint2 = 10032
    GetDirtyAttributes = 10033
    GetNextDirtyJobByConstraint = 10034
    SetAllowProtectedAttrChanges = 10035
    GetCapabilities = 10036
    SetJobFactory = 10037
    SetMaterializeData = 10038
    SendMaterializeData = 10039
    SendJobQueueAd = 10040


class SetAttributeFlags(IntFlag):
    """Flag byte of SetAttribute2 / SetAttributeByConstraint2 (spec 05 §4.4)."""

    NONE = 0
    NONDURABLE = 0x01
    NO_ACK = 0x02
    SET_DIRTY = 0x04
    SHOULD_LOG = 0x08
    ONLY_MY_JOBS = 0x10
    QUERY_ONLY = 0x20
    POST_SUBMIT_CLUSTER_CHANGE = 0x80


#: How the dissector names each SetAttribute flag bit (the reference's own spelling).
SET_ATTRIBUTE_FLAG_NAMES: dict[SetAttributeFlags, str] = {
    SetAttributeFlags.NONDURABLE: "NonDurable",
    SetAttributeFlags.NO_ACK: "NoAck",
    SetAttributeFlags.SET_DIRTY: "SetDirty",
    SetAttributeFlags.SHOULD_LOG: "ShouldLog",
    SetAttributeFlags.ONLY_MY_JOBS: "OnlyMyJobs",
    SetAttributeFlags.QUERY_ONLY: "QueryOnly",
    SetAttributeFlags.POST_SUBMIT_CLUSTER_CHANGE: "PostSubmitClusterChange",
}


# --------------------------------------------------------------------------- qmgmt layouts


class Arg(Enum):
    """How one argument of a queue-management call is encoded (spec 01 primitives)."""

    INT = "int"
    STRING = "string"
    CHAR = "char"
    #: Every byte left in the message.
    REST = "rest"
    #: A ClassAd; always last.  :func:`read_arguments` stops in front of it (ads are read by
    #: :mod:`cedar.classad_wire`, a layer above this one).
    AD = "ad"


_I, _S, _C = Arg.INT, Arg.STRING, Arg.CHAR
_JOB = (("cluster", _I), ("proc", _I))
_JOB_ATTR = (*_JOB, ("name", _S))

#: The arguments of each queue-management call, in wire order (spec 05 §4.3).  Calls not listed
#: here take none.  SetAttribute sends the value *before* the name.
QMGMT_ARGUMENTS: dict[QmgmtCall, tuple[tuple[str, Arg], ...]] = {
    QmgmtCall.NewProc: (("cluster", _I),),
    QmgmtCall.DestroyCluster: (("cluster", _I),),
    QmgmtCall.DestroyProc: _JOB,
    QmgmtCall.SetAttribute: (*_JOB, ("value", _S), ("name", _S)),
    QmgmtCall.SetAttribute2: (*_JOB, ("value", _S), ("name", _S), ("flags", _C)),
    QmgmtCall.SetAttributeByConstraint: (("constraint", _S), ("value", _S), ("name", _S)),
    QmgmtCall.SetAttributeByConstraint2: (
        ("constraint", _S),
        ("value", _S),
        ("name", _S),
        ("flags", _C),
    ),
    QmgmtCall.CommitTransaction: (("flags", _I),),
    QmgmtCall.GetAttributeFloat: _JOB_ATTR,
    QmgmtCall.GetAttributeInt: _JOB_ATTR,
    QmgmtCall.GetAttributeString: _JOB_ATTR,
    QmgmtCall.GetAttributeExpr: _JOB_ATTR,
    QmgmtCall.DeleteAttribute: _JOB_ATTR,
    QmgmtCall.GetNextJob: (("init", _I),),
    QmgmtCall.SendSpoolFile: (("filename", _S),),
    QmgmtCall.GetJobAd: _JOB,
    QmgmtCall.GetJobByConstraint: (("constraint", _S),),
    QmgmtCall.GetNextJobByConstraint: (("init", _I), ("constraint", _S)),
    QmgmtCall.SetTimerAttribute: (*_JOB_ATTR, ("duration", _I)),
    QmgmtCall.GetAllJobsByConstraint: (("constraint", _S), ("projection", _S)),
    QmgmtCall.SendSpoolFileIfNeeded: (("ad", Arg.AD),),
    QmgmtCall.SetEffectiveOwner: (("owner", _S),),
    QmgmtCall.GetDirtyAttributes: _JOB,
    QmgmtCall.GetNextDirtyJobByConstraint: (("init", _I), ("constraint", _S)),
    QmgmtCall.SetAllowProtectedAttrChanges: (("value", _I),),
    QmgmtCall.GetCapabilities: (("mask", _I),),
    QmgmtCall.SetJobFactory: (("cluster", _I), ("maximum", _I), ("filename", _S), ("digest", _S)),
    QmgmtCall.SetMaterializeData: (
        ("cluster", _I),
        ("maximum", _I),
        ("filename", _S),
        ("digest", _S),
    ),
    QmgmtCall.SendMaterializeData: (("cluster", _I), ("flags", _I), ("data", Arg.REST)),
    QmgmtCall.SendJobQueueAd: (("cluster", _I), ("ad_type", _I), ("flags", _I), ("ad", Arg.AD)),
}

#: Calls the schedd never answers (spec 05 §4.3); SetAttribute* with NO_ACK neither.
QMGMT_NO_REPLY: frozenset[QmgmtCall] = frozenset(
    {QmgmtCall.CloseSocket, QmgmtCall.InitializeConnection, QmgmtCall.InitializeReadOnlyConnection}
)

ArgValue = int | str | bytes


class _Reader(_Protocol):
    @property
    def remaining(self) -> int: ...

    def get_int(self) -> int: ...
    def get_string(self) -> str: ...
    def get_char(self) -> int: ...
    def get_bytes(self, n: int) -> bytes: ...


class _Writer(_Protocol):
    def put_int(self, value: int) -> object: ...
    def put_string(self, value: str) -> object: ...
    def put_char(self, value: int) -> object: ...
    def put_bytes(self, value: bytes) -> object: ...


def qmgmt_layout(call: int) -> tuple[tuple[str, Arg], ...]:
    """The argument layout of ``call`` (empty for calls without arguments and unknown ones)."""
    try:
        return QMGMT_ARGUMENTS.get(QmgmtCall(call), ())
    except ValueError:
        return ()


class Arguments(dict[str, ArgValue]):
    """The arguments of one call by name, with typed access."""

    def int(self, name: str) -> int:
        """An ``Arg.INT``/``Arg.CHAR`` argument."""
        value = self.get(name)
        if not isinstance(value, int):
            raise ProtocolError(f"QMGMT argument {name} is missing or not an integer")
        return value

    def text(self, name: str) -> str:
        """An ``Arg.STRING`` argument."""
        value = self.get(name)
        if not isinstance(value, str):
            raise ProtocolError(f"QMGMT argument {name} is missing or not a string")
        return value


def read_arguments(call: int, reader: _Reader) -> Arguments:
    """Read the arguments of ``call`` from a request message (after its call number).

    Stops in front of a trailing :attr:`Arg.AD`, which the caller reads.
    """
    values = Arguments()
    for name, kind in qmgmt_layout(call):
        if kind is Arg.INT:
            values[name] = reader.get_int()
        elif kind is Arg.STRING:
            values[name] = reader.get_string()
        elif kind is Arg.CHAR:
            values[name] = reader.get_char()
        elif kind is Arg.REST:
            values[name] = reader.get_bytes(reader.remaining)
        else:
            break
    return values


def write_arguments(writer: _Writer, call: QmgmtCall, **values: ArgValue) -> None:
    """Write ``call``'s arguments in wire order; every one in its layout must be given."""
    layout = QMGMT_ARGUMENTS.get(call, ())
    if len(values) != sum(kind is not Arg.AD for _, kind in layout):
        raise InvalidArgument(f"{call.name} takes {[n for n, _ in layout]}, got {list(values)}")
    for name, kind in layout:
        value = values.get(name)
        if kind is Arg.INT and isinstance(value, int):
            writer.put_int(value)
        elif kind is Arg.STRING and isinstance(value, str):
            writer.put_string(value)
        elif kind is Arg.CHAR and isinstance(value, int):
            writer.put_char(value & 0xFF)
        elif kind is Arg.REST and isinstance(value, bytes):
            writer.put_bytes(value)
        elif kind is not Arg.AD:
            raise InvalidArgument(f"{call.name}: argument {name} must be a {kind.value}")


def expects_reply(call: int, values: dict[str, ArgValue]) -> bool:
    """Whether the schedd answers this request (NO_ACK SetAttribute and the no-reply calls not)."""
    if call in QMGMT_NO_REPLY:
        return False
    if call in (QmgmtCall.SetAttribute, QmgmtCall.SetAttribute2):
        flags = values.get("flags", 0)
        return not (isinstance(flags, int) and flags & SetAttributeFlags.NO_ACK)
    return True


# --------------------------------------------------------------------------- jobs


class JobStatus(IntEnum):
    """``JobStatus`` values (spec 05 §5.3); ``letter`` is condor_q's column."""

    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7

    Idle = 1
    Running = 2
    Removed = 3
    Completed = 4
    Held = 5
    TransferringOutput = 6
    Suspended = 7

    @property
    def letter(self) -> str:
        """The one-letter status of condor_q's ST column."""
        return "IRXCH>S"[self.value - 1]


#: The counter of the schedd's query summary ad (``Idle``, ``Running``, ... spec 05 §3.3) a
#: job counts under, by its ``JobStatus``: transferring output counts as running, 8 as
#: completed; any other status only in ``Jobs``.
JOB_SUMMARY_COUNTERS: dict[int, str] = {
    JobStatus.IDLE: "Idle",
    JobStatus.RUNNING: "Running",
    JobStatus.TRANSFERRING_OUTPUT: "Running",
    JobStatus.REMOVED: "Removed",
    JobStatus.COMPLETED: "Completed",
    8: "Completed",
    JobStatus.HELD: "Held",
    JobStatus.SUSPENDED: "Suspended",
}


class JobAction(IntEnum):
    """``JobAction`` of ACT_ON_JOBS (spec 05 §5.2)."""

    Hold = 1
    Release = 2
    Remove = 3
    RemoveX = 4
    Vacate = 5
    VacateFast = 6
    ClearDirtyAttrs = 7
    Suspend = 8
    Continue = 9
    TransferAndRemove = 10

    HOLD = 1
    RELEASE = 2
    REMOVE = 3
    REMOVE_X = 4
    VACATE = 5
    VACATE_FAST = 6
    CLEAR_DIRTY_ATTRS = 7
    SUSPEND = 8
    CONTINUE = 9
    TRANSFER_AND_REMOVE = 10

    @classmethod
    def from_name(cls, name: str | int | JobAction) -> JobAction:
        """``"hold"``, ``"remove-x"``, ``3`` … → the action."""
        if isinstance(name, int):
            try:
                return cls(name)
            except ValueError:
                raise InvalidArgument(f"unknown job action {name!r}") from None
        key = name.replace("-", "").replace("_", "").lower()
        for member in cls:
            if member.name.lower() == key:
                return member
        raise InvalidArgument(
            f"unknown job action {name!r}; known actions: " + ", ".join(m.name.lower() for m in cls)
        )


#: The request attribute that carries a reason for each action (spec 05 §5.2).
ACTION_REASON_ATTRIBUTE: dict[JobAction, str] = {
    JobAction.Hold: "HoldReason",
    JobAction.Release: "ReleaseReason",
    JobAction.Remove: "RemoveReason",
    JobAction.RemoveX: "RemoveReason",
    JobAction.TransferAndRemove: "RemoveReason",
    JobAction.Suspend: "SuspendReason",
    JobAction.Continue: "ContinueReason",
}


class ActionResult(IntEnum):
    """Per-job result codes of ACT_ON_JOBS (``result_total_N``, ``job_C_P``; spec 05 §5.4)."""

    ERROR = 0
    SUCCESS = 1
    NOT_FOUND = 2
    BAD_STATUS = 3
    ALREADY_DONE = 4
    PERMISSION_DENIED = 5
    LIMIT_EXCEEDED = 6

    @property
    def text(self) -> str:
        """``"not found"`` …"""
        return self.name.lower().replace("_", " ")


# --------------------------------------------------------------------------- ad and daemon types


class AdTypeInfo(Record, frozen=True):
    """What the protocol knows about one kind of ad."""

    __slots__ = ("key", "command", "target_type", "update", "invalidate", "requirements")
    key: str  # keeps members with the same commands distinct
    command: Command
    target_type: str
    update: Command | None
    invalidate: Command | None
    #: QUERY_MULTIPLE_* take no default ``Requirements`` (spec 05 §2.1).
    requirements: bool

    def __init__(
        self,
        key: str,
        command: Command,
        target_type: str,
        update: Command | None,
        invalidate: Command | None,
        requirements: bool = True,
    ) -> None:
        self._set(key, command, target_type, update, invalidate, requirements)


_Q = Command


def _info(key: str, command: Command, target_type: str, kind: str | None) -> AdTypeInfo:
    """A type whose UPDATE_/INVALIDATE_ commands follow the ``<KIND>_AD(S)`` pattern."""
    if kind is None:
        return AdTypeInfo(key, command, target_type, None, None)
    update = Command[f"UPDATE_{kind}_AD"]
    invalidate = Command[f"INVALIDATE_{kind}_ADS"]
    return AdTypeInfo(key, command, target_type, update, invalidate)


def _generic(key: str, target_type: str) -> AdTypeInfo:
    return AdTypeInfo(
        key, _Q.QUERY_GENERIC_ADS, target_type, _Q.UPDATE_AD_GENERIC, _Q.INVALIDATE_ADS_GENERIC
    )


class AdType(Enum):
    """Every kind of ad a collector stores, with the commands that query/update/remove it.

    ``STARTD`` and ``SLOT`` are the slot ads (``Machine``); ``START_DAEMON`` is the startd's own
    daemon ad.  ``GENERIC`` and the daemon kinds without a table of their own (``CREDD``,
    ``DEFRAG``, ...) share QUERY_GENERIC_ADS and differ only by TargetType (spec 05 §2.1).
    """

    STARTD = _info("startd", _Q.QUERY_STARTD_ADS, "Machine", "STARTD")
    SLOT = _info("slot", _Q.QUERY_STARTD_ADS, "Machine", "STARTD")
    START_DAEMON = AdTypeInfo(
        "start_daemon",
        _Q.QUERY_MULTIPLE_ADS,
        "StartD",
        _Q.UPDATE_STARTD_AD,
        _Q.INVALIDATE_STARTD_ADS,
        requirements=False,
    )
    STARTD_PRIVATE = _info("startd_private", _Q.QUERY_STARTD_PVT_ADS, "Machine", None)
    SCHEDD = _info("schedd", _Q.QUERY_SCHEDD_ADS, "Scheduler", "SCHEDD")
    MASTER = _info("master", _Q.QUERY_MASTER_ADS, "DaemonMaster", "MASTER")
    SUBMITTER = AdTypeInfo(
        "submitter",
        _Q.QUERY_SUBMITTOR_ADS,
        "Submitter",
        _Q.UPDATE_SUBMITTOR_AD,
        _Q.INVALIDATE_SUBMITTOR_ADS,
    )
    COLLECTOR = _info("collector", _Q.QUERY_COLLECTOR_ADS, "Collector", "COLLECTOR")
    NEGOTIATOR = _info("negotiator", _Q.QUERY_NEGOTIATOR_ADS, "Negotiator", "NEGOTIATOR")
    LICENSE = _info("license", _Q.QUERY_LICENSE_ADS, "License", "LICENSE")
    STORAGE = _info("storage", _Q.QUERY_STORAGE_ADS, "Storage", "STORAGE")
    HAD = _info("had", _Q.QUERY_HAD_ADS, "HAD", "HAD")
    GRID = _info("grid", _Q.QUERY_GRID_ADS, "Grid", "GRID")
    ACCOUNTING = _info("accounting", _Q.QUERY_ACCOUNTING_ADS, "Accounting", "ACCOUNTING")
    GENERIC = _generic("generic", "Generic")
    CREDD = _generic("credd", "CredD")
    PLACEMENTD = _generic("placementd", "PlacementD")
    DEFRAG = _generic("defrag", "Defrag")
    ANY = _info("any", _Q.QUERY_ANY_ADS, "Any", None)

    # The htcondor2 spellings.
    Startd = STARTD
    Slot = SLOT
    StartDaemon = START_DAEMON
    StartdPrivate = STARTD_PRIVATE
    Schedd = SCHEDD
    Master = MASTER
    Submitter = SUBMITTER
    Collector = COLLECTOR
    Negotiator = NEGOTIATOR
    License = LICENSE
    Storage = STORAGE
    Grid = GRID
    Accounting = ACCOUNTING
    Generic = GENERIC
    Credd = CREDD
    Placementd = PLACEMENTD
    Defrag = DEFRAG
    Any = ANY

    @property
    def command(self) -> Command:
        """The query command."""
        return self.value.command

    @property
    def target_type(self) -> str:
        """The TargetType the reference client sends for this type."""
        return self.value.target_type

    @property
    def update_command(self) -> Command | None:
        """The UPDATE_* command that advertises an ad of this type (None: not advertisable)."""
        return self.value.update

    @property
    def invalidate_command(self) -> Command | None:
        """The INVALIDATE_* command that removes ads of this type."""
        return self.value.invalidate

    @classmethod
    def from_name(cls, name: str | AdType) -> AdType:
        """Accept the enum, its name, or a command-line spelling (``slots``, ``schedds``...)."""
        if isinstance(name, AdType):
            return name
        key = name.strip().lower().replace("-", "_")
        key = _AD_TYPE_ALIASES.get(key, key)
        for member in cls:
            if member.name.lower() == key:
                return member
        raise InvalidArgument(
            f"unknown ad type {name!r}; known types: " + ", ".join(m.name.lower() for m in cls)
        )


_AD_TYPE_ALIASES = {
    "slots": "slot",
    "machine": "slot",
    "startds": "startd",
    "startdaemon": "start_daemon",
    "scheduler": "schedd",
    "schedds": "schedd",
    "masters": "master",
    "daemonmaster": "master",
    "submitters": "submitter",
    "submittor": "submitter",
    "collectors": "collector",
    "negotiators": "negotiator",
    "accountant": "accounting",
    "credds": "credd",
    "startd_private": "startd_private",
    "startdprivate": "startd_private",
    "all": "any",
}


class DaemonType(Enum):
    """Daemons that can be located through the collector, with the ad type that describes them."""

    MASTER = AdType.MASTER
    SCHEDD = AdType.SCHEDD
    STARTD = AdType.STARTD
    COLLECTOR = AdType.COLLECTOR
    NEGOTIATOR = AdType.NEGOTIATOR
    CREDD = AdType.CREDD
    PLACEMENTD = AdType.PLACEMENTD
    HAD = AdType.HAD
    GENERIC = AdType.GENERIC
    DEFRAG = AdType.DEFRAG

    # The htcondor2 spellings.
    Master = MASTER
    Schedd = SCHEDD
    Startd = STARTD
    Collector = COLLECTOR
    Negotiator = NEGOTIATOR
    Credd = CREDD
    Placementd = PLACEMENTD
    Generic = GENERIC
    Defrag = DEFRAG

    @property
    def ad_type(self) -> AdType:
        """The ad type queried to locate this daemon."""
        value: AdType = self.value
        return value

    @classmethod
    def from_name(cls, name: str | DaemonType) -> DaemonType:
        """Accept the enum or its (case-insensitive) name."""
        if isinstance(name, DaemonType):
            return name
        key = name.strip().upper()
        if key in cls.__members__:
            return cls[key]
        raise InvalidArgument(
            f"unknown daemon type {name!r}; known types: " + ", ".join(m.name.lower() for m in cls)
        )


# --------------------------------------------------------------------------- handshake


#: Legacy key protocols of the handshake's key message (spec 03 §5).
KEY_PROTOCOLS: dict[int, str] = {0: "none", 1: "BLOWFISH", 2: "3DES", 3: "AES"}


__all__ = [
    "ACTION_REASON_ATTRIBUTE",
    "JOB_SUMMARY_COUNTERS",
    "FORCE_AUTHENTICATION",
    "KEY_PROTOCOLS",
    "QMGMT_ARGUMENTS",
    "QMGMT_NO_REPLY",
    "SET_ATTRIBUTE_FLAG_NAMES",
    "ActionResult",
    "AdType",
    "AdTypeInfo",
    "Arg",
    "ArgValue",
    "Arguments",
    "Command",
    "DaemonType",
    "JobAction",
    "JobStatus",
    "QmgmtCall",
    "SetAttributeFlags",
    "expects_reply",
    "qmgmt_layout",
    "read_arguments",
    "write_arguments",
]
