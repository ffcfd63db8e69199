"""What our KERBEROS client and server need to replay a recorded exchange (spec 10, ``krb-*``).

A recording holds no credential cache, so the client's is rebuilt from the recorded AP-REQ: its
ticket, and the session key read from it with the daemons' keytab that lies beside the capture
(``krb-condor.keytab``); the client's clock is set to the recorded authenticator's time, so the
recorded AP-REP answers our authenticator.  The server gets that keytab, the recording's realm
mapping and the moment the AP-REQ was recorded as its clock.  A recorded client that had no
ticket (``-1``) is given a cache that does not exist, which fails the same way on the wire.
"""

from __future__ import annotations

import os
from typing import Any

from cedar.auth.errors import KerberosError
from cedar.auth.krb5.crypto import Key
from cedar.auth.krb5.files import Credential, CredentialCache, Krb5Config, read_keytab
from cedar.auth.krb5.messages import (
    USAGE_AP_REQ_AUTH,
    Authenticator,
    Principal,
    TicketContents,
    open_ticket,
    parse_ap_req,
)
from cedar.auth.methods.kerberos import ReplayCache, legacy_wrappers
from cedar.capture.dissect import DecodedMessage, DissectedConversation
from cedar.errors import CedarError

#: The keytab recorded beside the ``krb-*`` captures (captures/README.md).
KEYTAB_NAME = "krb-condor.keytab"


def _recorded_ap_req(dissected: DissectedConversation) -> tuple[DecodedMessage, bytes] | None:
    for message in dissected.messages:
        payload = message.payload
        if message.kind == "KERBEROS" and "service" in message.fields and payload:
            size = int.from_bytes(payload[8:16], "big")  # I(4) I(n) B(n), checked by the dissector
            return message, payload[16 : 16 + size]
    return None


def _open_ticket(capture: str, ap_req: bytes) -> TicketContents | None:
    """The recorded ticket, opened with the keytab beside the capture (None: no key opens it)."""
    ticket, _sealed = parse_ap_req(ap_req)
    for entry in read_keytab(os.path.join(os.path.dirname(capture), KEYTAB_NAME)):
        if entry.principal.same_name(ticket.server):
            try:
                return open_ticket(ticket, entry.key)
            except KerberosError:
                continue
    return None


def uses_kerberos(dissected: DissectedConversation) -> bool:
    """Whether the recorded conversation ran the KERBEROS method."""
    return any(m.kind == "KERBEROS" for m in dissected.messages)


def client_options(capture: str, dissected: DissectedConversation) -> dict[str, Any]:
    """Options for our KERBEROS client: the recorded ticket in a cache held in memory."""
    recorded = _recorded_ap_req(dissected)
    if recorded is None:
        return {"KRB5CCNAME": f"FILE:{os.path.dirname(capture)}/no-ticket-was-recorded"}
    message, ap_req = recorded
    ticket, sealed = parse_ap_req(ap_req)
    clock = message.time
    session = Key.random(ticket.enc_part.etype)
    client = Principal(("unknown",), ticket.server.realm)
    contents = _open_ticket(capture, ap_req)
    if contents is not None:
        session, client = contents.session_key, contents.client
        auth = Authenticator.decode(sealed.open(session, USAGE_AP_REQ_AUTH))
        clock = auth.ctime + auth.cusec / 1e6
    cred = Credential(client, ticket.server, session, clock - 60, clock + 3600, ticket)
    return {
        "kerberos_ccache": CredentialCache("<recorded ticket>", client, (cred,)),
        "kerberos_krb5_conf": Krb5Config(default_realm=ticket.server.realm),
        "kerberos_clock": lambda: clock,
        "kerberos_service_host": ticket.server.components[-1],
        "KERBEROS_SERVER_SERVICE": ticket.server.components[0],
    }


def legacy_key(capture: str, dissected: DissectedConversation) -> bytes | None:
    """The AES key a recorded server sent a pre-ECDH client (spec 10 §6.3), unwrapped with
    the ticket's session key; None when no key was sent or the keytab opens no ticket.

    Give it to :func:`cedar.capture.replay.replay_capture` to replay such a conversation.
    """
    recorded = _recorded_ap_req(dissected)
    sent = [m.payload for m in dissected.messages if "key_length" in m.fields and m.payload]
    if recorded is None or len(sent) != 1:
        return None
    contents = _open_ticket(capture, recorded[1])
    if contents is None:
        return None
    size = int.from_bytes(sent[0][24:32], "big")  # I(32) I(3) I(0) I(n), then n bytes
    _wrap, unwrap = legacy_wrappers(contents.session_key)
    try:
        return unwrap(sent[0][32 : 32 + size])
    except CedarError:
        return None


def server_options(capture: str, dissected: DissectedConversation, domain: str) -> dict[str, Any]:
    """Options for our KERBEROS server: the recorded keytab, realm map and clock."""
    recorded = _recorded_ap_req(dissected)
    when = recorded[0].time if recorded else 0.0
    realm = parse_ap_req(recorded[1])[0].server.realm if recorded else ""
    return {
        "KERBEROS_SERVER_KEYTAB": os.path.join(os.path.dirname(capture), KEYTAB_NAME),
        "kerberos_realms": {realm: domain},
        "kerberos_clock": lambda: when,
        "kerberos_replay_cache": ReplayCache(),
    }


__all__ = ["KEYTAB_NAME", "client_options", "legacy_key", "server_options", "uses_kerberos"]
