"""Permission levels, the security commands commands, and what each level implies (spec 03 §7)."""

from __future__ import annotations

#: Command numbers the security layer itself knows (spec 03 §10).
DC_AUTHENTICATE = 60010
DC_SEC_QUERY = 60040
DC_NOP = 60011
SHARED_PORT_CONNECT = 75

#: The ``DC_NOP`` variants and the level each is registered at (spec 03 §6.6).
DC_NOP_COMMANDS: dict[int, str] = {
    60011: "ALLOW",
    60020: "READ",
    60021: "WRITE",
    60022: "NEGOTIATOR",
    60023: "ADMINISTRATOR",
    60024: "ADMINISTRATOR",  # DC_NOP_OWNER: the old OWNER level is now ADMINISTRATOR
    60025: "CONFIG",
    60026: "DAEMON",
    60027: "ADVERTISE_STARTD",
    60028: "ADVERTISE_SCHEDD",
    60029: "ADVERTISE_MASTER",
}

#: Level name -> the DC_NOP command that tests it (what ``condor_ping LEVEL`` sends).
NOP_FOR_LEVEL: dict[str, int] = {
    "ALLOW": 60011,
    "READ": 60020,
    "WRITE": 60021,
    "NEGOTIATOR": 60022,
    "ADMINISTRATOR": 60023,
    "OWNER": 60024,
    "CONFIG": 60025,
    "DAEMON": 60026,
    "ADVERTISE_STARTD": 60027,
    "ADVERTISE_SCHEDD": 60028,
    "ADVERTISE_MASTER": 60029,
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
        raise ValueError(f"unknown permission level {level!r}; known levels: {', '.join(LEVELS)}")
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
