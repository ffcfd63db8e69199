"""The ``$CondorVersion: ...$`` string: what cedar sends and how a peer's is read (spec 03 §9)."""

from __future__ import annotations

import re

from cedar.version import PLATFORM_STRING, VERSION_STRING, VERSION_TEXT

#: What cedar puts in ``RemoteVersion`` (the one version string of :mod:`cedar.version`).
CEDAR_VERSION = VERSION_TEXT
CEDAR_VERSION_STRING = VERSION_STRING
#: The ``CondorPlatform`` cedar's daemons publish in their ads.
CEDAR_PLATFORM_STRING = PLATFORM_STRING

_VERSION = re.compile(r"\$CondorVersion: (\d+)\.(\d+)\.(\d+) ")


def parse_version(text: object) -> tuple[int, int, int] | None:
    """``(major, minor, sub)`` of a version string, ``None`` if it is not a valid one."""
    if not isinstance(text, str):
        return None
    match = _VERSION.match(text)
    if match is None:
        return None
    major, minor, sub = (int(part) for part in match.groups())
    if major < 6 or minor > 99 or sub > 99:
        return None
    return major, minor, sub


def built_since(text: object, major: int, minor: int, sub: int) -> bool:
    """Whether a peer version string is at least ``major.minor.sub`` (unknown -> False)."""
    version = parse_version(text)
    return version is not None and version >= (major, minor, sub)
