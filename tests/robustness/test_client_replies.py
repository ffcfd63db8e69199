"""Client protocols fed mutated server replies: a result or a CedarError, nothing else.

Valid conversations are recorded by running our client against our own mock daemons in memory
(CLAIMTOBE without crypto, so the server's bytes replay exactly), then one server message is
mutated (truncated, bit-flipped, counts/ints replaced by edge values, hostile ad lines inserted).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cedar.classad_wire import ClassAd, put_classad
from cedar.classad_wire.jsonfmt import ad_to_json_compact_bytes, columns_json_bytes
from cedar.commands import collector as cc
from cedar.commands import qmgmt
from cedar.commands import schedd as cs
from cedar.commands.history import history_chunks_protocol
from cedar.daemons.collector import AdStore, MockCollector
from cedar.daemons.schedd import JobQueue, MockSchedd
from cedar.errors import CedarError, ProtocolError
from cedar.numbers import Command
from cedar.stream.primitives import MessageWriter
from cedar.stream.protocol import Protocol

from .helpers import (
    FIXED_NOW,
    client_protocol,
    converse,
    frozen,
    fuzz,
    mutated_conversation,
    plain_policy,
    replay_client,
    retyped_conversation,
)

Client = Callable[..., Protocol[Any]]
#: The chunk protocols' writers: a listing's JSON of each ad (shaped, or from the ad).
_WRITERS = (columns_json_bytes, ad_to_json_compact_bytes)


def _collector() -> MockCollector:
    daemon = MockCollector("c", policy=plain_policy(), store=AdStore(clock=lambda: FIXED_NOW))
    for i in range(3):
        daemon.store.add(
            {"MyType": "Machine", "Name": f"slot{i}@x", "Cpus": i, "MyAddress": "<1.2.3.4:5>"},
            "Machine",
        )
    return daemon


def _submit(conn: Any) -> Protocol[Any]:
    return qmgmt.submit_transaction(
        conn, lambda c: ({"Cmd": '"/bin/true"'}, [{"Args": '"1"'}, {"Args": '"2"'}])
    )


def _qmgmt_reads(conn: Any) -> Protocol[Any]:
    out: list[Any] = []
    out.append((yield from qmgmt.get_job_ad(conn, 1, 0)))
    out.append((yield from qmgmt.get_attribute_int(conn, 1, 0, "ProcId")))
    out.append((yield from qmgmt.get_attribute_string(conn, 1, 0, "Args")))
    out.append((yield from qmgmt.get_attribute_expr(conn, 1, 0, "Cmd")))
    out.append((yield from qmgmt.get_all_jobs_by_constraint(conn, "true", ["ProcId"])))
    out.append((yield from qmgmt.commit_transaction(conn)))
    yield from qmgmt.close_socket(conn)
    return out


def _schedd_clients() -> dict[str, Client]:
    query = cs.query_request(None, (), -1)
    hold = cs.act_request(cs.JobAction.Hold, "1", "why")
    hold_long = cs.act_request(cs.JobAction.Hold, "1", "why", long=True)
    remove = cs.act_request(cs.JobAction.Remove, "1.1", "why")
    history = cs.history_request(None, (), -1, None)
    streamed = history.copy()
    streamed["StreamResults"] = True
    one_message = cs.history_request(None, (), -1, None, stream=False)
    return {
        "submit": client_protocol(Command.QMGMT_WRITE_CMD, cs.qmgmt_body(_submit)),
        "query": client_protocol(Command.QUERY_JOB_ADS, lambda s: cs.query_protocol(s, query)),
        "qmgmt-reads": client_protocol(Command.QMGMT_WRITE_CMD, cs.qmgmt_body(_qmgmt_reads)),
        "edit": client_protocol(
            Command.QMGMT_WRITE_CMD,
            cs.qmgmt_body(lambda c: cs.edit_protocol(c, "1", "Foo", "42")),
        ),
        "hold": client_protocol(Command.ACT_ON_JOBS, lambda s: cs.act_protocol(s, hold)),
        "hold-long": client_protocol(Command.ACT_ON_JOBS, lambda s: cs.act_protocol(s, hold_long)),
        "remove": client_protocol(Command.ACT_ON_JOBS, lambda s: cs.act_protocol(s, remove)),
        "history": client_protocol(
            Command.QUERY_SCHEDD_HISTORY, lambda s: cs.history_protocol(s, history)
        ),
        "history-streamed": client_protocol(
            Command.QUERY_SCHEDD_HISTORY, lambda s: cs.history_protocol(s, streamed)
        ),
        # the chunk protocols (one Batcher, messages taken as held), with a listing's writers
        "query-chunks": client_protocol(
            Command.QUERY_JOB_ADS,
            lambda s: cs.query_chunks_protocol(s, query, *_WRITERS, 512, 1000),
        ),
        "history-chunks": client_protocol(
            Command.QUERY_SCHEDD_HISTORY,
            lambda s: history_chunks_protocol(s, one_message, *_WRITERS, 512, 1000),
        ),
    }


@functools.cache
def recordings() -> dict[str, tuple[Client, list[bytes]]]:
    """Every recorded conversation, by name: the client factory and the server's payloads."""
    with frozen():
        return _record()


