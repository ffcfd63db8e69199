"""Compiled-in defaults of the configuration reader: knob defaults, metaknobs, method spellings.

Pure data (spec 06 §1.5, §1.9, §1.10); the reader, the knob accessors and the tools read them.
"""

from __future__ import annotations

from cedar.version import VERSION

#: The HTCondor version whose configuration behaviour is emulated (``if version ...``).
EMULATED_VERSION = VERSION

#: Files searched when ``CONDOR_CONFIG`` is unset (spec 06 §1.1); ``~condor`` is added at run time.
DEFAULT_ROOT_FILES = ("/etc/condor/condor_config", "/usr/local/etc/condor_config")

#: Default ``LOCAL_CONFIG_DIR_EXCLUDE_REGEXP`` (also used to filter token directories).
DEFAULT_EXCLUDE_REGEXP = (
    r"^((\..*)|(.*\.pl)|(.*\.py)|(.*\.sh)|(.*~)|(#.*)|(.*\.rpmsave)|(.*\.rpmnew)"
    r"|(.*\.dpkg-old)|(.*\.dpkg-dist)|(.*\.cfsaved))$"
)

#: Compiled-in defaults of the knobs a client uses (spec 06 §1.9).  Raw, expanded on lookup.
DEFAULTS: dict[str, str] = {
    "COLLECTOR_HOST": "$(CONDOR_HOST)",
    "COLLECTOR_PORT": "9618",
    "SHARED_PORT_PORT": "$(COLLECTOR_PORT)",
    "USE_SHARED_PORT": "true",
    "SCHEDD_ADDRESS_FILE": "$(SPOOL)/.schedd_address",
    "SCHEDD_SUPER_ADDRESS_FILE": "$(SPOOL)/.schedd_address.super",
    "SCHEDD_DAEMON_AD_FILE": "$(SPOOL)/.schedd_classad",
    "COLLECTOR_ADDRESS_FILE": "$(LOG)/.collector_address",
    "COLLECTOR_SUPER_ADDRESS_FILE": "$(LOG)/.collector_address.super",
    "RELEASE_DIR": "/usr",
    "LOCAL_DIR": "$(TILDE)",
    "ETC": "$(LOCAL_DIR)",
    "LOG": "$(LOCAL_DIR)/log",
    "SPOOL": "$(LOCAL_DIR)/spool",
    "LOCK": "$(LOG)",
    "RUN": "$(LOCK)",
    "UID_DOMAIN": "$(FULL_HOSTNAME)",
    "FILESYSTEM_DOMAIN": "$(FULL_HOSTNAME)",
    "TRUST_DOMAIN": "$(UID_DOMAIN)",
    "SEC_DEFAULT_AUTHENTICATION_METHODS": "FS,IDTOKENS,KERBEROS,SCITOKENS,SSL",
    "SEC_DEFAULT_AUTHENTICATION_TIMEOUT": "20",
    "SEC_TCP_SESSION_TIMEOUT": "20",
    "SEC_TOKEN_SYSTEM_DIRECTORY": "$(ETC)/tokens.d",
    "SEC_PASSWORD_DIRECTORY": "$(ETC)/passwords.d",
    "TRUST_DOMAIN_CAFILE": "$(ETC)/trust_domain_ca.pem",  # [live] condor_config_val -v
    "SEC_PASSWORD_FILE": "$(SEC_PASSWORD_DIRECTORY)/POOL",
    "SEC_TOKEN_POOL_SIGNING_KEY_FILE": "$(SEC_PASSWORD_FILE)",
    "AUTH_SSL_CLIENT_USE_DEFAULT_CAS": "true",
    "AUTH_SSL_SERVER_USE_DEFAULT_CAS": "true",
    "AUTH_SSL_REQUIRE_CLIENT_CERTIFICATE": "false",
    "AUTH_SSL_USE_CLIENT_PROXY_ENV_VAR": "false",
    "SEC_SYSTEM_KNOWN_HOSTS": "$(ETC)/known_hosts",
    "BOOTSTRAP_SSL_SERVER_TRUST": "false",
    "SEC_CLAIMTOBE_INCLUDE_DOMAIN": "true",
    "REQUIRE_LOCAL_CONFIG_FILE": "true",
    "USER_CONFIG_FILE": "user_config",
    "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP": DEFAULT_EXCLUDE_REGEXP,
    "ENABLE_IPV4": "auto",
    "ENABLE_IPV6": "auto",
    "PREFER_IPV4": "true",
    "PREFER_OUTBOUND_IPV4": "$(PREFER_IPV4)",
    "QUERY_TIMEOUT": "60",
    "Q_QUERY_TIMEOUT": "20",
    "HAD_USE_PRIMARY": "false",
}

#: Built-in defaults of the ``SEC_<ctx>_<X>`` levels (spec 06 §1.10).
SECURITY_LEVEL_DEFAULTS = {
    "AUTHENTICATION": "OPTIONAL",
    "ENCRYPTION": "OPTIONAL",
    "INTEGRITY": "OPTIONAL",
    "NEGOTIATION": "PREFERRED",
}
DEFAULT_CRYPTO_METHODS = ("AES", "BLOWFISH", "3DES")

