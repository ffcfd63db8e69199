"""The chunk protocols against the real schedd: ``query_chunks`` and ``history_chunks`` (both
history framings: ``StreamResults``' one message per record, and every record in one message)
hold exactly the bytes the ad protocols' ads give, in lists of about ``chunk_size`` bytes, and
``max_results`` counts records, not lists.

200 held jobs of one shape (over the 128 after which a shape is read without making ads), then
removed: their records are the history read back.  Needs the pool's IDTOKEN (root) to own jobs.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.classad_wire import ClassAd
from cedar.classad_wire.jsonfmt import ad_to_json_compact_bytes, columns_json_bytes
from cedar.commands import Schedd, iterate_command
from cedar.commands.history import history_chunks_protocol, history_request
from cedar.errors import ResultLimitExceeded
from cedar.numbers import Command
from tests.live_pool.conftest import readable

HELD = "executable = /bin/sleep\narguments = 600\ntransfer_executable = false\nhold = true\n"
JOBS = 200
#: The schedd's clock when it answered, in every job ad: differs between two queries.
_CLOCK = re.compile(rb'"ServerTime": [0-9]+,?')


def shaped(names: tuple[str, ...], values: Sequence[bytes]) -> bytes:
    return columns_json_bytes(names, values)


def other(ad: ClassAd) -> bytes:
    return ad_to_json_compact_bytes(ad)


def flat(lists: list[list[bytes]], chunk_size: int) -> list[bytes]:
    """The lists' items, after checking each list (but the last) is about ``chunk_size``."""
    sizes = [sum(map(len, items)) for items in lists]
    assert all(size >= chunk_size for size in sizes[:-1]), sizes
    lasts = [len(items[-1]) for items in lists]
    assert all(size - last < chunk_size for size, last in zip(sizes, lasts, strict=True)), sizes
    return [data for items in lists for data in items]


def test_chunks_are_the_ads_on_the_real_pool() -> None:
    token_dir = os.environ.get("CEDAR_LIVE_TOKEN_DIR")
    if token_dir is None or not readable(token_dir):
        pytest.skip("needs the pool's token directory (run as root)")
    security = ClientSecurity(
        SecurityConfig(methods=["TOKEN"], options={"SEC_TOKEN_DIRECTORY": token_dir})
    )
    pool = os.environ["CEDAR_LIVE_COLLECTOR"]
    schedd = Schedd(pool=pool, security=security)
    iwd = os.environ.get("CEDAR_LIVE_IWD") or "/tmp"
    cluster = schedd.submit(HELD + f"queue {JOBS}", submit_dir=iwd).cluster
    constraint = f"ClusterId == {cluster}"
    try:
        for _ in range(2):  # the second run reads the shape without making ads
            chunks = schedd.query_chunks(constraint, shaped=shaped, other=other, chunk_size=8192)
            listed = flat(list(chunks), 8192)
            assert chunks.summary is not None and chunks.summary["Owner"] == 0
            expected = [other(ad) for ad in schedd.query(constraint)]
            assert len(listed) == JOBS
            assert [_CLOCK.sub(b"", d) for d in listed] == [_CLOCK.sub(b"", d) for d in expected]
        small = Schedd(pool=pool, security=security, max_results=JOBS - 1)
        with pytest.raises(ResultLimitExceeded, match=f"more than {JOBS - 1} results"):
            list(small.query_chunks(constraint, shaped=shaped, other=other))
    finally:
        schedd.remove(constraint)
    deadline = time.monotonic() + 60
    while len(records := list(schedd.history(constraint))) < JOBS:
        assert time.monotonic() < deadline, f"{len(records)} of {JOBS} records in the history"
        time.sleep(1)
    expected = [other(ad) for ad in records]
    chunks = schedd.history_chunks(constraint, shaped=shaped, other=other, chunk_size=8192)
    assert flat(list(chunks), 8192) == expected  # StreamResults: one message per record
    assert chunks.summary is not None and chunks.summary["NumJobMatches"] == JOBS
    one_message = history_request(constraint, stream=False)
    result: list[ClassAd] = []

    def body(session):  # type: ignore[no-untyped-def]
        final = yield from history_chunks_protocol(
            session, one_message, shaped, other, 8192, 1_000_000
        )
        result.append(final)
        return final

    lists = list(iterate_command(schedd.locate(), Command.QUERY_SCHEDD_HISTORY, body,
                                 security=security))  # fmt: skip
    assert flat(lists, 8192) == expected and result[0]["NumJobMatches"] == JOBS
    small = Schedd(pool=pool, security=security, max_results=JOBS - 1)
    with pytest.raises(ResultLimitExceeded, match=f"more than {JOBS - 1} history records"):
        list(small.history_chunks(constraint, shaped=shaped, other=other))
