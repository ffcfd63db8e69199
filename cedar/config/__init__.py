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

The package: :mod:`~cedar.config.defaults` (compiled-in data), :mod:`~cedar.config.discovery`
(detected macros, the root file), :mod:`~cedar.config.macros` (the line reader and ``$(...)``
expander shared with the submit language), :mod:`~cedar.config.parser` (reading sources),
:mod:`~cedar.config.knobs` (lookup and typed accessors).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from cedar.config.defaults import DEFAULTS, EMULATED_VERSION
from cedar.config.discovery import detected_macros, find_root_file, interface_address
from cedar.config.knobs import (
    FALSE_WORDS,
    SslClientFiles,
    SslServerFiles,
    interpret_level,
    normalize_methods,
)
from cedar.config.parser import ConfigParser, version_condition
from cedar.errors import ConfigError
from cedar.lazy import LazyLogger

log = LazyLogger(__name__)


class Config(ConfigParser):
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
        self.spellings: dict[str, str] = {}
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
        root, only_env = find_root_file(condor_config)
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
        config._apply_network_interface()
        return config

    def set_builtin(self, name: str, value: str) -> None:
        """Replace a detected macro or compiled-in value unless a source defined the name, e.g.
        the Python bindings' ``CondorIsAdmin = false`` and ``ENABLE_CLASSAD_CACHING = false``."""
        key = name.upper()
        current = self._table.get(key)
        if current is None or current == self._detected.get(name):
            self._table[key] = value
        self._detected[name] = value

    def _apply_network_interface(self) -> None:
        """``NETWORK_INTERFACE`` chooses the addresses the detected macros report, as the
        daemons do: a literal address, or an interface name or address pattern."""
        for family in ("IPV4", "IPV6"):
            enabled = self.get(f"ENABLE_{family}") or "auto"
            if enabled.strip().lower() in FALSE_WORDS | {"0"}:
                self._table[f"{family}_ADDRESS"] = ""
        choice = self.get("NETWORK_INTERFACE")
        if choice is None or choice.strip() in ("", "*"):
            return
        ipv4, ipv6 = interface_address(choice.strip())
        if ipv4:
            self._table["IPV4_ADDRESS"] = self._table["IP_ADDRESS"] = ipv4
        if ipv6:
            self._table["IPV6_ADDRESS"] = ipv6
            if not ipv4:
                self._table["IP_ADDRESS"] = ipv6

    @classmethod
    def from_text(
        cls, text: str, *, name: str = "<string>", subsystem: str = "TOOL", detect: bool = True
    ) -> Config:
        """A configuration made of one configuration text (for tests and embedding)."""
        config = cls(subsystem=subsystem, detect=detect)
        config.parse_text(text, name)
        return config

    def __repr__(self) -> str:
        return (
            f"<Config subsystem={self.subsystem} sources={len(self.sources)} "
            f"names={len(self._table)} explicit={len(self._explicit)}>"
        )


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


def set_default_config(config: Config | None) -> None:
    """Replace the process-wide configuration (``None`` = read it again on next use)."""
    global _default
    _default = config


__all__ = [
    "DEFAULTS",
    "EMULATED_VERSION",
    "Config",
    "SslClientFiles",
    "SslServerFiles",
    "default_config",
    "detected_macros",
    "interpret_level",
    "normalize_methods",
    "set_default_config",
    "version_condition",
]
