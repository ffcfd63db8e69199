"""The schedd client: job queries, submission, actions, edits and history.

Requests, protocols and results are in :mod:`cedar.commands.schedd`; this class runs them, one
command per call, each bounded by ``timeout`` (the whole call) and ``max_results``.  What
belongs to one call (a query's summary ad) is returned with that call, never kept on the
client, so concurrent calls on one client do not race.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from cedar.auth.client import CommandSession
from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.classad_wire import ClassAd
from cedar.commands._async.collector import AsyncCollector
from cedar.commands._async.command import AsyncDaemonClient, run_command_async
from cedar.commands.base import (
    DEFAULT_MAX_BYTES,
    FOLLOW_INTERVAL,
    MAX_RESULTS,
    run_blocking_async,
)
from cedar.commands.constraint import Constraint
from cedar.commands.schedd import (
    ActResult,
    AdWriter,
    JobSpec,
    ScheddLocation,
    ShapedWriter,
    SubmitDescription,
    SubmitResult,
    act_body,
    edit_work,
    job_query_command,
    local_schedd,
    location_address,
    qmgmt_body,
    query_chunks_protocol,
    query_lists_protocol,
    reschedule_body,
    retrieve_body,
    shared_query_request,
    spool_body,
    submit_builder,
    submit_result,
)
from cedar.errors import CedarError
from cedar.numbers import Command, DaemonType, JobAction
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol

if TYPE_CHECKING:  # imported where used: a query loads no submission, peek or transfer code
    from cedar.commands._async.history import AsyncHistoryChunks, AsyncHistoryQuery
    from cedar.commands.filetransfer import ProgressCallback
    from cedar.commands.peek import PeekedFile, PeekResult
    from cedar.commands.spool import RetrievedJob, SpooledJob
    from cedar.submit_language import SubmitSettings

T = TypeVar("T")


class AsyncJobQuery:
    """The job ads of one query as they arrive (iterate over it); :attr:`summary` is the
    schedd's closing summary ad (``Idle``, ``Running``, ``MyJobs``, ...) once all were read."""

    def __init__(self, schedd: AsyncSchedd, command: Command, request: ClassAd) -> None:
        #: The summary ad, set when the schedd has sent its last ad.
        self.summary: ClassAd | None = None
        self._lists: AsyncIterator[Any] = schedd._iterate(
            command, self._body(request, schedd.max_results)
        )
        self._list: list[ClassAd] = []
        self._next = 0

    def _body(
        self, request: ClassAd, max_results: int
    ) -> Callable[[CommandSession], Protocol[ClassAd]]:
        def body(session: CommandSession) -> Protocol[ClassAd]:
            self.summary = yield from query_lists_protocol(session, request, max_results)
            return self.summary

        return body

    def __aiter__(self) -> AsyncJobQuery:
        return self

    async def __anext__(self) -> ClassAd:
        ads, index = self._list, self._next
        while index >= len(ads):  # the protocol hands the ads on in lists
            ads = self._list = await anext(self._lists)
            index = 0
        self._next = index + 1
        return ads[index]


class AsyncJobChunks:
    """The job ads of one query as bytes, in lists of about ``chunk_size`` bytes as they arrive
    (see :meth:`AsyncSchedd.query_chunks`); :attr:`summary` as for :class:`AsyncJobQuery`."""

    def __init__(
        self,
        schedd: AsyncSchedd,
        command: Command,
        request: ClassAd,
        shaped: ShapedWriter,
        other: AdWriter,
        chunk_size: int,
    ) -> None:
        #: The summary ad, set when the schedd has sent its last ad.
        self.summary: ClassAd | None = None
        self._request = request
        self._writers = (shaped, other, chunk_size, schedd.max_results)
        self._chunks: AsyncIterator[Any] = schedd._iterate(command, self._body)

    def _body(self, session: CommandSession) -> Protocol[ClassAd]:
        shaped, other, chunk_size, max_results = self._writers
        self.summary = yield from query_chunks_protocol(
            session, self._request, shaped, other, chunk_size, max_results
        )
        return self.summary

    def __aiter__(self) -> AsyncJobChunks:
        return self

    async def __anext__(self) -> list[bytes]:
        chunk: list[bytes] = await anext(self._chunks)
        return chunk


