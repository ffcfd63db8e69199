"""The chunk protocols of the job query and of history (``query_chunks_protocol``,
``history_chunks_protocol``) against scripted replies, fed a few bytes at a time or all at once.

Both run on the one :class:`~cedar.commands.base.Batcher` and read messages the connection
already holds without a driver trip; each shares its summary/final-ad rule with its ad protocol.
What is checked: the chunks hold exactly what the ad protocol emits (written by the same
writers), in both history framings (a header and one message per record; every ad in one message
larger than a streamed piece); the ``max_results`` limit when it falls on a chunk's edge; the
rest emitted before an error final ad; a silent close told from a forgotten resumed session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from cedar.auth.client import CommandSession
from cedar.classad_wire import ClassAd, put_classad
from cedar.classad_wire.jsonfmt import ad_to_json_compact_bytes, columns_json_bytes
from cedar.commands.errors import HistoryError
from cedar.commands.history import history_chunks_protocol, history_protocol, history_request
from cedar.commands.schedd import (
    QUERY_LIST_SIZE,
    query_chunks_protocol,
    query_lists_protocol,
    query_protocol,
    query_request,
)
from cedar.errors import CommandError, ConnectionClosed, ProtocolError, ResultLimitExceeded
from cedar.numbers import Command
from cedar.stream.connection import CedarConnection
from cedar.stream.driving import DriverCore, Flush, NeedData, Waits
from cedar.stream.framing import frame_plain
from cedar.stream.primitives import MessageWriter
from cedar.stream.protocol import STREAM_PART_SIZE, Deliver, Finished, Protocol

Body = Callable[[CommandSession], Protocol[Any]]


def payload(*ads: dict[str, object]) -> bytes:
    """One message holding ``ads`` back to back."""
    writer = MessageWriter()
    for ad in ads:
        put_classad(writer, ClassAd(ad))
    return writer.getvalue()


def run(
    body: Body,
    replies: Sequence[bytes],
    *,
    step: int | None = None,
    pipelined: bool = False,
    emitted: list[Any] | None = None,
) -> tuple[list[Any], Any]:
    """Run ``body`` on a fresh session against ``replies`` (payloads, then the peer closes),
    handing the bytes over ``step`` at a time (None: all at once).  Every other early read is
    answered "nothing readable" so that early pieces of a streamed message are taken too.
    Returns what was emitted (into ``emitted`` if given) and the result."""
    conn = CedarConnection()
    wire = b"".join(frame_plain(p, chunk=4091) for p in replies)  # the reference's packets
    session = CommandSession(conn, int(Command.QUERY_SCHEDD_HISTORY), raw=False)
    session.pipelined = pipelined
    core = DriverCore(conn, body(session), Waits(5.0, "the script", None))
    emitted = [] if emitted is None else emitted
    position = 0
    idle = False
    action = core.start()
    while not isinstance(action, Finished):
        if isinstance(action, Flush):
            action = core.wrote()
        elif isinstance(action, Deliver):
            emitted.extend(action.values())
            action = core.delivered()
        elif isinstance(action, NeedData):
            idle = not idle
            if action.early and idle and position < len(wire):
                action = core.idle()
                continue
            size = len(wire) if step is None else step
            data, position = wire[position : position + size], position + size
            action = core.received(data)
        else:  # pragma: no cover - DriverCore has no other step
            raise AssertionError(action)
    return emitted, action.result


def raised(body: Body, replies: Sequence[bytes], **options: Any) -> tuple[list[Any], Exception]:
    """:func:`run` of a body expected to fail: what it emitted first, and the error."""
    emitted: list[Any] = []
    try:
        result = run(body, replies, emitted=emitted, **options)
    except Exception as exc:  # the protocol's error leaves the driver's step
        return emitted, exc
    raise AssertionError(f"no error: {result!r}")


def other(ad: ClassAd) -> bytes:
    return ad_to_json_compact_bytes(ad)


def shaped(names: tuple[str, ...], values: Sequence[bytes]) -> bytes:
    return columns_json_bytes(names, values)


def job(index: int, padding: int = 600) -> dict[str, object]:
    """A record of one shape (recurring: its shape gets a compiled reader after 128)."""
    return {
        "ClusterId": 7,
        "ProcId": index,
        "Owner": "alice",
        "Cmd": "/bin/" + "x" * padding,
        "JobStatus": 4,
    }


HEADER = {"Owner": 1, "StreamResults": True}


def final(count: int, **extra: object) -> dict[str, object]:
    return {"Owner": 0, "AdCount": count, "MalformedAds": 0, "NumJobMatches": count, **extra}


def history_replies(records: list[dict[str, object]], end: dict[str, object], streamed: bool):
    """A history reply in either framing (spec 08 §4)."""
    if streamed:
        return [payload(HEADER), *(payload(r) for r in records), payload(end)]
    return [payload(*records, end)]


def history_ads(request: ClassAd, replies: Sequence[bytes], **options: Any) -> list[Any]:
    return run(lambda s: history_protocol(s, request), replies, **options)[0]


def history_chunks(
    replies: Sequence[bytes],
    *,
    chunk_size: int = 4096,
    max_results: int = 1_000_000,
    write: tuple[Any, Any] = (shaped, other),
    **options: Any,
) -> Body:
    request = history_request("ClusterId == 7")

    def body(session: CommandSession) -> Protocol[ClassAd]:
        return history_chunks_protocol(
            session, request, write[0], write[1], chunk_size, max_results
        )

    return body


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "one-message"])
@pytest.mark.parametrize("step", [None, 4093, 65536])
def test_history_chunks_hold_what_history_emits(streamed: bool, step: int | None) -> None:
    """Each framing, whole or in slices: the chunks are the ad protocol's records written by
    ``other`` (the shape-recurring ones by ``shaped``, the same bytes), in order, each list
    about ``chunk_size`` bytes; the final ad is returned.  The one-message reply is larger than
    a streamed piece, so records straddle pieces."""
    records = [job(i) for i in range(400)]
    replies = history_replies(records, final(400), streamed)
    if not streamed:
        assert len(replies[0]) > STREAM_PART_SIZE + 1000
    request = history_request("ClusterId == 7")
    ads = history_ads(request, replies, step=step)
    assert [ad["ProcId"] for ad in ads] == list(range(400))
    used = {"shaped": 0}

    def counted(names: tuple[str, ...], values: Sequence[bytes]) -> bytes:
        used["shaped"] += 1
        return shaped(names, values)

    for _ in range(2):  # the second run reads the shape with its compiled reader
        lists, summary = run(
            history_chunks(replies, chunk_size=8192, write=(counted, other)), replies, step=step
        )
        assert isinstance(summary, ClassAd) and summary["NumJobMatches"] == 400
        assert [data for items in lists for data in items] == [other(ad) for ad in ads]
        sizes = [sum(map(len, items)) for items in lists]
        assert all(8192 <= size < 8192 + 700 for size in sizes[:-1]) and sizes[-1] > 0
    assert used["shaped"] >= 400


def fixed(size: int) -> tuple[Any, Any]:
    """Writers giving every record ``size`` bytes (lists of an exact number of records)."""
    return (lambda names, values: b"s" * size, lambda ad: b"o" * size)


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "one-message"])
def test_history_limit_at_a_chunk_boundary(streamed: bool) -> None:
    """Three records a list: a limit of exactly the records sent passes; one that falls on a
    list's edge fails on the next record, after the full lists before it were emitted."""
    replies = history_replies([job(i, 10) for i in range(9)], final(9), streamed)
    lists, summary = run(
        history_chunks(replies, chunk_size=300, max_results=9, write=fixed(100)), replies
    )
    assert [len(items) for items in lists] == [3, 3, 3] and summary["NumJobMatches"] == 9
    body = history_chunks(replies, chunk_size=300, max_results=6, write=fixed(100))
    lists, error = raised(body, replies)
    assert [len(items) for items in lists] == [3, 3]
    assert isinstance(error, ResultLimitExceeded)
    assert str(error) == (
        "the schedd sent more than 6 history records; raise max_results if that many are expected"
    )


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "one-message"])
def test_history_error_final_ad_after_chunks(streamed: bool) -> None:
    """The records before an error final ad are emitted (the short last list too), then the
    error is the ad protocol's, word for word."""
    end = final(7, ErrorCode=5, ErrorString="no such history")
    replies = history_replies([job(i, 10) for i in range(7)], end, streamed)
    lists, error = raised(history_chunks(replies, chunk_size=300, write=fixed(100)), replies)
    assert [len(items) for items in lists] == [3, 3, 1]
    request = history_request("ClusterId == 7")
    ads, same = raised(lambda s: history_protocol(s, request), replies)
    assert len(ads) == 7
    assert isinstance(error, HistoryError) and error.code == 5
    assert type(same) is type(error) and str(same) == str(error)
    assert "ErrorCode 5" in str(error) and "no such history" in str(error)


