"""Security preferences, decisions and the reconciliation truth table (spec 03 §1, §3.2, §3.3.1).

Both roles use the same functions so that client and server always agree on what a pair of
preferences means.  Values travel as strings whose first letter is all the reference looks at.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from cedar.errors import InvalidArgument


class Requirement(enum.IntEnum):
    """A security preference; the order is the one the dependency rule maximises over."""

    NEVER = 0
    OPTIONAL = 1
    PREFERRED = 2
    REQUIRED = 3

    @classmethod
    def parse(cls, value: object, default: Requirement | None = None) -> Requirement:
        """Only the first letter counts: R/Y/T, P, O, N/F (spec 03 §1); anything else fails."""
        if isinstance(value, Requirement):
            return value
        if isinstance(value, bool):
            return cls.REQUIRED if value else cls.NEVER
        text = str(value).strip()[:1].upper() if value is not None else ""
        found = _REQUIREMENT_LETTERS.get(text)
        if found is None:
            if default is not None:
                return default
            raise InvalidArgument(f"not a security preference: {value!r}")
        return found


_REQUIREMENT_LETTERS = {
    "R": Requirement.REQUIRED,
    "Y": Requirement.REQUIRED,
    "T": Requirement.REQUIRED,
    "P": Requirement.PREFERRED,
    "O": Requirement.OPTIONAL,
    "N": Requirement.NEVER,
    "F": Requirement.NEVER,
}


class Decision(enum.Enum):
    """The outcome of reconciling one feature."""

    YES = "YES"
    NO = "NO"
    FAIL = "FAIL"

    @classmethod
    def parse(cls, value: object) -> Decision | None:
        """``"YES"``/``"NO"`` by first letter (F = FAIL); ``None`` when missing or unreadable."""
        if isinstance(value, bool):
            return cls.YES if value else cls.NO
        if not isinstance(value, str) or not value:
            return None
        return {"Y": cls.YES, "N": cls.NO, "F": cls.FAIL}.get(value[:1].upper())


_R, _P, _O, _N = (
    Requirement.REQUIRED,
    Requirement.PREFERRED,
    Requirement.OPTIONAL,
    Requirement.NEVER,
)
_YES, _NO, _FAIL = Decision.YES, Decision.NO, Decision.FAIL

#: ``_TABLE[client][server]`` -- spec 03 §3.3.1.
_TABLE: dict[Requirement, dict[Requirement, Decision]] = {
    _R: {_R: _YES, _P: _YES, _O: _YES, _N: _FAIL},
    _P: {_R: _YES, _P: _YES, _O: _YES, _N: _NO},
    _O: {_R: _YES, _P: _YES, _O: _NO, _N: _NO},
    _N: {_R: _FAIL, _P: _NO, _O: _NO, _N: _NO},
}


def reconcile(client: Requirement, server: Requirement) -> Decision:
    """The truth table both sides apply to one feature."""
    return _TABLE[client][server]


def apply_dependency(x: Requirement, y: Requirement) -> tuple[Requirement, Requirement]:
    """The client-policy dependency rule for one pair (x depends on y), spec 03 §3.2.

    Raises ``ValueError`` when x is NEVER and y is REQUIRED (an invalid policy).
    """
    if x is Requirement.NEVER:
        if y is Requirement.REQUIRED:
            raise InvalidArgument("invalid policy: a NEVER setting conflicts with a REQUIRED one")
        y = Requirement.NEVER
    return max(x, y), y


def split_list(value: object) -> list[str]:
    """A comma/space separated list as written in config and in handshake ads."""
    if isinstance(value, str):
        items: Iterable[str] = value.replace(",", " ").split()
    elif isinstance(value, (list, tuple)):
        items = (str(item).strip() for item in value)
    else:  # missing, or a peer sent a non-string: no list
        return []
    return [item for item in items if item]


def intersect_in_order(preferred: Iterable[str], other: Iterable[str]) -> list[str]:
    """The items of ``preferred`` (in order) that also occur in ``other``, case-insensitively."""
    wanted = {item.upper() for item in other}
    seen: set[str] = set()
    result = []
    for item in preferred:
        key = item.upper()
        if key in wanted and key not in seen:
            seen.add(key)
            result.append(item)
    return result
