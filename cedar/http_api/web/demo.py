"""What ``cedar serve --demo`` adds so the web page has something to explain: three slots in
the mock collector (1 GB, 1 GB and 1.75 GB of memory), and a simulation that starts an idle job
only when one of them matches it, so an over-asking job stays idle as it would in a real pool.
"""

from __future__ import annotations

from typing import Any

from cedar.auth.version import CEDAR_PLATFORM_STRING, CEDAR_VERSION_STRING
from cedar.classad_wire import ClassAd, parse_expr

#: (slot number, memory in MB) of the demo's slots.
SLOTS = ((1, 1024), (2, 1024), (3, 1792))


def slot_ads(machine: str, domain: str) -> list[ClassAd]:
    """Static slots as a startd publishes them (the attributes a default job asks about)."""
    ads = []
    for number, memory in SLOTS:
        ad = ClassAd()
        ad.update(
            {
                "MyType": "Machine",
                "TargetType": "Job",
                "Name": f"slot{number}@{machine}",
                "Machine": machine,
                "SlotID": number,
                "SlotType": "Static",
                "Arch": "X86_64",
                "OpSys": "LINUX",
                "Cpus": 1,
                "Memory": memory,
                "Disk": 10_000_000,
                "FileSystemDomain": domain,
                "UidDomain": domain,
                "HasFileTransfer": True,
                "State": "Unclaimed",
                "Activity": "Idle",
                "CondorVersion": CEDAR_VERSION_STRING,
                "CondorPlatform": CEDAR_PLATFORM_STRING,
                "START": True,
            }
        )
        ad.set_expr("Requirements", parse_expr("START"))
        ads.append(ad)
    return ads


def furnish(pool: Any) -> None:
    """Add the demo's slots to ``pool`` (a :class:`cedar.daemons.pool.MockPool`) and make its
    simulated schedd start only jobs one of them would run."""
    from cedar.analysis import analyze_job

    domain = pool.policy.uid_domain or "localhost"
    slots = slot_ads(pool.machine, domain)
    for ad in slots:
        pool.collector.store.add(ad, "Machine")

    def can_start(job: ClassAd) -> bool:
        try:
            return analyze_job(job, slots).counts.job_matches > 0
        except Exception:  # a job the analysis cannot read runs, as before
            return True

    pool.schedd.queue.can_start = can_start
