"""The QMGMT RPC encodings replayed against real schedd traffic (clear-text captures)."""

from __future__ import annotations

import pytest

from cedar.classad_wire import ClassAd, put_classad
from cedar.commands import qmgmt
from cedar.numbers import SetAttributeFlags
from cedar.stream import MessageReader, ReplayChannel
from tests.schedd.captures import after_payload_start, frame, messages

GET_CAPS = (10036).to_bytes(8, "big") + (0).to_bytes(8, "big")


def _parse_set_attribute(body: bytes) -> tuple[int, int, str, str, int]:
    reader = MessageReader(body)
    assert reader.get_int() == 10027
    cluster, proc = reader.get_int(), reader.get_int()
    value, name = reader.get_string(), reader.get_string()
    return cluster, proc, value, name, reader.get_char()


def test_submit_two_procs_is_byte_identical_to_condor_submit() -> None:
    client, server = after_payload_start(messages("submit-2procs-plain"), GET_CAPS)
    sets = [
        _parse_set_attribute(m.body) for m in client if m.body[:8] == (10027).to_bytes(8, "big")
    ]
    cluster_ad = {name: value for c, p, value, name, _ in sets if p == -1}
    procs: list[dict[str, str]] = [{}, {}]
    for _c, p, value, name, _ in sets:
        if p >= 0:
            procs[p][name] = value
    channel = ReplayChannel(b"".join(m.wire for m in server))
    outcome = channel.run(qmgmt.submit_transaction(channel.conn, lambda c: (cluster_ad, procs)))
    assert outcome.cluster == 15 and outcome.num_procs == 2
    assert channel.sent == [m.wire for m in client]


def test_submit_refused_at_commit_raises_with_reason() -> None:
    caps = ClassAd({"LateMaterialize": True})
    from cedar.stream import MessageWriter

    w = MessageWriter()
    put_classad(w, caps)
    error = MessageWriter().put_int(-1).put_int(-13)
    put_classad(error, ClassAd({"ErrorCode": 2, "ErrorReason": "Setting owner to nobody"}))
    peer = b"".join(
        frame(p)
        for p in (
            w.getvalue(),
            MessageWriter().put_int(57).getvalue(),
            MessageWriter().put_int(0).getvalue(),
            error.getvalue(),
        )
    )
    channel = ReplayChannel(peer)
    with pytest.raises(qmgmt.QmgmtPermissionDenied, match="Setting owner to nobody") as info:
        channel.run(
            qmgmt.submit_transaction(
                channel.conn, lambda c: ({"Owner": '"nobody"'}, [{"JobStatus": "1"}])
            )
        )
    assert info.value.errno == -13


def test_build_failure_aborts_before_any_attribute() -> None:
    from cedar.stream import MessageWriter

    w = MessageWriter()
    put_classad(w, ClassAd())
    peer = b"".join(
        frame(p)
        for p in (
            w.getvalue(),
            MessageWriter().put_int(3).getvalue(),
            MessageWriter().put_int(0).getvalue(),
        )
    )
    channel = ReplayChannel(peer)

    def bad(cluster: int) -> qmgmt.ProcAds:
        raise ValueError("no jobs for you")

    with pytest.raises(ValueError, match="no jobs"):
        channel.run(qmgmt.submit_transaction(channel.conn, bad))
    calls = [MessageReader(m[5:]).get_int() for m in channel.sent]
    assert calls == [10036, 10002, 10024, 10028]


def test_qedit_by_constraint_matches_condor_qedit() -> None:
    first = (10032).to_bytes(8, "big")
    client, server = after_payload_start(messages("qedit-plain"), first)
    channel = ReplayChannel(b"".join(m.wire for m in server))

    def edit(conn):  # type: ignore[no-untyped-def]
        count = yield from qmgmt.set_attribute_by_constraint(
            conn,
            "( (ClusterId == 15 ) )",
            "Foo",
            '"bar"',
            SetAttributeFlags.POST_SUBMIT_CLUSTER_CHANGE,
        )
        result = yield from qmgmt.commit_transaction(conn)
        yield from qmgmt.close_socket(conn)
        return count, result

    count, result = channel.run(edit(channel.conn))
    assert count == 2
    assert result.ad is not None and len(result.ad) == 0 and result.warning is None
    assert channel.sent == [m.wire for m in client]


def test_edit_protocol_without_no_ack_is_condor_qedit() -> None:
    from cedar.commands.schedd import edit_protocol

    first = (10032).to_bytes(8, "big")
    client, server = after_payload_start(messages("qedit-plain"), first)
    condor = ReplayChannel(b"".join(m.wire for m in server))
    flags = SetAttributeFlags.POST_SUBMIT_CLUSTER_CHANGE
    proto = edit_protocol(
        condor.conn, "( (ClusterId == 15 ) )", "Foo", '"bar"', flags, no_ack=False
    )
    assert condor.run(proto) == 2
    assert condor.sent == [m.wire for m in client]
    bindings = ReplayChannel(b"".join(m.wire for m in server))
    bindings.run(edit_protocol(bindings.conn, "( (ClusterId == 15 ) )", "Foo", '"bar"', flags))
    assert bindings.sent[0][-1] == flags | SetAttributeFlags.NO_ACK  # the bindings' default


@pytest.mark.parametrize(
    ("rval_errno", "exc"),
    [
        ((-1, 13), qmgmt.QmgmtPermissionDenied),
        ((-1, 2), qmgmt.JobNotFound),
        ((-1, 22), qmgmt.InvalidRequest),
        ((-1, 5), qmgmt.QmgmtError),
    ],
)
def test_error_replies_map_to_exceptions(rval_errno: tuple[int, int], exc: type) -> None:
    from cedar.stream import MessageWriter

    rval, err = rval_errno
    channel = ReplayChannel(frame(MessageWriter().put_int(rval).put_int(err).getvalue()))
    with pytest.raises(exc):
        channel.run(qmgmt.set_attribute(channel.conn, 1, 0, "Foo", "1"))


@pytest.mark.parametrize(
    ("name", "value"),
    [("bad name", "1"), ("A=B", "1"), ("Foo", ""), ("Foo", '"a\nb"'), ("Foo", "((")],
)
def test_invalid_attributes_are_refused_locally(name: str, value: str) -> None:
    channel = ReplayChannel(b"")
    with pytest.raises(qmgmt.InvalidRequest):
        channel.run(qmgmt.set_attribute(channel.conn, 1, 0, name, value))
    assert channel.sent == []
