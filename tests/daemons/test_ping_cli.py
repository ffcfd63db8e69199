"""cedar-ping against a mock daemon."""

from __future__ import annotations

import json

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.cli.ping import build_parser, main, run
from cedar.daemons.testing import mock_daemon


@pytest.fixture
def daemon():
    daemon, _ = mock_daemon(allow={"READ": ["*"]})
    with daemon.run_in_thread():
        yield daemon


def security() -> ClientSecurity:
    return ClientSecurity(SecurityConfig(methods=["FS"], authentication="PREFERRED"))


def test_all_levels_authorized(daemon, capsys):
    args = build_parser().parse_args(["--address", daemon.address, "READ", "ALLOW"])
    assert run(args, security()) == 0
    out = capsys.readouterr().out
    assert "READ: authorized as" in out and "authentication FS, crypto AES" in out


def test_one_level_denied_json(daemon, capsys):
    args = build_parser().parse_args(["--address", daemon.address, "--json", "READ", "WRITE"])
    assert run(args, security()) == 1
    document = json.loads(capsys.readouterr().out)
    by_level = {r["level"]: r for r in document["results"]}
    assert by_level["READ"]["authorized"] and not by_level["WRITE"]["authorized"]
    assert by_level["READ"]["method"] == "FS" and by_level["READ"]["crypto"] == "AES"
    assert by_level["READ"]["remote_version"] == daemon.policy.version
    assert "session" not in json.dumps(document).lower()  # no session ids in output


def test_pool_shorthand_and_verbose(daemon, capsys):
    args = build_parser().parse_args(["--pool", f"127.0.0.1:{daemon.port}", "--verbose", "READ"])
    assert run(args, security()) == 0
    out = capsys.readouterr().out
    assert f"Destination: 127.0.0.1:{daemon.port}" in out and "remote version" in out


def test_usage_errors(capsys):
    from cedar.config import Config, set_default_config

    # nothing named: the local schedd, as condor_ping; with no collector configured, one line
    set_default_config(Config(settings={"COLLECTOR_HOST": ""}))
    try:
        assert main(["READ"]) != 0
    finally:
        set_default_config(None)
    assert "COLLECTOR" in capsys.readouterr().err
    assert main(["--address", "127.0.0.1:1", "NOSUCHLEVEL"]) == 2
    assert "unknown permission level" in capsys.readouterr().err


def test_unreachable_daemon(capsys):
    args = build_parser().parse_args(["--address", "127.0.0.1:1", "READ"])
    assert run(args, security()) == 3  # cannot reach the daemon
    assert "READ: connection refused" in capsys.readouterr().out
