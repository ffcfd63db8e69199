"""Our query encoding and output formats against what condor_status sent and printed."""

from __future__ import annotations

import json

import pytest

from cedar.classad_wire import ClassAd
from cedar.commands.collector import build_query_ad, locate_query_ad, query_protocol
from cedar.errors import ClassAdParseError, ConnectionClosed, InvalidArgument, ProtocolError
from cedar.numbers import AdType, Command, DaemonType
from cedar.output import STATUS_TABLES, AutoFormat, JsonWriter, long_text, status_sort_key
from cedar.stream import MessageWriter, ReplayChannel
from cedar.stream.connection import CedarConnection

from .pool import capture_streams, captured_ads, expected_output

SLOT_PROJECTION = STATUS_TABLES["slots"].projection
SUBMITTER_PROJECTION = STATUS_TABLES["submitters"].projection


def af_projection(expressions: list[str]) -> list[str]:
    return AutoFormat(expressions).projection()


def autoformat(ads: list[ClassAd], expressions: list[str]) -> list[str]:
    return [line[:-1] for line in AutoFormat(expressions).lines(ads)]


def status_order(ads: list[ClassAd]) -> list[ClassAd]:
    return sorted(ads, key=status_sort_key)


def json_list(ads: list[ClassAd]) -> str:
    writer = JsonWriter()
    return "".join(writer.ad(ad) for ad in ads) + writer.end()


class _RawSession:
    """What ``start_command`` returns for a raw start: the payload shares the command message."""

    def __init__(self, command: int) -> None:
        self.conn = CedarConnection()
        self._writer: MessageWriter | None = MessageWriter().put_int(command)
        self.remote_version = None

    def payload_writer(self) -> MessageWriter:
        writer, self._writer = self._writer, None
        return writer or self.conn.writer()


def _replay_query(name: str, ad_type: AdType, query: ClassAd) -> tuple[bytes, list[ClassAd]]:
    client, server = capture_streams(name)
    channel = ReplayChannel(server)
    ads = list(channel.iterate(query_protocol(_RawSession(ad_type.command), query)))  # type: ignore[arg-type]
    return channel.sent[0][5:], ads


def test_query_bytes_equal_condor_status_with_constraint_projection_limit() -> None:
    query = build_query_ad(
        AdType.SLOT, "SlotID >= 2", af_projection(["Name", "Memory", "Machine", "OCU"]), 2
    )
    sent, ads = _replay_query("status-startd-constraint-af-limit-raw", AdType.SLOT, query)
    client, _server = capture_streams("status-startd-constraint-af-limit-raw")
    assert sent == client[0]
    assert [ad["Name"] for ad in ads] == ["slot4@vm", "slot3@vm"]
    assert "".join(line + "\n" for line in autoformat(status_order(ads), ["Name", "Memory"])) == (
        expected_output("status-startd-constraint-af-limit-raw")
    )


@pytest.mark.parametrize(
    ("name", "ad_type", "projection"),
    [
        ("status-startd-raw", AdType.SLOT, SLOT_PROJECTION),
        ("status-submitters-raw", AdType.SUBMITTER, SUBMITTER_PROJECTION),
        ("status-schedd-long-raw", AdType.SCHEDD, None),
        ("status-any-raw", AdType.ANY, ["Machine", "MyType", "Name", "OCU"]),
    ],
)
def test_default_queries_are_byte_identical(
    name: str, ad_type: AdType, projection: list[str] | None
) -> None:
    sent, ads = _replay_query(name, ad_type, build_query_ad(ad_type, None, projection))
    assert sent == capture_streams(name)[0][0]
    assert ads


def test_slot_table_matches_condor_status() -> None:
    table = STATUS_TABLES["slots"].render(captured_ads("status-startd-raw"))
    assert table == expected_output("status-startd-raw")


def test_submitter_table_matches_condor_status() -> None:
    ads = captured_ads("status-submitters-raw")
    assert STATUS_TABLES["submitters"].render(ads) == expected_output("status-submitters-raw")


@pytest.mark.parametrize(
    "name",
    [
        "status-startd-long-raw",
        "status-schedd-long-raw",
        "status-master-long-raw",
        "status-collector-long-raw",
        "status-negotiator-long-raw",
    ],
)
def test_long_form_matches_condor_status_long(name: str) -> None:
    ads = status_order(captured_ads(name))
    assert "".join(long_text(ad) for ad in ads) == expected_output(name)


def test_af_orders_like_condor_status_any() -> None:
    ads = status_order(captured_ads("status-any-raw"))
    lines = "".join(line + "\n" for line in autoformat(ads, ["MyType", "Name"]))
    assert lines == expected_output("status-any-raw")


def test_collector_ad_is_chained_and_the_later_value_wins() -> None:
    # The collector's own ad repeats attributes (stored value, then current statistics).
    _client, server = capture_streams("status-collector-long-raw")
    assert server.count(b"\x00UpdatesTotal = ") + server.count(b"\x00RunningJobs = ") >= 2
    (ad,) = captured_ads("status-collector-long-raw")
    assert ad["MyType"] == "Collector"


