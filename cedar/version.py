"""The two versions, each in one place (bottom layer: imports nothing from cedar).

``__version__`` is htc-cedar's own release: pyproject.toml reads it from here, and
``cedar.__version__``, the HTTP API and the MCP server show it.

The rest is the HTCondor version cedar presents: what it sends in ``RemoteVersion`` during
handshakes, what its daemons publish, what ``if version ...`` compares against in configuration
and submit files, and what job ads carry.  A plausible HTCondor-compatible version >= 9.9.0, so
servers answer resumptions with a response ad; the BuildID names the implementation.
"""

from __future__ import annotations

#: htc-cedar's own version (the package's; pyproject.toml's ``[tool.hatch.version]`` reads it).
__version__ = "0.1.0"

#: ``(major, minor, sub)`` of the HTCondor version whose behaviour cedar emulates.
VERSION = (25, 14, 1)
VERSION_TEXT = ".".join(str(part) for part in VERSION)
#: The ``$CondorVersion: ...$`` string (spec 03 §9).
VERSION_STRING = f"$CondorVersion: {VERSION_TEXT} 2025-01-01 BuildID: htc-cedar $"
#: The ``$CondorPlatform: ...$`` string of cedar's daemons and submitted jobs.
PLATFORM_STRING = "$CondorPlatform: X86_64-Python $"

__all__ = ["PLATFORM_STRING", "VERSION", "VERSION_STRING", "VERSION_TEXT", "__version__"]
