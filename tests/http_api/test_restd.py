"""restd's ``/v1`` shapes over a mock pool (the real pool, side by side with restd, is in
``tests/live_pool/test_serve_live.py``)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
import trio

from cedar.classad_wire import ClassAd, get_classad
from cedar.classad_wire.classad import ad_shape
from cedar.http_api.adjson import ad_json
from cedar.http_api.restd import (
    entry_list_bytes,
    group_key,
    grouped_bytes,
    job_entry_bytes,
    job_entry_writers,
    job_list_bytes,
)
from cedar.stream.primitives import MessageReader, MessageWriter
from tests.http_api.conftest import Api, serving
from tests.http_api.test_api import EVERY_TYPE_SUBMIT, submit
from tests.service_core.conftest import TokenPool


@pytest.fixture(scope="module")
def api(token_pool: TokenPool) -> Any:
    """restd's behaviour: anonymous callers list jobs (``CEDAR_SERVE_ANONYMOUS_JOBS``)."""
    with serving(token_pool, anonymous_jobs=True) as running:
        yield running


def test_v1_job_routes_are_closed_to_anonymous_callers_by_default(token_pool: TokenPool) -> None:
    """Attack (issue 37): restd's /v1 listed every user's jobs to a caller without a token,
    around ``anonymous_jobs = false``.  Now one setting rules both APIs; /v1/status stays open."""
    with serving(token_pool) as closed:
        jobs = submit(closed.alice, 1)
        cluster, proc = jobs[0].split(".")
        for path in (
            "/v1/jobs/DEFAULT",
            f"/v1/jobs/DEFAULT/{cluster}",
            f"/v1/jobs/DEFAULT/{cluster}/{proc}",
            f"/v1/jobs/DEFAULT/{cluster}/{proc}/owner",
            "/v1/history/DEFAULT",
            "/v1/grouped_jobs/DEFAULT/owner",
            "/v1/grouped_history/DEFAULT/owner",
        ):
            refused = closed.anonymous.get(path)
            assert refused.status_code == 401, path
            assert "alice" not in refused.text
            assert closed.bob.get(path).status_code in (200, 404), path
        assert closed.anonymous.get("/v1/status").status_code == 200


def test_jobs_shapes(api: Api) -> None:
    jobs = submit(api.alice, 2)
    cluster = jobs[0].split(".")[0]
    listed = api.anonymous.get(f"/v1/jobs/DEFAULT/{cluster}").json()
    assert [e["jobid"] for e in sorted(listed, key=lambda e: e["jobid"])] == jobs
    ad = listed[0]["classad"]
    assert all(k == k.lower() for k in ad) and ad["clusterid"] == int(cluster)
    projected = api.anonymous.get(
        f"/v1/jobs/DEFAULT/{cluster}", params={"projection": "ClusterId,ProcId"}
    ).json()
    assert set(projected[0]["classad"]) <= {"clusterid", "procid", "servertime"}
    one = api.anonymous.get(f"/v1/jobs/DEFAULT/{jobs[0].replace('.', '/')}").json()
    assert one["jobid"] == jobs[0] and one["classad"]["clusterid"] == int(cluster)  # restd's
    assert set(one) == {"classad", "jobid"}  # the object, not a list of one
    projected_one = api.anonymous.get(
        f"/v1/jobs/DEFAULT/{jobs[0].replace('.', '/')}", params={"projection": "Args"}
    ).json()
    assert projected_one["jobid"] == jobs[0] and "clusterid" not in projected_one["classad"]
    value = api.anonymous.get(f"/v1/jobs/DEFAULT/{jobs[0].replace('.', '/')}/args")
    assert value.json() == "hi"
    missing = api.anonymous.get(f"/v1/jobs/DEFAULT/{jobs[0].replace('.', '/')}/nosuchattr")
    assert missing.status_code == 404 and "message" in missing.json()
    assert api.anonymous.get("/v1/jobs/DEFAULT/99999/0").status_code == 404
    assert api.anonymous.get("/v1/jobs/DEFAULT/99999").json() == []
    bad = api.anonymous.get("/v1/jobs/DEFAULT", params={"constraint": "true) || (true"})
    assert bad.status_code == 400 and "message" in bad.json()
    assert api.anonymous.get("/v1/jobs/nosuchschedd").status_code == 404


