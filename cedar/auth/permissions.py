"""Permission levels, the security commands commands, and what each level implies (spec 03 §7)."""

from __future__ import annotations

from cedar.errors import InvalidArgument
from cedar.numbers import Command

#: Command numbers the security layer itself knows (spec 03 §10).
DC_AUTHENTICATE = Command.DC_AUTHENTICATE
DC_SEC_QUERY = Command.DC_SEC_QUERY
DC_NOP = Command.DC_NOP
SHARED_PORT_CONNECT = Command.SHARED_PORT_CONNECT

#: Level name -> the DC_NOP command that tests it (what ``condor_ping LEVEL`` sends).
NOP_FOR_LEVEL: dict[str, int] = {
    "ALLOW": Command.DC_NOP,
    "READ": Command.DC_NOP_READ,
    "WRITE": Command.DC_NOP_WRITE,
    "NEGOTIATOR": Command.DC_NOP_NEGOTIATOR,
    "ADMINISTRATOR": Command.DC_NOP_ADMINISTRATOR,
    "OWNER": Command.DC_NOP_OWNER,
    "CONFIG": Command.DC_NOP_CONFIG,
    "DAEMON": Command.DC_NOP_DAEMON,
    "ADVERTISE_STARTD": Command.DC_NOP_ADVERTISE_STARTD,
    "ADVERTISE_SCHEDD": Command.DC_NOP_ADVERTISE_SCHEDD,
    "ADVERTISE_MASTER": Command.DC_NOP_ADVERTISE_MASTER,
}

#: The ``DC_NOP`` variants and the level each is registered at (spec 03 §6.6); the old OWNER
#: level is now ADMINISTRATOR.
DC_NOP_COMMANDS: dict[int, str] = {
    command: "ADMINISTRATOR" if level == "OWNER" else level
    for level, command in NOP_FOR_LEVEL.items()
}

#: Levels a daemon can register commands at, with the level each directly implies (§7.1).
LEVELS: dict[str, str | None] = {
    "ALLOW": None,
    "READ": None,
    "WRITE": "READ",
    "NEGOTIATOR": "READ",
    "ADMINISTRATOR": "WRITE",
    "CONFIG": "READ",
    "DAEMON": "WRITE",
    "SOAP": None,
    "ADVERTISE_STARTD": "READ",
    "ADVERTISE_SCHEDD": "READ",
    "ADVERTISE_MASTER": "READ",
}

#: Policy-only levels: configuration fallback and the client's own outgoing policy.
POLICY_LEVELS = ("DEFAULT", "CLIENT")


def normalize_level(level: str) -> str:
    """Canonical upper-case level name; ``OWNER`` is ADMINISTRATOR (§7.1)."""
    name = level.strip().upper()
    if name == "OWNER":
        name = "ADMINISTRATOR"
    if name not in LEVELS:
        raise InvalidArgument(
            f"unknown permission level {level!r}; known levels: {', '.join(LEVELS)}"
        )
    return name


def implied_levels(level: str) -> list[str]:
    """``level`` and every level it implies, nearest first (ADMINISTRATOR, WRITE, READ)."""
    chain = [normalize_level(level)]
    while (following := LEVELS[chain[-1]]) is not None:
        chain.append(following)
    return chain


def levels_implying(level: str) -> list[str]:
    """Every level whose grant includes ``level`` (itself first)."""
    level = normalize_level(level)
    return [name for name in LEVELS if level in implied_levels(name)]


def config_fallbacks(level: str) -> list[str]:
    """Levels whose ``SEC_<L>_*`` settings apply to ``level``, in lookup order (§7.1)."""
    name = level.strip().upper()
    if name.startswith("ADVERTISE_"):
        return [name, "DAEMON", "DEFAULT"]
    if name == "DEFAULT":
        return ["DEFAULT"]
    return [name, "DEFAULT"]