class AsyncSchedd(AsyncDaemonClient):
    """Client of one schedd.

    ``AsyncSchedd(location)`` takes an address (sinful or ``host:port``), a
    :class:`~cedar.commands.collector.DaemonLocation` (``collector.locate(...)``) or the
    schedd's ad; ``AsyncSchedd()`` is the local schedd (configuration and address files, then
    the collector), ``AsyncSchedd(name=..., pool=...)`` asks the pool's collector, as the condor
    tools do.  ``timeout`` bounds each call as a whole (default
    :data:`~cedar.commands.base.DEFAULT_TIMEOUT`); ``max_results`` bounds the ads one query or
    history call accepts.
    """

    def __init__(
        self,
        location: ScheddLocation = None,
        *,
        name: str | None = None,
        pool: str | None = None,
        security: ClientSecurity | SecurityConfig | None = None,
        timeout: float | None = None,
        settings: SubmitSettings | None = None,
        max_results: int = MAX_RESULTS,
    ) -> None:
        super().__init__(
            location_address(location),
            name=name,
            pool=pool,
            security=security,
            timeout=timeout,
            max_results=max_results,
        )
        self.settings = settings

    async def locate(self) -> str:
        """The schedd's address, looking it up (once) when it was not given."""
        if self._address is None:
            name, pool = self._name, self._pool
            address, name = await run_blocking_async(lambda: local_schedd(name, pool))
            if address is None:
                collector = AsyncCollector(pool, security=self.security, timeout=self.timeout)
                location = await collector.locate(DaemonType.SCHEDD, name)
                address = location.address
            self._address = address
        return self._address

    async def _run(self, command: int, body: Callable[[CommandSession], Protocol[T]]) -> T:
        address = await self.locate()
        return await run_command_async(
            address, command, body, security=self.security, timeout=self.timeout
        )

    def query_iter(
        self,
        constraint: Constraint = None,
        projection: Iterable[str] = (),
        limit: int = -1,
        *,
        with_auth: bool = False,
        summary_only: bool = False,
        my_jobs: str | None = None,
        include_cluster_ads: bool = False,
    ) -> AsyncJobQuery:
        """Stream job ads as they arrive; the returned query's ``summary`` is set at the end.

        ``include_cluster_ads`` adds the late-materialization factories' cluster ads."""
        request = shared_query_request(
            constraint,
            tuple(projection),
            limit,
            summary_only=summary_only,
            my_jobs=my_jobs,
            include_cluster_ads=include_cluster_ads,
        )
        return AsyncJobQuery(self, job_query_command(with_auth), request)

    def query_chunks(
        self,
        constraint: Constraint = None,
        projection: Iterable[str] = (),
        *,
        shaped: ShapedWriter,
        other: AdWriter,
        chunk_size: int = 1 << 16,
        limit: int = -1,
    ) -> AsyncJobChunks:
        """:meth:`query_iter` for a reader that turns every ad into bytes (an HTTP listing's
        JSON): each ad of a recurring shape is given to ``shaped`` as its names and received
        values, without being made into an ad; any other ad to ``other``.  Iterating yields
        lists of the results, about ``chunk_size`` bytes each; ``limit`` as for
        :meth:`query_iter`."""
        request = shared_query_request(constraint, tuple(projection), limit)
        return AsyncJobChunks(self, job_query_command(False), request, shaped, other, chunk_size)

    async def query(
        self,
        constraint: Constraint = None,
        projection: Iterable[str] = (),
        limit: int = -1,
        *,
        with_auth: bool = False,
        summary_only: bool = False,
        my_jobs: str | None = None,
        include_cluster_ads: bool = False,
    ) -> list[ClassAd]:
        """All matching job ads (and the factories' cluster ads if asked)."""
        stream = self.query_iter(
            constraint,
            projection,
            limit,
            with_auth=with_auth,
            summary_only=summary_only,
            my_jobs=my_jobs,
            include_cluster_ads=include_cluster_ads,
        )
        return [ad async for ad in stream]

    async def transaction(self, work: Callable[[CedarConnection], Protocol[T]]) -> T:
        """Run ``work`` (QMGMT RPCs from :mod:`cedar.commands.qmgmt`) on one QMGMT_WRITE_CMD
        connection; anything not committed when it ends (or raises) is aborted."""
        return await self._run(Command.QMGMT_WRITE_CMD, qmgmt_body(work))

    async def submit(
        self,
        description: SubmitDescription,
        count: int | None = None,
        *,
        itemdata: Sequence[Mapping[str, object]] | None = None,
        submit_dir: str | None = None,
        spool: bool = False,
    ) -> SubmitResult:
        """Submit a description (or a cluster ad plus ``itemdata`` proc ads) in one
        transaction; on any failure nothing is left in the queue.

        ``spool=True`` submits the jobs on the spooling hold (spec 07 §3.1): they wait until
        :meth:`spool` has sent their input files.
        """
        from cedar.commands.qmgmt import submit_transaction
        from cedar.submit_language import SubmitSettings

        settings = self.settings
        if settings is None:
            settings = await run_blocking_async(SubmitSettings.from_config)
        build = submit_builder(description, count, itemdata, submit_dir, settings, spool)
        outcome = await self.transaction(lambda conn: submit_transaction(conn, build))
        if outcome.proc_ads:  # condor_submit sends no RESCHEDULE after a job factory
            with contextlib.suppress(CedarError):  # only a hint to the negotiator
                await self._run(Command.RESCHEDULE, reschedule_body)
        return submit_result(outcome)

    async def spool(
        self,
        jobs: SubmitResult | Iterable[ClassAd],
        *,
        progress: ProgressCallback | None = None,
    ) -> list[SpooledJob]:
        """Send the input files of jobs submitted with ``spool=True`` (command 488).

        ``jobs`` is the :class:`SubmitResult` or the job ads as submitted (client-side paths).
        The schedd releases the jobs about a second after this returns.  A missing or
        unreadable input raises :class:`~cedar.FileTransferError` (the schedd then removes the
        job); a job the schedd will not take raises :class:`~cedar.SpoolRefused`.
        """
        return await self._run(Command.SPOOL_JOB_FILES_WITH_PERMS, spool_body(jobs, progress))

    async def retrieve(
        self,
        job_spec: str | Iterable[str] | int,
        destination: str | os.PathLike[str] | None = None,
        *,
        progress: ProgressCallback | None = None,
        max_bytes: int | None = None,
    ) -> list[RetrievedJob]:
        """Fetch the output files of spooled jobs (command 489).

        ``job_spec``: ``"5"``, ``"5.0"``, a list of ids, or a constraint.  Files go where the
        job asked (its original ``Iwd``, ``transfer_output_remaps``, stdout/stderr and log
        paths), or, with ``destination``, below that directory (remaps relative to it; a
        name or remap that would leave it is refused).  ``max_bytes`` bounds what one job's
        sandbox may bring (a schedd sending more is cut off with an error).
        """
        body = retrieve_body(job_spec, destination, progress, max_bytes)
        return await self._run(Command.TRANSFER_DATA_WITH_PERMS, body)

    async def act(
        self,
        action: JobAction | str | int,
        job_spec: JobSpec,
        reason: str | None = None,
        *,
        long: bool = False,
        subcode: int | None = None,
    ) -> ActResult:
        """Hold/release/remove/… jobs by ids, cluster or constraint (ACT_ON_JOBS); ``long``
        asks for each job's result, ``subcode`` sets a hold's ``HoldReasonSubCode``."""
        return await self._run(
            Command.ACT_ON_JOBS, act_body(action, job_spec, reason, long, subcode)
        )

    async def hold(self, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        """Hold jobs."""
        return await self.act(JobAction.Hold, job_spec, reason)

    async def release(self, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        """Release held jobs."""
        return await self.act(JobAction.Release, job_spec, reason)

    async def remove(self, job_spec: JobSpec, reason: str | None = None) -> ActResult:
        """Remove jobs."""
        return await self.act(JobAction.Remove, job_spec, reason)

    async def edit(self, job_spec: JobSpec, attr: str, value: object, flags: int = 0) -> int:
        """Set ``attr`` to ``value`` (expression text, or a Python value) on jobs, in one
        transaction; returns the number of jobs."""
        return await self.transaction(edit_work(job_spec, attr, value, flags))

    def history(
        self,
        constraint: Constraint = None,
        projection: str | Iterable[str] = (),
        match: int = -1,
        since: int | str | None = None,
        *,
        completed_since: int | str | None = None,
        forwards: bool = False,
        scan_limit: int | None = None,
        source: str = "jobs",
        transfer_types: str | Iterable[str] | None = None,
        record_types: str | Iterable[str] | None = None,
        subsystem: str | None = None,
        from_dir: bool = False,
    ) -> AsyncHistoryQuery:
        """Stream history records, newest first (oldest first with ``forwards``).

        ``source``: ``"jobs"`` (finished jobs), ``"epochs"`` (one EPOCH record per run),
        ``"transfer"`` (URL-plugin transfer records; ``transfer_types`` narrows them to
        ``INPUT``/``OUTPUT``/``CHECKPOINT`` or condor_history's letters ``"IOC"``),
        ``"startd"`` (the local startd's file, read by the schedd) or ``"daemon"`` (snapshots
        of a daemon's ad; ``subsystem``, default ``SCHEDD``).  ``record_types`` overrides the
        source's default type filter (``"ALL"``, ``"SPAWN,EPOCH"``, ...).  ``match``: at
        most this many records; ``scan_limit``: examine at most this many; ``since`` (job
        id ``C``/``C.P`` or an expression) and ``completed_since`` (a time) end the scan at
        the first record they match.  The returned query's ``summary`` is the final ad.
        Refusals raise :class:`~cedar.commands.history.HistoryError`.
        """
        from cedar.commands._async.history import AsyncHistoryQuery
        from cedar.commands.history import history_request

        request = history_request(
            constraint,
            projection,
            match,
            since,
            completed_since=completed_since,
            forwards=forwards,
            scan_limit=scan_limit,
            source=source,
            transfer_types=transfer_types,
            record_types=record_types,
            subsystem=subsystem,
            from_dir=from_dir,
        )
        return AsyncHistoryQuery(self._iterate, Command.QUERY_SCHEDD_HISTORY, request)

    def history_chunks(
        self,
        constraint: Constraint = None,
        projection: str | Iterable[str] = (),
        match: int = -1,
        *,
        shaped: ShapedWriter,
        other: AdWriter,
        chunk_size: int = 1 << 16,
    ) -> AsyncHistoryChunks:
        """:meth:`history` of finished jobs for a reader that turns every record into bytes, as
        :meth:`query_chunks` is for :meth:`query_iter`: lists of ``shaped``'s (a record of a
        recurring shape, never made into an ad) and ``other``'s results, about ``chunk_size``
        bytes each."""
        from cedar.commands._async.history import AsyncHistoryChunks
        from cedar.commands.history import history_request

        request = history_request(constraint, projection, match)
        return AsyncHistoryChunks(
            self._iterate,
            Command.QUERY_SCHEDD_HISTORY,
            request,
            (shaped, other),
            chunk_size,
            self.max_results,
        )

    async def peek(
        self,
        job: str | int | tuple[int, int],
        stdout: bool = True,
        stderr: bool = False,
        files: Iterable[str] = (),
        offsets: Mapping[str, int] | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        *,
        transfer_queue: bool = True,
    ) -> PeekResult:
        """Read a running job's stdout, stderr or ``transfer_output_files`` (``condor_tail``).

        Each file is read from ``offsets[name]`` (``"stdout"``, ``"stderr"`` or the file name;
        missing or -1: its last bytes); all files share ``max_bytes``.  Pass the result's
        ``offsets`` back to read on.  Raises :class:`~cedar.commands.peek.JobNotRunning`,
        :class:`~cedar.commands.peek.PeekFileError` (a file the starter will not send or that
        does not exist) or :class:`~cedar.commands.peek.PeekRefused`.
        """
        from cedar.commands._async.peek import peek_job_async
        from cedar.commands.peek import check_max_bytes, job_id_of, make_target

        target = make_target(stdout, stderr, files, offsets)
        budget = check_max_bytes(max_bytes)
        address = await self.locate()
        return await peek_job_async(
            address,
            job_id_of(job),
            target,
            budget,
            security=self.security,
            timeout=self.timeout,
            transfer_queue=transfer_queue,
        )

    async def follow(
        self,
        job: str | int | tuple[int, int],
        stdout: bool = True,
        stderr: bool = False,
        files: Iterable[str] = (),
        offsets: Mapping[str, int] | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        *,
        interval: float = FOLLOW_INTERVAL,
        wait: bool = False,
        transfer_queue: bool = True,
    ) -> AsyncIterator[PeekedFile]:
        """Yield new bytes of the job's files as they are written, until the job ends
        (``condor_tail -follow``, minus its misread offsets); see
        :func:`~cedar.commands._async.peek.follow_job_async`.  ``timeout`` bounds each peek."""
        from cedar.commands._async.peek import follow_job_async
        from cedar.commands.peek import check_max_bytes, job_id_of, make_target

        target = make_target(stdout, stderr, files, offsets)
        budget = check_max_bytes(max_bytes)
        address = await self.locate()
        async for piece in follow_job_async(
            address,
            job_id_of(job),
            target,
            budget,
            security=self.security,
            timeout=self.timeout,
            transfer_queue=transfer_queue,
            interval=interval,
            wait=wait,
        ):
            yield piece


async def locate_schedd_async(
    name: str | None = None,
    pool: str | None = None,
    *,
    security: ClientSecurity | SecurityConfig | None = None,
    timeout: float | None = None,
) -> str:
    """The address of a schedd: ``name`` in ``pool`` (collector lookup), or the local one
    (``SCHEDD_HOST``/address files, then the collector; spec 06 §3.2–§3.3)."""
    schedd = AsyncSchedd(name=name, pool=pool, security=security, timeout=timeout)
    return await schedd.locate()