@pytest.mark.parametrize(
    ("end", "kind", "text"),
    [
        (final(2, NumJobMatches=3), ProtocolError, "sent 2 history records but announced 3"),
        (final(2, MalformedAds=1), HistoryError, "holds 1 malformed record(s)"),
    ],
)
def test_final_ad_checks_are_one_rule(end: dict[str, object], kind: type, text: str) -> None:
    """A count the final ad contradicts, or malformed records: the same error from either
    protocol, in either framing."""
    request = history_request("ClusterId == 7")
    for streamed in (True, False):
        replies = history_replies([job(0, 10), job(1, 10)], end, streamed)
        errors = [
            raised(history_chunks(replies), replies)[1],
            raised(lambda s: history_protocol(s, request), replies)[1],
        ]
        assert {type(e) for e in errors} == {kind}
        assert str(errors[0]) == str(errors[1]) and text in str(errors[0])


def test_silent_close_or_forgotten_session() -> None:
    """A close before any answer is the daemon refusing the request (a HistoryError); a close
    after records, or before any byte of a pipelined resumption, stays a ConnectionClosed (a
    broken reply; a forgotten session the driver retries)."""
    request = history_request("ClusterId == 7")
    bodies = [history_chunks([]), lambda s: history_protocol(s, request)]
    for body in bodies:
        _, error = raised(body, [])
        assert isinstance(error, HistoryError)
        assert "closed the connection without answering" in str(error)
        _, error = raised(body, [], pipelined=True)
        assert type(error) is ConnectionClosed
        emitted, error = raised(body, [payload(HEADER), payload(job(0, 10))])
        assert type(error) is ConnectionClosed  # (the chunks' short list is not emitted)
        assert len(emitted) == (0 if body is bodies[0] else 1)


