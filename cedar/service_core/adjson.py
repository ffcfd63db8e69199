"""Ads as JSON for every mouth (REST, restd ``/v1``, MCP, the web page): the one mapping
(:mod:`cedar.classad_wire.jsonfmt`), made compact, with the private attributes redacted.

Members are sorted case-insensitively, as ``condor_q -json`` prints them, on one line
(``ad_to_json_compact``, which writes an ad read from the wire from its received texts without
building its entry table: the listing's hot path), ready for JSON Lines.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any, TypeVar

from cedar.classad_wire import ClassAd
from cedar.classad_wire.jsonfmt import (
    ad_to_json_compact,
    ad_to_json_compact_bytes,
    columns_json_bytes,
)
from cedar.commands import AsyncJobChunks, AsyncSchedd
from cedar.commands.constraint import Constraint
from cedar.service_core.scope import REDACTED

__all__ = [
    "ad_dict",
    "ad_json",
    "ad_json_bytes",
    "columns_bytes",
    "json_chunks",
    "json_lists",
    "json_writers",
    "plain_value",
    "primed",
]

T = TypeVar("T")


def ad_json(ad: ClassAd, private: Iterable[str] = (), *, lower: bool = False) -> str:
    """One ad as a compact JSON object (private attributes shown as ``"<REDACTED>"``;
    ``lower``: member names lower-cased, as restd writes them).  The writer plans the redaction
    once per shape of ad, so a listing pays nothing per ad for it, and the ad is not changed."""
    masked = _masked(private if isinstance(private, tuple) else tuple(private))
    return ad_to_json_compact(ad, lower=lower, masked=masked, mask=REDACTED)


def ad_json_bytes(
    ad: ClassAd,
    private: Iterable[str] = (),
    *,
    lower: bool = False,
    only: frozenset[str] | None = None,
) -> bytes:
    """:func:`ad_json` in UTF-8, written from the ad's received bytes when it holds them (a
    listing's ads): the stream's hot path, with no decoding of the ad or encoding of its JSON.
    ``only`` (lower-cased names): just those members (restd's projection rule)."""
    masked = _masked(private if isinstance(private, tuple) else tuple(private))
    return ad_to_json_compact_bytes(ad, only, lower=lower, masked=masked, mask=REDACTED)


def columns_bytes(
    names: tuple[str, ...],
    values: Sequence[bytes],
    private: Iterable[str] = (),
    *,
    lower: bool = False,
    only: frozenset[str] | None = None,
) -> bytes:
    """:func:`ad_json_bytes` of an ad never built, from its names and received values (the
    listing's hot path); the same bytes."""
    masked = _masked(private if isinstance(private, tuple) else tuple(private))
    return columns_json_bytes(names, values, only, lower=lower, masked=masked, mask=REDACTED)


def json_writers(
    private: Iterable[str] = (), *, lower: bool = False
) -> tuple[Callable[[tuple[str, ...], Sequence[bytes]], bytes], Callable[[ClassAd], bytes]]:
    """:func:`ad_json_bytes` as the two writers of ``AsyncSchedd.query_chunks``: one for the
    names and received values of an ad that is never built (the listing's hot path: the
    schedd's bytes straight to JSON), one for any other ad.  Same bytes either way."""
    masked = _masked(private if isinstance(private, tuple) else tuple(private))

    def shaped(names: tuple[str, ...], values: Sequence[bytes]) -> bytes:
        return columns_json_bytes(names, values, lower=lower, masked=masked, mask=REDACTED)

    def other(ad: ClassAd) -> bytes:
        return ad_to_json_compact_bytes(ad, lower=lower, masked=masked, mask=REDACTED)

    return shaped, other


def json_chunks(
    schedd: AsyncSchedd,
    constraint: Constraint,
    names: Iterable[str],
    private: Iterable[str] = (),
    *,
    chunk_size: int = 1 << 16,
) -> AsyncJobChunks:
    """The JSON (:func:`ad_json_bytes`) of the jobs a query matches, in lists of about
    ``chunk_size`` bytes, written from the schedd's messages with no ad made where their shape
    recurs (``AsyncSchedd.query_chunks`` with :func:`json_writers`): a listing's hot path."""
    shaped, other = json_writers(private)
    return schedd.query_chunks(constraint, names, shaped=shaped, other=other, chunk_size=chunk_size)


async def json_lists(
    ads: AsyncIterator[ClassAd], private: Iterable[str] = ()
) -> AsyncIterator[list[bytes]]:
    """Each ad of ``ads`` as its JSON (:func:`ad_json_bytes`) in a list of one: a stream of ads
    in the form ``AsyncSchedd.query_chunks`` gives a listing."""
    private = tuple(private)
    async for ad in ads:
        yield [ad_json_bytes(ad, private)]


@functools.lru_cache(maxsize=64)
def _masked(private: tuple[str, ...]) -> frozenset[str] | None:
    return frozenset(name.lower() for name in private) or None


async def primed(ads: AsyncIterator[T]) -> AsyncIterator[T]:
    """``ads`` with its first item already read: a query that fails (refused, bad constraint,
    unreachable daemon) fails here, before an HTTP answer has started, and gets its status."""
    iterator = ads.__aiter__()
    try:
        first = await iterator.__anext__()
    except StopAsyncIteration:
        return _empty()

    async def rest() -> AsyncIterator[T]:
        yield first
        async for item in iterator:
            yield item

    return rest()


async def _empty() -> AsyncIterator[Any]:
    return
    yield


def plain_value(value: object) -> object:
    """A value JSON takes as it is; anything else (an expression, an odd value) as its text:
    for a value shown beside an ad (a name, a type, an exit code), not inside one."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def ad_dict(ad: ClassAd, private: Iterable[str] = (), *, lower: bool = False) -> dict[str, Any]:
    """One ad as a JSON-ready dict (``lower``: keys lower-cased, as restd writes them)."""
    data: dict[str, Any] = json.loads(ad_json(ad, private, lower=lower))
    return data
