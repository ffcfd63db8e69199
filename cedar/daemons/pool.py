"""A whole mock pool on one port: a mock collector and a mock schedd behind the shared-port
router, with FS + AES-GCM security by default (for tests, ``cedar demo`` and ``cedar pool``).

Besides the collector's and the schedd's own ads the collector holds what a personal pool's
collector holds — a master, a negotiator, a startd daemon ad and the schedd's submitter ads — so
``condor_status`` for every type has something to show.  Those daemons are simulated only by
their ads (their ``MyAddress`` is the collector's; they answer no command of their own).
"""

from __future__ import annotations

import contextlib
import getpass
import os
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import trio

from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.auth.server_policy import ServerPolicy, real_pool_policy
from cedar.auth.signing_key import SigningKey, SigningKeyStore
from cedar.auth.token import create_token
from cedar.auth.version import CEDAR_PLATFORM_STRING, CEDAR_VERSION_STRING
from cedar.classad_wire import ClassAd
from cedar.daemons.ad_store import MACHINE
from cedar.daemons.ccb_target import CcbTarget
from cedar.daemons.collector import MockCollector
from cedar.daemons.daemon import serve_in_thread
from cedar.daemons.router import SharedPortRouter
from cedar.daemons.schedd import JobQueue, MockSchedd
from cedar.daemons.startd import MockStartd
from cedar.daemons.starter import MockStarter, attach_peek

#: ``cedar pool --ccb`` choices: the daemon that is reachable only through the broker.
CCB_DAEMONS = ("startd", "schedd")


def pool_policy(
    methods: list[str] | None = None, *, encryption: str = "REQUIRED", **kwargs: Any
) -> ServerPolicy:
    """A real pool's defaults (:func:`real_pool_policy`): authentication required except for
    READ, writes for authenticated identities, DAEMON/ADVERTISE_*/ADMINISTRATOR for the admins;
    FS (then CLAIMTOBE, for multi-user tests) with AES-GCM required at every level but READ,
    where it is optional as on a real pool (raw reads answered; negotiated ones still get AES).

    ``encryption="NEVER"`` makes a clear-text pool (no key at all); its sessions are then
    resumable without a key, as the real tools expect of a clear pool (a tool would otherwise
    fail every command that resumes, spec 03 §6.3).
    """
    if encryption == "NEVER":
        kwargs.setdefault("resume_keyless_sessions", True)
    return real_pool_policy(methods or ["FS", "CLAIMTOBE"], encryption=encryption, **kwargs)


#: ``cedar pool --security`` choices: the server policy and what a client must be told.
SECURITY_SETUPS: dict[str, tuple[list[str], str, dict[str, str]]] = {
    # name: (methods, encryption, the client's _condor_ settings)
    "fs": (["FS", "CLAIMTOBE"], "REQUIRED", {"SEC_CLIENT_AUTHENTICATION_METHODS": "FS"}),
    # + SEC_TOKEN_DIRECTORY: a directory holding a token the pool issued for this user
    "tokens": (["TOKEN"], "REQUIRED", {"SEC_CLIENT_AUTHENTICATION_METHODS": "IDTOKENS"}),
    # the keytab and realm map come from the configuration (KERBEROS_SERVER_KEYTAB, KRB5_KTNAME,
    # KERBEROS_MAP_FILE, e.g. as _condor_ variables); clients use their Kerberos tickets
    "kerberos": (["KERBEROS"], "REQUIRED", {"SEC_CLIENT_AUTHENTICATION_METHODS": "KERBEROS"}),
    "claimtobe-clear": (
        ["CLAIMTOBE"],
        "NEVER",
        {
            "SEC_CLIENT_AUTHENTICATION_METHODS": "CLAIMTOBE",
            "SEC_CLIENT_ENCRYPTION": "NEVER",
            "SEC_CLIENT_INTEGRITY": "NEVER",
        },
    ),
}


def host_name() -> str:
    """The name HTCondor's tools give this host (FULL_HOSTNAME): the local schedd's name."""
    from cedar.config import detected_macros

    return detected_macros("TOOL", None)["FULL_HOSTNAME"]


