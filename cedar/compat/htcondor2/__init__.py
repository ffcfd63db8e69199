"""``htcondor2`` on cedar: ``Collector``, ``Schedd``, ``Submit``, ``SubmitResult``, ``param``,
the enums, ``JobEventLog``/``JobEvent``/``JobEventType`` and ``HTCondorException``.

Names, signatures, enum values and return types follow the reference module's documented API
(checked by introspection and by running the same scripts against the same pool with both,
``tests/live_pool/test_compat_differential.py``).  Everything runs on cedar's public API.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING

from cedar.commands import Collector as _CedarCollector
from cedar.commands import Schedd as _CedarSchedd
from cedar.commands import Startd as _CedarStartd
from cedar.commands import ping as _cedar_ping
from cedar.commands.collector import DaemonLocation
from cedar.commands.schedd import ActResult, JobSpec
from cedar.commands.schedd import SubmitResult as NativeSubmitResult
from cedar.compat.classad2 import ClassAd, ExprTree, adopt, plain
from cedar.compat.errors import (
    HTCondorException,
    HTCondorIOError,
    HTCondorLocateError,
    HTCondorValueError,
    translated,
)
from cedar.compat.eventlog import JobEvent, JobEventLog, JobEventType
from cedar.compat.htcondor2._enums import (
    AdType,
    AdTypes,
    CompletionType,
    CredType,
    CredTypes,
    DaemonCommand,
    DaemonCommands,
    DaemonType,
    DaemonTypes,
    DrainType,
    DrainTypes,
    FileTransferEventType,
    HistorySrc,
    JobAction,
    JobStatus,
    LogLevel,
    QueryOpt,
    QueryOpts,
    SubmitMethod,
    SubsystemType,
    TransactionFlag,
    TransactionFlags,
    VacateType,
)
from cedar.config import Config
from cedar.errors import CedarError, CommandError
from cedar.numbers import AdType as _CedarAdType
from cedar.numbers import DaemonType as _CedarDaemonType
from cedar.numbers import JobAction as _CedarJobAction
from cedar.submit_language import Submit as _CedarSubmit
from cedar.submit_language.queue import parse_queue
from cedar.version import PLATFORM_STRING, VERSION_STRING

if TYPE_CHECKING:
    from cedar.classad_wire import ClassAd as _CedarAd


_AD_TYPES = {
    "StartdPrivate": _CedarAdType.STARTD_PRIVATE,
    "StartDaemon": _CedarAdType.START_DAEMON,
}
_DAEMON_TYPES = {"none": None, "Any": None}


def _cedar_ad_type(ad_type: AdType | str | int) -> _CedarAdType:
    if isinstance(ad_type, int) and not isinstance(ad_type, AdType):
        ad_type = AdType(ad_type)
    name = ad_type.name if isinstance(ad_type, AdType) else str(ad_type)
    with translated():
        return _AD_TYPES.get(name) or _CedarAdType.from_name(name)


def _cedar_daemon_type(daemon_type: DaemonType | str | int) -> _CedarDaemonType:
    if isinstance(daemon_type, int) and not isinstance(daemon_type, DaemonType):
        daemon_type = DaemonType(daemon_type)
    name = daemon_type.name if isinstance(daemon_type, DaemonType) else str(daemon_type)
    if name in _DAEMON_TYPES:
        raise HTCondorValueError(f"cannot locate a daemon of type {name}")
    with translated():
        return _CedarDaemonType.from_name(name)


def _text(expr: str | ExprTree | None) -> str | None:
    return None if expr is None else str(expr)


def _constraint(expr: str | ExprTree | bool | None) -> str | None:
    """A constraint argument as text (programs also pass ``True``)."""
    if isinstance(expr, bool):
        return "true" if expr else "false"
    return _text(expr)


def _adopt_all(ads: Iterable[_CedarAd]) -> list[ClassAd]:
    return [adopt(ad) for ad in ads]


# ------------------------------------------------------------------------------------ param


#: What the Python bindings set differently from the tools (observed: ``param`` under
#: ``CONDOR_CONFIG=/dev/null`` as root, against ``condor_config_val -dump``).
_BINDINGS_BUILTINS = {"CondorIsAdmin": "false", "ENABLE_CLASSAD_CACHING": "false"}


class _Param(MutableMapping[str, object]):
    """``htcondor2.param``: the HTCondor configuration as a mapping of typed values.

    Every knob with a compiled-in default is there (``cedar.config.knob_table``); values are
    ints, floats and bools for the knobs the table types, else strings; names whose value is
    empty are absent, as in the reference.  Setting a value affects this process only.
    """

    def _config(self) -> Config:
        from cedar.config import default_config

        config = default_config()
        if config is not self._prepared:
            for name, value in _BINDINGS_BUILTINS.items():
                config.set_builtin(name, value)
            self._prepared = config
        return config

    _prepared: Config | None = None

    def __getitem__(self, key: str) -> object:
        try:
            value = self._config().typed(key)
        except CedarError:
            value = None
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._config().param_names())

    def __len__(self) -> int:
        return len(self._config().param_names())

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        try:
            return self._config().get(key) is not None
        except CedarError:
            return False

    def __setitem__(self, key: str, value: object) -> None:
        self._config().set(key, str(value))

    def __delitem__(self, key: str) -> None:
        """Drops an explicit setting (the configuration read stays, as in the reference)."""
        self._config().set(key, None)

    def __repr__(self) -> str:
        return "<htcondor param (cedar.compat)>"


param = _Param()


def reload_config(root_config_file: str | None = None) -> None:
    """Read the HTCondor configuration again.  ``root_config_file`` is accepted and, as by the
    25.13.2 bindings (observed: with or without ``CONDOR_CONFIG`` set), not read."""
    from cedar.config import set_default_config

    set_default_config(None)


def version() -> str:
    """The ``$CondorVersion: ... $`` string (cedar's version and build id)."""
    return VERSION_STRING


def platform() -> str:
    """The ``$CondorPlatform: ... $`` string."""
    return PLATFORM_STRING


def enable_debug(flags: str | None = None) -> None:
    """Accepted for compatibility; cedar logs through :mod:`logging`."""


def enable_log() -> None:
    """Accepted for compatibility; cedar logs through :mod:`logging`."""


def set_subsystem(name: str, daemon_type: SubsystemType | None = None) -> None:
    """Accepted for compatibility (the subsystem only changes ``SUBSYS.`` knobs)."""


# -------------------------------------------------------------------------------- Collector


def _address_of(location: object) -> str | None:
    """A sinful string from a location ad, a ``DaemonLocation``, a string or ``None``."""
    if location is None:
        return None
    if isinstance(location, DaemonLocation):
        return location.address
    if isinstance(location, Mapping):
        for key in ("ScheddIpAddr", "MyAddress"):
            if key in location:
                return str(location[key])
        raise HTCondorValueError("the location ad has no MyAddress")
    return str(location)


class Collector:
    """A pool's collector: ``Collector()``, ``Collector("cm.example.org")``, a list, or an ad."""

    def __init__(
        self,
        pool: str | ClassAd | list[str] | tuple[str, ...] | None = None,
        security: object | None = None,
    ) -> None:
        self._configured = pool is None  # the configuration's pool (see _location_ad)
        if isinstance(pool, Mapping):
            pool = _address_of(pool)
        with translated():
            self._collector = _CedarCollector(pool)

    def query(
        self,
        ad_type: AdType = AdType.Any,
        constraint: str | ExprTree | None = None,
        projection: list[str] | None = None,
        statistics: str | None = None,
    ) -> list[ClassAd]:
        """Ads of ``ad_type`` matching ``constraint`` (``statistics``, e.g. ``"All:2"``: the
        daemons' runtime statistics in their ads)."""
        with translated():
            ads = self._collector.query(
                _cedar_ad_type(ad_type),
                _text(constraint),
                projection=projection or (),
                statistics=statistics or None,
            )
        return _adopt_all(ads)

    def locate(self, daemon_type: DaemonType, name: str | None = None) -> ClassAd:
        """The location ad of one daemon (without ``name``: the first the collector lists,
        as the reference picks one)."""
        cedar_type = _cedar_daemon_type(daemon_type)
        try:
            if name is None:
                found = self._collector.locate_all(cedar_type)
                if not found:
                    raise HTCondorLocateError("Unable to find daemon.")
                location = found[0]
            else:
                location = self._collector.locate(cedar_type, name)
        except CommandError as exc:
            raise HTCondorLocateError(str(exc)) from exc
        except CedarError as exc:
            raise HTCondorIOError(str(exc)) from exc
        local = self._configured and name is None
        return _location_ad(location, cedar_type if local else None)

    def locateAll(self, daemon_type: DaemonType) -> list[ClassAd]:  # noqa: N802
        """The location ads of every daemon of a type."""
        cedar_type = _cedar_daemon_type(daemon_type)
        with translated():
            locations = self._collector.locate_all(cedar_type)
        return [_location_ad(location) for location in locations]

    def directQuery(  # noqa: N802
        self,
        daemon_type: DaemonType,
        name: str | None = None,
        projection: list[str] | None = None,
        statistics: str | None = None,
    ) -> ClassAd:
        """Ask the daemon itself for its ad (not the collector's copy); ``statistics`` as in
        :meth:`query`.  Without ``name``, the daemon :meth:`locate` picks."""
        cedar_type = _cedar_daemon_type(daemon_type)
        if name is None:
            name = str(self.locate(daemon_type).get("Name", "")) or None
        with translated():
            ad = self._collector.direct_query(
                cedar_type, name, projection=projection or (), statistics=statistics or None
            )
        return adopt(ad)

    def advertise(
        self,
        ad_list: list[ClassAd],
        command: str = "UPDATE_AD_GENERIC",
        use_tcp: bool = True,
    ) -> None:
        """Send ads to the collector with an ``UPDATE_*`` command."""
        ads = [plain(ad) if isinstance(ad, ClassAd) else ad for ad in ad_list]
        with translated():
            self._collector.advertise(ads, command)

    def __repr__(self) -> str:
        return f"<Collector {self._collector.addresses}>"


def _location_ad(location: DaemonLocation, local: _CedarDaemonType | None = None) -> ClassAd:
    """The location ad as the bindings return it (observed, 25.14.1 wheel, 25.13.2 pool): the
    collector's answer has no ``MyType`` (an explicit pool, a name, ``locateAll``; issue 39);
    ``Collector().locate(type)`` reads the local daemon's own ad, which names it (``local``)."""
    ad = adopt(location.ad)
    if local is not None and "MyType" not in ad:
        ad["MyType"] = local.ad_type.target_type
    return ad


# ----------------------------------------------------------------------------------- Submit


def _submit_text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: ``queue`` before a statement's arguments (htcondor2's ``itemdata(qargs)`` takes either).
_QUEUE_WORD = re.compile(r"\Aqueue\s", re.IGNORECASE)


