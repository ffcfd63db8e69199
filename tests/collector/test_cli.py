"""``cedar-query`` against the mock collector holding the captured pool."""

from __future__ import annotations

import io
import json

import pytest

from cedar.cli.query import run_argv
from cedar.daemons.collector import MockCollector

from .pool import expected_output, host_port


def cedar_query(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_argv(argv, out, err, prog="cedar-query")
    return code, out.getvalue(), err.getvalue()


def test_af_with_constraint_and_limit(mock: MockCollector) -> None:
    code, out, err = cedar_query(
        "slots", "--pool", host_port(mock), "--constraint", "SlotID >= 2",
        "--af", "Name", "Memory", "--limit", "2",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert out == expected_output("status-startd-constraint-af-limit-raw")


def test_af_missing_and_expressions(mock: MockCollector) -> None:
    code, out, _ = cedar_query(
        "schedd", "--pool", host_port(mock), "--af", "Name", "NoSuchAttr", 'Name == "vm"'
    )
    assert (code, out) == (0, "vm undefined true\n")


def test_long_equals_condor_status_long(mock: MockCollector) -> None:
    code, out, _ = cedar_query("schedd", "--pool", host_port(mock), "--long")
    assert code == 0
    assert out == expected_output("status-schedd-long-raw")


def test_attributes_restrict_long_and_json(mock: MockCollector) -> None:
    code, out, _ = cedar_query("master", "--pool", host_port(mock), "--long",
                               "--attributes", "Name,MyType")  # fmt: skip
    assert (code, out) == (0, 'MyType = "DaemonMaster"\nName = "vm"\n\n')
    code, out, _ = cedar_query("slots", "--pool", host_port(mock), "--json",
                               "--attributes", "Name", "--constraint", "SlotID < 3")  # fmt: skip
    assert code == 0
    assert json.loads(out) == [{"Name": "slot1@vm"}, {"Name": "slot2@vm"}]


def test_default_slot_table(mock: MockCollector) -> None:
    code, out, _ = cedar_query("slots", "--pool", host_port(mock))
    assert code == 0
    expected = expected_output("status-startd-raw").splitlines()
    lines = out.splitlines()
    assert lines[0] == expected[0]  # header
    assert [line.split()[:6] for line in lines[2:6]] == [
        [f"slot{i}@vm", "LINUX", "X86_64", "Unclaimed", "Idle", "0.000"] for i in range(1, 5)
    ]
    assert lines[6:] == expected[6:]  # the summary: same pool, same counts


def test_default_daemon_tables(mock: MockCollector) -> None:
    code, out, _ = cedar_query("submitters", "--pool", host_port(mock))
    assert (code, out) == (0, expected_output("status-submitters-raw"))
    code, out, _ = cedar_query("schedd", "--pool", host_port(mock))
    assert code == 0
    assert out.splitlines()[0].split() == ["Name", "Machine", "RunningJobs", "IdleJobs", "HeldJobs"]
    assert out.splitlines()[2].split()[:2] == ["vm", "vm"]
    code, out, _ = cedar_query("credd", "--pool", host_port(mock))
    assert (code, out) == (0, "")  # nothing to show: no header either


def test_errors_are_reported_not_raised(mock: MockCollector) -> None:
    code, out, err = cedar_query("nosuchhost-cedar", "--pool", host_port(mock))
    assert code == 1 and out == "" and "unknown host nosuchhost-cedar" in err  # as condor_status
    code, out, err = cedar_query("-subsystem", "nonsense", "--pool", host_port(mock))
    assert code == 2 and out == "" and "unknown ad type" in err  # usage
    code, _, err = cedar_query("slots", "--pool", host_port(mock), "--constraint", "Memory >")
    assert code == 2 and err.startswith("cedar-query: invalid constraint")
    code, _, err = cedar_query("slots", "--pool", "127.0.0.1:1", "--timeout", "5")
    assert code == 3 and "127.0.0.1:1" in err  # cannot reach the daemon


def test_unknown_option_gives_the_usage() -> None:
    code, out, err = cedar_query("slots", "-nosuchoption")
    assert code == 2 and out == ""
    assert err.startswith("cedar-query: unknown option -nosuchoption\nusage: cedar-query ")


def test_ping_locates_through_the_collector(
    fresh_mock: MockCollector, capsys: pytest.CaptureFixture[str]
) -> None:
    from cedar.cli import ping

    fresh_mock.store.add({"MyType": "Scheduler", "Name": "self", "MyAddress": fresh_mock.address})
    pool = ["--pool", host_port(fresh_mock), "--verbose"]
    assert ping.main([*pool, "--type", "schedd", "--name", "self", "READ"]) == 0
    assert f"Destination: {fresh_mock.address}" in capsys.readouterr().out
    assert ping.main([*pool, "--type", "collector", "READ"]) == 0
    assert f"Destination: {host_port(fresh_mock)}" in capsys.readouterr().out
    assert ping.main([*pool, "--type", "schedd", "--name", "nosuch"]) == 1
    assert "no schedd named 'nosuch'" in capsys.readouterr().err


def test_ping_without_a_target_is_the_local_schedd(
    fresh_mock: MockCollector, capsys: pytest.CaptureFixture[str]
) -> None:
    """``cedar ping WRITE`` with nothing named pings the local schedd, as condor_ping does."""
    from cedar.cli import ping
    from cedar.config import Config, set_default_config

    fresh_mock.store.add({"MyType": "Scheduler", "Name": "self", "MyAddress": fresh_mock.address})
    config = Config(settings={"COLLECTOR_HOST": host_port(fresh_mock), "SCHEDD_HOST": "self"})
    set_default_config(config)
    try:
        assert ping.main(["--verbose", "READ"]) == 0
    finally:
        set_default_config(None)
    assert f"Destination: {fresh_mock.address}" in capsys.readouterr().out
