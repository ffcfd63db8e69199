"""Per-caller rate limits: a token bucket per caller key, in a bounded table.

Kept per process (a replica limits what reaches it; nothing needs sharing): a restart or another
replica starts the caller with a full bucket, which is the safe direction.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from cedar.service_core.errors import RateLimited


class RateLimiter:
    """``rate`` requests per second with bursts of ``burst``, per caller key."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        max_keys: int = 10000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self.max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, key: str) -> None:
        """Take one request from ``key``'s bucket, or raise :class:`RateLimited`."""
        self._take(key, take=True)

    def check_left(self, key: str) -> None:
        """Raise :class:`RateLimited` when ``key``'s bucket is empty, taking nothing: for a
        bucket of failures, asked before the attempt and filled by :meth:`spend` after one."""
        self._take(key, take=False)

    def spend(self, key: str) -> None:
        """Take one from ``key``'s bucket whatever is left (a failure that happened)."""
        with contextlib.suppress(RateLimited):
            self._take(key, take=True)

    def _take(self, key: str, *, take: bool) -> None:
        if self.rate <= 0:
            return
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.pop(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                raise RateLimited(retry_after=max(1.0, (1.0 - tokens) / self.rate))
            self._buckets[key] = (tokens - 1.0 if take else tokens, now)
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
