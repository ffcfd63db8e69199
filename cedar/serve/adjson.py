"""Ads as JSON bodies: the one mapping (:mod:`cedar.classad_wire.jsonfmt`), made compact.

Members are sorted case-insensitively, as ``condor_q -json`` prints them
(``ad_to_json_sorted``, which streams an ad read from the wire from its received texts without
building its entry table: the listing's hot path).  The writer's layout is indented; a raw
newline never occurs inside a JSON string (it is written ``\\n``), so joining the lines without
their indentation gives the same document on one line, ready for JSON Lines, without parsing it
again.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any, TypeVar

from cedar.classad_wire import ClassAd
from cedar.classad_wire.jsonfmt import ad_to_json_sorted
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
    lines = ad_to_json_sorted(ad).split("\n")
    if not lower:
        return "".join([line.lstrip(" ") for line in lines])
    out = []
    for line in lines:
        line = line.lstrip(" ")
        if line[:1] == '"':
            # A member line is '"Name": value'.  Inside a string a quote is always escaped, so
            # a '": ' with no backslash before it ends a member name (a string list item has
            # none, or only escaped ones).
            end = line.find('": ')
            if end > 0 and "\\" not in line[1:end]:
                line = line[:end].lower() + line[end:]
        out.append(line)
    return "".join(out)


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
