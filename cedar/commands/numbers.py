"""CEDAR command numbers (spec 03 §10, spec 05) and queue-management RPC numbers (spec 05 §4.3).

One table for every package so that a number is written down exactly once.
"""

from __future__ import annotations

from enum import IntEnum


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


__all__ = ["FORCE_AUTHENTICATION", "Command", "QmgmtCall"]