class Submit(_CedarSubmit, MutableMapping[str, str]):
    """A submit description: ``Submit({"executable": ...})``, ``Submit(text)``, keywords.

    A mutable mapping as the reference's (``update``, ``setdefault``) whose keys cannot be
    removed: the reference refuses ``del``, ``pop``, ``popitem`` and ``clear`` alike."""

    def __init__(
        self,
        input: str | Mapping[str, object] | None = None,  # noqa: A002
        queue: str | None = None,
        **kwargs: object,
    ) -> None:
        description: str | dict[str, str] | None = None
        if isinstance(input, Mapping):
            description = {str(key): _submit_text(value) for key, value in input.items()}
        elif input is not None:
            description = str(input)
        commands = {key: _submit_text(value) for key, value in kwargs.items()}
        with translated():
            super().__init__(description, **commands)
            if queue is not None:
                self.set_queue(queue)
        self._method: int = -1

    def __getattr__(self, name: str) -> object:
        raise _not_provided("Submit", name)

    def __setitem__(self, key: str, value: object) -> None:
        super().__setitem__(key, _submit_text(value))

    def __delitem__(self, key: str) -> None:
        raise NotImplementedError(
            "Submit object keys can not be removed, but the empty string is defined to have "
            "no effect."
        )

    def expand(self, attr: str) -> str:
        """The value of a submit command with its ``$(macros)`` expanded."""
        from cedar.commands.submit_macros import MacroExpander

        values: dict[str, str] = {key.lower(): str(value) for key, value in self.items()}
        expander = MacroExpander(lambda name: values.get(name.lower()))
        return str(expander.expand(values.get(attr.lower(), "")))

    def itemdata(self, qargs: str | None = None) -> Iterator[dict[str, str]] | None:  # type: ignore[override]
        """The items of the queue statement, or of ``qargs`` (another statement's arguments,
        ``queue`` before them allowed), one dict each; ``None`` when it has no item list."""
        with translated():
            if qargs is None:
                specs = self.queue_specs()
                spec = specs[0] if specs else None
            else:
                spec = parse_queue(_QUEUE_WORD.sub("", qargs, count=1))
            if spec is None or not spec.mode:
                return None
            return iter(super().itemdata(os.getcwd(), spec))

    def getQArgs(self) -> str:  # noqa: N802
        """The arguments of the queue statement."""
        return self.queue_args

    def setQArgs(self, args: str) -> None:  # noqa: N802
        """Replace the queue statement's arguments."""
        with translated():
            self.set_queue(args)

    def setSubmitMethod(  # noqa: N802
        self, method_value: SubmitMethod | int = -1, allow_reserved_values: bool = False
    ) -> None:
        """Record which tool submitted the job (``JobSubmitMethod``)."""
        if 0 <= int(method_value) < 100 and not allow_reserved_values:
            raise HTCondorValueError("submit method values below 100 are reserved")
        self._method = int(method_value)

    def getSubmitMethod(self) -> int:  # noqa: N802
        """The recorded submit method (-1: not set)."""
        return self._method

    def issue_credentials(self) -> str | None:
        """No OAuth services are requested by cedar submits: nothing to issue."""
        return None


