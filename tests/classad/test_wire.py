"""Wire codec: the hex examples of spec 02 §2.11, sender options, and malformed input."""

from __future__ import annotations

import pytest

from cedar.classad_wire import ClassAd, Expr, get_classad, get_handshake_ad, put_classad
from cedar.errors import ClassAdParseError, ProtocolError
from cedar.stream.primitives import MessageReader, MessageWriter

AD_A_HEX = (
    "00 00 00 00 00 00 00 03"
    " 43 70 75 73 20 3d 20 34 00"
    " 4e 61 6d 65 20 3d 20 22 73 6c 6f 74 31 40 68 6f 73 74 22 00"
    " 4d 79 54 79 70 65 20 3d 20 22 4d 61 63 68 69 6e 65 22 00"
    " 00 00"
)


def _ad_a() -> ClassAd:
    return ClassAd({"Cpus": 4, "Name": "slot1@host", "MyType": "Machine"})


def _put(ad: ClassAd, *, crypto: bool = False, **options: object) -> bytes:
    writer = MessageWriter(crypto=crypto)
    put_classad(writer, ad, **options)  # type: ignore[arg-type]
    return writer.getvalue()


def _get(payload: bytes, *, crypto: bool = False, **options: object) -> ClassAd:
    reader = MessageReader(payload, crypto=crypto)
    ad = get_classad(reader, **options)  # type: ignore[arg-type]
    reader.end_of_message()
    return ad


def test_example_a_bytes() -> None:
    assert _put(_ad_a()) == bytes.fromhex(AD_A_HEX)
    assert len(bytes.fromhex(AD_A_HEX)) == 58
    ad = _get(bytes.fromhex(AD_A_HEX))
    assert ad == _ad_a()
    assert list(ad) == ["Cpus", "Name", "MyType"]


def test_example_b_private_attributes_and_zkm() -> None:
    ad = ClassAd()
    ad["Req"] = Expr.parse('TARGET.Memory >= 1024 && "a\\"b" == x', old=True)
    for name, value in _ad_a().items():
        ad[name] = value
    ad["ClaimId"] = "secret-claim"
    ad["_condor_privX"] = "pv"
    ad["LoadAvg"] = 0.25
    expected = bytes.fromhex(
        "00 00 00 00 00 00 00 06"
        + " "
        + b'Req = TARGET.Memory >= 1024 && "a\\"b" == x\0'.hex()
        + AD_A_HEX[24:-6]
        + " 5a 4b 4d 00"
        + b'ClaimId = "secret-claim"\0'.hex()
        + b"LoadAvg = 0.25\0".hex()
        + "00 00"
    )
    assert _put(ad) == expected
    received = _get(expected)
    assert received["ClaimId"] == "secret-claim"
    assert "_condor_privX" not in received
    assert len(received) == 6


def test_private_attributes_plain_for_known_new_peer() -> None:
    ad = ClassAd({"ClaimId": "c", "_condor_privX": "pv"})
    payload = _put(ad, peer_version=(10, 0, 0))
    assert b"ZKM" not in payload
    assert _get(payload) == ad


def test_exclude_private_drops_all_private_names() -> None:
    ad = ClassAd({"ClaimId": "c", "Capability": "x", "_condor_privX": "pv", "Keep": 1})
    assert _get(_put(ad, exclude_private=True)) == ClassAd({"Keep": 1})
    assert _get(_put(ad, exclude_private=True, private_names=["keep"])) == ClassAd()


def test_example_c_crypto_mode() -> None:
    payload = _put(_ad_a(), crypto=True)
    assert len(payload) == 98
    assert payload[8:25] == bytes.fromhex("00 00 00 00 00 00 00 09 43 70 75 73 20 3d 20 34 00")
    assert payload[-18:] == bytes.fromhex("00" * 7 + "01 00" + "00" * 7 + "01 00")
    assert _get(payload, crypto=True) == _ad_a()


def test_example_d_server_time_and_no_types() -> None:
    payload = _put(_ad_a(), server_time=1700000000)
    item = b"ServerTime = 1700000000\0"
    assert (
        payload == bytes.fromhex("00" * 7 + "04") + bytes.fromhex(AD_A_HEX)[8:-2] + item + b"\0\0"
    )
    no_types = _put(_ad_a(), server_time=1700000000, types=False)
    assert no_types == payload[:-2]
    assert _get(no_types, types=False)["ServerTime"] == 1700000000


def test_example_e_chained_duplicates_last_value_wins_first_spelling_kept() -> None:
    writer = MessageWriter()
    writer.put_int(4)
    for line in ("JobStatus = 1", 'In = "/dev/null"', "jobstatus = 5", "ServerTime = 17"):
        writer.put_string(line)
    writer.put_string("").put_string("")
    ad = _get(writer.getvalue())
    assert ad["JOBSTATUS"] == 5
    assert list(ad) == ["JobStatus", "In", "ServerTime"]


def test_example_f_line_without_equals_fails() -> None:
    writer = MessageWriter()
    writer.put_int(2).put_string("<error:null expr>").put_string("Big = 1").put_string("")
    writer.put_string("")
    with pytest.raises(ProtocolError, match="no '='"):
        _get(writer.getvalue())


def test_non_empty_type_strings_are_accepted_and_ignored() -> None:
    writer = MessageWriter()
    writer.put_int(1).put_string("A = 1").put_string("Machine").put_string("Job")
    assert _get(writer.getvalue()) == ClassAd({"A": 1})


