"""What every replay entry shares: the recorded conversation (:class:`ReplayContext`), how one
kind of conversation is replayed (:class:`ReplayKind`), its outcome (:class:`ReplayReport`),
the sessions a capture's conversations share, and our peers configured like the recorded ones.

Apart from :mod:`cedar.capture.replay` (the registry, the drivers and the comparison) so that
the entries kept in their own modules (:mod:`cedar.capture.replay_transfer`) import what they
need from below, never from the registry that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cedar.auth.client_config import ClientSecurity, SecurityConfig
from cedar.auth.policy import Requirement, split_list
from cedar.auth.server_policy import LevelPolicy, ServerPolicy
from cedar.auth.session import ClientSessionCache, ServerSessionCache
from cedar.auth.sinful import Sinful
from cedar.capture import replay_kerberos
from cedar.capture.dissect import DecodedMessage, DissectedConversation, dissect
from cedar.capture.messages import Conversation
from cedar.capture.tcp import C2S, S2C
from cedar.classad_wire import ClassAd
from cedar.commands.base import Body
from cedar.daemons.daemon import Daemon
from cedar.daemons.job_queue import JobQueue
from cedar.daemons.schedd import MockSchedd
from cedar.errors import CedarError

#: The client settings of the index's "plain" security (captures/README.md).
PLAIN_METHODS = ["CLAIMTOBE"]
PLAIN_CRYPTO = ["BLOWFISH"]


@dataclass
class ReplayContext:
    """What a factory may need: the recorded conversation, decoded."""

    capture: str
    conversation: Conversation
    dissected: DissectedConversation

    def messages(self, direction: str, kind: str | None = None) -> list[DecodedMessage]:
        """The recorded messages in one direction (of one kind)."""
        return [
            m
            for m in self.dissected.messages
            if m.direction == direction and (kind is None or m.kind == kind)
        ]

    def handshake_reply(self) -> ClassAd | None:
        """The server's recorded security response (M2), if any."""
        for message in self.messages(S2C):
            for _label, ad in message.ads:
                if "AuthMethodsList" in ad:
                    return ad
        return None

    def request_ad(self) -> ClassAd:
        """The recorded client request ad (the first ad the client sent after the handshake)."""
        for message in self.messages(C2S):
            if message.ads and message.kind != "DC_AUTHENTICATE":
                return message.ads[0][1]
        raise CedarError("the recorded conversation has no client request ad")

    def reply_ad(self, kind: str) -> ClassAd:
        """The first ad of the first recorded server message of ``kind``."""
        for message in self.messages(S2C, kind):
            if message.ads:
                return message.ads[0][1]
        raise CedarError(f"the recorded conversation has no {kind} ad")

    def handshake_ad(self) -> ClassAd | None:
        """The client's recorded ``DC_AUTHENTICATE`` ad (new session or resumption)."""
        for message in self.messages(C2S, "DC_AUTHENTICATE"):
            return message.ads[0][1]
        return None

    def result_ads(self) -> list[ClassAd]:
        """The result ads the real server sent (summary and header ads excluded)."""
        ads: list[ClassAd] = []
        for message in self.messages(S2C):
            if message.kind in ("QUERY_RESULT", "JOB_AD", "HISTORY"):
                ads.extend(ad for _, ad in message.ads if ad.get("Owner") not in (0, 1))
        return ads

    def qmgmt_calls(self, *rpcs: int) -> list[dict[str, Any]]:
        """Fields of the recorded queue-management calls (of the given RPC numbers)."""
        return [
            m.fields
            for m in self.messages(C2S, "QMGMT_CALL")
            if not rpcs or m.fields.get("rpc") in rpcs
        ]

    def qmgmt_rvals(self, rpc: int) -> list[int]:
        """The recorded ``rval`` of each reply to ``rpc``."""
        return [
            int(m.fields["rval"])
            for m in self.messages(S2C, "QMGMT_REPLY")
            if m.fields.get("rpc") == rpc and "rval" in m.fields
        ]

    def user(self) -> str | None:
        """The identity the recorded client claimed (``user@domain``), if any; for a resumed
        session, the one its negotiation (earlier in the capture) authenticated."""
        for message in self.messages(C2S, "CLAIMTOBE"):
            name = message.fields.get("name")
            if isinstance(name, str):
                return name
        user = self.dissected.facts.get("user")
        if isinstance(user, str):
            return user
        session = self.dissected.facts.get("session")
        if self.dissected.start != "resumed" or session is None:
            return None
        for conv in dissect(self.capture):
            if conv.facts.get("session") == session and conv.start == "negotiated":
                return ReplayContext(self.capture, self.conversation, conv).user()
        return None

    def target(self) -> Sinful:
        """The address the recorded client connected to (its ``ConnectSinful`` when sent)."""
        ad = self.handshake_ad()
        if ad is not None and isinstance(ad.get("ConnectSinful"), str):
            return Sinful.parse(ad["ConnectSinful"])
        host, port = self.conversation.server
        sock = self.dissected.facts.get("shared_port_id")
        return Sinful.parse(f"<{host}:{port}?sock={sock}>" if sock else f"<{host}:{port}>")

    def preamble(self) -> dict[str, Any] | None:
        """The recorded shared-port preamble's fields."""
        for message in self.messages(C2S, "SHARED_PORT_CONNECT"):
            return message.fields
        return None