class SubmitResult:
    """What a submit created; methods as in ``htcondor2`` (``cluster()``, ``num_procs()``...)."""

    def __init__(
        self,
        clusterID: int,
        procID: int,
        num_procs: int,
        clusterAd: ClassAd,  # noqa: N803
    ) -> None:
        self._cluster = clusterID
        self._first_proc = procID
        self._num_procs = num_procs
        self._ad = clusterAd
        self._native: NativeSubmitResult | None = None

    def cluster(self) -> int:
        return self._cluster

    def clusterad(self) -> ClassAd:
        return self._ad

    def first_proc(self) -> int:
        return self._first_proc

    def num_procs(self) -> int:
        return self._num_procs

    def __str__(self) -> str:
        return (
            f"Submitted {self._num_procs} job(s) into cluster {self._cluster}, "
            f"beginning with proc {self._first_proc}."
        )

    def __repr__(self) -> str:
        return f"SubmitResult(cluster={self._cluster}, num_procs={self._num_procs})"


# ----------------------------------------------------------------------------------- Schedd


def _job_spec(job_spec: list[str] | str | ExprTree | int) -> JobSpec:
    if isinstance(job_spec, ExprTree):
        return str(job_spec)
    if isinstance(job_spec, (list, tuple)):
        return [str(item) for item in job_spec]
    return job_spec