class MockPool:
    """Collector (the port's default target) + schedd (``sock=schedd``) on one port.

    The schedd's ad is put into the collector, so ``Collector.locate("schedd")`` and
    ``htcondor2.Collector().locate(DaemonTypes.Schedd)`` find it.

    ``ccb="startd"`` adds a :class:`MockStartd` (one slot), ``ccb="schedd"`` takes the schedd
    off the shared port: that daemon listens nowhere, registers with the collector's broker
    (:class:`CcbTarget`) and is advertised with its ``CCBID`` address, so every client reaches
    it through CCB (spec 09).
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        policy: ServerPolicy | None = None,
        schedd_name: str = "mock-schedd",
        simulate: bool = False,
        tick: float = 1.0,
        run_time: float = 2.0,
        superusers: tuple[str, ...] = (),
        machine: str | None = None,
        spool_dir: str | None = None,
        ccb: str | None = None,
    ) -> None:
        if ccb is not None and ccb not in CCB_DAEMONS:
            raise ValueError(f"ccb must be one of {', '.join(CCB_DAEMONS)}, not {ccb!r}")
        self.ccb = ccb
        self.policy = policy or pool_policy()
        self.setup = "fs"  #: which of SECURITY_SETUPS (see :meth:`for_setup`)
        self._started = int(time.time())
        self._sequence = 0
        self.token_dir: str | None = None  #: where ``for_setup("tokens")`` put its token
        #: ``Machine`` of every ad the pool advertises (a host name, as real daemons say).
        self.machine = machine or host_name()
        self.router = SharedPortRouter(host=host, port=port)
        self.collector = MockCollector("collector", policy=self.policy, host=host)
        self.schedd = MockSchedd(
            schedd_name,
            policy=self.policy,
            host=host,
            queue=JobQueue(
                name=schedd_name, run_time=run_time, superusers=superusers, spool_dir=spool_dir
            ),
            simulate=simulate,
            tick=tick,
        )
        #: The starter of the simulated jobs (``cedar tail`` reaches it through the schedd).
        self.starter = MockStarter(self.schedd.queue, policy=self.policy, host=host)
        attach_peek(self.schedd, self.schedd.queue, self.starter)
        self.collector.machine = self.machine
        self.router.attach(self.collector, "collector", default=True)
        self.router.attach(self.starter, "starter")
        #: The daemon behind the broker and its registration (``ccb``), else None.
        self.behind_broker: MockStartd | MockSchedd | None = None
        self.registration: CcbTarget | None = None
        self.startd: MockStartd | None = None
        if ccb == "schedd":
            self.schedd.listen = False
            self.behind_broker = self.schedd
        else:
            self.router.attach(self.schedd, "schedd")
        if ccb == "startd":
            self.startd = MockStartd(slots=[self._slot_ad()], policy=self.policy, host=host)
            self.startd.listen = False
            self.behind_broker = self.startd

    @property
    def address(self) -> str:
        """The collector's sinful (``COLLECTOR_HOST`` for clients)."""
        return self.collector.address

    @property
    def host_port(self) -> str:
        """``host:port`` of the shared port."""
        return f"{self.router.host}:{self.router.port}"

    @property
    def schedd_address(self) -> str:
        """The schedd's sinful (with ``sock=schedd``)."""
        return self.schedd.address

    def advertise(self) -> None:
        """Put (or refresh) the schedd's, its submitters' and the simulated daemons' ads."""
        store = self.collector.store
        schedd = self.schedd.schedd_ad()
        schedd["Machine"] = self.machine
        self._sequence += 1
        submitters = self.schedd.submitter_ads()
        schedd.update(  # a few more of what a real schedd publishes (it has ~180 attributes)
            {
                "CollectorHost": self.host_port,
                "DaemonStartTime": self._started,
                "MyCurrentTime": int(time.time()),
                "UpdateSequenceNumber": self._sequence,
                "NumUsers": len(submitters),
                "MaxJobsRunning": 10000,
                "ShadowsRunning": schedd.get("TotalRunningJobs", 0),
                "TotalRemovedJobs": 0,
                "TotalLocalJobsIdle": 0,
                "TotalLocalJobsRunning": 0,
                "TotalSchedulerJobsIdle": 0,
                "TotalSchedulerJobsRunning": 0,
            }
        )
        store.add(schedd, "Scheduler")
        for submitter in submitters:
            submitter["Machine"] = self.machine
            store.add(submitter, "Submitter")
        for my_type, name in (
            ("DaemonMaster", self.machine),
            ("Negotiator", self.machine),
            ("StartD", self.machine),
        ):
            store.add(self._daemon_ad(my_type, name))
        if self.startd is not None:
            for slot in self.startd.store.ads(MACHINE):
                store.add(slot.ad, MACHINE)

    def _slot_ad(self) -> ClassAd:
        """The one slot of ``ccb="startd"``'s startd (its address filled in when it serves)."""
        ad = ClassAd({"MyType": "Machine", "Name": f"slot1@{self.machine}",
                      "Machine": self.machine, "CondorVersion": CEDAR_VERSION_STRING})  # fmt: skip
        ad.update({"State": "Unclaimed", "Activity": "Idle", "Cpus": 1, "Memory": 1024,
                   "OpSys": "LINUX", "Arch": "X86_64", "SlotType": "Static"})  # fmt: skip
        return ad

    def _daemon_ad(self, my_type: str, name: str) -> ClassAd:
        ad = ClassAd()
        ad["MyType"] = my_type
        ad["Name"] = name
        ad["Machine"] = self.machine
        ad["MyAddress"] = (
            self.startd.address
            if my_type == "StartD" and self.startd is not None
            else self.collector.address
        )
        ad["CondorVersion"] = CEDAR_VERSION_STRING
        ad["CondorPlatform"] = CEDAR_PLATFORM_STRING
        return ad

    @classmethod
    def for_setup(
        cls,
        setup: str,
        *,
        token_dir: str | None = None,
        method_options: dict[str, Any] | None = None,
        **options: Any,
    ) -> MockPool:
        """A pool with one of :data:`SECURITY_SETUPS`; ``tokens`` makes a signing key and puts
        a token for the current user into ``token_dir`` (default: a new temporary directory).
        ``method_options`` are method knobs for the daemons (``KERBEROS_SERVER_KEYTAB`` ...),
        over the configuration's."""
        methods, encryption, _ = SECURITY_SETUPS[setup]
        extra: dict[str, Any] = dict(method_options or {})
        key = None
        if setup == "tokens":
            key = SigningKey.generate("POOL")
            extra["signing_keys"] = SigningKeyStore([key])
        policy = pool_policy(methods, encryption=encryption, options=extra)
        pool = cls(policy=policy, **options)
        pool.setup = setup
        if key is not None:
            pool.token_dir = token_dir or tempfile.mkdtemp(prefix="cedar-pool-tokens-")
            domain = policy.trust_domain or policy.uid_domain
            token = create_token(key, issuer=domain, subject=f"{getpass.getuser()}@{domain}")
            path = os.path.join(pool.token_dir, "cedar-pool.token")
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
                out.write(token + "\n")
        return pool

    def client_environment(self, setup: str | None = None) -> dict[str, str]:
        """The environment pointing HTCondor's tools and ``htcondor2`` at this pool.

        The schedd is found the way the tools find a local one (its Name is this host's
        FULL_HOSTNAME), so no ``SCHEDD_HOST`` is set."""
        setup = setup or self.setup
        env = {"CONDOR_CONFIG": "/dev/null", "_condor_COLLECTOR_HOST": self.host_port}
        env.update({f"_condor_{k}": v for k, v in SECURITY_SETUPS[setup][2].items()})
        if setup == "tokens" and self.token_dir:
            env["_condor_SEC_TOKEN_DIRECTORY"] = self.token_dir
        return env

    async def serve(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Serve everything until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.router.serve)
            # The daemons serve only connections the router hands them; their own
            # listeners are not needed, but the schedd's ticker is.
            if self.schedd.simulate:
                nursery.start_soon(self._tick)
            if self.behind_broker is not None:
                await self._register(nursery)
            self.advertise()
            nursery.start_soon(self._advertise_loop)
            task_status.started(self)

    async def _register(self, nursery: trio.Nursery) -> None:
        """Serve the daemon behind the broker and wait for its first registration."""
        daemon = self.behind_broker
        assert daemon is not None
        await nursery.start(daemon.serve)
        methods = [m for m in self.policy.resolve("DAEMON").methods if m != "KERBEROS"]
        security = ClientSecurity(SecurityConfig(methods=methods or ["FS"]))
        self.registration = CcbTarget(daemon, self.collector.address, security=security,
                                      reconnect=5.0)  # fmt: skip
        nursery.start_soon(self.registration.run)
        with trio.fail_after(30):
            await self.registration.registered.wait()
        if self.startd is not None:  # its slot now carries the CCB address
            for slot in self.startd.store.ads(MACHINE):
                slot.ad["MyAddress"] = self.startd.address

    async def _tick(self) -> None:
        while True:
            await trio.sleep(self.schedd.tick)
            self.schedd.queue.step()

    async def _advertise_loop(self) -> None:
        while True:
            await trio.sleep(5)
            self.advertise()

    def stop(self) -> None:
        """Stop serving (callable from any thread)."""
        self.router.stop()

    @contextlib.contextmanager
    def run_in_thread(self) -> Iterator[MockPool]:
        """Serve in a background thread for the duration of a ``with`` block."""
        scope: list[trio.CancelScope] = []
        token: list[trio.lowlevel.TrioToken] = []

        async def serve(*, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            with trio.CancelScope() as cancel:
                scope.append(cancel)
                token.append(trio.lowlevel.current_trio_token())
                await self.serve(task_status=task_status)

        def stop() -> None:
            if scope and token:
                with contextlib.suppress(RuntimeError, trio.RunFinishedError):
                    trio.from_thread.run_sync(scope[0].cancel, trio_token=token[0])

        with serve_in_thread(serve, stop):
            yield self
