"""Hostile KERBEROS clients against a cedar daemon over real sockets: a replayed AP-REQ and
garbage AP-REQs are refused promptly (the client's deadline is the budget), in bounded memory,
with no traceback, and the daemon keeps serving honest clients."""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cedar.auth.methods.kerberos as kerberos
from cedar.auth import ClientSecurity, LevelPolicy, SecurityConfig, ServerPolicy
from cedar.auth.errors import KerberosError
from cedar.auth.krb5 import der
from cedar.auth.krb5.files import parse_ccache, parse_keytab
from cedar.auth.krb5.messages import Authenticator, parse_ap_req
from cedar.commands import ping
from cedar.daemons.daemon import Daemon
from cedar.errors import CedarError
from tests.auth.test_kerberos import NOW, Realm
from tests.robustness.helpers import fuzz
from tests.robustness.test_attacks import REQUEST_MEMORY, bounded_memory


@pytest.fixture(autouse=True)
def _no_system_krb5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "krb5.conf").write_text("")
    monkeypatch.setenv("KRB5_CONFIG", str(tmp_path / "krb5.conf"))


def _daemon(realm: Realm) -> Daemon:
    level = LevelPolicy(methods=["KERBEROS"], authentication="REQUIRED")
    policy = ServerPolicy(levels={"DEFAULT": level}, options=dict(realm.server_ctx().options))
    return Daemon("krb", "SCHEDD", policy=policy)


_ticks = itertools.count(1)


def _ping(daemon: Daemon, realm: Realm) -> Any:
    # each authenticator its own microsecond (a frozen clock would make honest ones replays)
    options = dict(realm.client_ctx().options)
    options["kerberos_clock"] = lambda: NOW + next(_ticks) / 1000
    security = ClientSecurity(  # a fresh session cache: every ping authenticates anew
        SecurityConfig(methods=["KERBEROS"], options=options)
    )
    return ping(daemon.address, "WRITE", security=security, timeout=30)


def test_a_replayed_ap_req_is_refused_and_the_daemon_keeps_serving(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    realm = Realm(tmp_path)
    daemon = _daemon(realm)
    sent: list[bytes] = []
    real = kerberos.build_ap_req

    def recording(*args: Any) -> bytes:
        sent.append(real(*args))
        return sent[-1]

    caplog.set_level(logging.INFO)
    with daemon.run_in_thread(), bounded_memory(REQUEST_MEMORY):
        with mock.patch.object(kerberos, "build_ap_req", recording):
            assert _ping(daemon, realm).user == "testuser@test.domain"
        with (
            mock.patch.object(kerberos, "build_ap_req", lambda *a: sent[0]),
            pytest.raises(CedarError, match="refused our ticket for host/localhost@TEST.REALM"),
        ):
            _ping(daemon, realm)
        assert _ping(daemon, realm).user == "testuser@test.domain"
    assert any("replayed authenticator" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


@pytest.mark.parametrize(
    "garbage",
    [
        os.urandom(64),
        b"\x6e\x84\x7f\xff\xff\xff" + os.urandom(32),  # claims 2 GiB
        b"\x6e\x82\x01\x00" + b"\x30\x80" * 128,  # indefinite lengths, deep
        b"\x6e\x03\x30\x01\x00",
    ],
    ids=["random", "huge-length", "nested", "truncated"],
)
def test_garbage_ap_reqs_are_denied_promptly_and_cleanly(
    tmp_path: Path, garbage: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    realm = Realm(tmp_path)
    daemon = _daemon(realm)
    caplog.set_level(logging.INFO)
    with daemon.run_in_thread(), bounded_memory(REQUEST_MEMORY):
        with (
            mock.patch.object(kerberos, "build_ap_req", lambda *a: garbage),
            pytest.raises(CedarError, match="refused our ticket"),
        ):
            _ping(daemon, realm)
        assert _ping(daemon, realm).authorized
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


# -- hostile bytes to every Kerberos parser ------------------------------------------------------


@functools.cache
def _real_ccache() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        return Path(Realm(Path(tmp)).ccache).read_bytes()


@fuzz(300)
@given(st.binary(max_size=2048))
def test_kerberos_parsers_take_any_bytes(data: bytes) -> None:
    """Random bytes: each parser returns or raises KerberosError, nothing else."""
    for parse in (
        der.decode,
        parse_ap_req,
        lambda d: parse_ccache(d, "fuzz"),
        lambda d: parse_keytab(d, "fuzz"),
        lambda d: Authenticator.decode(d),
    ):
        with contextlib.suppress(KerberosError):
            parse(data)


@fuzz(200)
@given(st.data())
def test_kerberos_parsers_take_mutated_real_messages(data: Any) -> None:
    """A real ccache (tickets, keys, principals) with bytes changed and cut: same rule."""
    blob = bytearray(_real_ccache())
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(blob) - 1))
        blob[at] = data.draw(st.integers(0, 255))
    cut = bytes(blob[: data.draw(st.integers(0, len(blob)))])
    for candidate in (bytes(blob), cut):
        with contextlib.suppress(KerberosError):
            parse_ccache(candidate, "fuzz")
