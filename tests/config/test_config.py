"""cedar.config: locating the root file, statements, errors, explicit settings, client knobs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cedar.config import Config, default_config, set_default_config
from cedar.errors import ConfigError
from tests.support import CAPTURES

POOL_CONFIG = CAPTURES / "pool" / "condor_config"


def write(tmp_path: Path, text: str, name: str = "condor_config") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# -- locating the root file (spec 06 §1.1) --


def test_dev_null_reads_nothing_but_has_defaults() -> None:
    config = Config.load(condor_config="/dev/null", environ={}, read_user_config=False)
    assert config.sources == []
    assert config.get("COLLECTOR_PORT") == "9618"
    assert config.get("COLLECTOR_HOST") is None
    assert config.authentication_methods() == ["FS", "TOKEN", "KERBEROS", "SCITOKENS", "SSL"]
    assert config.security_level("NEGOTIATION") == "PREFERRED"
    assert config.crypto_methods() == ["AES", "BLOWFISH", "3DES"]


def test_only_env_uses_environment_overrides() -> None:
    config = Config.load(
        environ={"CONDOR_CONFIG": "only_env", "_condor_COLLECTOR_HOST": "cm.example.org"},
        read_user_config=False,
    )
    assert config.sources == [] and config.get("CONFIG_ROOT") is None
    assert config.collector_address() == "cm.example.org:9618"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("/nonexistent/condor_config", "does not exist"),
        ("", "does not exist"),
        ("/", "is a directory"),
    ],
)
def test_bad_condor_config_is_a_clear_error(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Config.load(condor_config=value, environ={}, read_user_config=False)


def test_pool_config_file() -> None:
    if not POOL_CONFIG.exists():
        pytest.skip("captures/pool/condor_config not present")
    config = Config.load(condor_config=str(POOL_CONFIG), environ={}, read_user_config=False)
    assert config.get("CONFIG_ROOT") == str(POOL_CONFIG.parent)
    assert config.collector_address() == "127.0.0.1:9618"
    assert config.trust_domain() == "minicondor"
    assert config.password_directory() == "/srv/minicondor/etc/passwords.d"
    assert config.pool_signing_key_file() == "/srv/minicondor/etc/passwords.d/POOL"
    assert config.get("SEC_TOKEN_SYSTEM_DIRECTORY") == "/srv/minicondor/etc/tokens.d"
    assert config.authentication_methods() == ["FS", "TOKEN", "SCITOKENS", "CLAIMTOBE"]
    assert config.security_level("AUTHENTICATION") == "PREFERRED"
    assert config.security_level("ENCRYPTION") == "OPTIONAL"
    assert config.security_level("AUTHENTICATION", "DEFAULT") == "REQUIRED"
    assert config.get("ALLOW_WRITE") == (
        "root@minicondor condor@minicondor condor@minicondor condor@password testuser@minicondor"
    )
    # use FEATURE : StaticSlots is accepted and ignored; LOCAL_CONFIG_DIR does not exist: skipped
    assert config.sources == [str(POOL_CONFIG)]


def test_pool_config_matches_reference(reference_param) -> None:  # type: ignore[no-untyped-def]
    if not POOL_CONFIG.exists():
        pytest.skip("captures/pool/condor_config not present")
    names = [
        "COLLECTOR_HOST",
        "TRUST_DOMAIN",
        "SEC_PASSWORD_DIRECTORY",
        "SEC_TOKEN_SYSTEM_DIRECTORY",
        "SEC_TOKEN_POOL_SIGNING_KEY_FILE",
        "SEC_CLIENT_AUTHENTICATION_METHODS",
        "ALLOW_WRITE",
        "SEC_CLIENT_AUTHENTICATION",
        "LOCAL_CONFIG_DIR",
        "SPOOL",
        "SEC_PASSWORD_FILE",
    ]
    expected = reference_param({"CONDOR_CONFIG": str(POOL_CONFIG)}, names)
    config = Config.load(condor_config=str(POOL_CONFIG), environ={}, read_user_config=False)
    assert {n: config.get(n) for n in names} == expected


def test_compiled_in_defaults_match_reference(reference_param) -> None:  # type: ignore[no-untyped-def]
    names = [
        "COLLECTOR_PORT",
        "SHARED_PORT_PORT",
        "QUERY_TIMEOUT",
        "Q_QUERY_TIMEOUT",
        "SEC_DEFAULT_AUTHENTICATION_TIMEOUT",
        "SEC_DEFAULT_AUTHENTICATION_METHODS",
        "UID_DOMAIN",
        "TRUST_DOMAIN",
        "SEC_TOKEN_SYSTEM_DIRECTORY",
        "SEC_PASSWORD_FILE",
        "AUTH_SSL_CLIENT_USE_DEFAULT_CAS",
        "USER_CONFIG_FILE",
        "COLLECTOR_HOST",
        "SCITOKENS_FILE",
        "SEC_TOKEN_DIRECTORY",
        "REQUIRE_LOCAL_CONFIG_FILE",
        "PREFER_IPV4",
    ]
    expected = reference_param({"CONDOR_CONFIG": "/dev/null"}, names)
    config = Config.load(condor_config="/dev/null", environ={}, read_user_config=False)
    ours = {n: config.get(n) for n in names}
    # the bindings print booleans as Python bools
    for name, value in expected.items():
        if value in ("True", "False"):
            expected[name] = value.lower()
    assert ours == expected


# -- statements and errors (spec 06 §1.3-§1.5) --


def test_error_statement_aborts_with_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "A = 1\nerror : stop here $(A)\n")
    with pytest.raises(ConfigError, match=r"Line 2: stop here 1"):
        Config.load(condor_config=path, environ={}, read_user_config=False)


def test_warning_statement_continues(tmp_path: Path) -> None:
    path = write(tmp_path, "warning : careful\nB = 2\n")
    config = Config.load(condor_config=path, environ={}, read_user_config=False)
    assert config.get("B") == "2"
    assert config.warnings == [f'Config source Warning "{path}", Line 1: careful']


def test_missing_include_is_fatal_unless_ifexist(tmp_path: Path) -> None:
    path = write(tmp_path, "include : /nonexistent/file\n")
    with pytest.raises(ConfigError, match="can't open file /nonexistent/file"):
        Config.load(condor_config=path, environ={}, read_user_config=False)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("if $(A) && true\nendif\n", "complex conditionals are not supported"),
        ("MODE = fast\nif $(MODE)\nendif\n", "expression is not a conditional"),
        ("if version >= 25\nendif\n", "version literal is invalid"),
        ("if true\n", "if without matching endif"),
        ("endif\n", "endif without if"),
        ("just some words\n", "syntax error"),
        ("[Two Words]\n", "syntax error"),
        ("if true\n: R1 = v\nendif\n", "Illegal Identifier"),
        ("A = $(B)\nB = $(A)\nC = $(A)\n", None),
    ],
)
def test_invalid_configuration(tmp_path: Path, text: str, message: str | None) -> None:
    path = write(tmp_path, text)
    if message is None:  # a definition cycle is detected on lookup
        config = Config.load(condor_config=path, environ={}, read_user_config=False)
        with pytest.raises(ConfigError, match="cycle"):
            config.get("C")
        return
    with pytest.raises(ConfigError, match=message):
        Config.load(condor_config=path, environ={}, read_user_config=False)


def test_legacy_colon_assignment_and_if_colon(tmp_path: Path) -> None:
    path = write(tmp_path, "NAME : value\nif true\n:R1 = v\nendif\n[Section]\nIF_X = 1\n")
    config = Config.load(condor_config=path, environ={}, read_user_config=False)
    assert config.get("NAME") == "value" and config.get("R1") == "v"
    assert config.get("IF_X") == "1"
    assert any("obsolete use of ':'" in w for w in config.warnings)


def test_required_local_config_file(tmp_path: Path) -> None:
    path = write(tmp_path, "LOCAL_CONFIG_FILE = /nonexistent/local\n")
    with pytest.raises(ConfigError, match="Can't read config source /nonexistent/local"):
        Config.load(condor_config=path, environ={}, read_user_config=False)
    path = write(
        tmp_path, "LOCAL_CONFIG_FILE = /nonexistent/local\nREQUIRE_LOCAL_CONFIG_FILE = false\n"
    )
    assert Config.load(condor_config=path, environ={}, read_user_config=False).sources == [path]


def test_user_config_file(tmp_path: Path) -> None:
    user = write(tmp_path, "FROM_USER = yes\n", "user_config")
    path = write(tmp_path, f"USER_CONFIG_FILE = {user}\n")
    config = Config.load(condor_config=path, environ={}, read_user_config=True)
    assert config.get("FROM_USER") == "yes"
    config = Config.load(condor_config=path, environ={}, read_user_config=False)
    assert config.get("FROM_USER") is None


# -- explicit settings and typed accessors --


def test_explicit_settings_win_over_files_and_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "COLLECTOR_HOST = file.example.org\n")
    config = Config.load(
        condor_config=path,
        environ={"_condor_COLLECTOR_HOST": "env.example.org"},
        settings={"COLLECTOR_HOST": "explicit.example.org:1234"},
        read_user_config=False,
    )
    assert config.collector_address() == "explicit.example.org:1234"
    config.set("COLLECTOR_HOST", None)
    assert config.collector_address() == "env.example.org:9618"


def test_no_file_at_all() -> None:
    config = Config(settings={"SEC_CLIENT_AUTHENTICATION_METHODS": "IDTOKENS, SCITOKEN, GSI, FS"})
    assert config.authentication_methods() == ["TOKEN", "SCITOKENS", "FS"]
    config.set("SEC_DEFAULT_ENCRYPTION", "Yes")
    assert config.security_level("ENCRYPTION") == "REQUIRED"
    config.set("SEC_CLIENT_INTEGRITY", "bogus")
    with pytest.raises(ConfigError, match="SEC_CLIENT_INTEGRITY"):
        config.security_level("INTEGRITY")


def test_timeouts_and_multiplier() -> None:
    config = Config()
    assert config.authentication_timeout() == 20 and config.query_timeout() == 60
    config.set("TOOL_TIMEOUT_MULTIPLIER", 2)
    assert config.authentication_timeout() == 40 and config.schedd_query_timeout() == 40
    config.set("SEC_CLIENT_AUTHENTICATION_TIMEOUT", 5)
    assert config.authentication_timeout() == 10


def test_typed_accessors() -> None:
    config = Config(settings={"FLAG": "Yes", "NUM": "7", "LIST": "a, b  c"})
    assert config.get_bool("FLAG") is True and config.get_int("NUM") == 7
    assert config.get_list("LIST") == ["a", "b", "c"]
    with pytest.raises(ConfigError, match="LIST"):
        config.get_int("LIST")


def test_credential_knobs(tmp_path: Path) -> None:
    config = Config(settings={"SEC_TOKEN_DIRECTORY": str(tmp_path)})
    assert config.token_directory() == str(tmp_path)
    config.set("SEC_TOKEN_DIRECTORY", None)
    import pwd

    home = pwd.getpwuid(os.geteuid()).pw_dir
    assert config.token_directory() == os.path.join(home, ".condor", "tokens.d")
    config.set("AUTH_SSL_CLIENT_CAFILE", "/ca.pem")
    config.set("SSL_SKIP_HOST_CHECK", "true")
    files = config.ssl_client_files()
    assert files.cafile == "/ca.pem" and files.skip_host_check and files.use_default_cas
    config.set("SCITOKENS_FILE", "/tok")
    assert config.scitoken_file() == "/tok"


def test_default_config_is_replaceable() -> None:
    mine = Config(settings={"MARK": "1"})
    set_default_config(mine)
    try:
        assert default_config() is mine
    finally:
        set_default_config(None)
