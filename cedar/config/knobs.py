"""Looking knobs up: raw table, subsystem prefixes, expansion, typed and security accessors.

:class:`Knobs` is the lookup half of :class:`cedar.config.Config` (spec 06 §1.6, §1.9, §1.10,
§2): values are stored raw and expanded on lookup through the shared
:class:`~cedar.config.macros.MacroExpander`, so a later definition changes every value that
refers to it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping

from cedar.config.defaults import (
    CANONICAL_NAMES,
    DEFAULT_CRYPTO_METHODS,
    DEFAULT_EXCLUDE_REGEXP,
    DEFAULTS,
    METHOD_SPELLINGS,
    SECURITY_LEVEL_DEFAULTS,
)
from cedar.config.discovery import home_of
from cedar.config.macros import MacroExpander, split_list
from cedar.config.typed import KnobValue, typed_value
from cedar.errors import ConfigError
from cedar.lazy import LazyLogger
from cedar.record import Record

log = LazyLogger("cedar.config")

TRUE_WORDS = {"true", "yes", "t"}
FALSE_WORDS = {"false", "no", "f"}


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
        wire = METHOD_SPELLINGS.get(name.upper())
        if wire is None:
            log.debug("dropping authentication method %r: not supported", name)
            continue
        if wire not in result:
            result.append(wire)
    return result


class Knobs:
    """Raw definitions and their lookup with subsystem prefixes, expansion and typed accessors.

    Lookup order for ``get(NAME)``: explicit :meth:`set` values, then ``<LOCALNAME>.NAME``,
    ``<SUBSYS>.NAME``, ``NAME`` -- each first in the configuration read, then in the compiled-in
    defaults (spec 06 §1.6).  An empty value counts as unset.
    """

    subsystem: str
    local_name: str | None
    _table: dict[str, str]
    _explicit: dict[str, str]
    _defaults: dict[str, str]
    _environ: dict[str, str] | None = None
    #: The spelling a name was first defined with (upper-cased name -> name).
    spellings: dict[str, str]

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
        if lowered in TRUE_WORDS or lowered == "1":
            return True
        if lowered in FALSE_WORDS or lowered == "0":
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
        return split_list(value) if value is not None else list(default)

    def names(self) -> Iterator[str]:
        """Every name defined by a source or explicitly (upper-cased)."""
        yield from dict.fromkeys([*self._table, *self._explicit])

    def typed(self, name: str) -> KnobValue | None:
        """The value in the knob's type (int, bool, float or str) as the reference's ``param``
        gives it; ``None`` when unset or empty (see :mod:`cedar.config.typed`)."""
        value = self.get(name)
        if value is None:
            return None
        raw_default = self._defaults.get(name.upper())
        default = None
        if raw_default:
            try:
                default = self.expand(raw_default)
            except ConfigError:
                default = None
        return typed_value(name, value, default)

    def param_names(self) -> list[str]:
        """Every name the reference's ``param`` lists: compiled-in defaults and definitions,
        non-empty after expansion, in the table's spelling, in case-insensitive order; a name
        prefixed with this subsystem (or local name) is listed bare, as its lookup finds it."""
        own = {p for p in (self.local_name, self.subsystem) if p}
        shown: dict[str, str] = {}
        for key in dict.fromkeys([*self._defaults, *self._table, *self._explicit]):
            prefix, dot, bare = key.rpartition(".")
            if dot and prefix in own:
                key = bare
            if key in shown:
                continue
            try:
                present = self.get(key) is not None
            except ConfigError:
                present = False
            if present:
                shown[key] = self.spellings.get(key) or CANONICAL_NAMES.get(key) or key
                if dot and key not in CANONICAL_NAMES:
                    full = f"{prefix}.{key}"
                    name = self.spellings.get(full) or CANONICAL_NAMES.get(full) or full
                    shown[key] = name.rpartition(".")[2]
        return sorted(shown.values(), key=str.lower)

    # -- expansion --------------------------------------------------------------------------------

    # -- expansion --------------------------------------------------------------------------------

    def expand(self, text: str) -> str:
        """Expand ``$(...)`` references, ``$ENV()`` and friends; ``$$(...)`` passes through."""
        return self._expander().expand(text)

    def _expander(self) -> MacroExpander:
        return MacroExpander(self._raw_lookup, environ=self.environ, error=ConfigError)

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
                return normalize_methods(split_list(value))
        return normalize_methods(split_list(DEFAULTS["SEC_DEFAULT_AUTHENTICATION_METHODS"]))

    def crypto_methods(self, context: str = "CLIENT") -> list[str]:
        """``SEC_<ctx>_CRYPTO_METHODS`` -> ``SEC_DEFAULT_CRYPTO_METHODS`` -> built-in."""
        for knob in (f"SEC_{context.upper()}_CRYPTO_METHODS", "SEC_DEFAULT_CRYPTO_METHODS"):
            value = self.get(knob)
            if value is not None:
                return [m.upper() for m in split_list(value)]
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
                return split_list(value)
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
        home = home_of()
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


class SslClientFiles(Record, frozen=True):
    """Trust anchors and the optional certificate of an SSL client."""

    __slots__ = (
        "cafile",
        "cadir",
        "certfile",
        "keyfile",
        "use_default_cas",
        "require_client_certificate",
        "skip_host_check",
    )
    cafile: str | None
    cadir: str | None
    certfile: str | None
    keyfile: str | None
    use_default_cas: bool
    require_client_certificate: bool
    skip_host_check: bool

    def __init__(
        self,
        cafile: str | None = None,
        cadir: str | None = None,
        certfile: str | None = None,
        keyfile: str | None = None,
        use_default_cas: bool = True,
        require_client_certificate: bool = False,
        skip_host_check: bool = False,
    ) -> None:
        self._set(
            cafile,
            cadir,
            certfile,
            keyfile,
            use_default_cas,
            require_client_certificate,
            skip_host_check,
        )


class SslServerFiles(Record, frozen=True):
    """Certificates, keys and trust anchors of an SSL server."""

    __slots__ = (
        "certfiles",
        "keyfiles",
        "cafile",
        "cadir",
        "use_default_cas",
        "require_client_certificate",
    )
    certfiles: list[str]
    keyfiles: list[str]
    cafile: str | None
    cadir: str | None
    use_default_cas: bool
    require_client_certificate: bool

    def __init__(
        self,
        certfiles: list[str],
        keyfiles: list[str],
        cafile: str | None = None,
        cadir: str | None = None,
        use_default_cas: bool = True,
        require_client_certificate: bool = False,
    ) -> None:
        self._set(certfiles, keyfiles, cafile, cadir, use_default_cas, require_client_certificate)


__all__ = ["Knobs", "SslClientFiles", "SslServerFiles", "interpret_level", "normalize_methods"]
