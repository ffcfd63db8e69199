"""HTCondor configuration as a client reads it (spec 06 §1-§3).

:class:`Config` finds the root file the way the C++ tools do (``CONDOR_CONFIG``, ``ONLY_ENV``,
``/dev/null``, the default locations), reads it with the parser subset spec 06 §1.11 recommends
(macros, includes, ``if``/``elif``/``else``/``endif``, the ``SECURITY``/``ROLE`` metaknobs,
``error``/``warning``), then ``LOCAL_CONFIG_DIR``/``LOCAL_CONFIG_FILE``, the user file and
``_condor_`` environment overrides.  Values are stored raw and expanded on lookup, as the
reference does, so a later definition changes every value that refers to it.

Everything can also be set from Python with :meth:`Config.set`; explicit settings win over every
file and the environment.  ``Config()`` with no arguments reads no file at all (compiled-in
defaults and detected macros only); :meth:`Config.load` reads what a tool would read.
"""

from __future__ import annotations

import logging
import os
import platform
import pwd
import re
import socket
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from cedar.errors import ConfigError

log = logging.getLogger(__name__)

#: The HTCondor version whose configuration behaviour is emulated (``if version ...``).
EMULATED_VERSION = (25, 14, 1)

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
_METHOD_SPELLINGS = {
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
_OTHER_METAKNOB_CATEGORIES = {"FEATURE", "POLICY", "EXPERIMENTAL", "UPGRADE"}

_NAME_CHARS = r"A-Za-z0-9_./"
_NAME_RE = re.compile(rf"[{_NAME_CHARS}]+")
_MAX_DEPTH = 64
_MAX_INCLUDE_DEPTH = 20
_MAX_IF_DEPTH = 63
_TRUE_WORDS = {"true", "yes", "t"}
_FALSE_WORDS = {"false", "no", "f"}


@dataclass(frozen=True)
class _Source:
    """Where a line came from, for error messages."""

    name: str
    line: int


def _split_list(value: str | None) -> list[str]:
    """An HTCondor list: items separated by commas and/or whitespace."""
    if not value:
        return []
    return [item for item in re.split(r"[\s,]+", value) if item]


def _canonical_hostname() -> str:
    """``gethostname`` replaced by the forward lookup's canonical name (spec 06 §1.8)."""
    name = socket.gethostname()
    try:
        info = socket.getaddrinfo(name, None, flags=socket.AI_CANONNAME)
        if info and info[0][3]:
            return info[0][3]
    except OSError:
        pass
    return name


def _detect_ip() -> str:
    """An interface address: the source address the kernel would use for an outside route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet is sent for UDP connect
            return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"


def _home_of(user: str | None = None, uid: int | None = None) -> str | None:
    """Password-database home directory (``$HOME`` is deliberately ignored, spec 06 §1.2)."""
    try:
        entry = (
            pwd.getpwnam(user)
            if user is not None
            else pwd.getpwuid(os.geteuid() if uid is None else uid)
        )
    except KeyError:
        return None
    return entry.pw_dir


def _arch() -> str:
    machine = platform.machine()
    lowered = machine.lower()
    if lowered in {"x86_64", "amd64"}:
        return "X86_64"
    if re.fullmatch(r"i[3-6]86", lowered):
        return "INTEL"
    return {"ppc64": "PPC64", "ia64": "IA64"}.get(lowered, machine)


def detected_macros(subsystem: str, local_name: str | None) -> dict[str, str]:
    """The built-in macros a client needs (spec 06 §1.8)."""
    full = _canonical_hostname()
    short = full.split(".", 1)[0]
    euid = os.geteuid()
    try:
        username = pwd.getpwuid(euid).pw_name
    except KeyError:
        username = str(euid)
    opsys = {"Linux": "LINUX", "Darwin": "MACOSX", "Windows": "WINDOWS"}.get(
        platform.system(), platform.system().upper()
    )
    ip = _detect_ip()
    macros = {
        "FULL_HOSTNAME": full,
        "HOSTNAME": short,
        "IP_ADDRESS": ip,
        "IPV4_ADDRESS": ip,
        "IPV6_ADDRESS": "",
        "IP_ADDRESS_IS_V6": "false",
        "SUBSYSTEM": subsystem,
        "LOCALNAME": local_name or subsystem,
        "USERNAME": username,
        "PID": str(os.getpid()),
        "PPID": str(os.getppid()),
        "ARCH": _arch(),
        "OPSYS": opsys,
        "CondorIsAdmin": "true" if euid == 0 else "false",
    }
    tilde = _home_of("condor")
    if tilde is not None:
        macros["TILDE"] = tilde
    return macros


def interpret_level(value: str, knob: str) -> str:
    """A ``SEC_*_<X>`` level by its first letter, case-insensitive (spec 06 §1.10)."""
    first = value.strip()[:1].upper()
    if first in {"R", "Y", "T"}:
        return "REQUIRED"
    if first == "P":
        return "PREFERRED"
    if first == "O":
        return "OPTIONAL"
    if first in {"F", "N"}:
        return "NEVER"
    raise ConfigError(f"{knob} = {value!r} is not one of REQUIRED, PREFERRED, OPTIONAL, NEVER")


def normalize_methods(names: Iterable[str]) -> list[str]:
    """Method names as a client offers them: ``TOKEN``/``SCITOKENS`` spellings, unknown dropped."""
    result: list[str] = []
    for name in names:
        wire = _METHOD_SPELLINGS.get(name.upper())
        if wire is None:
            log.debug("dropping authentication method %r: not supported", name)
            continue
        if wire not in result:
            result.append(wire)
    return result


class Config:
    """HTCondor configuration: raw definitions, lookup with subsystem prefixes, typed accessors.

    Lookup order for ``get(NAME)``: explicit :meth:`set` values, then ``<LOCALNAME>.NAME``,
    ``<SUBSYS>.NAME``, ``NAME`` -- each first in the configuration read, then in the compiled-in
    defaults (spec 06 §1.6).  An empty value counts as unset.
    """

    def __init__(
        self,
        *,
        subsystem: str = "TOOL",
        local_name: str | None = None,
        settings: Mapping[str, str] | None = None,
        detect: bool = True,
    ) -> None:
        self.subsystem = subsystem.upper()
        self.local_name = local_name.upper() if local_name else None
        self._table: dict[str, str] = {}
        self._explicit: dict[str, str] = {}
        self._defaults: dict[str, str] = {k.upper(): v for k, v in DEFAULTS.items()}
        #: Files (and other sources) read, in order.
        self.sources: list[str] = []
        #: Warnings produced by ``warning`` statements and ignored constructs.
        self.warnings: list[str] = []
        self._detected = detected_macros(self.subsystem, self.local_name) if detect else {}
        for name, value in self._detected.items():
            self._table[name.upper()] = value
        for name, value in (settings or {}).items():
            self.set(name, value)

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        *,
        condor_config: str | None = None,
        environ: Mapping[str, str] | None = None,
        subsystem: str = "TOOL",
        local_name: str | None = None,
        settings: Mapping[str, str] | None = None,
        read_user_config: bool | None = None,
    ) -> Config:
        """Read the configuration a client would read (spec 06 §1.1-§1.2).

        ``condor_config`` replaces the ``CONDOR_CONFIG`` variable; ``environ`` replaces
        ``os.environ`` (for ``CONDOR_CONFIG``, ``_condor_`` overrides and ``$ENV()``).
        ``read_user_config`` defaults to "not root" (a process that can switch uids skips it).
        """
        env = dict(os.environ if environ is None else environ)
        config = cls(subsystem=subsystem, local_name=local_name, settings=settings)
        config._environ = env
        if condor_config is None:
            condor_config = env.get("CONDOR_CONFIG")
        only_env = False
        root: str | None = None
        if condor_config is None:
            candidates = list(DEFAULT_ROOT_FILES)
            condor_home = _home_of("condor")
            if condor_home:
                candidates.append(os.path.join(condor_home, "condor_config"))
            root = next((c for c in candidates if os.access(c, os.R_OK)), None)
            if root is None:
                raise ConfigError(
                    "Neither the environment variable CONDOR_CONFIG, /etc/condor/, "
                    "/usr/local/etc/, nor ~condor/ contain a condor_config source; set "
                    "CONDOR_CONFIG (to a file, /dev/null or ONLY_ENV)"
                )
        elif condor_config.upper() == "ONLY_ENV":
            only_env = True
        elif condor_config == "/dev/null":
            pass
        elif condor_config.rstrip().endswith("|"):
            root = condor_config
        else:
            path = Path(condor_config)
            if condor_config and path.is_dir():
                raise ConfigError(
                    f"File specified in CONDOR_CONFIG environment variable: "
                    f'"{condor_config}" is a directory.  Please specify a file.'
                )
            if not condor_config or not path.is_file():
                raise ConfigError(
                    f'File specified in CONDOR_CONFIG environment variable: "{condor_config}" '
                    "does not exist."
                )
            root = condor_config
        if root is not None:
            if not root.rstrip().endswith("|"):
                config._table["CONFIG_ROOT"] = os.path.dirname(os.path.abspath(root))
            config._read_source(root, required=True)
            for name in ("FULL_HOSTNAME", "HOSTNAME"):
                if name in config._detected:
                    config._table[name] = config._detected[name]
            if not only_env:
                config._read_local_sources()
        if read_user_config is None:
            read_user_config = os.geteuid() != 0
        if read_user_config:
            config._read_user_config()
        config._apply_environment(env)
        return config

    @classmethod
    def from_text(
        cls, text: str, *, name: str = "<string>", subsystem: str = "TOOL", detect: bool = True
    ) -> Config:
        """A configuration made of one configuration text (for tests and embedding)."""
        config = cls(subsystem=subsystem, detect=detect)
        config.parse_text(text, name)
        return config

    _environ: dict[str, str] | None = None

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment this configuration was read from (``os.environ`` by default)."""
        return os.environ if self._environ is None else self._environ

    # -- explicit settings ----------------------------------------------------------------------

    def set(self, name: str, value: str | int | bool | None) -> None:
        """Set a knob explicitly; it wins over files and the environment.  ``None`` removes it."""
        key = name.upper()
        if value is None:
            self._explicit.pop(key, None)
            return
        if isinstance(value, bool):
            value = "true" if value else "false"
        self._explicit[key] = str(value)

    def define(self, name: str, value: str) -> None:
        """Assign like a configuration line would (self references expand at once)."""
        self._assign(name, value, "=")

    # -- lookup -----------------------------------------------------------------------------------

    def _raw_lookup(self, name: str, *, include_defaults: bool = True) -> str | None:
        key = name.upper()
        if key in self._explicit:
            return self._explicit[key]
        if "." in key:
            # An explicitly prefixed name is looked up as given.
            if key in self._table:
                return self._table[key]
            return self._defaults.get(key) if include_defaults else None
        prefixes = [p for p in (self.local_name, self.subsystem) if p]
        for prefix in [*dict.fromkeys(prefixes), None]:
            full = f"{prefix}.{key}" if prefix else key
            if full in self._table:
                return self._table[full]
            if include_defaults and full in self._defaults:
                return self._defaults[full]
        return None

    def get_raw(self, name: str) -> str | None:
        """The unexpanded value, or ``None`` if the knob is not defined."""
        return self._raw_lookup(name)

    def get(self, name: str, default: str | None = None) -> str | None:
        """The expanded value; ``default`` if unset or empty (the reference's "not set")."""
        raw = self._raw_lookup(name)
        if raw is None:
            return default
        value = self.expand(raw)
        return value if value.strip() else default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def get_bool(self, name: str, default: bool = False) -> bool:
        """A boolean knob (``true``/``yes``/``t``/``1`` ..., case-insensitive)."""
        value = self.get(name)
        if value is None:
            return default
        lowered = value.lower()
        if lowered in _TRUE_WORDS or lowered == "1":
            return True
        if lowered in _FALSE_WORDS or lowered == "0":
            return False
        raise ConfigError(f"{name} = {value!r} is not a boolean")

    def get_int(self, name: str, default: int | None = None) -> int | None:
        """An integer knob."""
        value = self.get(name)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise ConfigError(f"{name} = {value!r} is not an integer") from None

    def get_float(self, name: str, default: float | None = None) -> float | None:
        """A real-valued knob."""
        value = self.get(name)
        if value is None:
            return default
        try:
            return float(value)
        except ValueError:
            raise ConfigError(f"{name} = {value!r} is not a number") from None

    def get_list(self, name: str, default: Iterable[str] = ()) -> list[str]:
        """A list knob (commas and/or whitespace)."""
        value = self.get(name)
        return _split_list(value) if value is not None else list(default)

    def names(self) -> Iterator[str]:
        """Every name defined by a source or explicitly (upper-cased)."""
        yield from dict.fromkeys([*self._table, *self._explicit])

    # -- expansion --------------------------------------------------------------------------------

    def expand(self, text: str) -> str:
        """Expand ``$(...)`` references, ``$ENV()`` and friends; ``$$(...)`` passes through."""
        result = self._expand(text, 0)
        return result.replace("\x00DOLLAR\x00", "$")

    def _find_close(self, text: str, start: int) -> int:
        """Index of the ``)`` ending a body that starts at ``start`` (one nested ``$(`` skipped)."""
        i = start
        while i < len(text):
            if text.startswith("$(", i):
                inner = text.find(")", i + 2)
                if inner < 0:
                    return -1
                i = inner + 1
                continue
            if text[i] == ")":
                return i
            i += 1
        return -1

    def _expand(self, text: str, depth: int) -> str:
        if depth > _MAX_DEPTH:
            raise ConfigError(f"macro expansion too deep (a definition cycle?) in {text[:80]!r}")
        out: list[str] = []
        i = 0
        while True:
            j = text.find("$", i)
            if j < 0:
                out.append(text[i:])
                break
            out.append(text[i:j])
            if text.startswith("$$", j):
                # Match-time references pass through literally, including the body.
                end = text.find(")", j) if text.startswith("$$(", j) else j + 1
                end = j + 1 if end < 0 else end + 1
                out.append(text[j:end])
                i = end
                continue
            m = re.match(r"\$([A-Za-z_]*)\(", text[j:])
            if not m:
                out.append("$")
                i = j + 1
                continue
            func = m.group(1)
            body_start = j + m.end()
            close = self._find_close(text, body_start)
            if close < 0:
                out.append(text[j:])
                break
            body = text[body_start:close]
            replacement = self._evaluate_reference(func, body, depth)
            if replacement is None:
                out.append(text[j : close + 1])
                i = close + 1
                continue
            # Re-scan the replacement (spec 06 §1.4).
            out.append(self._expand(replacement, depth + 1))
            i = close + 1
        return "".join(out)

    def _argument(self, item: str, depth: int) -> str:
        """A function argument: the named macro's value if defined, else the literal text."""
        item = item.strip()
        if _NAME_RE.fullmatch(item):
            raw = self._raw_lookup(item)
            if raw is not None:
                return self._expand(raw, depth + 1)
        return self._expand(item, depth + 1)

    def _evaluate_reference(self, func: str, body: str, depth: int) -> str | None:
        """The replacement text of one ``$FUNC(body)``; ``None`` leaves it as literal text."""
        if func == "":
            name, sep, default = body.partition(":")
            if not _NAME_RE.fullmatch(name):
                return None
            if name.upper() == "DOLLAR":
                return "\x00DOLLAR\x00"
            value = self._raw_lookup(name)
            if sep and (value is None or not self._expand(value, depth + 1).strip()):
                return default
            return "" if value is None else value
        if func == "ENV":
            var, sep, default = body.partition(":")
            value = self.environ.get(var.strip())
            if value is None:
                return default if sep else "UNDEFINED"
            return value
        if func == "SUBSTR":
            parts = body.split(",")
            text = self._argument(parts[0], depth)
            try:
                start = int(parts[1])
                length = int(parts[2]) if len(parts) > 2 else None
            except (IndexError, ValueError):
                raise ConfigError(f"invalid $SUBSTR({body})") from None
            if start < 0:
                start = max(0, len(text) + start)
            text = text[start:]
            if length is not None:
                text = text[:length] if length >= 0 else text[: max(0, len(text) + length)]
            return text
        if func == "CHOICE":
            parts = [p.strip() for p in body.split(",")]
            try:
                index = int(self._argument(parts[0], depth))
            except ValueError:
                raise ConfigError(f"invalid $CHOICE({body})") from None
            items = parts[1:]
            if len(items) == 1:
                items = [p.strip() for p in self._argument(items[0], depth).split(",")]
            if not 0 <= index < len(items):
                raise ConfigError(f"$CHOICE({body}): index {index} out of range")
            return items[index]
        if func in {"BASENAME", "DIRNAME"} or re.fullmatch(r"F[fpdnxbqauw]+", func):
            return self._path_function(func, body, depth)
        log.debug("configuration function $%s() is not supported; left as text", func)
        return None

    def _path_function(self, func: str, body: str, depth: int) -> str:
        parts = body.split(",")
        path = self._argument(parts[0], depth)
        directory, base = os.path.split(path)
        directory = directory + "/" if directory else ""
        if func == "BASENAME":
            if len(parts) > 1 and base.endswith(parts[1].strip()):
                base = base[: -len(parts[1].strip())]
            return base
        if func == "DIRNAME":
            return directory
        letters = func[1:]
        name, dot, ext = base.rpartition(".")
        if not dot:
            name, ext = base, ""
        else:
            ext = "." + ext
        if "q" in letters:
            return f'"{path}"'
        if "d" in letters:
            return os.path.basename(directory.rstrip("/")) + "/" if directory else ""
        if "p" in letters:
            return directory
        result = ""
        if "n" in letters:
            result += name
        if "x" in letters:
            result += ext
        return result or path

    # -- parsing ----------------------------------------------------------------------------------

    def _read_source(self, source: str, *, required: bool) -> bool:
        """Read one file or ``cmd |`` source; ``False`` if unreadable and not required."""
        if source.rstrip().endswith("|"):
            command = source.rstrip()[:-1]
            try:
                output = subprocess.run(
                    command, shell=True, check=True, capture_output=True, text=True, timeout=60
                ).stdout
            except (OSError, subprocess.SubprocessError) as exc:
                raise ConfigError(f"configuration command {command!r} failed: {exc}") from None
            self.sources.append(source)
            self.parse_text(output, source)
            return True
        try:
            text = Path(source).read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            if required:
                raise ConfigError(f"Can't read config source {source}: {exc.strerror}") from None
            return False
        self.sources.append(source)
        self.parse_text(text, source)
        return True

    def _local_dir_entries(self, directory: str) -> list[str]:
        exclude = re.compile(self.get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP") or DEFAULT_EXCLUDE_REGEXP)
        try:
            names = os.listdir(directory)
        except OSError:
            return []
        paths = [
            os.path.join(directory, n)
            for n in names
            if not exclude.search(n) and not os.path.isdir(os.path.join(directory, n))
        ]
        return sorted(paths, key=lambda p: p.encode("utf-8", "surrogateescape"))

    def _read_local_dirs(self) -> None:
        for directory in _split_list(self.get("LOCAL_CONFIG_DIR")):
            for path in self._local_dir_entries(directory):
                self._read_source(path, required=True)

    def _read_local_sources(self) -> None:
        """``LOCAL_CONFIG_DIR``, ``LOCAL_CONFIG_FILE`` and the re-scans of spec 06 §1.2."""
        dirs_before = self.get("LOCAL_CONFIG_DIR")
        self._read_local_dirs()
        require = self.get_bool("REQUIRE_LOCAL_CONFIG_FILE", True)
        done: set[str] = set()
        while True:
            value = self.get("LOCAL_CONFIG_FILE")
            if not value:
                break
            entries = [value] if "|" in value else _split_list(value)
            pending = [e for e in entries if e not in done]
            if not pending:
                break
            entry = pending[0]
            done.add(entry)
            if not self._read_source(entry, required=require):
                log.debug("skipping unreadable LOCAL_CONFIG_FILE entry %s", entry)
        if self.get("LOCAL_CONFIG_DIR") != dirs_before:
            self._read_local_dirs()

    def _read_user_config(self) -> None:
        name = self.get("USER_CONFIG_FILE")
        if not name:
            return
        if not os.path.isabs(name):
            home = _home_of()
            if home is None:
                return
            name = os.path.join(home, ".condor", name)
        if os.access(name, os.R_OK):
            self._read_source(name, required=False)

    def _apply_environment(self, env: Mapping[str, str]) -> None:
        """``_condor_NAME=value`` overrides, applied like assignments (spec 06 §1.7)."""
        for var, value in env.items():
            if var[:8].lower() == "_condor_" and _NAME_RE.fullmatch(var[8:]):
                self._assign(var[8:], value.lstrip(), "=")

    def parse_text(self, text: str, name: str = "<string>", *, _depth: int = 0) -> None:
        """Parse configuration text into this object (spec 06 §1.3-§1.5)."""
        lines = list(self._logical_lines(text))
        self._run_lines(lines, name, _depth, args=None)

    @staticmethod
    def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
        """Logical lines with the continuation and comment rules of spec 06 §1.3."""
        physical = text.split("\n")
        i = 0
        while i < len(physical):
            number = i + 1
            line = physical[i].strip()
            i += 1
            if not line or line.startswith("#"):
                continue
            while line.endswith("\\") and i < len(physical):
                line = line[:-1]
                nxt = physical[i].strip()
                i += 1
                if nxt.startswith("#"):
                    # Reference quirk: a comment inside a continuation contributes its last
                    # character; a trailing backslash keeps the continuation going.
                    line += nxt[-1]
                    if nxt.endswith("\\"):
                        continue
                    break
                line += nxt
            else:
                if line.endswith("\\"):
                    line = line[:-1]
            multi = re.fullmatch(r"([^\s=:+@]+)\s*@=\s*(\S+)", line)
            if multi:
                tag = "@" + multi.group(2)
                body: list[str] = []
                while True:
                    if i >= len(physical):
                        raise ConfigError(
                            f"end of file before {tag} (multi-line value of line {number})"
                        )
                    item = physical[i].strip()
                    i += 1
                    if item == tag:
                        break
                    if item and not item.startswith("#"):
                        body.append(item)
                line = f"{multi.group(1)} @= " + "\n".join(body)
            yield number, line

    def _run_lines(
        self,
        lines: list[tuple[int, str]],
        name: str,
        depth: int,
        args: list[str] | None,
    ) -> None:
        # Each conditional frame: [active, any_branch_taken, parent_active]
        stack: list[list[bool]] = []
        for number, line in lines:
            where = _Source(name, number)
            active = all(frame[0] for frame in stack)
            keyword, _, rest = line.partition(" ")
            lowered = keyword.lower()
            if lowered in {"if", "elif", "else", "endif"} and (
                lowered in {"else", "endif"} and not rest.strip() or lowered in {"if", "elif"}
            ):
                if lowered == "if":
                    if len(stack) >= _MAX_IF_DEPTH:
                        raise self._error(where, "if nesting too deep")
                    value = self._condition(rest, where, args) if active else False
                    stack.append([value, value, active])
                elif lowered == "elif":
                    if not stack:
                        raise self._error(where, "elif without if")
                    frame = stack[-1]
                    if frame[1] or not frame[2]:
                        frame[0] = False
                    else:
                        frame[0] = self._condition(rest, where, args)
                        frame[1] = frame[0]
                elif lowered == "else":
                    if not stack:
                        raise self._error(where, "else without if")
                    frame = stack[-1]
                    frame[0] = frame[2] and not frame[1]
                    frame[1] = True
                else:
                    if not stack:
                        raise self._error(where, "endif without if")
                    stack.pop()
                continue
            if not active:
                continue
            if stack and line.startswith(":"):
                line = line[1:]
                if line[:1].isspace():
                    raise self._error(where, "Illegal Identifier")
            self._statement(line, where, depth, args)
        if stack:
            raise ConfigError(f'Config source "{name}": if without matching endif')

    def _error(self, where: _Source, message: str) -> ConfigError:
        return ConfigError(
            f"Configuration Error Line {where.line} while reading config source {where.name}: "
            f"{message}"
        )

    def _condition(self, text: str, where: _Source, args: list[str] | None) -> bool:
        """The simple ``if`` conditions of spec 06 §1.5."""
        cond = text.strip()
        if args is not None:
            cond = self._substitute_args(cond, args)
        negate = False
        if cond.startswith("!"):
            negate = True
            cond = cond[1:].strip()
        result = self._simple_condition(cond, where)
        return result != negate

    def _simple_condition(self, cond: str, where: _Source) -> bool:
        lowered = cond.lower()
        if lowered in _TRUE_WORDS:
            return True
        if lowered in _FALSE_WORDS:
            return False
        if re.fullmatch(r"[-+]?\d+(\.\d*)?", cond):
            return float(cond) != 0
        m = re.fullmatch(r"defined\s+(.*)", cond, re.IGNORECASE)
        if m:
            target = m.group(1).strip()
            use = re.fullmatch(r"use\s+([A-Za-z_]+)(?:\s*:\s*(\S+))?", target, re.IGNORECASE)
            if use:
                category = METAKNOBS.get(use.group(1).upper())
                if category is None:
                    return use.group(1).upper() in _OTHER_METAKNOB_CATEGORIES and not use.group(2)
                return use.group(2) is None or use.group(2).upper() in category
            return self.get(self.expand(target)) is not None
        m = re.fullmatch(r"version\s*(==|>=|<=|!=|>|<)\s*(\S+)", cond, re.IGNORECASE)
        if m:
            return self._version_condition(m.group(1), m.group(2), where)
        if "$" in cond and re.fullmatch(r"(\$\([^()]*\)\s*)+", cond):
            expanded = self.expand(cond).strip()
            if not expanded:
                return False
            if "$" not in expanded and (
                expanded.lower() in _TRUE_WORDS | _FALSE_WORDS
                or re.fullmatch(r"[-+]?\d+(\.\d*)?", expanded)
                or expanded.lower().startswith(("defined", "version"))
            ):
                return self._simple_condition(expanded, where)
            raise self._error(
                where,
                f"{cond} is not a valid if condition because expression is not a conditional",
            )
        raise self._error(
            where,
            f"{cond} is not a valid if condition because complex conditionals are not supported",
        )

    def _version_condition(self, op: str, literal: str, where: _Source) -> bool:
        try:
            return version_condition(op, literal)
        except ValueError as exc:
            raise self._error(where, str(exc)) from None

    @staticmethod
    def _substitute_args(text: str, args: list[str]) -> str:
        """Metaknob argument references ``$(N)``, ``$(N:default)``, ``$(N+)``, ``$(N?)``."""

        def repl(m: re.Match[str]) -> str:
            index = int(m.group(1))
            modifier = m.group(2) or ""
            if modifier == "+":
                return ",".join(args[index - 1 :]) if index >= 1 else ",".join(args)
            value = args[index - 1] if 1 <= index <= len(args) else ""
            if index == 0:
                value = ",".join(args)
            if modifier == "?":
                return "1" if value else "0"
            if modifier.startswith(":") and not value:
                return modifier[1:]
            return value

        return re.sub(r"\$\((\d+)(\+|\?|:[^)]*)?\)", repl, text)

    _OPERATOR_RE = re.compile(
        r"^(?P<name>[^\s=:+@]*)\s*(?P<op>=|:|\+=|\+(?P<sep>[,;|&*])(?P=sep)?=|@=)\s*"
        r"(?P<value>.*)$",
        re.DOTALL,
    )

    def _statement(self, line: str, where: _Source, depth: int, args: list[str] | None) -> None:
        if args is not None:
            line = self._substitute_args(line, args)
        bare = line[1:] if line.lower().startswith(("@include", "@use")) else line
        keyword_m = re.match(r"([A-Za-z]+)(?=[\s:]|$)(.*)$", bare, re.DOTALL)
        if keyword_m and keyword_m.group(1).lower() in {"include", "use", "error", "warning"}:
            rest = keyword_m.group(2)
            if not re.match(r"\s*(=|\+)", rest):
                self._special(keyword_m.group(1).lower(), rest, where, depth, args)
                return
        if line.startswith("[") and not re.search(r"\s", line) and not re.search(r"[=:]", line):
            return  # INI-style section header
        m = self._OPERATOR_RE.match(line)
        if not m or not m.group("name"):
            raise self._error(where, f"syntax error in {line[:60]!r}")
        name = self.expand(m.group("name"))
        if not _NAME_RE.fullmatch(name):
            raise self._error(where, f"Illegal Identifier {name!r}")
        op = m.group("op")
        value = m.group("value").strip()
        if op == ":":
            self.warnings.append(
                f"Config source \"{where.name}\", Line {where.line}: obsolete use of ':' for "
                f"parameter assignment of {name}"
            )
            op = "="
        self._assign(name, value, op)

    def _assign(self, name: str, value: str, op: str) -> None:
        key = name.upper()
        current = self._raw_lookup(key, include_defaults=True)
        # Self references expand at once to the current raw value (spec 06 §1.4).
        if re.search(rf"\$\({re.escape(name)}(:[^)]*)?\)", value, re.IGNORECASE):
            value = re.sub(
                rf"\$\({re.escape(name)}(?::([^)]*))?\)",
                lambda m: current if current else (m.group(1) or ""),
                value,
                flags=re.IGNORECASE,
            )
        if op == "+=":
            value = f"{current} {value}" if current else value
        elif op.startswith("+") and op != "+=":
            sep = op[1:-1]
            if current:
                value = f"{current} {sep} {value}" if len(sep) == 2 else f"{current}{sep}{value}"
        self._table[key] = value

    def _special(
        self, keyword: str, rest: str, where: _Source, depth: int, args: list[str] | None
    ) -> None:
        text = rest.strip()
        if keyword in {"error", "warning"}:
            head, _, message = text.partition(":")
            message = self.expand(message.strip() if _ else head.strip())
            if keyword == "error":
                raise ConfigError(
                    f'Config source Error "{where.name}", Line {where.line}: {message}'
                )
            warning = f'Config source Warning "{where.name}", Line {where.line}: {message}'
            log.warning("%s", warning)
            self.warnings.append(warning)
            return
        if keyword == "include":
            options, sep, target = text.partition(":")
            if not sep:
                raise self._error(where, "include needs ': <file>'")
            flags = options.lower().split()
            target = self.expand(target.strip())
            if depth >= _MAX_INCLUDE_DEPTH:
                raise self._error(where, "includes nested too deeply")
            if "command" in flags or target.endswith("|"):
                raise self._error(where, "include of a command's output is not supported by cedar")
            try:
                content = Path(target).read_text(encoding="utf-8", errors="surrogateescape")
            except OSError as exc:
                if "ifexist" in flags:
                    return
                raise self._error(where, f"can't open file {target}: {exc.strerror}") from None
            self.sources.append(target)
            self._run_lines(list(self._logical_lines(content)), target, depth + 1, args=None)
            return
        # use CATEGORY : NAME [NAME ...]
        category, sep, names = text.partition(":")
        if not sep:
            raise self._error(where, "use needs 'CATEGORY : NAME'")
        category = category.strip().upper()
        table = METAKNOBS.get(category)
        for item in re.findall(r"[A-Za-z0-9_.]+(?:\([^)]*\))?", self.expand(names)):
            knob, _, arglist = item.partition("(")
            knob_args = [a.strip() for a in arglist.rstrip(")").split(",")] if arglist else []
            knob_args = [a for a in knob_args if a]
            if table is None:
                log.debug("ignoring metaknob 'use %s : %s' (not used by clients)", category, knob)
                continue
            body = table.get(knob.upper())
            if body is None:
                raise self._error(where, f"unknown metaknob {category}:{knob}")
            source = f"use {category}:{knob}"
            self._run_lines(list(self._logical_lines(body)), source, depth + 1, knob_args)

    # -- security and credential knobs (spec 06 §1.10, §2) ----------------------------------------

    def security_level(self, kind: str, context: str = "CLIENT") -> str:
        """``SEC_<ctx>_<kind>`` -> ``SEC_DEFAULT_<kind>`` -> built-in, as REQUIRED/.../NEVER."""
        kind = kind.upper()
        for knob in (f"SEC_{context.upper()}_{kind}", f"SEC_DEFAULT_{kind}"):
            value = self.get(knob)
            if value is not None:
                return interpret_level(value, knob)
        return SECURITY_LEVEL_DEFAULTS[kind]

    def authentication_methods(self, context: str = "CLIENT") -> list[str]:
        """The method list for a context, in wire spelling (``TOKEN``, ``SCITOKENS``)."""
        for knob in (
            f"SEC_{context.upper()}_AUTHENTICATION_METHODS",
            "SEC_DEFAULT_AUTHENTICATION_METHODS",
        ):
            value = self.get(knob)
            if value is not None:
                return normalize_methods(_split_list(value))
        return normalize_methods(_split_list(DEFAULTS["SEC_DEFAULT_AUTHENTICATION_METHODS"]))

    def crypto_methods(self, context: str = "CLIENT") -> list[str]:
        """``SEC_<ctx>_CRYPTO_METHODS`` -> ``SEC_DEFAULT_CRYPTO_METHODS`` -> built-in."""
        for knob in (f"SEC_{context.upper()}_CRYPTO_METHODS", "SEC_DEFAULT_CRYPTO_METHODS"):
            value = self.get(knob)
            if value is not None:
                return [m.upper() for m in _split_list(value)]
        return list(DEFAULT_CRYPTO_METHODS)

    def authentication_timeout(self, context: str = "CLIENT") -> float:
        """Authentication timeout in seconds, scaled by the tool timeout multiplier."""
        value = self.get_float(f"SEC_{context.upper()}_AUTHENTICATION_TIMEOUT")
        if value is None:
            value = self.get_float("SEC_DEFAULT_AUTHENTICATION_TIMEOUT", 20.0)
        return self.scale_timeout(value if value is not None else 20.0)

    def timeout_multiplier(self) -> float:
        """``<SUBSYS>_TIMEOUT_MULTIPLIER`` then ``TIMEOUT_MULTIPLIER``; 0 = no scaling."""
        for knob in (f"{self.subsystem}_TIMEOUT_MULTIPLIER", "TIMEOUT_MULTIPLIER"):
            value = self.get_float(knob)
            if value is not None:
                return value
        return 0.0

    def scale_timeout(self, seconds: float) -> float:
        """A socket timeout multiplied by the timeout multiplier when that is > 0 (spec 06 §3.4)."""
        factor = self.timeout_multiplier()
        return seconds * factor if factor > 0 else seconds

    def query_timeout(self) -> float:
        """Collector query timeout (``QUERY_TIMEOUT``, 60 s)."""
        return self.scale_timeout(self.get_float("QUERY_TIMEOUT", 60.0) or 60.0)

    def schedd_query_timeout(self) -> float:
        """Schedd query timeout (``Q_QUERY_TIMEOUT``, 20 s)."""
        return self.scale_timeout(self.get_float("Q_QUERY_TIMEOUT", 20.0) or 20.0)

    def trust_domain(self) -> str | None:
        """``TRUST_DOMAIN`` (default ``UID_DOMAIN``, default the host name)."""
        return self.get("TRUST_DOMAIN")

    def collector_hosts(self) -> list[str]:
        """``COLLECTOR_HOST`` (or ``COLLECTOR_IP_ADDR``, ``CM_IP_ADDR``) split into entries."""
        for knob in ("COLLECTOR_HOST", "COLLECTOR_IP_ADDR", "CM_IP_ADDR"):
            value = self.get(knob)
            if value:
                return _split_list(value)
        return []

    def collector_address(self) -> str:
        """The first collector as ``host:port`` or sinful, the default port filled in."""
        hosts = self.collector_hosts()
        if not hosts:
            raise ConfigError("COLLECTOR address or hostname not specified in config file")
        entry = hosts[0]
        if entry.startswith("<"):
            return entry
        port = self.get("COLLECTOR_PORT", "9618")
        if entry.startswith("["):
            return entry if "]:" in entry else f"{entry}:{port}"
        if ":" not in entry:
            return f"{entry}:{port}"
        return entry

    def can_switch_uids(self) -> bool:
        """Whether the process counts as one that switches uids; a Python library never does."""
        return False

    def token_directory(self) -> str | None:
        """Where the client looks for IDTOKENS (spec 06 §2.1), ``None`` if nowhere."""
        explicit = self.get("SEC_TOKEN_DIRECTORY")
        if explicit:
            return explicit
        if self.can_switch_uids():
            return self.get("SEC_TOKEN_SYSTEM_DIRECTORY")
        home = _home_of()
        if home is None:
            return self.get("SEC_TOKEN_SYSTEM_DIRECTORY")
        return os.path.join(home, ".condor", "tokens.d")

    def exclude_regexp(self) -> re.Pattern[str]:
        """``LOCAL_CONFIG_DIR_EXCLUDE_REGEXP`` compiled (used for config and token directories)."""
        return re.compile(self.get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP") or DEFAULT_EXCLUDE_REGEXP)

    def password_directory(self) -> str | None:
        """``SEC_PASSWORD_DIRECTORY`` (signing keys named by ``kid``)."""
        return self.get("SEC_PASSWORD_DIRECTORY")

    def pool_signing_key_file(self) -> str | None:
        """``SEC_TOKEN_POOL_SIGNING_KEY_FILE`` (default ``$(SEC_PASSWORD_DIRECTORY)/POOL``)."""
        return self.get("SEC_TOKEN_POOL_SIGNING_KEY_FILE")

    def scitoken_file(self) -> str | None:
        """``SCITOKENS_FILE``; when unset the bearer-token discovery of spec 06 §2.2 applies."""
        return self.get("SCITOKENS_FILE")

    def ssl_client_files(self) -> SslClientFiles:
        """The client-side SSL settings (spec 06 §2.3)."""
        cert = self.get("AUTH_SSL_CLIENT_CERTFILE")
        key = self.get("AUTH_SSL_CLIENT_KEYFILE")
        if self.get_bool("AUTH_SSL_USE_CLIENT_PROXY_ENV_VAR") and self.environ.get(
            "X509_USER_PROXY"
        ):
            cert = key = self.environ["X509_USER_PROXY"]
        return SslClientFiles(
            cafile=self.get("AUTH_SSL_CLIENT_CAFILE"),
            cadir=self.get("AUTH_SSL_CLIENT_CADIR"),
            certfile=cert,
            keyfile=key,
            use_default_cas=self.get_bool("AUTH_SSL_CLIENT_USE_DEFAULT_CAS", True),
            require_client_certificate=self.get_bool("AUTH_SSL_REQUIRE_CLIENT_CERTIFICATE"),
            skip_host_check=self.get_bool("SSL_SKIP_HOST_CHECK"),
        )

    def ssl_server_files(self) -> SslServerFiles:
        """The server-side SSL settings (spec 04 §7.3)."""
        cafiles = self.get_list("AUTH_SSL_SERVER_CAFILE")
        readable = [f for f in cafiles if os.access(f, os.R_OK)]
        return SslServerFiles(
            certfiles=self.get_list("AUTH_SSL_SERVER_CERTFILE"),
            keyfiles=self.get_list("AUTH_SSL_SERVER_KEYFILE"),
            cafile=readable[-1] if readable else None,
            cadir=self.get("AUTH_SSL_SERVER_CADIR"),
            use_default_cas=self.get_bool("AUTH_SSL_SERVER_USE_DEFAULT_CAS", True),
            require_client_certificate=self.get_bool("AUTH_SSL_REQUIRE_CLIENT_CERTIFICATE"),
        )

    def __repr__(self) -> str:
        return (
            f"<Config subsystem={self.subsystem} sources={len(self.sources)} "
            f"names={len(self._table)} explicit={len(self._explicit)}>"
        )


@dataclass(frozen=True)
class SslClientFiles:
    """Trust anchors and the optional certificate of an SSL client."""

    cafile: str | None = None
    cadir: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    use_default_cas: bool = True
    require_client_certificate: bool = False
    skip_host_check: bool = False


@dataclass(frozen=True)
class SslServerFiles:
    """Certificates, keys and trust anchors of an SSL server."""

    certfiles: list[str]
    keyfiles: list[str]
    cafile: str | None = None
    cadir: str | None = None
    use_default_cas: bool = True
    require_client_certificate: bool = False


_default: Config | None = None


def default_config() -> Config:
    """The process-wide configuration, read once on first use (like the reference's ``param``)."""
    global _default
    if _default is None:
        try:
            _default = Config.load()
        except ConfigError as exc:
            log.warning("%s; continuing with defaults only", exc)
            _default = Config()
    return _default


def version_condition(op: str, literal: str) -> bool:
    """``if version <op> X.Y[.Z]`` of the config and submit languages (spec 06 §1.5, §4.1).

    Compares with :data:`EMULATED_VERSION`; a missing ``.Z`` is taken from it.  An invalid
    literal (not numbers, fewer than two or more than three parts, major < 6) raises
    ``ValueError("the version literal is invalid")``.
    """
    try:
        numbers = [int(part) for part in literal.split(".")]
    except ValueError:
        raise ValueError("the version literal is invalid") from None
    if not 2 <= len(numbers) <= 3 or numbers[0] < 6:
        raise ValueError("the version literal is invalid")
    if len(numbers) == 2:
        numbers.append(EMULATED_VERSION[2])
    mine, theirs = EMULATED_VERSION, tuple(numbers)
    return {
        "==": mine == theirs,
        "!=": mine != theirs,
        ">=": mine >= theirs,
        "<=": mine <= theirs,
        ">": mine > theirs,
        "<": mine < theirs,
    }[op]


def set_default_config(config: Config | None) -> None:
    """Replace the process-wide configuration (``None`` = read it again on next use)."""
    global _default
    _default = config


__all__ = [
    "DEFAULTS",
    "Config",
    "SslClientFiles",
    "SslServerFiles",
    "default_config",
    "interpret_level",
    "normalize_methods",
    "set_default_config",
]
