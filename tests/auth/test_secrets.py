"""Keys, session ids and FS directory names never reach logs, reprs or exception texts."""

from __future__ import annotations

import logging
import os

import pytest

from cedar.auth import ClientSecurity, SecurityConfig
from cedar.commands import ping, run_command
from cedar.daemons.testing import mock_daemon

from .test_handshake import query


def test_no_secrets_in_logs_or_errors(caplog, monkeypatch, tmp_path):
    created: list[str] = []
    real_mkdir = os.mkdir

    def recording_mkdir(path, mode=0o777, **kwargs):
        created.append(os.fspath(path))
        return real_mkdir(path, mode, **kwargs)

    monkeypatch.setattr(os, "mkdir", recording_mkdir)
    caplog.set_level(logging.DEBUG, logger="cedar")
    daemon, _handler = mock_daemon(allow={"READ": ["*"]})
    security = ClientSecurity(SecurityConfig(methods=["FS"], authentication="PREFERRED"))
    texts: list[str] = []
    secrets: list[str] = []
    with daemon.run_in_thread():
        run_command(daemon.address, 5, query, security=security)
        sessions = list(daemon.sessions._sessions.values()) + list(
            security.sessions._sessions.values()
        )
        run_command(daemon.address, 5, query, security=security)  # resumed
        for session in sessions:
            secrets += [session.sid, session.key.hex(), repr(session.key)]
            texts += [repr(session)]
        daemon.sessions.clear()
        # A forgotten session: the retry path logs, the rejection message is built.
        run_command(daemon.address, 5, query, security=security)
        assert daemon.stats["new_sessions"] == 2
        result = ping(daemon.address, "WRITE", security=security)  # denied
        texts.append(result.error or "")
        # FS failing on the server side produces an error text too.
        daemon.policy.options["FS_LOCAL_DIR"] = str(tmp_path / "missing")
        strict = ClientSecurity(SecurityConfig(methods=["FS"], authentication="REQUIRED"))
        with pytest.raises(Exception) as info:
            run_command(daemon.address, 5, query, security=strict)
        texts.append(str(info.value))
    assert created, "FS never created a directory"
    secrets += created + [os.path.basename(path) for path in created]
    secrets += [os.path.basename(path).split("_")[3] for path in created]  # random part
    haystack = caplog.text + "\n".join(texts)
    assert any(r.levelno == logging.DEBUG for r in caplog.records)  # capture really worked
    for secret in secrets:
        assert secret not in haystack