class Schedd:
    """A schedd: ``Schedd()`` (the local one), ``Schedd(location_ad)`` or ``Schedd(address)``."""

    def __getattr__(self, name: str) -> object:
        raise _not_provided("Schedd", name)

    def __init__(self, location: ClassAd | str | None = None) -> None:
        address = _address_of(location)
        with translated():
            self._schedd = _CedarSchedd(address)

    @property
    def _native(self) -> _CedarSchedd:
        return self._schedd

    def query(
        self,
        constraint: str | ExprTree = "True",
        projection: list[str] | None = None,
        callback: Callable[[ClassAd], object] | None = None,
        limit: int = -1,
        opts: QueryOpt = QueryOpt.Default,
    ) -> list[object]:
        """Job ads matching ``constraint`` (each passed through ``callback`` when given)."""
        ads = self._query_iter(constraint, projection, limit, opts)
        if callback is None:
            return list(ads)
        return [result for ad in ads if (result := callback(ad)) is not None]

    def _query_iter(
        self,
        constraint: str | ExprTree | None,
        projection: Sequence[str] | None,
        limit: int,
        opts: int,
    ) -> Iterator[ClassAd]:
        summary_only = bool(int(opts) & QueryOpt.SummaryOnly)
        with translated():
            for ad in self._schedd.query_iter(
                _text(constraint), list(projection or ()), limit, summary_only=summary_only
            ):
                yield adopt(ad)

    def act(
        self,
        action: JobAction,
        job_spec: list[str] | str | ExprTree | int,
        reason: str | None = None,
    ) -> ClassAd:
        """Hold/release/remove/... jobs; returns the schedd's result ad (``TotalSuccess``...)."""
        cedar_action = _CedarJobAction(int(action))
        with translated():
            result = self._schedd.act(cedar_action, _job_spec(job_spec), reason)
        return _act_summary(result)

    def edit(
        self,
        job_spec: list[str] | str | ExprTree | int,
        attr: str,
        value: str | ExprTree,
        flags: TransactionFlag = TransactionFlag.Default,
    ) -> int:
        """Set ``attr`` to the expression ``value`` on the jobs; the number of jobs edited."""
        with translated():
            return self._schedd.edit(_job_spec(job_spec), attr, str(value), int(flags))

    def history(
        self,
        constraint: str | ExprTree | None = None,
        projection: list[str] | None = None,
        match: int = -1,
        since: int | str | ExprTree | None = None,
    ) -> list[ClassAd]:
        """Completed jobs, newest first."""
        return self._history("jobs", constraint, projection, match, since)

    def jobEpochHistory(  # noqa: N802
        self,
        constraint: str | ExprTree | None = None,
        projection: list[str] | None = None,
        match: int = -1,
        since: int | str | ExprTree | None = None,
        **kwargs: object,
    ) -> list[ClassAd]:
        """One record per run of a job (``ad_type="TRANSFER"``: the transfer records)."""
        ad_type = str(kwargs.pop("ad_type", "") or "").upper()
        if kwargs:
            raise TypeError(f"unexpected keyword arguments: {', '.join(sorted(kwargs))}")
        source = "transfer" if ad_type == "TRANSFER" else "epochs"
        return self._history(source, constraint, projection, match, since)

    def _history(
        self,
        source: str,
        constraint: str | ExprTree | bool | None,
        projection: list[str] | None,
        match: int,
        since: int | str | ExprTree | None,
    ) -> list[ClassAd]:
        since_arg = str(since) if isinstance(since, ExprTree) else since
        with translated():
            ads = self._schedd.history(
                _constraint(constraint), list(projection or ()), match, since_arg, source=source
            )
            return _adopt_all(ads)

    def get_claims(
        self, constraint: str | ExprTree | None = None, projection: list[str] | None = None
    ) -> list[ClassAd]:
        """The slots this schedd holds claims on (QUERY_STARTD_ADS to the schedd).  The
        constraint goes as its text, as the reference's ``str(constraint)``: without one the
        attribute ``None``, which selects no slot ("No active claims" in htcondor ap claims)."""
        with translated():
            address = self._schedd.locate()
            ads = _CedarCollector(address).query(
                _CedarAdType.STARTD, str(constraint), projection=projection or ()
            )
        return _adopt_all(ads)

    def submit(
        self,
        description: Submit | Mapping[str, str] | str,
        count: int = 0,
        spool: bool = False,
        itemdata: Iterable[str] | Iterable[Mapping[str, str]] | None = None,
        queue: str | None = None,
    ) -> SubmitResult:
        """Submit jobs; ``count``/``itemdata``/``queue`` override the description's queue."""
        if not isinstance(description, _CedarSubmit):
            description = Submit(description)
        if queue is not None:
            description = Submit(dict(description.items()), queue=queue)
        items = None if itemdata is None else [_item(value) for value in itemdata]
        with translated():
            result = self._schedd.submit(
                description, count or None, itemdata=items, submit_dir=os.getcwd(), spool=spool
            )
        submitted = SubmitResult(
            result.cluster, result.first_proc, result.num_procs, adopt(result.cluster_ad)
        )
        submitted._native = result
        return submitted

    def spool(self, result: SubmitResult) -> None:
        """Send the input files of jobs submitted with ``spool=True``."""
        if result._native is None:
            raise HTCondorValueError("spool() takes the result of submit(..., spool=True)")
        with translated():
            self._schedd.spool(result._native)

    def retrieve(self, job_spec: list[str] | str | ExprTree | int) -> None:
        """Fetch the output files of spooled jobs into their submit directories."""
        spec: str | int | list[str]
        if isinstance(job_spec, (list, tuple)):
            spec = [str(item) for item in job_spec]
        else:
            spec = str(job_spec) if isinstance(job_spec, ExprTree) else job_spec
        with translated():
            self._schedd.retrieve(spec)

    def reschedule(self) -> None:
        """Accepted; cedar's ``submit`` already asks the schedd to look for matches."""

    def __repr__(self) -> str:
        return f"<Schedd {self._schedd!r}>"