def test_projection_expands_references_sorted_and_spelled_as_requested() -> None:
    ad = ClassAd.parse_old(
        "Requirements = Start && WithinResourceLimits\n"
        "Start = true\n"
        "WithinResourceLimits = Cpus > 0 && TARGET.RequestMemory < MY.Memory\n"
        'Cpus = 4\nMemory = 1024\nArch = "X86_64"\nName = "slot4@vm"\nServerTime = 5\n'
    )
    got = _get(_put(ad, projection="name ARCH"))
    assert list(got) == ["ARCH", "name"]
    got = _get(_put(ad, projection=["requirements"], server_time=9))
    assert list(got) == [
        "Cpus",
        "Memory",
        "requirements",
        "Start",
        "WithinResourceLimits",
        "ServerTime",
    ]
    assert got["ServerTime"] == 9
    got = _get(_put(ad, projection=["Requirements", "Missing"], expand_projection=False))
    assert list(got) == ["Requirements"]


def test_line_splitting_rules() -> None:
    writer = MessageWriter()
    lines = ["\t\n  A\t= 1", "odd name = 5", "B    =    2 3", "C=x = y"]
    writer.put_int(len(lines))
    for line in lines:
        writer.put_string(line)
    writer.put_string("").put_string("")
    ad = _get(writer.getvalue())
    assert list(ad) == ["A\t", "odd name", "B", "C"]
    assert ad["B"] == 2
    assert ad.lookup("C") == Expr.parse("x")


def test_lazy_value_is_reported_on_access_and_strict_mode_rejects_up_front() -> None:
    writer = MessageWriter()
    writer.put_int(2).put_string("Good = 1").put_string("Bad = ((").put_string("")
    writer.put_string("")
    ad = _get(writer.getvalue())
    assert ad["Good"] == 1
    with pytest.raises(ClassAdParseError, match="'Bad'"):
        ad["Bad"]
    with pytest.raises(ProtocolError, match="'Bad'"):
        _get(writer.getvalue(), strict=True)


def _raw_ad(count: int, *items: bytes | str, types: bool = True) -> bytes:
    writer = MessageWriter()
    writer.put_int(count)
    for item in items:
        writer.put_string(item)
    if types:
        writer.put_string("").put_string("")
    return writer.getvalue()


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (_raw_ad(-1), "count -1"),
        (_raw_ad(1_000_001), "count 1000001"),
        (_raw_ad(2, "A = 1", types=False), "message ends"),
        (_raw_ad(2, "A = 1"), "item 1: ad line has no '='"),
        (_raw_ad(1, "A = 1", types=False), "message ends"),
        (_raw_ad(1, "no equals sign"), "no '='"),
        (_raw_ad(1, "  = 5"), "empty attribute name"),
        (_raw_ad(1, "A = "), "no value"),
        (_raw_ad(1, "ZKM", types=False), "message ends"),
        (bytes.fromhex("00" * 7 + "01") + b"\xad", "NULL"),
        (bytes.fromhex("00" * 7 + "01") + b"A = 1", "NUL terminator"),
        (b"\x00\x00", "message ends"),
    ],
)
def test_malformed_wire_data_rejected(payload: bytes, message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        _get(payload)


def test_count_limit_accepts_one_million() -> None:
    # Only the count is checked before reading items; the items then run out.
    with pytest.raises(ProtocolError, match="message ends"):
        _get(_raw_ad(1_000_000, types=False))


def test_crypto_string_length_out_of_range_rejected() -> None:
    payload = bytes.fromhex("00" * 7 + "01" + "ff" * 8)
    with pytest.raises(ProtocolError, match="length prefix"):
        _get(payload, crypto=True)


def test_undecodable_bytes_survive_round_trip() -> None:
    payload = _raw_ad(1, b'A = "\xff\xfe"')
    ad = _get(payload)
    assert _put(ad) == payload


def test_names_the_wire_cannot_carry_are_refused() -> None:
    from cedar.errors import ClassAdError

    for name in ("a=b", " lead", "trail ", ""):
        with pytest.raises(ClassAdError):
            _put(ClassAd({name: 1}))
    with pytest.raises(ClassAdError, match="NUL"):
        _put(ClassAd({"A": "x\0y"}))


# --- restricted pre-authentication reader (§2.10) ------------------------------------------


def _handshake(*lines: str) -> ClassAd:
    reader = MessageReader(_raw_ad(len(lines), *lines))
    ad = get_handshake_ad(reader)
    reader.end_of_message()
    return ad


def test_handshake_reader_accepts_literals() -> None:
    ad = _handshake("A = -5", "B = 1.5", "C = undefined", "D = error", 'E = "x"', "F = TRUE")
    assert ad["A"] == -5 and ad["B"] == 1.5 and ad["F"] is True
    assert len(_handshake(*[f"A{i} = {i}" for i in range(100)])) == 100


@pytest.mark.parametrize(
    "line",
    [
        "Foo = 1 + 2",
        "Foo = - 5",
        "Foo = { 1 }",
        "Foo = x",
        'Foo = absTime("2020-01-01")',
        "Foo = 1 2",
        "ZKM",
        "Foo = [a=1]",
        'Foo = "abc',
    ],
)
def test_handshake_reader_rejects_non_literals(line: str) -> None:
    with pytest.raises(ProtocolError):
        _handshake(line)


def test_handshake_reader_rejects_101_attributes() -> None:
    with pytest.raises(ProtocolError, match="outside 0..100"):
        _handshake(*[f"A{i} = {i}" for i in range(101)])
