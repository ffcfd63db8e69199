"""Ads as JSON bodies: the one mapping (:mod:`cedar.classad_wire.jsonfmt`), made compact.

Members are sorted case-insensitively, as ``condor_q -json`` prints them, on one line
(``ad_to_json_compact``, which writes an ad read from the wire from its received texts without
building its entry table: the listing's hot path), ready for JSON Lines.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any, TypeVar

from cedar.classad_wire import ClassAd
from cedar.classad_wire.jsonfmt import ad_to_json_compact
from cedar.service import redact, typed_values

__all__ = ["ad_dict", "ad_json", "primed", "typed_values"]

T = TypeVar("T")


def ad_json(ad: ClassAd, private: Iterable[str] = (), *, lower: bool = False) -> str:
    """One ad as a compact JSON object (private attributes redacted first; ``lower``: member
    names lower-cased, as restd writes them)."""
    for name in private:
        if name in ad:  # a lookup only: the ad keeps its received texts unless one is present
            redact(ad, private)
            break
    return ad_to_json_compact(ad, lower=lower)


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


def ad_dict(ad: ClassAd, private: Iterable[str] = (), *, lower: bool = False) -> dict[str, Any]:
    """One ad as a JSON-ready dict (``lower``: keys lower-cased, as restd writes them)."""
    data: dict[str, Any] = json.loads(ad_json(ad, private, lower=lower))
    return data