def _act_summary(result: ActResult) -> ClassAd:
    """The result ad in the bindings' shape (``Total<Outcome>`` counts)."""
    ad = ClassAd()
    ad["TotalError"] = result.count(0)
    ad["TotalJobAds"] = int(result.ad.get("TotalJobAds", 0))
    ad["TotalSuccess"] = result.count(1)
    ad["TotalNotFound"] = result.count(2)
    ad["TotalBadStatus"] = result.count(3)
    ad["TotalChangedAds"] = 1 if result.changed else 0
    ad["TotalAlreadyDone"] = result.count(4)
    ad["TotalPermissionDenied"] = result.count(5)
    return ad


def _item(value: object) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {str(k): _submit_text(v) for k, v in value.items()}
    return {"Item": _submit_text(value)}


def ping(location: ClassAd | str, authz: str | None = None, security: object = None) -> ClassAd:
    """Ask a daemon what we may do there; the answer as an ad (``AuthorizationSucceeded``...)."""
    address = _address_of(location)
    assert address is not None
    with translated():
        result = _cedar_ping(address, authz or "DC_NOP")
    ad = ClassAd()
    ad["AuthorizationSucceeded"] = bool(result.authorized)
    if result.user:
        ad["MyRemoteUserName"] = result.user
    if result.method:
        ad["AuthMethods"] = result.method
    return ad


