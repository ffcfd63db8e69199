"""The ``cedar decode`` command line."""

from __future__ import annotations

import io
import json

import pytest

from cedar.capture.writer import write_capture
from cedar.cli.decode import build_parser, run

from .conftest import CAPTURES, KEY, aes_query_exchange


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(build_parser().parse_args(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_transcript_one_line_per_message() -> None:
    status, out, err = _cli([str(CAPTURES / "hold-cluster-plain.pcap")])
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("== conversation 1: 127.0.0.2:41971 → 127.0.0.1:9618  ACT_ON_JOBS")
    assert "authenticated by CLAIMTOBE" in lines[0]
    assert len(lines) == 1 + 13
    assert lines[3].split() == [
        "1.3",
        "S→C",
        "473",
        "SECURITY",
        "RESPONSE",
        'Authentication="YES"',
        'Encryption="NO"',
        'Integrity="NO"',
        'AuthMethodsList="CLAIMTOBE"',
        'CryptoMethods="BLOWFISH"',
        'CryptoMethodsList="BLOWFISH"',
        'SessionDuration="60"',
        "SessionLease=3600",
        'IssuerKeys="POOL"',
        'TrustDomain="minicondor"',
    ]
    assert "AUTH client offers 0x2 = CLAIMTOBE" in lines[4]
    assert 'ACT_ON_JOBS(478) hold {JobAction = 1; HoldReason = "via condor_hold"' in lines[10]


def test_verbose_prints_ads_in_full() -> None:
    status, out, _ = _cli([str(CAPTURES / "status-startd-constraint-af-limit-raw.pcap"), "-v"])
    assert status == 0
    assert "[result 1] 3 attributes" in out
    assert '              Name = "slot4@vm"' in out
    status, out, _ = _cli([str(CAPTURES / "status-startd-constraint-af-limit-raw.pcap"), "-vv"])
    assert "0000  00 00 00 00 00 00 00 05" in out  # the payload, int 5 first


def test_json_and_conversation_filter() -> None:
    path = str(CAPTURES / "submit-2procs-plain.pcap")
    status, out, _ = _cli([path, "--json", "--conversation", "2"])
    assert status == 0
    data = json.loads(out)
    (conv,) = data["conversations"]
    assert conv["conversation"] == 2
    assert conv["command_name"] == "RESCHEDULE(421)"
    assert conv["start"] == "resumed"
    assert [m["kind"] for m in conv["messages"]] == [
        "SHARED_PORT_CONNECT",
        "DC_AUTHENTICATE",
        "RESUME_RESPONSE",
    ]
    status, _, err = _cli([path, "--conversation", "9"])
    assert status == 2
    assert "no conversation 9 (the capture has 2)" in err


def test_key_option_decrypts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "aes.pcap"
    path.write_bytes(write_capture([aes_query_exchange().chunks]))
    status, out, _ = _cli([str(path)])
    assert status == 0
    assert "[AES-GCM" in out and "no session key given" in out
    status, out, _ = _cli([str(path), "--key", KEY.hex()])
    assert status == 0
    assert 'POST-AUTH ReturnCode="AUTHORIZED" User="unauthenticated@unmapped"' in out
    assert "QUERY_STARTD_ADS(5) result: 1 ad (slot1@host)" in out


@pytest.mark.parametrize("bad", ["xyz", "00" * 16])
def test_bad_key_is_rejected(bad: str) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["x.pcap", "--key", bad])