def job_query(*, chunk_size: int = 4096, max_results: int = 1_000_000, write: Any = None) -> Body:
    request = query_request("ClusterId == 7")
    shaped_writer, other_writer = write or (shaped, other)

    def body(session: CommandSession) -> Protocol[ClassAd]:
        return query_chunks_protocol(
            session, request, shaped_writer, other_writer, chunk_size, max_results
        )

    return body


@pytest.mark.parametrize("step", [None, 1000])
def test_query_chunks_hold_what_the_query_emits(step: int | None) -> None:
    """One message per job ad, held or arriving in slices: the chunks are the query's ads
    written by ``other``; the summary ends the reply and is returned."""
    summary = {"Owner": 0, "Idle": 0, "Held": 300}
    replies = [*(payload(job(i, 40)) for i in range(300)), payload(summary)]
    request = query_request("ClusterId == 7")
    ads, result = run(lambda s: query_protocol(s, request), replies, step=step)
    assert len(ads) == 300 and result["Held"] == 300
    lists, result = run(job_query(chunk_size=2048), replies, step=step)
    assert result["Held"] == 300
    assert [data for items in lists for data in items] == [other(ad) for ad in ads]
    assert len(lists) > 10


def test_query_chunks_limit_and_error_summary() -> None:
    """The limit on a list's edge, and an error summary after chunks: the rest is emitted,
    then the ad protocol's error, word for word."""
    replies = [*(payload(job(i, 10)) for i in range(9)), payload({"Owner": 0})]
    lists, result = run(job_query(chunk_size=300, max_results=9, write=fixed(100)), replies)
    assert [len(items) for items in lists] == [3, 3, 3] and result["Owner"] == 0
    lists, error = raised(job_query(chunk_size=300, max_results=6, write=fixed(100)), replies)
    assert [len(items) for items in lists] == [3, 3] and isinstance(error, ResultLimitExceeded)
    assert str(error) == (
        "the schedd sent more than 6 results; raise max_results if that many are expected"
    )
    bad = {"Owner": 0, "ErrorCode": 3, "ErrorString": "bad constraint"}
    replies = [*(payload(job(i, 10)) for i in range(7)), payload(bad)]
    lists, error = raised(job_query(chunk_size=300, write=fixed(100)), replies)
    assert [len(items) for items in lists] == [3, 3, 1] and isinstance(error, CommandError)
    request = query_request("ClusterId == 7")
    _, same = raised(lambda s: query_protocol(s, request), replies)
    assert str(error) == str(same)
    assert str(error) == "the job query failed on the schedd (ErrorCode 3): bad constraint"