#: Method spellings accepted in configuration, mapped to the name a client puts on the wire.
METHOD_SPELLINGS = {
    "TOKEN": "TOKEN",
    "TOKENS": "TOKEN",
    "IDTOKEN": "TOKEN",
    "IDTOKENS": "TOKEN",
    "SCITOKEN": "SCITOKENS",
    "SCITOKENS": "SCITOKENS",
    "FS": "FS",
    "FS_REMOTE": "FS_REMOTE",
    "CLAIMTOBE": "CLAIMTOBE",
    "ANONYMOUS": "ANONYMOUS",
    "SSL": "SSL",
    "PASSWORD": "PASSWORD",
    "KERBEROS": "KERBEROS",
    "MUNGE": "MUNGE",
}

#: Metaknobs a client must honour (spec 06 §1.5); others are accepted and ignored with a log line.
METAKNOBS: dict[str, dict[str, str]] = {
    "ROLE": {
        "PERSONAL": "CONDOR_HOST=127.0.0.1\nCOLLECTOR_HOST=$(CONDOR_HOST):0\n"
        "DAEMON_LIST=MASTER COLLECTOR NEGOTIATOR STARTD SCHEDD\nRunBenchmarks=0",
        "SUBMIT": "DAEMON_LIST=$(DAEMON_LIST) SCHEDD",
        "EXECUTE": "DAEMON_LIST=$(DAEMON_LIST) STARTD",
        "CENTRALMANAGER": "DAEMON_LIST=$(DAEMON_LIST) COLLECTOR NEGOTIATOR",
    },
    "SECURITY": {
        "STRONG": "SEC_DEFAULT_ENCRYPTION=required\nSEC_DEFAULT_INTEGRITY=required\n"
        "SEC_DEFAULT_AUTHENTICATION=required",
        "WITH_AUTHENTICATION": "SEC_DEFAULT_AUTHENTICATION=required\n"
        "SEC_DEFAULT_INTEGRITY=required",
        "RECOMMENDED_V9_0": "SECURITY_MODEL=9.0\nuse security:strong\n"
        "SEC_READ_AUTHENTICATION=OPTIONAL\nSEC_READ_ENCRYPTION=OPTIONAL\n"
        "SEC_READ_INTEGRITY=OPTIONAL\n"
        "ALLOW_ADMINISTRATOR=$(1:condor)@* condor_pool@* $(2:root@*) $(3+)\n"
        "ALLOW_DAEMON=$(1:condor)@* condor_pool@*\nALLOW_NEGOTIATOR=$(1:condor)@* condor_pool@*\n"
        "ALLOW_WRITE=*\nALLOW_READ=*",
        "RECOMMENDED_V24_0": "SECURITY_MODEL=24.0\nuse security:strong\n"
        "SEC_READ_AUTHENTICATION=OPTIONAL\nSEC_CLIENT_AUTHENTICATION=OPTIONAL\n"
        "ALLOW_ADMINISTRATOR=$(1:condor)@* condor@password $(2:root@*) $(3+)\n"
        "ALLOW_DAEMON=$(1:condor)@* condor@password\n"
        "ALLOW_NEGOTIATOR=$(1:condor)@* condor@password\nALLOW_WRITE=*\nALLOW_READ=*",
        "RECOMMENDED": "use security:recommended_v24_0($(1+))",
        "GET_HTCONDOR_IDTOKENS": "use security:recommended\n"
        "SEC_READ_AUTHENTICATION_METHODS=$(SEC_DEFAULT_AUTHENTICATION_METHODS),ANONYMOUS\n"
        "SEC_CLIENT_AUTHENTICATION_METHODS=$(SEC_DEFAULT_AUTHENTICATION_METHODS),ANONYMOUS\n"
        "TRUST_DOMAIN=$(CONDOR_HOST)",
        "USER_BASED": "if $(CondorIsAdmin)\nauthuser=condor\nelse\nauthuser=$(USERNAME)\nendif\n"
        "use security:recommended($(authuser))\nif ! $(CondorIsAdmin)\n"
        "ALLOW_WRITE=$(authuser)@$(UID_DOMAIN)\nendif",
        "HOST_BASED": "ALLOW_ADMINISTRATOR=$(CONDOR_HOST)\nALLOW_READ=*\n"
        "ALLOW_WRITE=$(FULL_HOSTNAME) $(IPV4_ADDRESS) $(IPV6_ADDRESS)\n"
        "ALLOW_DAEMON=$(FULL_HOSTNAME) $(IPV4_ADDRESS) $(IPV6_ADDRESS)\n"
        "ALLOW_NEGOTIATOR=$(CONDOR_HOST)\nLEGACY_ALLOW_SEMANTICS=TRUE",
        "FIPS": "FIPS=True\nuse security:strong\nSEC_DEFAULT_CRYPTO_METHODS=AES,3DES",
    },
}
OTHER_METAKNOB_CATEGORIES = {"FEATURE", "POLICY", "EXPERIMENTAL", "UPGRADE"}

__all__ = [
    "DEFAULTS",
    "DEFAULT_CRYPTO_METHODS",
    "DEFAULT_EXCLUDE_REGEXP",
    "DEFAULT_ROOT_FILES",
    "EMULATED_VERSION",
    "METAKNOBS",
    "SECURITY_LEVEL_DEFAULTS",
]
