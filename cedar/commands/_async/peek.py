"""Peeking at and following a running job's files: the four connections of spec 08 §8.1.

The protocols and the bookkeeping are in :mod:`cedar.commands.peek`; these functions open the
connections.  :class:`~cedar.commands._async.schedd.AsyncSchedd` exposes them as ``peek`` and
``follow``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

from cedar.auth.client import CommandDenied, SessionRejected
from cedar.auth.client_config import ClientSecurity
from cedar.auth.sinful import Sinful
from cedar.commands._async.ccb import open_attempt_async
from cedar.commands._async.command import run_command_async
from cedar.commands.base import DEFAULT_TIMEOUT, CommandAttempts, pause_async
from cedar.commands.peek import (
    FOLLOW_INTERVAL,
    MAX_FOLLOW_FAILURES,
    ConnectInfo,
    FollowState,
    JobNotRunning,
    PeekedFile,
    PeekError,
    PeekFileError,
    PeekRefused,
    PeekResult,
    PeekTarget,
    claim_security,
    connect_info_body,
    peek_body,
    release_slot,
    split_requests,
    transfer_queue_body,
)
from cedar.errors import CedarConnectionError, ProtocolError
from cedar.numbers import Command, JobStatus


async def connect_info_async(
    address: str | Sinful,
    job: tuple[int, int],
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ConnectInfo:
    """GET_JOB_CONNECT_INFO: where the job's starter is, and the claim to talk to it.

    Always negotiated (the schedd insists on authentication); raises
    :class:`~cedar.commands.peek.JobNotRunning` or :class:`~cedar.commands.peek.PeekRefused`.
    """
    return await run_command_async(
        address,
        Command.GET_JOB_CONNECT_INFO,
        connect_info_body(job),
        security=security,
        timeout=timeout,
        raw=False,
        permission_hint="WRITE",
    )


async def peek_starter_async(
    info: ConnectInfo,
    target: PeekTarget,
    max_bytes: int,
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> PeekResult:
    """STARTER_PEEK over the claim-id session (one request, or several: see
    :func:`~cedar.commands.peek.split_requests`); the budget is shared by all of them."""
    session_security = claim_security(info, security)
    result = PeekResult()
    budget = max_bytes
    for request in split_requests(target):
        part = await run_command_async(
            info.starter_address,
            Command.STARTER_PEEK,
            peek_body(request, budget),
            security=session_security,
            timeout=timeout,
            raw=False,
        )
        budget -= part.size
        result.files += part.files
        result.missing += part.missing
    return result


async def peek_running_async(
    address: str | Sinful,
    info: ConnectInfo,
    target: PeekTarget,
    max_bytes: int,
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    transfer_queue: bool = True,
) -> PeekResult:
    """The peek of a job whose connect info is known, inside a transfer-queue slot of the
    schedd at ``address`` (``transfer_queue=False``: without one; the starter does not check)."""
    if not transfer_queue:
        return await peek_starter_async(info, target, max_bytes, security=security, timeout=timeout)
    first = target.names()[0]
    attempts = CommandAttempts(
        address,
        Command.TRANSFER_QUEUE_REQUEST,
        transfer_queue_body(info.job, first, info.owner),
        security=security,
        timeout=timeout,
        raw=False,
        auth_command=None,
        permission_hint="WRITE",
    )
    while True:
        async with await open_attempt_async(attempts) as channel:
            try:
                slot = await channel.run(attempts.protocol(channel))
            except SessionRejected:
                if not attempts.retry():
                    raise
                continue
            except (CommandDenied, CedarConnectionError) as exc:
                job = f"{info.job[0]}.{info.job[1]}"
                raise PeekRefused(
                    f"Failed to receive transfer queue response from the schedd for job {job} "
                    f"(initial file {first}): {exc}"
                ) from None
            result = await peek_starter_async(
                info, target, max_bytes, security=security, timeout=timeout
            )
            slot.bytes_received = result.size
            await channel.run(release_slot(channel.conn, slot))
            return result


async def peek_job_async(
    address: str | Sinful,
    job: tuple[int, int],
    target: PeekTarget,
    max_bytes: int,
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    transfer_queue: bool = True,
) -> PeekResult:
    """One look at a running job's files (all four steps); a named file that does not exist
    raises :class:`~cedar.commands.peek.PeekFileError` carrying what the others brought."""
    info = await connect_info_async(address, job, security=security, timeout=timeout)
    result = await peek_running_async(
        address,
        info,
        target,
        max_bytes,
        security=security,
        timeout=timeout,
        transfer_queue=transfer_queue,
    )
    result.raise_for_missing()
    return result


async def follow_job_async(
    address: str | Sinful,
    job: tuple[int, int],
    target: PeekTarget,
    max_bytes: int,
    *,
    security: ClientSecurity | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    transfer_queue: bool = True,
    interval: float = FOLLOW_INTERVAL,
    wait: bool = False,
    offsets: Mapping[str, int] | None = None,
) -> AsyncIterator[PeekedFile]:
    """Yield each file's new bytes as the job writes them, until the job ends.

    The first peek reads the last ``max_bytes`` (or from ``offsets``); later ones read on from
    where the previous stopped, so nothing is shown twice or skipped, even on the 25.13.2
    starter whose stdout offsets ``condor_tail -follow`` misreads.  A job that is not running
    yet raises :class:`~cedar.commands.peek.JobNotRunning` unless ``wait``; once it ran,
    an eviction is waited out (the next run is shown from its start), and a hold raises.
    The iteration ends when the job completes or leaves the queue.
    """
    state = FollowState(
        target
        if offsets is None
        else PeekTarget(target.stdout, target.stderr, target.files, dict(offsets))
    )
    info: ConnectInfo | None = None
    started = False
    failures = 0
    while True:
        if info is None:
            try:
                info = await connect_info_async(address, job, security=security, timeout=timeout)
            except JobNotRunning as exc:
                if exc.finished and started:
                    return
                if exc.job_status == JobStatus.HELD or exc.finished or not (started or wait):
                    raise
                await pause_async(interval)
                continue
            state.new_run(info)
            started = True
        try:
            result = await peek_running_async(
                address,
                info,
                state.next_target(),
                max_bytes,
                security=security,
                timeout=timeout,
                transfer_queue=transfer_queue,
            )
        except PeekFileError:
            raise  # a file the starter will not send, or that is not there (yet)
        except (PeekError, CedarConnectionError, CommandDenied, ProtocolError) as exc:
            # The starter is gone or going (the job ended, was evicted or held) or not ready
            # yet: ask the schedd again, unless the refusal is final or keeps coming.
            if isinstance(exc, PeekRefused) and not exc.retry:
                raise
            if not (isinstance(exc, JobNotRunning) and exc.retry):  # "not yet initialized"
                failures += 1
            if failures > MAX_FOLLOW_FAILURES:
                raise
            info = None
            await pause_async(interval)
            continue
        failures = 0
        for piece in state.take(result):
            yield piece
        if result.size < max_bytes:  # a full budget means more is waiting: read on at once
            await pause_async(interval)