def test_query_chunks_keep_one_ad_per_message() -> None:
    """A message with bytes after its ad is refused, as the ad protocol refuses it."""
    replies = [payload(job(0, 10), job(1, 10)), payload({"Owner": 0})]
    request = query_request("ClusterId == 7")
    for body in (job_query(), lambda s: query_protocol(s, request)):
        _, error = raised(body, replies)
        assert isinstance(error, ProtocolError) and "unread bytes" in str(error)


@pytest.mark.parametrize("step", [None, 1000])
def test_query_lists_hold_what_the_query_emits(step: int | None) -> None:
    """The job query's ads in lists (``Schedd.query_iter`` flattens them): the same ads, in
    order, no list longer than ``QUERY_LIST_SIZE``; what has arrived is handed on before each
    wait (bytes in slices: many short lists); the summary is returned."""
    count = QUERY_LIST_SIZE * 2 + 44
    summary = {"Owner": 0, "Idle": 0, "Held": count}
    replies = [*(payload(job(i, 40)) for i in range(count)), payload(summary)]
    request = query_request("ClusterId == 7")
    ads, _ = run(lambda s: query_protocol(s, request), replies, step=step)
    lists, result = run(lambda s: query_lists_protocol(s, request, 10**6), replies, step=step)
    assert result["Held"] == count
    flat = [ad for ads_ in lists for ad in ads_]
    assert [ad.raw_items() for ad in flat] == [ad.raw_items() for ad in ads]
    assert all(0 < len(ads_) <= QUERY_LIST_SIZE for ads_ in lists)
    if step is None:  # all held: full lists
        assert [len(ads_) for ads_ in lists] == [QUERY_LIST_SIZE, QUERY_LIST_SIZE, 44]
    else:  # ~10 ads a slice: handed on as they arrive, not held back
        assert max(map(len, lists)) < 20


def test_query_lists_count_ads_against_max_results() -> None:
    """``max_results`` counts ads (the driver counts lists); an error summary after ads: the
    ads are handed on, then the same error as the ad protocol's."""
    replies = [*(payload(job(i, 10)) for i in range(9)), payload({"Owner": 0})]
    request = query_request("ClusterId == 7")
    lists, result = run(lambda s: query_lists_protocol(s, request, 9), replies)
    assert sum(map(len, lists)) == 9 and result["Owner"] == 0
    _, error = raised(lambda s: query_lists_protocol(s, request, 8), replies)
    assert isinstance(error, ResultLimitExceeded)
    assert str(error) == (
        "the schedd sent more than 8 results; raise max_results if that many are expected"
    )
    bad = {"Owner": 0, "ErrorCode": 3, "ErrorString": "bad constraint"}
    replies = [*(payload(job(i, 10)) for i in range(7)), payload(bad)]
    lists, error = raised(lambda s: query_lists_protocol(s, request, 10**6), replies)
    assert sum(map(len, lists)) == 7 and isinstance(error, CommandError)
    _, same = raised(lambda s: query_protocol(s, request), replies)
    assert str(error) == str(same)