# ------------------------------------------------------------------ Startd, Credd, commands


class Startd:
    """A startd: ``Startd()`` (the one the collector lists first), ``Startd(location_ad)``."""

    def __getattr__(self, name: str) -> object:
        raise _not_provided("Startd", name)

    def __init__(self, location: ClassAd | str | None = None) -> None:
        address = _address_of(location)
        if address is None:
            address = _address_of(Collector().locate(DaemonType.Startd))
        with translated():
            self._startd = _CedarStartd(address)

    def history(
        self,
        constraint: str | ExprTree | bool | None = None,
        projection: list[str] | None = None,
        match: int = -1,
        since: int | str | ExprTree | None = None,
    ) -> list[ClassAd]:
        """The startd's own job history (one record per job run on it), newest first."""
        since_arg = str(since) if isinstance(since, ExprTree) else since
        with translated():
            ads = self._startd.history(
                _constraint(constraint), list(projection or ()), match, since_arg
            )
            return _adopt_all(ads)

    def __repr__(self) -> str:
        return f"<Startd {self._startd.address}>"


class Credd:
    """The credd: ``Credd()`` locates the local one (as the reference, it fails with
    ``HTCondorLocateError`` when the pool has none).  cedar has no client for the credd's
    store/query commands yet: those methods raise :class:`HTCondorIOError`."""

    def __init__(self, location: ClassAd | str | None = None) -> None:
        address = _address_of(location)
        if address is None:
            try:
                address = _address_of(Collector().locate(DaemonType.Credd))
            except (HTCondorLocateError, HTCondorIOError):
                raise HTCondorLocateError("Unable to locate local daemon.") from None
        self._address = address

    def _unsupported(self, *args: object, **kwargs: object) -> object:
        raise HTCondorIOError("credd commands are not supported by cedar.compat")

    add_password = delete_password = query_password = _unsupported
    add_user_cred = delete_user_cred = query_user_cred = _unsupported
    add_user_service_cred = delete_user_service_cred = _unsupported
    query_user_service_cred = check_user_service_creds = get_oauth2_credential = _unsupported


def send_command(ad: ClassAd | str, dc: DaemonCommand | int, target: str | None = None) -> None:
    """Send a daemon-control command to the daemon of a location ad (``target``: the
    subsystem a master should act on, e.g. ``"SCHEDD"`` for ``DaemonOff``)."""
    from cedar.commands import run_command
    from cedar.stream.protocol import Send

    address = _address_of(ad)
    if address is None:
        raise HTCondorValueError("send_command needs a location ad")

    def body(session: object) -> object:
        writer = session.payload_writer()  # type: ignore[attr-defined]
        if target is not None:
            writer.put_string(target)
        yield Send(writer)

    with translated():
        run_command(address, int(dc), body)  # type: ignore[arg-type]