ClientFactory = Callable[[ReplayContext], Body[Any]]
#: Compares what our client decoded (emitted values, return value) with the recording.
ResultCheck = Callable[[ReplayContext, list[Any], Any], list[str]]
ServerFactory = Callable[[ReplayContext], Daemon]


@dataclass(frozen=True)
class ReplayKind:
    """How to replay one kind of conversation."""

    name: str
    commands: frozenset[int]
    #: Clear-text start forms this entry can replay ("raw", "negotiated", "resumed").
    starts: frozenset[str]
    client: ClientFactory | None = None
    check: ResultCheck | None = None
    server: ServerFactory | None = None
    #: Narrows the entry among several for the same command (e.g. submit vs edit).
    match: Callable[[ReplayContext], bool] | None = None
    #: Why a side is missing (shown in reports).
    missing: str = ""
    #: Attributes left out of ad comparisons for this kind (besides VOLATILE).
    ignore: frozenset[str] = frozenset()
    #: True when messages beyond the recorded ones depend on timing (a peer closed).
    extra_ok: Callable[[ReplayContext], bool] | None = None
    #: Why the client side cannot be replayed here (None: it can).
    client_skip: Callable[[ReplayContext], str | None] | None = None


@dataclass
class ReplayReport:
    """Outcome of replaying one side of one conversation."""

    capture: str
    conversation: int
    kind: str
    side: str  # "client" or "server"
    differences: list[str] = field(default_factory=list)
    skipped: str | None = None
    results: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.skipped is None and not self.differences


@dataclass
class CaptureState:
    """What the conversations of one capture share: the sessions each side keeps.

    ``sid_map`` maps a recorded session id to the one our server issued for the same session,
    so that a recorded resumption finds our server's session.
    """

    client_sessions: ClientSessionCache = field(default_factory=ClientSessionCache)
    server_sessions: ServerSessionCache = field(default_factory=ServerSessionCache)
    #: Recorded ids of the sessions whose negotiation was replayed (resumable by ours).
    negotiated: set[str] = field(default_factory=set)
    #: AES session keys the caller derived from the recording (e.g. a legacy key unwrapped
    #: with the recorded keytab): the encrypted conversations they open are replayed too.
    keys: list[bytes] = field(default_factory=list, repr=False)