def test_af_values() -> None:
    ad = ClassAd({"S": "a b", "I": 3, "R": 0.5, "B": True, "L": [1, "x"]})
    ad.set_expr("E", ClassAd.parse_old("E = I * 2").lookup("E"))
    (line,) = autoformat([ad], ["S", "I", "R", "B", "Missing", "E", "L", "I + 1", "S + 1"])
    assert line == 'a b 3 0.5 true undefined 6 { 1,"x" } 4 error'


def test_af_rejects_a_bad_expression() -> None:
    with pytest.raises(InvalidArgument):
        list(autoformat([ClassAd()], ["a +"]))


def test_json_list_is_one_parsable_list() -> None:
    ads = captured_ads("status-schedd-long-raw") + captured_ads("status-master-long-raw")
    parsed = json.loads(json_list(ads))
    assert [a["MyType"] for a in parsed] == ["Scheduler", "DaemonMaster"]
    assert parsed[0]["Name"] == "vm"
    assert json_list([]) == ""  # condor_status -json prints nothing for no ads


def test_locate_query_matches_the_bindings() -> None:
    # Bytes the 25.14.1 bindings sent for locate(DaemonType.Schedd, "s1"), plus LimitResults = 1
    # which the C++ locate sends (spec 05 §2.6).
    writer = MessageWriter().put_int(Command.QUERY_SCHEDD_ADS)
    from cedar.classad_wire import put_classad

    put_classad(writer, locate_query_ad(DaemonType.SCHEDD, "s1"))
    assert writer.getvalue() == (
        b"\x00\x00\x00\x00\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00\x06"
        b'MyType = "Query"\x00'
        b'Projection = "MyAddress AddressV1 CondorVersion CondorPlatform Name Machine"\x00'
        b'TargetType = "Scheduler"\x00LimitResults = 1\x00'
        b'Requirements = ((Name == "s1"))\x00LocationQuery = "s1"\x00\x00\x00'
    )


def test_startd_locate_by_host_uses_machine() -> None:
    ad = locate_query_ad(DaemonType.STARTD, "node1.example")
    assert ad.raw_text("Requirements") == '((Machine == "node1.example"))'
    ad = locate_query_ad(DaemonType.STARTD, 'slot1@node"1')
    assert ad.raw_text("Requirements") == '((Name == "slot1@node\\"1"))'


def test_types_and_target_types() -> None:
    assert AdType.from_name("slots") is AdType.SLOT
    assert AdType.from_name("Schedd") is AdType.SCHEDD
    assert AdType.START_DAEMON.command == Command.QUERY_MULTIPLE_ADS
    assert "Requirements" not in build_query_ad(AdType.START_DAEMON)
    assert AdType.DEFRAG.target_type == "Defrag"
    assert build_query_ad(AdType.GENERIC, target_type="Foo")["TargetType"] == "Foo"
    assert build_query_ad(AdType.COLLECTOR, statistics="ALL:2")["STATISTICS_TO_PUBLISH"] == "ALL:2"
    with pytest.raises(ValueError, match="unknown ad type"):
        AdType.from_name("nonsense")
    with pytest.raises(ClassAdParseError):
        build_query_ad(AdType.SLOT, "Memory >")
    with pytest.raises(ValueError, match="not an attribute name"):
        build_query_ad(AdType.SLOT, None, ['Name"'])


def test_truncated_result_is_a_connection_error() -> None:
    _client, server = capture_streams("status-startd-raw")
    with pytest.raises(ConnectionClosed, match="dropped the query"):
        list(
            ReplayChannel(server[:-20]).iterate(
                query_protocol(_RawSession(5), build_query_ad(AdType.SLOT))  # type: ignore[arg-type]
            )
        )


def test_no_reply_is_a_connection_error() -> None:
    with pytest.raises(ConnectionClosed):
        list(
            ReplayChannel(b"").iterate(
                query_protocol(_RawSession(5), build_query_ad(AdType.SLOT))  # type: ignore[arg-type]
            )
        )


@pytest.mark.parametrize(
    "payload",
    [
        b"\x00\x00\x00\x00\x00\x00\x00\x01\x7f\xff\xff\xff\xff\xff\xff\xff",  # absurd count
        b"\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01noequals\x00\x00\x00",
        b"\x00\x00\x00\x00\x00\x00\x00\x00junk",  # bytes after I(0)
        b"\x00\x00\x00",
    ],
)
def test_malformed_results_raise_protocol_errors(payload: bytes) -> None:
    wire = b"\x01" + len(payload).to_bytes(4, "big") + payload
    with pytest.raises(ProtocolError):
        list(
            ReplayChannel(wire).iterate(
                query_protocol(_RawSession(5), build_query_ad(AdType.SLOT))  # type: ignore[arg-type]
            )
        )
