"""dpkt, the pcap/pcapng library behind :mod:`cedar.capture`, is an optional extra.

The library's runtime dependencies stay the five protocol ones; only reading or writing capture
files needs ``pip install 'htc-cedar[capture]'``.
"""

from __future__ import annotations

from cedar.errors import CedarError

try:
    import dpkt
except ImportError:  # the [capture] extra is not installed
    dpkt = None


def require_dpkt() -> None:
    """Fail with instructions when dpkt is missing."""
    if dpkt is None:
        raise CedarError(
            "reading or writing capture files needs the dpkt package: "
            "pip install 'htc-cedar[capture]' (or pip install dpkt)"
        )


__all__ = ["dpkt", "require_dpkt"]