def client_security(ctx: ReplayContext, sessions: ClientSessionCache) -> ClientSecurity:
    """Our client configured like the recorded one (the index's "raw" or "plain" security)."""
    if ctx.dissected.start == "raw":  # named as in the recorded preamble (a probe's own name)
        name = (ctx.preamble() or {}).get("client_name") or "TOOL"
        config = SecurityConfig(negotiation=Requirement.NEVER, crypto_methods=[], subsystem=name)
        return ClientSecurity(config, sessions)
    user, _, domain = (ctx.user() or "").partition("@")
    preamble = ctx.preamble() or {}
    handshake = ctx.handshake_ad()
    subsystem = preamble.get("client_name") or (handshake or ClassAd()).get("Subsystem")
    methods, options = list(PLAIN_METHODS), {"SEC_CLAIMTOBE_USER": user} if user else {}
    if replay_kerberos.uses_kerberos(ctx.dissected):  # KERBEROS only, as the krb-* clients
        methods, options = ["KERBEROS"], replay_kerberos.client_options(ctx.capture, ctx.dissected)
    # what the recorded M1 says: the tools' plain default, or, for an encrypted conversation
    # opened with a given key, the recorded client's own settings
    auth, crypto, ecdh = "PREFERRED", list(PLAIN_CRYPTO), True
    encryption = integrity = "NEVER"
    if ctx.dissected.session_key is not None and handshake is not None:
        auth = str(handshake.get("Authentication", auth))
        encryption = str(handshake.get("Encryption", encryption))
        integrity = str(handshake.get("Integrity", integrity))
        crypto = split_list(handshake.get("CryptoMethods")) or ["AES"]
        ecdh = "ECDHPublicKey" in handshake  # a pre-ECDH client takes the server's key
    config = SecurityConfig(
        authentication=Requirement.parse(auth),
        encryption=Requirement.parse(encryption),
        integrity=Requirement.parse(integrity),
        negotiation=Requirement.PREFERRED,
        methods=methods,
        crypto_methods=crypto,
        offer_ecdh=ecdh,
        subsystem=str(subsystem or "TOOL"),
        uid_domain=domain or "localhost",
        trust_domain=domain or None,
        options=options,
        resume_keyless_sessions=True,  # the recorded tools resume their clear-text sessions
    )
    return ClientSecurity(config, sessions)


def server_policy(ctx: ReplayContext) -> ServerPolicy:
    """A policy like the recorded pool's for the recorded client: CLAIMTOBE in its domain."""
    domain = (ctx.user() or "").partition("@")[2] or "localhost"
    levels = {"DEFAULT": LevelPolicy(methods=list(PLAIN_METHODS))}
    options: dict[str, Any] = {}
    if replay_kerberos.uses_kerberos(ctx.dissected):  # the krb-* pool: READ alone is free
        if not ctx.user():  # a failed authentication: the pool's domain from its response
            recorded = ctx.handshake_reply()
            domain = str(recorded.get("TrustDomain", domain)) if recorded else domain
        methods = [*PLAIN_METHODS, "KERBEROS"]
        levels = {
            "DEFAULT": LevelPolicy(methods=methods, authentication=Requirement.REQUIRED),
            "READ": LevelPolicy(methods=methods),
        }
        options = replay_kerberos.server_options(ctx.capture, ctx.dissected, domain)
    policy = ServerPolicy(
        levels=levels,
        uid_domain=domain,
        trust_domain=domain,
        options=options,
        resume_keyless_sessions=True,  # the recorded tools resume their clear-text sessions
    )
    key = ctx.dissected.session_key
    if key is not None:  # a pre-ECDH client gets the recorded key, so its messages still read
        policy.legacy_key_source = lambda size: key[:size]
    return policy


def mock_schedd(ctx: ReplayContext, queue: JobQueue | None = None) -> MockSchedd:
    """A mock schedd with the recording's policy (and ``queue``, seeded by the caller)."""
    return MockSchedd("schedd", policy=server_policy(ctx), queue=queue)


__all__ = [
    "PLAIN_CRYPTO",
    "PLAIN_METHODS",
    "CaptureState",
    "ClientFactory",
    "ReplayContext",
    "ReplayKind",
    "ReplayReport",
    "ResultCheck",
    "ServerFactory",
    "client_security",
    "mock_schedd",
    "server_policy",
]