def test_one_job_is_asked_for_one_ad_at_most(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """``/v1/jobs/S/C/P`` lets the schedd stop scanning at the job (``LimitResults = 1``)."""
    from cedar.classad_wire import unparse
    from cedar.commands import AsyncSchedd

    job = submit(api.alice, 1)[0]
    asked: list[tuple[str, int]] = []
    query_iter = AsyncSchedd.query_iter

    def recorded(
        self: AsyncSchedd, constraint: Any = None, projection: Any = (), limit: int = -1, **kw: Any
    ) -> Any:
        asked.append((unparse(constraint), limit))
        return query_iter(self, constraint, projection, limit, **kw)

    monkeypatch.setattr(AsyncSchedd, "query_iter", recorded)
    cluster, proc = job.split(".")
    found = api.anonymous.get(f"/v1/jobs/DEFAULT/{cluster}/{proc}")
    assert found.json()["jobid"] == job
    assert asked == [(f"(ClusterId == {cluster}) && (ProcId == {proc})", 1)]


def test_hidden_attributes_and_grouping(api: Api) -> None:
    jobs = submit(api.alice, 2)
    cluster = jobs[0].split(".")[0]
    api.alice.patch(f"/api/v1/jobs/{jobs[0]}", json={"attributes": {"Env": "SECRET=1"}})
    ad = api.anonymous.get(f"/v1/jobs/DEFAULT/{jobs[0].replace('.', '/')}").json()["classad"]
    assert ad["env"] == "<REDACTED>"
    grouped = api.anonymous.get(
        "/v1/grouped_jobs/DEFAULT/procid", params={"constraint": f"ClusterId == {cluster}"}
    ).json()
    assert sorted(grouped) == ["0", "1"] and grouped["0"][0]["jobid"] == jobs[0]


def test_job_entries_are_the_same_listed_one_by_one_and_grouped(api: Api) -> None:
    """A listing joins each job entry's text; one job and the grouped form read the same entries
    back: all three agree, field for field."""
    jobs = submit(api.alice, 2)
    cluster = jobs[0].split(".")[0]
    listed = api.anonymous.get(f"/v1/jobs/DEFAULT/{cluster}").json()
    one = [api.anonymous.get(f"/v1/jobs/DEFAULT/{job.replace('.', '/')}").json() for job in jobs]
    grouped = api.anonymous.get(f"/v1/grouped_jobs/DEFAULT/procid/{cluster}").json()
    regrouped = [entry for group in grouped.values() for entry in group]
    key = lambda entry: entry["jobid"]  # noqa: E731
    assert [e["jobid"] for e in sorted(listed, key=key)] == jobs
    listed, one, regrouped = (_untimed(sorted(e, key=key)) for e in (listed, one, regrouped))
    assert listed == one == regrouped
    assert all(set(entry) == {"jobid", "classad"} for entry in listed)


def test_status_and_config(api: Api) -> None:
    schedds = api.anonymous.get("/v1/status", params={"query": "schedd"}).json()
    assert schedds[0]["type"] == "Scheduler" and schedds[0]["name"] == "mock-schedd"
    assert "myaddress" in schedds[0]["classad"]
    named = api.anonymous.get("/v1/status/mock-schedd").json()
    assert {e["type"] for e in named} == {"Scheduler"}
    assert api.anonymous.get("/v1/status", params={"query": "bogus"}).status_code == 400
    grouped = api.anonymous.get("/v1/grouped_status/mytype").json()
    assert "Scheduler" in grouped and "Collector" in grouped
    assert api.anonymous.get("/v1/config/NO_SUCH_KNOB_HERE").status_code == 404
    assert isinstance(api.anonymous.get("/v1/config").json(), dict)


def test_v1_forms_are_restds(api: Api) -> None:
    """What restd answers, observed side by side on the real pool (25.13.2): name and type are
    asked for but left out of a projected status classad; an ad without the grouping
    attribute is left out of a grouped answer; an unknown ``query`` is an object message;
    ``/v1/config`` is every knob ``param`` lists (defaults too), in its type."""
    projected = api.anonymous.get(
        "/v1/status", params={"query": "schedd", "projection": "MyAddress"}
    )
    entry = projected.json()[0]
    assert entry["name"] == "mock-schedd" and entry["type"] == "Scheduler"
    assert set(entry["classad"]) == {"myaddress"}
    assert api.anonymous.get("/v1/grouped_status/nosuchattr").json() == {}
    job = submit(api.alice, 1)[0]
    cluster = job.split(".")[0]
    assert api.alice.get(f"/v1/grouped_jobs/DEFAULT/nosuchattr/{cluster}").json() == {}
    grouped = api.alice.get(
        f"/v1/grouped_jobs/DEFAULT/procid/{cluster}", params={"projection": "Args"}
    ).json()
    assert set(grouped["0"][0]["classad"]) <= {"args", "procid", "servertime"}
    assert "clusterid" not in grouped["0"][0]["classad"] and grouped["0"][0]["jobid"] == job
    bogus = api.anonymous.get("/v1/status", params={"query": "bogus"})
    assert bogus.status_code == 400
    assert bogus.json() == {"message": {"query": "bogus is not a valid choice"}}
    config = api.anonymous.get("/v1/config").json()
    assert isinstance(config["max_jobs_running"], int)  # a compiled-in default, not in a file
    assert isinstance(config["abort_on_exception"], bool) and len(config) > 500


def test_status_written_as_text_matches_the_grouped_entries(api: Api) -> None:
    """/v1/status joins each entry's text; /v1/grouped_status reads the same entries back to group
    them: both give the same entries (names lower-cased, name and type beside the ad)."""
    listed = api.anonymous.get("/v1/status", params={"query": "any"})
    assert listed.headers["content-type"].startswith("application/json")
    grouped = api.anonymous.get("/v1/grouped_status/mytype").json()
    regrouped = [entry for group in grouped.values() for entry in group]
    key = lambda entry: (str(entry["type"]), str(entry["name"]))  # noqa: E731
    assert _untimed(sorted(listed.json(), key=key)) == _untimed(sorted(regrouped, key=key))
    assert all(set(entry) == {"name", "type", "classad"} for entry in listed.json())
    assert all(name == name.lower() for e in listed.json() for name in e["classad"])


def test_status_parameters_reach_every_status_route(api: Api) -> None:
    """``query``, ``projection`` and ``constraint`` are one parameter list shared by the four
    status routes; the constraint is and-ed with the name as a tree, so it cannot escape it."""
    scheduler, collector = 'MyType == "Scheduler"', 'MyType == "Collector"'
    params = {"query": "any", "projection": "MyAddress", "constraint": scheduler}
    for path in ("/v1/status", "/v1/status/mock-schedd"):
        found = api.anonymous.get(path, params=params).json()
        assert [(e["name"], e["type"]) for e in found] == [("mock-schedd", "Scheduler")]
        assert set(found[0]["classad"]) <= {"myaddress", "name", "mytype"}
    for path in ("/v1/grouped_status/mytype", "/v1/grouped_status/mytype/mock-schedd"):
        grouped = api.anonymous.get(path, params=params).json()
        assert list(grouped) == ["Scheduler"] and len(grouped["Scheduler"]) == 1
        assert set(grouped["Scheduler"][0]["classad"]) <= {"myaddress", "name", "mytype"}
    named = api.anonymous.get("/v1/status/mock-schedd", params={"constraint": collector})
    assert named.json() == []
    for path in ("/v1/status/mock-schedd", "/v1/grouped_status/mytype/mock-schedd"):
        escape = api.anonymous.get(path, params={"constraint": "true) || (true"})
        assert escape.status_code == 400 and "message" in escape.json()
    bogus = api.anonymous.get("/v1/grouped_status/mytype", params={"query": "bogus"})
    assert bogus.status_code == 400


#: The collector (and the schedd: ``ServerTime``) stamp these with the clock as they answer; two
#: queries may fall either side of a second's edge (CI once saw 1795729621 against 1795729622).
_ANSWER_TIME = frozenset({"mycurrenttime", "lastheardfrom", "servertime"})


def _untimed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries without the attributes the daemons stamp with the time of the query."""
    return [
        {**e, "classad": {k: v for k, v in e["classad"].items() if k not in _ANSWER_TIME}}
        for e in entries
    ]


def _wire_ads(count: int) -> list[ClassAd]:
    """Job ads as a query reads them, one value not UTF-8 on the wire (after enough ads of one
    shape the bulk reader keeps the values as the received bytes)."""
    ads = []
    for proc in range(count):
        writer = MessageWriter(crypto=True)
        lines = [b"ClusterId = 7", f"ProcId = {proc}".encode(), b'Cmd = "\xff/x"', b"Env = 1"]
        writer.put_int(len(lines)).put_strings([*lines, b"", b""])
        ads.append(get_classad(MessageReader(writer.getvalue(), crypto=True)))
    return ads


async def _aiter(ads: list[ClassAd]) -> AsyncIterator[ClassAd]:
    for ad in ads:
        yield ad


def test_listing_writes_undecodable_values_back_without_failing() -> None:
    """The /v1 listing writes each ad from its received bytes: a value that was not UTF-8 on the
    wire comes out as received (the text writer failed the answer mid-stream: it could not be
    encoded), the rest byte for byte as the text writer wrote it."""

    async def collect() -> tuple[bytes, list[int]]:
        counted: list[int] = []
        chunks = [c async for c in job_list_bytes(_aiter(ads), ("Env",), counted)]
        return b"".join(chunks), counted

    ads = _wire_ads(300)
    body, counted = trio.run(collect)
    assert counted == [300]
    entries = body[1:-1].split(b"},{")
    assert len(entries) == 300
    assert body.startswith(b'[{"jobid": "7.0", "classad": {"clusterid": 7,"cmd": "\xff/x",')
    assert b'"env": "<REDACTED>"' in entries[-1] and entries[-1].startswith(b'"jobid": "7.299"')
    text = json.loads(body.decode("utf-8", "replace"))
    assert [e["jobid"] for e in text] == [f"7.{proc}" for proc in range(300)]
    plain = [ClassAd.from_raw_text(f'ClusterId = 7\nProcId = {p}\nCmd = "/x"') for p in (0, 1)]
    written = job_entry_bytes(plain[0], ())
    assert (
        written
        == ('{"jobid": "7.0", "classad": ' + ad_json(plain[0], (), lower=True) + "}").encode()
    )


def test_grouped_forms_are_written_from_the_entries() -> None:
    """Grouped forms join the entries' bytes under each value's text (restd's ``str()`` of the
    JSON value; none when absent, and restd leaves the ad out; a hidden attribute groups under
    its mask)."""
    ads = _wire_ads(3)
    hidden = ("Env",)
    assert [group_key(ad, "ProcId", hidden) for ad in ads] == ["0", "1", "2"]
    assert group_key(ads[0], "Env", hidden) == "<REDACTED>"
    assert group_key(ads[0], "NoSuch", hidden) is None
    assert group_key(ads[0], "Cmd", ()) == "\ufffd/x"
    groups = {"0": [job_entry_bytes(ads[0], ())], "é": [job_entry_bytes(ads[1], ())] * 2}
    body = grouped_bytes(groups)
    decoded = json.loads(body.decode("utf-8", "replace"))
    assert list(decoded) == ["0", "é"] and len(decoded["é"]) == 2
    assert decoded["0"][0]["classad"]["procid"] == 0
    assert body.startswith(b'{"0":[{"jobid": "7.0"')


def _timeless(body: bytes) -> bytes:
    """A listing without the mock schedd's clock (``ServerTime``, stamped on every ad per query:
    two queries may fall either side of a second's edge)."""
    return re.sub(rb'"servertime": ?\d+', b'"servertime": 0', body)


def test_listing_from_the_schedds_messages_is_the_ad_listing(api: Api) -> None:
    """``/v1/jobs`` transcodes the schedd's messages (``query_chunks``: no ad made once a shape
    recurs); its body is byte for byte the listing written from the ads the library reads
    (``job_list_bytes``), anonymous (clear) and with a token (AES-GCM), whole ads and a
    projection: every value type, a value not UTF-8 on the wire, a redacted attribute.  The
    grouped form (its entries transcoded too, each with its key) is the one grouped from ads."""
    from cedar.service_core import Caller, PoolAccess

    count = 300  # over the count after which a shape's reader is compiled: both paths run
    answer = api.alice.post(
        "/api/v1/jobs", json={"submit_file": EVERY_TYPE_SUBMIT.replace("queue 3", f"queue {count}")}
    )
    assert answer.status_code == 201, answer.text
    cluster = answer.json()["cluster_id"]
    queue = api.pool.pool.schedd.queue
    with queue.lock:  # a value that is not UTF-8 (as received: \xff) and a hidden one
        ad = queue.clusters[cluster]
        queue.clusters[cluster] = ClassAd.from_raw_text(
            ad.print_old() + 'Odd = "\udcff/x"\nEnv = "SECRET=1"\n'
        )
    hidden = ("Env", *api.server.settings.private_attrs)
    names = "ClusterId,ProcId,Owner,Args,IntValue,RealValue,StringValue,BoolValue,Odd,Env"
    names += ",UndefinedValue,ErrorValue,ExprValue,ListValue,RecordValue,PctValue,ClaimId"
    constraint = f"ClusterId == {cluster}"
    used: list[str] = []

    async def library(caller: Caller, projection: list[str]) -> tuple[bytes, bytes]:
        access = PoolAccess(api.server.settings)
        schedd = await access.schedd(caller)
        ads = schedd.query_iter(constraint, projection)
        listed = b"".join([chunk async for chunk in job_list_bytes(ads, hidden)])
        shaped, other = job_entry_writers(hidden)

        def shaped_seen(names: tuple[str, ...], values: Sequence[bytes]) -> bytes:
            used.append("shaped")
            return shaped(names, values)

        def other_seen(ad: ClassAd) -> bytes:
            used.append("other")
            return other(ad)

        chunks = schedd.query_chunks(constraint, projection, shaped=shaped_seen, other=other_seen)
        transcoded = b"".join([chunk async for chunk in entry_list_bytes(chunks)])
        return listed, transcoded

    async def library_grouped(caller: Caller, projection: list[str], groupby: str) -> bytes:
        access = PoolAccess(api.server.settings)
        schedd = await access.schedd(caller)
        asked = [*projection, groupby, "ClusterId", "ProcId"] if projection else []
        groups: dict[str, list[bytes]] = {}
        async for ad in schedd.query_iter(constraint, asked):
            key = group_key(ad, groupby, hidden)
            if key is not None:  # restd leaves an ad without the attribute out
                groups.setdefault(key, []).append(job_entry_bytes(ad, hidden))
        return grouped_bytes(groups)

    for client, caller in (
        (api.anonymous, Caller.anonymous()),
        (api.alice, Caller.from_token(api.pool.alice)),
    ):
        for projection in ([], names.split(",")):
            params = {"projection": ",".join(projection)} if projection else {}
            served = client.get(f"/v1/jobs/DEFAULT/{cluster}", params=params)
            assert served.status_code == 200
            listed, transcoded = trio.run(library, caller, projection)
            # the served answer ends a line, as restd's (json.dumps(...) + "\n")
            assert served.content.endswith(b"\n")
            served_body = served.content[:-1]
            assert _timeless(served_body) == _timeless(listed) == _timeless(transcoded)
            assert served.content.count(b'"jobid": ') == count
            assert served.content.count(b'"odd": "\xff/x"') == count
            assert served.content.count(b'"env": "<REDACTED>"') == count
            assert b"SECRET" not in served.content
            assert used.count("shaped") > count // 2, used.count("other")
            used.clear()
            # grouped by a number, a value not UTF-8, a redacted one, a missing one ("None")
            for groupby in ("ProcId", "Odd", "Env", "NoSuch") if projection else ("Odd",):
                path = f"/v1/grouped_jobs/DEFAULT/{groupby}/{cluster}"
                grouped = client.get(path, params=params)
                assert grouped.status_code == 200
                wanted = trio.run(library_grouped, caller, projection, groupby)
                assert _timeless(grouped.content) == _timeless(wanted) + b"\n"
    entries = json.loads(served.content.decode("utf-8", "replace"))
    gone = api.alice.post("/api/v1/jobs/remove", json={"constraint": constraint})
    assert gone.json()["succeeded"] == count

    async def library_history(caller: Caller, projection: list[str]) -> bytes:
        schedd = await PoolAccess(api.server.settings).schedd(caller)
        ads = schedd.history(constraint, projection)
        listed = b"".join([chunk async for chunk in job_list_bytes(ads, hidden)])
        shaped, other = job_entry_writers(hidden)
        chunks = schedd.history_chunks(
            constraint,
            projection,
            shaped=lambda names, values: used.append("shaped") or shaped(names, values),
            other=other,
        )
        assert b"".join([chunk async for chunk in entry_list_bytes(chunks)]) == listed
        assert used.count("shaped") > count // 2
        used.clear()
        return listed

    for client, caller in (
        (api.anonymous, Caller.anonymous()),
        (api.alice, Caller.from_token(api.pool.alice)),
    ):
        for projection in ([], names.split(",")):
            params = {"projection": ",".join(projection)} if projection else {}
            served = client.get(f"/v1/history/DEFAULT/{cluster}", params=params)
            assert served.status_code == 200
            wanted = trio.run(library_history, caller, projection)
            assert _timeless(served.content) == _timeless(wanted) + b"\n"
            assert served.content.count(b'"odd": "\xff/x"') == count
    answer = api.anonymous.get(f"/v1/grouped_history/DEFAULT/Env/{cluster}")
    grouped = json.loads(answer.content.decode("utf-8", "replace"))
    assert list(grouped) == ["<REDACTED>"] and len(grouped["<REDACTED>"]) == count
    assert entries[0]["classad"]["listvalue"] == [1, "two", [3.0]]
    assert entries[0]["classad"]["recordvalue"] == {"a": 1, "b": {"c": "d"}}  # as integ writes it


def test_chunk_writers_are_the_entry_writer() -> None:
    """The entry of an ad never built (names and received values) is the entry of the ad: the
    job id from plain integers as received, else from the values read as an ad does."""
    shaped, other = job_entry_writers(("Env",))
    for cluster, proc in ((b"7", b"3"), (b"7.0", b"3"), (b"7", b"1 + 2"), (b"-1", b"0")):
        names = ("ClusterId", "ProcId", "Cmd", "Env")
        values = (cluster, proc, b'"\xff/x"', b'"a=1"')
        shape = ad_shape(names)
        assert shape is not None
        ad = ClassAd.from_shape(shape, values)
        assert shaped(names, values) == other(ad) == job_entry_bytes(ad, ("Env",))
    names = ("ClusterId", "Cmd")  # no ProcId: the id reads as restd's str() of a missing value
    ad = ClassAd.from_shape(ad_shape(names), (b"7", b'"x"'))  # type: ignore[arg-type]
    assert shaped(names, (b"7", b'"x"')) == other(ad)
    assert shaped(names, (b"7", b'"x"')).startswith(b'{"jobid": "7.None"')
    assert shaped(("ClusterId", "ProcId"), (b"7", b"3")).startswith(b'{"jobid": "7.3", ')


def test_listing_is_capped_by_restd_max_jobs(api: Api) -> None:
    """``RESTD_MAX_JOBS`` caps the transcoded listing (sent to the schedd as the query's limit)
    as it capped the ad listing; the list stays well formed."""
    from dataclasses import replace

    from tests.http_api.conftest import RunningServer, client

    jobs = submit(api.alice, 4)
    cluster = jobs[0].split(".")[0]
    server = RunningServer(
        replace(api.server.settings, restd_max_jobs=3, anonymous_jobs=True)
    ).start()
    try:
        with client(server.url) as anonymous:
            listed = anonymous.get(f"/v1/jobs/DEFAULT/{cluster}").json()
            assert len(listed) == 3 and {e["jobid"] for e in listed} < set(jobs)
            assert anonymous.get("/v1/jobs/DEFAULT/99999").json() == []
    finally:
        server.stop()


def test_history_chunks_keep_the_result_limit(api: Api) -> None:
    """``history_chunks`` emits lists, so it counts the records itself: over ``max_results`` it
    fails as ``history`` does instead of answering a longer list."""
    from cedar.errors import ResultLimitExceeded
    from cedar.service_core import Caller, PoolAccess

    jobs = submit(api.alice, 3)
    constraint = f"ClusterId == {jobs[0].split('.')[0]}"
    assert api.alice.post("/api/v1/jobs/remove", json={"constraint": constraint}).status_code == 200
    shaped, other = job_entry_writers(())

    async def listed(limit: int) -> int:
        schedd = await PoolAccess(api.server.settings).schedd(Caller.from_token(api.pool.alice))
        schedd.max_results = limit
        chunks = schedd.history_chunks(constraint, shaped=shaped, other=other)
        return sum([len(items) async for items in chunks])

    assert trio.run(listed, 3) == 3
    with pytest.raises(ResultLimitExceeded):
        trio.run(listed, 2)


def test_status_cache_reuses_only_the_same_callers_same_answer(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off by default, each /v1/status asks the collector; with ``CEDAR_SERVE_STATUS_CACHE``
    a caller's same question within the time is answered with the same bytes without asking,
    while another caller (a token) or another question asks again."""
    from dataclasses import replace

    import cedar.http_api.restd as restd
    from tests.http_api.conftest import RunningServer, client

    asked: list[tuple[str, str | None]] = []
    original = restd._status_ads

    async def counted(svc: Any, caller: Any, name: Any, params: Any) -> list[ClassAd]:
        asked.append((caller.key, params.query))
        return await original(svc, caller, name, params)

    monkeypatch.setattr(restd, "_status_ads", counted)
    first = api.anonymous.get("/v1/status", params={"query": "schedd"})
    again = api.anonymous.get("/v1/status", params={"query": "schedd"})
    assert first.status_code == again.status_code == 200 and len(asked) == 2
    server = RunningServer(replace(api.server.settings, status_cache=3600.0)).start()
    try:
        with client(server.url) as anonymous, client(server.url, api.pool.alice) as alice:
            asked.clear()
            one = anonymous.get("/v1/status", params={"query": "schedd"})
            two = anonymous.get("/v1/status", params={"query": "schedd"})
            assert one.status_code == 200 and one.content == two.content and len(asked) == 1
            # the answer uncached: the same daemons (their ads' counters move between queries)
            entries = sorted((e["name"], e["type"]) for e in one.json())
            assert entries == sorted((e["name"], e["type"]) for e in first.json())
            assert entries  # (not two empty answers)
            assert alice.get("/v1/status", params={"query": "schedd"}).status_code == 200
            assert len(asked) == 2 and asked[1][0] != asked[0][0]  # a token: its own answer
            assert anonymous.get("/v1/status", params={"query": "any"}).status_code == 200
            assert anonymous.get("/v1/status/mock-schedd").status_code == 200
            assert len(asked) == 4
            assert anonymous.get("/v1/status", params={"query": "bogus"}).status_code == 400
            assert anonymous.get("/v1/status", params={"query": "bogus"}).status_code == 400
    finally:
        server.stop()
