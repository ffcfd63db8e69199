"""Preferences, the reconciliation truth table and the client dependency rule (spec 03 §3)."""

from __future__ import annotations

import pytest

from cedar.auth.client_config import SecurityConfig, build_client_policy
from cedar.auth.permissions import implied_levels, levels_implying
from cedar.auth.policy import Decision, Requirement, reconcile
from cedar.auth.server_policy import LevelPolicy, ServerPolicy
from cedar.errors import AuthenticationError, SecurityError

R, P, O, N = Requirement.REQUIRED, Requirement.PREFERRED, Requirement.OPTIONAL, Requirement.NEVER  # noqa: E741
YES, NO, FAIL = Decision.YES, Decision.NO, Decision.FAIL

TABLE = {
    R: (YES, YES, YES, FAIL),
    P: (YES, YES, YES, NO),
    O: (YES, YES, NO, NO),
    N: (FAIL, NO, NO, NO),
}


@pytest.mark.parametrize("client", [R, P, O, N])
@pytest.mark.parametrize("server_index", range(4))
def test_truth_table(client, server_index):
    server = (R, P, O, N)[server_index]
    assert reconcile(client, server) is TABLE[client][server_index]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("REQUIRED", R), ("yes", R), ("True", R), ("Preferred", P), ("o", O), ("NEVER", N), ("F", N)],
)
def test_only_the_first_letter_counts(text, expected):
    assert Requirement.parse(text) is expected


def test_unknown_preference_is_rejected():
    with pytest.raises(ValueError):
        Requirement.parse("maybe")


def test_authentication_never_forces_everything_never():
    config = SecurityConfig(authentication="NEVER", methods=["FS"])
    policy = build_client_policy(config, ["FS"])
    assert (policy.encryption, policy.integrity, policy.authentication_new) == (N, N, N)


def test_encryption_required_raises_authentication_and_negotiation():
    config = SecurityConfig(encryption="REQUIRED", methods=["FS"])
    policy = build_client_policy(config, ["FS"])
    assert policy.authentication is R  # legacy attribute raised
    assert policy.authentication_new is O  # the real preference is not
    assert policy.negotiation is R


def test_contradictory_client_policy_fails_locally():
    config = SecurityConfig(authentication="NEVER", encryption="REQUIRED")
    with pytest.raises(SecurityError, match="contradictory"):
        build_client_policy(config, ["FS"])


def test_required_authentication_without_methods_fails_locally():
    config = SecurityConfig(authentication="REQUIRED", methods=["KERBEROS"])
    with pytest.raises(AuthenticationError, match="KERBEROS"):
        build_client_policy(config, [])


def test_no_crypto_means_no_encryption():
    policy = build_client_policy(SecurityConfig(crypto_methods=[]), ["FS"])
    assert (policy.encryption, policy.integrity) == (N, N)


def test_legacy_ciphers_are_never_offered():
    with pytest.raises(ValueError, match="only AES"):
        SecurityConfig(crypto_methods=["AES", "BLOWFISH"])


def test_legacy_ciphers_may_be_offered_for_clear_text_sessions_only():
    config = SecurityConfig(crypto_methods=["blowfish", "TRIPLEDES"], encryption=N, integrity=N)
    assert config.crypto_methods == ["BLOWFISH", "3DES"]
    with pytest.raises(ValueError, match="NEVER"):
        SecurityConfig(crypto_methods=["BLOWFISH"], encryption=N)


def test_level_implications():
    assert implied_levels("ADMINISTRATOR") == ["ADMINISTRATOR", "WRITE", "READ"]
    assert implied_levels("owner") == ["ADMINISTRATOR", "WRITE", "READ"]
    assert "DAEMON" in levels_implying("READ") and "ALLOW" not in levels_implying("READ")


def test_server_policy_lookup_falls_back():
    policy = ServerPolicy(
        levels={
            "DEFAULT": LevelPolicy(methods=["FS"]),
            "DAEMON": LevelPolicy(authentication="REQUIRED"),
            "READ": LevelPolicy(encryption="NEVER"),
        }
    )
    assert policy.resolve("ADVERTISE_STARTD").authentication is R  # via DAEMON
    assert policy.resolve("READ").encryption is N
    assert policy.resolve("READ").methods == ["FS"]
    assert policy.resolve("WRITE").encryption is O


def test_server_policy_from_knobs():
    policy = ServerPolicy.from_knobs(
        {
            "SEC_DEFAULT_AUTHENTICATION": "REQUIRED",
            "SEC_READ_AUTHENTICATION_METHODS": "FS, CLAIMTOBE",
            "ALLOW_WRITE": "alice@example.org, */10.0.0.*",
            "DENY_WRITE": "mallory@*",
        }
    )
    assert policy.resolve("READ").authentication is R
    assert policy.resolve("READ").methods == ["FS", "CLAIMTOBE"]
    assert policy.is_authorized("alice@example.org", "127.0.0.1", "WRITE")
    assert policy.is_authorized("bob@example.org", "10.0.0.7", "WRITE")
    assert not policy.is_authorized("bob@example.org", "127.0.0.1", "WRITE")
    assert not policy.is_authorized("mallory@example.org", "10.0.0.7", "WRITE")
    # WRITE implies READ, and nothing was granted at READ itself
    assert policy.is_authorized("alice@example.org", None, "READ")
    assert not policy.is_authorized("carol@example.org", None, "READ")
    assert policy.is_authorized("anyone", None, "ALLOW")
