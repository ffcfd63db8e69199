"""Client of the startd, the parts without I/O: where it is (spec 06 §3.2).

The client itself is :class:`cedar.commands.AsyncStartd` (``Startd`` is generated from it).
"""

from __future__ import annotations

from cedar.classad_wire import ClassAd
from cedar.commands.collector import DaemonLocation, daemon_address, read_address_file
from cedar.config import default_config
from cedar.errors import CommandError
from cedar.numbers import DaemonType

#: What ``AsyncStartd`` accepts as a location: an address, a located daemon, its (or a slot's) ad.
StartdLocation = str | DaemonLocation | ClassAd | None

__all__ = ["StartdLocation", "local_startd", "startd_address", "unique_startd"]


def startd_address(location: StartdLocation) -> str | None:
    """The address in what a user passed as the startd's location (None: look it up)."""
    return daemon_address(location, DaemonType.STARTD)


def local_startd() -> str | None:
    """The local startd's address from the configuration's address files (blocking: reads
    files), None if there is none."""
    config = default_config()
    for knob in ("STARTD_DAEMON_AD_FILE", "STARTD_ADDRESS_FILE"):
        path = config.get(knob)
        address = read_address_file(path) if path else None
        if address:
            return address
    return None


def unique_startd(found: list[DaemonLocation], name: str | None) -> str:
    """The one startd behind the slot ads a collector returned (a startd has many slots)."""
    addresses = sorted({location.address for location in found})
    what = f"startd {name!r}" if name else "startd"
    if not addresses:
        raise CommandError(f"the collector knows no {what}")
    if len(addresses) > 1:
        machines = ", ".join(sorted({str(loc.machine) for loc in found}))
        raise CommandError(
            f"the pool has {len(addresses)} startds ({machines}); name the one you mean"
        )
    return addresses[0]