def log(level: LogLevel | int, message: str) -> None:
    """Write ``message`` to the process's log: here Python's :mod:`logging`
    (``cedar.compat``; ``Always``/``Error`` as warnings and errors, the rest as debug)."""
    import logging

    category = int(level) & 0x3FF
    python_level = {0: logging.WARNING, 1: logging.ERROR}.get(category, logging.DEBUG)
    logging.getLogger("cedar.compat").log(python_level, "%s", message)


class RemoteParam(MutableMapping[str, str]):
    """A daemon's configuration, read remotely.  cedar has no client for the config-query
    commands yet: every lookup raises :class:`HTCondorIOError`."""

    def __init__(self, location: ClassAd) -> None:
        self._address = _address_of(location)

    def _fail(self) -> HTCondorIOError:
        return HTCondorIOError("remote configuration queries are not supported by cedar.compat")

    def __getitem__(self, key: str) -> str:
        raise self._fail()

    def __setitem__(self, key: str, value: str) -> None:
        raise self._fail()

    def __delitem__(self, key: str) -> None:
        raise self._fail()

    def __iter__(self) -> Iterator[str]:
        raise self._fail()

    def __len__(self) -> int:
        raise self._fail()

    def refresh(self) -> None:
        raise self._fail()


__all__ = [
    "AdType",
    "CredType",
    "CredTypes",
    "Credd",
    "DaemonCommand",
    "DaemonCommands",
    "LogLevel",
    "RemoteParam",
    "Startd",
    "log",
    "send_command",
    "AdTypes",
    "Collector",
    "CompletionType",
    "DaemonType",
    "DaemonTypes",
    "DrainType",
    "DrainTypes",
    "FileTransferEventType",
    "HTCondorException",
    "HistorySrc",
    "JobAction",
    "JobEvent",
    "JobEventLog",
    "JobEventType",
    "JobStatus",
    "QueryOpt",
    "QueryOpts",
    "Schedd",
    "Submit",
    "SubmitMethod",
    "SubmitResult",
    "SubsystemType",
    "TransactionFlag",
    "TransactionFlags",
    "VacateType",
    "enable_debug",
    "enable_log",
    "param",
    "ping",
    "platform",
    "reload_config",
    "set_subsystem",
    "version",
]


#: The reference's public names cedar.compat does not provide, by owner: asked for, they raise
#: an AttributeError that says so, rather than Python's bare "has no attribute".
_NOT_PROVIDED: dict[str, frozenset[str]] = {
    "htcondor2": frozenset(
        {
            "CommonFilesEventType",
            "CredCheck",
            "DAGMan",
            "Negotiator",
            "Placementd",
            "SecurityContext",
            "disable_debug",
            "load_a_config_usermap_file",
            "reload_config_usermaps",
            "send_alive",
            "set_ready_state",
        }
    ),
    "Schedd": frozenset(
        {
            "addProjectRec",
            "addUserRec",
            "create_ocu",
            "daemonHistory",
            "disableProjectRec",
            "disableUserRec",
            "enableProjectRec",
            "enableUserRec",
            "export_jobs",
            "import_exported_job_results",
            "queryProjectAds",
            "queryUserAds",
            "query_ocu",
            "refreshGSIProxy",
            "removeProjectRec",
            "removeUserRec",
            "remove_ocu",
            "unexport_jobs",
            "updateProjectRec",
            "updateUserRec",
        }
    ),
    "Startd": frozenset({"cancelDrainJobs", "drainJobs", "rehome", "vacate", "vacateSlot"}),
    "Submit": frozenset({"from_dag", "from_dag_options", "jobs", "procs"}),
}


def _not_provided(owner: str, name: str) -> AttributeError:
    """The error for ``owner.name``: a clear "not provided" for a name of the reference's API
    that cedar.compat lacks, Python's usual message for any other."""
    if name in _NOT_PROVIDED.get(owner, ()):
        return AttributeError(
            f"{owner}.{name} is part of the HTCondor bindings' API that cedar.compat does not "
            "provide (README: Running existing HTCondor programs)"
        )
    if owner == "htcondor2":
        return AttributeError(f"module {owner!r} has no attribute {name!r}")
    return AttributeError(f"{owner!r} object has no attribute {name!r}")


def __getattr__(name: str) -> object:
    raise _not_provided("htcondor2", name)