def _record() -> dict[str, tuple[Client, list[bytes]]]:
    out: dict[str, tuple[Client, list[bytes]]] = {}
    collector = _collector()
    query = cc.build_query_ad(cc.AdType.STARTD, projection=["Name", "Cpus"])
    for raw in (False, True):
        client = client_protocol(
            int(cc.AdType.STARTD.command), lambda s: cc.query_protocol(s, query), raw=raw
        )
        out[f"collector-{'raw' if raw else 'negotiated'}"] = (
            client,
            converse(collector, client).server_payloads,
        )
    queue = JobQueue(name="s", clock=lambda: FIXED_NOW)
    schedd = MockSchedd("s", policy=plain_policy(), queue=queue)
    for name, client in _schedd_clients().items():
        rec = converse(schedd, client)
        out[name] = (client, rec.server_payloads)
    return out


NAMES = [
    "collector-raw", "collector-negotiated", "submit", "query", "qmgmt-reads", "edit", "hold",
    "hold-long", "remove", "history", "history-streamed", "query-chunks", "history-chunks",
]  # fmt: skip


def test_recordings_replay_cleanly() -> None:
    recs = recordings()
    assert sorted(recs) == sorted(NAMES)
    for client, payloads in recs.values():
        replay_client(client, payloads)


def _session_ids(payloads: list[bytes]) -> list[str]:
    return [m.decode() for p in payloads for m in re.findall(rb'Sid = "([^"]+)"', p)]


def _check_no_secrets(exc: CedarError, payloads: list[bytes]) -> None:
    for sid in _session_ids(payloads):
        assert sid not in str(exc) and sid not in repr(exc)


@pytest.mark.parametrize("name", NAMES)
@fuzz(250)
@given(data=st.data())
def test_mutated_replies(name: str, data: st.DataObject) -> None:
    """A client fed a mutated recorded reply returns or raises a CedarError whose text and repr
    hold none of the conversation's session ids."""
    client, payloads = recordings()[name]
    bad = data.draw(mutated_conversation(payloads), label="server payloads")
    try:
        replay_client(client, bad)
    except CedarError as exc:
        _check_no_secrets(exc, payloads)


@pytest.mark.parametrize("name", NAMES)
@fuzz(150)
@given(data=st.data())
def test_wrongly_typed_reply_values(name: str, data: st.DataObject) -> None:
    """A reply ad with a value of the wrong type or range gives a result or a CedarError free
    of the conversation's session ids, never another exception."""
    client, payloads = recordings()[name]
    bad = data.draw(retyped_conversation(payloads), label="server payloads")
    try:
        replay_client(client, bad)
    except CedarError as exc:
        _check_no_secrets(exc, payloads)


@pytest.mark.parametrize("name", NAMES)
@fuzz(15)
@given(data=st.data())
def test_truncated_and_garbage_tail(name: str, data: st.DataObject) -> None:
    """Replies cut short always end in a CedarError, never in a result as if complete; the
    whole reply followed by garbage gives the recorded result or a CedarError."""
    client, payloads = recordings()[name]
    cut = data.draw(st.integers(0, len(payloads)))
    tail = data.draw(st.lists(st.binary(max_size=40), max_size=2))
    try:
        result, _ = replay_client(client, payloads[:cut] + tail)
    except CedarError:
        return
    assert cut == len(payloads) or any(tail), "a reply cut short was taken as complete"
    if cut == len(payloads):
        assert result == replay_client(client, payloads)[0]


# --------------------------------------------------------------------------- regressions


def _ad_message(ad: Mapping[str, object], prefix: Sequence[int] = ()) -> bytes:
    writer = MessageWriter()
    for value in prefix:
        writer.put_int(value)
    put_classad(writer, ClassAd(ad))
    return writer.getvalue()


def _act(reply: Mapping[str, object]) -> Any:
    client, payloads = recordings()["hold"]
    # The handshake replies are kept; the result ad is replaced.
    return replay_client(client, [*payloads[:-2], _ad_message(reply)])


def test_act_reply_for_an_unknown_action_is_a_protocol_error() -> None:
    # Regression: JobAction(99) raised ValueError out of act_protocol.
    with pytest.raises(ProtocolError, match="unknown job action 99"):
        _act({"JobAction": 99, "ActionResult": 0, "TotalJobAds": 1, "ActionResultType": 2})


def test_act_reply_with_odd_total_names_is_read() -> None:
    # Regression: int("x") (and int() of a 5000-digit suffix) raised ValueError.
    reply = {"JobAction": 1, "ActionResult": 0, "ActionResultType": 2, "result_total_1": 2}
    for odd in ("result_total_x", "result_total_", "result_total_" + "9" * 5000):
        reply[odd] = 1
    result, _ = _act(reply)
    assert result.totals == {1: 2}
