"""The result of one history call: records as they arrive, then the daemon's final ad.

Shared by :meth:`AsyncSchedd.history <cedar.commands.AsyncSchedd.history>` and
:meth:`AsyncStartd.history <cedar.commands.AsyncStartd.history>`; the request and the protocol
are in :mod:`cedar.commands.history`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from cedar.auth.client import CommandSession
from cedar.classad_wire import ClassAd
from cedar.commands.history import history_chunks_protocol, history_protocol
from cedar.commands.schedd import AdWriter, ShapedWriter
from cedar.stream.protocol import Protocol

#: How a client runs one streamed command: ``iterate(command, body)``.
AsyncIterate = Callable[[int, Callable[[CommandSession], Protocol[Any]]], AsyncIterator[ClassAd]]


class AsyncHistoryQuery:
    """The records of one history call as they arrive (iterate over it).

    :attr:`summary` is the daemon's final ad once every record was read: ``AdCount`` (records
    of the selected types examined, the one that ended a ``since`` scan included) and
    ``NumJobMatches`` (records sent).  Errors are :class:`~cedar.commands.history.HistoryError`.
    """

    def __init__(
        self, iterate: AsyncIterate, command: int, request: ClassAd, daemon: str = "schedd"
    ) -> None:
        #: The request ad as sent (what ``condor_history`` would send for the same options).
        self.request = request
        #: The final ad, set when the daemon has sent its last one.
        self.summary: ClassAd | None = None
        self._ads = iterate(command, self._body(request, daemon))

    def _body(self, request: ClassAd, daemon: str) -> Callable[[CommandSession], Protocol[ClassAd]]:
        def body(session: CommandSession) -> Protocol[ClassAd]:
            self.summary = yield from history_protocol(session, request, daemon)
            return self.summary

        return body

    def __aiter__(self) -> AsyncHistoryQuery:
        return self

    async def __anext__(self) -> ClassAd:
        ad: ClassAd = await anext(self._ads)
        return ad


class AsyncHistoryChunks:
    """The records of one history call as bytes, in lists of about ``chunk_size`` bytes as they
    arrive (see :meth:`AsyncSchedd.history_chunks
    <cedar.commands.AsyncSchedd.history_chunks>`); :attr:`request` and :attr:`summary` as for
    :class:`AsyncHistoryQuery`."""

    def __init__(
        self,
        iterate: AsyncIterate,
        command: int,
        request: ClassAd,
        writers: tuple[ShapedWriter, AdWriter],
        chunk_size: int,
        max_results: int,
        daemon: str = "schedd",
    ) -> None:
        self.request = request
        self.summary: ClassAd | None = None
        self._options = (writers, chunk_size, max_results, daemon)
        self._chunks: AsyncIterator[Any] = iterate(command, self._body)

    def _body(self, session: CommandSession) -> Protocol[ClassAd]:
        (shaped, other), chunk_size, max_results, daemon = self._options
        self.summary = yield from history_chunks_protocol(
            session, self.request, shaped, other, chunk_size, max_results, daemon
        )
        return self.summary

    def __aiter__(self) -> AsyncHistoryChunks:
        return self

    async def __anext__(self) -> list[bytes]:
        chunk: list[bytes] = await anext(self._chunks)
        return chunk
