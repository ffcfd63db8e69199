"""A job's event log (its user log) as JSON objects: the one reader the REST API and the MCP
server share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cedar.service.adjson import ad_dict

#: At most this many events are read from one log (bounded memory for a runaway log).
MAX_EVENTS = 10_000


def event_dicts(lines: Iterable[str], limit: int = MAX_EVENTS) -> list[dict[str, Any]]:
    """Each event of a user log's ``lines`` as an ad in the one mapping (``MyType`` is the
    event's name, e.g. ``ExecuteEvent``); at most ``limit`` events, the first ones."""
    from cedar.classad_wire import parse_one
    from cedar.compat.eventlog import parse_event

    events: list[dict[str, Any]] = []
    block: list[str] = []
    for line in lines:
        if line.startswith("..."):
            if block:
                # (through old-syntax text: the compat ad's printJson fails on its expression
                # members)
                text = parse_event(block).printOld()
                events.append(ad_dict(parse_one(text, syntax="old")))
                if len(events) >= limit:
                    break
            block = []
        elif line.strip() or block:
            block.append(line.rstrip("\n"))
    return events
