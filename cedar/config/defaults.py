"""Compiled-in defaults of the configuration reader: knob defaults, metaknobs, method spellings.

Pure data (spec 06 §1.5, §1.9, §1.10); the reader, the knob accessors and the tools read them.
"""

from __future__ import annotations

from cedar.config.knob_table import knob_table
from cedar.version import VERSION, VERSION_TEXT

#: The HTCondor version whose configuration behaviour is emulated (``if version ...``).
EMULATED_VERSION = VERSION

#: Files searched when ``CONDOR_CONFIG`` is unset (spec 06 §1.1); ``~condor`` is added at run time.
DEFAULT_ROOT_FILES = ("/etc/condor/condor_config", "/usr/local/etc/condor_config")

#: Default ``LOCAL_CONFIG_DIR_EXCLUDE_REGEXP`` (also used to filter token directories).
DEFAULT_EXCLUDE_REGEXP = (
    r"^((\..*)|(.*\.pl)|(.*\.py)|(.*\.sh)|(.*~)|(#.*)|(.*\.rpmsave)|(.*\.rpmnew)"
    r"|(.*\.dpkg-old)|(.*\.dpkg-dist)|(.*\.cfsaved))$"
)

_TABLE = knob_table()
#: Compiled-in defaults of every knob the reference knows (spec 06 §1.9), from the generated
#: :mod:`~cedar.config.knob_table` (``knob_table.json``).  Raw, expanded on lookup.
#: ``CONDOR_VERSION`` is the version cedar presents (:mod:`cedar.version`), not the release's
#: the table was taken from.
DEFAULTS: dict[str, str] = {
    **{name: raw for name, (raw, _) in _TABLE.knobs.items() if raw is not None},
    "CONDOR_VERSION": VERSION_TEXT,
}
#: The canonical spelling of every knob name of the table (upper-cased name -> name).
CANONICAL_NAMES: dict[str, str] = {name.upper(): name for name in _TABLE.knobs}
#: The type of every knob of the table ('str', 'int', 'bool', 'float'), by upper-cased name.
KNOB_TYPES: dict[str, str] = {name.upper(): kind for name, (_, kind) in _TABLE.knobs.items()}

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

#: Metaknob templates by category and upper-cased option (spec 06 §1.5), from the generated
#: :mod:`~cedar.config.knob_table` (``condor_config_val use CATEGORY:OPTION``).
METAKNOBS: dict[str, dict[str, str]] = {
    category: {option.upper(): body for option, body in options.items()}
    for category, options in _TABLE.metaknobs.items()
}
#: Categories read without a template table (none left: the table has every category).
OTHER_METAKNOB_CATEGORIES: set[str] = set()

__all__ = [
    "CANONICAL_NAMES",
    "DEFAULTS",
    "DEFAULT_CRYPTO_METHODS",
    "DEFAULT_EXCLUDE_REGEXP",
    "DEFAULT_ROOT_FILES",
    "EMULATED_VERSION",
    "KNOB_TYPES",
    "METAKNOBS",
    "SECURITY_LEVEL_DEFAULTS",
]
