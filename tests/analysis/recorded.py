"""The ads of the recorded ``condor_q -analyze`` runs (captures/analyze/), as the tool got them."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from cedar.capture.dissect import dissect
from cedar.classad_wire import ClassAd
from tests.support import CAPTURES

#: The pool of the recordings (spec 08 §10): schedd "vm" on 127.0.0.1:9720, host in UTC.
BANNER = ("vm", "<127.0.0.1:9720?addrs=127.0.0.1-9720>")


@dataclass(frozen=True)
class Recording:
    slots: tuple[ClassAd, ...]
    jobs: tuple[ClassAd, ...]
    summary: ClassAd | None
    expected: str  # what the tool printed (without the "exit status" line)

    @property
    def analyze(self) -> ClassAd | None:
        found = self.summary.get("Analyze") if self.summary is not None else None
        return found if isinstance(found, ClassAd) else None


@functools.cache
def recording(name: str) -> Recording:
    slots: list[ClassAd] = []
    jobs: list[ClassAd] = []
    summary: ClassAd | None = None
    for conv in dissect(CAPTURES / "analyze" / f"{name}.pcap"):
        for message in conv.messages:
            if message.direction != "S\u2192C":
                continue
            for _, ad in message.ads:
                kind = ad.get("MyType")
                if kind == "Machine":
                    slots.append(ad)
                elif kind == "Job":
                    jobs.append(ad)
                elif kind == "Summary":
                    summary = ad
    text = (CAPTURES / "analyze" / f"{name}.out").read_text()
    expected = text.rsplit("exit status:", 1)[0]
    return Recording(tuple(slots), tuple(jobs), summary, expected)
