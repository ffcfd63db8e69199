"""The ``$CondorVersion: ...$`` string: what cedar sends and how a peer's is read (spec 03 §9)."""

from __future__ import annotations

import re

#: What cedar puts in ``RemoteVersion``: a plausible HTCondor-compatible version >= 9.9.0, so
#: servers answer resumptions with a response ad; the BuildID names the implementation.
CEDAR_VERSION = "25.0.0"
CEDAR_VERSION_STRING = f"$CondorVersion: {CEDAR_VERSION} 2025-01-01 BuildID: htc-cedar $"
#: The ``CondorPlatform`` cedar's daemons publish in their ads.
CEDAR_PLATFORM_STRING = "$CondorPlatform: X86_64-Python $"

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
