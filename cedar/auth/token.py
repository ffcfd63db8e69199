"""IDTOKENS: the token format, discovery and selection, and the TOKEN exchange (spec 04 §5).

An IDTOKEN is an HMAC-signed JWT.  The client never sends the signature: both sides prove they
know it in a three-message AKEP2 exchange that also yields the key material ``W``.  The exchange
functions here are protocol coroutines (:mod:`cedar.stream.protocol`); the auth-method registry
entry in :mod:`cedar.auth.methods.idtokens` wires them to the security handshake.

A token's signature is a bearer credential: :class:`IdToken` never shows it (nor the raw text) in
a repr, and nothing here logs or raises with it.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from cedar.auth.errors import CredentialError
from cedar.auth.errors import TokenError as TokenError  # its old home exports it
from cedar.auth.signing_key import (
    SigningKey,
    SigningKeyStore,
    read_secure_file,
)
from cedar.errors import ProtocolError
from cedar.lazy import LazyLogger
from cedar.record import Record
from cedar.stream.connection import CedarConnection
from cedar.stream.crypto import hmac_digest, same_bytes
from cedar.stream.protocol import Protocol, Receive, Send

log = LazyLogger(__name__)

SEED_KA = bytes.fromhex(
    "3e4a502047d5f4e5dc7c69bb5210cbb6167add8084f7dd9ef3ad2cca71d283dd"
    "114a4fbb7b1ee90adfa862c44304de5473a3172f735c2cbb6e775b5d40d39fac"
    "e873182523f9252b623be0d4b167a3a8040cacfee9ee3da02c0abbf4d9d8b11f"
    "89004c943923ce5d9508bb3f04bc66a3fa20a13a416c5e6f4e0d3187d45fc783"
    "35c5e485db2c5a3717970cc26e7b6b9d1965b47a67df77a31f22f08a6c0ba570"
    "97a21a9ca7c60424f72739ab5cb915a4185bd109828e35e42108ab851c08a3df"
    "fde0e3b06f3d3938cdad6df6ef9a6f6dc2cb74f0228512eb7a3d6823010684b0"
    "15c12ac3014c4f9f938e384dad1e3bd745ff8c141fd70b465ba8af5d1b98b4b1"
)
SEED_KB = bytes.fromhex(
    "010026ad75dfc6c190a5a266b0d1b5d860f7cfa38467205501cd460d4a88d473"
    "fa52e0b3e9141e33c97d851eee2dd33632f3886768ef010ec8dfdd668ade92d5"
    "c34308bb243895d84ed785e27268cc5ee7560de49828fab766c2ad8c0b2c0afb"
    "435c382db5d2ff36a8aead5820470a9ad45d79856f5e2ece894bd2507929dcf2"
    "6f7d09f0028f1ac4d971f4820c5f54717e9dcdabeb215f61655dead4b72c3d3b"
    "5f66fa4b30b85888d62facd4129c1304919f69ad6d8c2c43d9ce5cdb31d45803"
    "52c7362b8d80b7ef1bba5d676660a944764502f91d1d3c54910c088bccb72b11"
    "948a5e1a1dcd04369c17d298804c216e7a2690b8c0e970363300d092df24fb8c"
)

NONCE_SIZE = 256
MAC_SIZE = 20
MAX_MAC_SIZE = 64
MAX_NAME = 1023
STATUS_OK = 0
STATUS_ERROR = -1
#: ``B``: the server's name for clients of version >= 23.9.0 (spec 04 §5.5).
SERVER_NAME = "condor@password"
SCOPE_PREFIX = "condor:/"
#: HMAC algorithms a server accepts; cedar rejects every other ``alg`` (spec 04 §5.6 warning).
HMAC_ALGORITHMS = {"HS256": "sha256", "HS384": "sha384", "HS512": "sha512"}


def b64url_encode(data: bytes) -> str:
    """Base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Base64url with or without padding."""
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise TokenError("not base64url") from None


def compact_json(value: Mapping[str, Any]) -> str:
    """JSON as HTCondor writes it: sorted keys, no blanks, ``/`` escaped as ``\\/``."""
    return json.dumps(dict(value), sort_keys=True, separators=(",", ":")).replace("/", "\\/")


class IdToken(Record, frozen=True, hidden=("signing_input", "signature")):
    """A parsed IDTOKEN.  ``signing_input`` is ``T`` = ``header.payload`` exactly as written."""

    __slots__ = ("header", "claims", "signing_input", "signature")
    header: Mapping[str, Any]
    claims: Mapping[str, Any]
    signing_input: str
    signature: bytes

    def __init__(
        self,
        header: Mapping[str, Any],
        claims: Mapping[str, Any],
        signing_input: str,
        signature: bytes,
    ) -> None:
        self._set(header, claims, signing_input, signature)

    @classmethod
    def parse(cls, text: str) -> IdToken:
        """Split and decode ``header.payload.signature``; raises :class:`TokenError`."""
        if len(text) > MAX_TOKEN_SIZE:
            raise TokenError(f"token is longer than {MAX_TOKEN_SIZE} characters")
        parts = text.strip().split(".")
        if len(parts) != 3:
            raise TokenError("an IDTOKEN has three dot-separated parts")
        header = parse_json_object(b64url_decode(parts[0]), "header")
        claims = parse_json_object(b64url_decode(parts[1]), "payload")
        if not isinstance(header, dict) or not isinstance(claims, dict):
            raise TokenError("token header and payload must be JSON objects")
        return cls(header, claims, f"{parts[0]}.{parts[1]}", b64url_decode(parts[2]))

    @property
    def text(self) -> str:
        """The compact serialization (contains the signature: handle as a secret)."""
        return f"{self.signing_input}.{b64url_encode(self.signature)}"

    @property
    def key_id(self) -> str | None:
        """``kid``: the name of the signing key."""
        kid = self.header.get("kid")
        return kid if isinstance(kid, str) and kid else None

    @property
    def algorithm(self) -> str | None:
        """``alg`` of the header."""
        alg = self.header.get("alg")
        return alg if isinstance(alg, str) else None

    def _claim_str(self, name: str) -> str | None:
        value = self.claims.get(name)
        return value if isinstance(value, str) and value else None

    @property
    def issuer(self) -> str | None:
        """``iss``: the issuer's trust domain."""
        return self._claim_str("iss")

    @property
    def subject(self) -> str | None:
        """``sub``: the identity the token grants."""
        return self._claim_str("sub")

    @property
    def token_id(self) -> str | None:
        """``jti``."""
        return self._claim_str("jti")

    @property
    def name(self) -> str | None:
        """``A`` on the wire: ``sub``, or ``jti`` for a subject-less token (spec 04 §5.3)."""
        return self.subject or self.token_id

    @property
    def issued_at(self) -> int | None:
        """``iat`` in seconds (``None``: absent or not a usable number)."""
        return claim_seconds(self.claims.get("iat"))

    @property
    def expires_at(self) -> int | None:
        """``exp`` in seconds, ``None`` when the token does not expire (or ``exp`` is unusable:
        :func:`verify_token` refuses such a token)."""
        return claim_seconds(self.claims.get("exp"))

    @property
    def scopes(self) -> list[str]:
        """Every space-separated ``scope`` item."""
        scope = self.claims.get("scope")
        return scope.split() if isinstance(scope, str) else []

    @property
    def authorizations(self) -> list[str] | None:
        """Levels named by ``condor:/<LEVEL>`` scopes; ``None`` means "not limited"."""
        levels = [s[len(SCOPE_PREFIX) :] for s in self.scopes if s.startswith(SCOPE_PREFIX)]
        return levels or None

    def expired(self, now: float | None = None) -> bool:
        """``now > exp`` (``exp == now`` is still valid, spec 04 §5.1)."""
        exp = self.expires_at
        return exp is not None and (time.time() if now is None else now) > exp

    def summary(self) -> dict[str, Any]:
        """Claims fit to print: everything except the signature."""
        return {"kid": self.key_id, "alg": self.algorithm, **dict(self.claims)}

    def __repr__(self) -> str:
        return (
            f"<IdToken kid={self.key_id!r} iss={self.issuer!r} sub={self.subject!r} "
            f"exp={self.expires_at!r}>"
        )


#: Longest token text accepted (real tokens are a few hundred bytes).
MAX_TOKEN_SIZE = 16 << 10
#: Longest integer literal in a token's JSON (a time needs 10-20 digits).
_MAX_INT_DIGITS = 40


def _json_number(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError("integer too long")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_object(data: bytes, part: str) -> dict[str, Any]:
    """One token part as a JSON object; :class:`TokenError` for anything else, including
    NaN/Infinity, huge numbers and nesting deep enough to exhaust the stack."""
    try:
        value = json.loads(
            data,
            parse_int=_json_number,
            parse_float=_json_float,
            parse_constant=_no_constant,
        )
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise TokenError(f"token {part} is not usable JSON") from None
    if not isinstance(value, dict):
        raise TokenError("token header and payload must be JSON objects")
    return value


def claim_seconds(value: object) -> int | None:
    """A JSON time claim as whole seconds; ``None`` unless a finite number in int64 range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not -(2**63) <= value < 2**63:
        return None
    return int(value)


def sign(key: SigningKey, signing_input: str, algorithm: str = "HS256") -> bytes:
    """The HMAC signature a server recomputes (spec 04 §5.4)."""
    digest = HMAC_ALGORITHMS.get(algorithm)
    if digest is None:
        raise TokenError(f"unsupported token algorithm {algorithm!r}")
    return hmac_digest(key.jwt_key, signing_input.encode("ascii"), digest)


def create_token(
    key: SigningKey,
    *,
    issuer: str,
    subject: str | None,
    lifetime: float | None = None,
    authorizations: Sequence[str] = (),
    scopes: Sequence[str] = (),
    token_id: str | None = None,
    issued_at: int | None = None,
    algorithm: str = "HS256",
    extra_claims: Mapping[str, Any] | None = None,
) -> str:
    """Mint a token the way ``condor_token_create`` does; returns its compact text.

    ``authorizations`` become ``condor:/<LEVEL>`` scopes; ``lifetime`` (seconds) sets ``exp``.
    """
    now = int(time.time()) if issued_at is None else issued_at
    claims: dict[str, Any] = {
        "iat": now,
        "iss": issuer,
        "jti": token_id or os.urandom(16).hex(),
    }
    if subject:
        claims["sub"] = subject
    if lifetime is not None:
        claims["exp"] = now + int(lifetime)
    scope_items = [f"{SCOPE_PREFIX}{level.upper()}" for level in authorizations] + list(scopes)
    if scope_items:
        claims["scope"] = " ".join(scope_items)
    if extra_claims:
        claims.update(extra_claims)
    header = {"alg": algorithm, "kid": key.name}
    header_part = b64url_encode(compact_json(header).encode())
    signing_input = f"{header_part}.{b64url_encode(compact_json(claims).encode())}"
    return f"{signing_input}.{b64url_encode(sign(key, signing_input, algorithm))}"


def verify_token(
    token: IdToken,
    keys: SigningKeyStore,
    *,
    now: float | None = None,
    max_age: float | None = None,
) -> tuple[SigningKey, bytes]:
    """The server's analysis of a token (spec 04 §5.6 step 1): ``(key, recomputed signature)``.

    Raises :class:`TokenError` saying why the token is refused.  The signature is not compared
    here: in the exchange a wrong signature shows up as a MAC mismatch on the client.
    """
    algorithm = token.algorithm
    if algorithm is None:
        raise TokenError("token header has no alg")
    if algorithm not in HMAC_ALGORITHMS:
        raise TokenError(f"token algorithm {algorithm!r} is not HS256, HS384 or HS512")
    kid = token.key_id
    if kid is None:
        raise TokenError("token header has no kid")
    key = keys.get(kid)
    if key is None:
        raise TokenError(f"no signing key named {kid!r}")
    for claim in ("exp", "iat", "nbf"):
        if claim in token.claims and claim_seconds(token.claims[claim]) is None:
            raise TokenError(f"token claim {claim} is not a time in seconds")
    current = time.time() if now is None else now
    iat = token.issued_at
    if max_age is not None and (iat is None or current - iat > max_age):
        raise TokenError(f"token is older than SEC_TOKEN_MAX_AGE ({max_age:g} s)")
    if token.expired(current):
        raise TokenError(f"token expired at {token.expires_at} (now {int(current)})")
    if not token.issuer:
        raise TokenError("token has no iss claim")
    if not token.token_id:
        raise TokenError("token has no jti claim")
    if not token.subject:
        raise TokenError("token has no sub claim")
    return key, sign(key, token.signing_input, algorithm)


# -- key derivation (spec 04 §5.4) --------------------------------------------------------------


def _hkdf(ikm: bytes, salt: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def derive_k(signature: bytes, signing_input: str) -> tuple[bytes, bytes]:
    """``(K, K')`` from the token signature and ``T``."""
    t = signing_input.encode("ascii")
    return _hkdf(signature, SEED_KA + t, b"master ka"), _hkdf(signature, SEED_KB + t, b"master kb")


def server_mac(k: bytes, a: str, b: str, ra: bytes, rb: bytes) -> bytes:
    """``hkt`` = HMAC-SHA1(K, A ‖ 0x20 ‖ B ‖ 0x00 ‖ ra ‖ rb)."""
    msg = a.encode() + b" " + b.encode() + b"\0" + ra + rb
    return hmac_digest(k, msg, "sha1")


def client_mac(k: bytes, a: str, rb: bytes) -> bytes:
    """``hk`` = HMAC-SHA1(K, A ‖ 0x00 ‖ rb)."""
    return hmac_digest(k, a.encode() + b"\0" + rb, "sha1")


def session_material(rb: bytes) -> bytes:
    """``W`` = HKDF(IKM = rb, salt "session key", info "htcondor")."""
    return _hkdf(rb, b"session key", b"htcondor")


def server_name_for(remote_version: str | None, uid_domain: str) -> str:
    """``B``: ``condor@password`` for clients >= 23.9.0, else ``condor_pool@<UID_DOMAIN>``."""
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", remote_version or "")
    if match is None or tuple(int(x) for x in match.groups()) >= (23, 9, 0):
        return SERVER_NAME
    return f"condor_pool@{uid_domain}"


# -- token discovery and selection (spec 04 §5.3, spec 06 §2.1) -----------------------------------


class FoundToken(Record, frozen=True):
    """A token found on disk (or in memory): where it came from and what it says."""

    __slots__ = ("token", "source")
    token: IdToken
    source: str

    def __init__(self, token: IdToken, source: str) -> None:
        self._set(token, source)


def iter_token_lines(data: bytes) -> Iterator[str]:
    """The candidate lines of a token file: trimmed, no blanks, no ``#`` comments."""
    for line in data.decode("utf-8", "replace").split("\n"):
        line = line.strip()
        if line and not line.startswith("#"):
            yield line


def token_files(
    directory: str, *, exclude: re.Pattern[str] | None = None, subsystem: str = "TOOL"
) -> list[str]:
    """Files of a token directory in the order the reference tries them."""
    try:
        names = os.listdir(directory)
    except OSError as exc:
        log.debug("cannot open token directory %s: %s", directory, exc.strerror)
        return []
    paths = []
    auto: list[str] = []
    for name in names:
        full = os.path.join(directory, name)
        if (exclude is not None and exclude.search(name)) or os.path.isdir(full):
            continue
        if name.lower() == f"{subsystem}_auto_generated_token".lower():
            auto.append(full)
        else:
            paths.append(full)
    return auto + sorted(paths)


def discover_tokens(
    directory: str | None,
    *,
    exclude: re.Pattern[str] | None = None,
    subsystem: str = "TOOL",
    in_memory: Iterable[str] = (),
) -> list[FoundToken]:
    """Every well-formed token the client would consider, in search order."""
    found: list[FoundToken] = []
    for index, text in enumerate(in_memory):
        try:
            found.append(FoundToken(IdToken.parse(text), f"<token {index} given in memory>"))
        except TokenError as exc:
            log.debug("ignoring an in-memory token: %s", exc)
    if directory:
        for path in token_files(directory, exclude=exclude, subsystem=subsystem):
            try:
                data = read_secure_file(path)
            except CredentialError as exc:
                log.debug("skipping token file: %s", exc)
                continue
            for number, line in enumerate(iter_token_lines(data), 1):
                try:
                    found.append(FoundToken(IdToken.parse(line), f"{path}:{number}"))
                except TokenError as exc:
                    log.debug("skipping line %d of %s: %s", number, path, exc)
    return found


def acceptable(token: IdToken, trust_domain: str | None, issuer_keys: Iterable[str]) -> bool:
    """The client's filter (spec 04 §5.3): kid (in the keys), matching iss, and a name."""
    keys = set(issuer_keys)
    kid = token.key_id
    if kid is None or (keys and kid not in keys):
        return False
    if trust_domain and token.issuer != trust_domain:
        return False
    return token.name is not None


def select_token(
    candidates: Iterable[FoundToken], trust_domain: str | None, issuer_keys: Iterable[str]
) -> FoundToken | None:
    """The first acceptable token for a server; ``exp`` is not checked, as in the reference."""
    keys = list(issuer_keys)
    for candidate in candidates:
        if acceptable(candidate.token, trust_domain, keys):
            return candidate
    return None


def split_issuer_keys(value: object) -> list[str]:
    """``IssuerKeys`` as sent in a policy ad (comma/space separated)."""
    if not isinstance(value, str):
        return []
    return [item for item in re.split(r"[\s,]+", value) if item]


# -- the exchange (spec 04 §5.5-§5.8) -------------------------------------------------------------


class ExchangeResult(Record):
    """The outcome of one TOKEN exchange for either role."""

    __slots__ = ("success", "error", "token", "peer_name", "material")

    def __init__(
        self,
        success: bool,
        error: str | None = None,
        token: IdToken | None = None,
        peer_name: str | None = None,
        material: bytes | None = None,
    ) -> None:
        self.success = success
        self.error = error
        #: Server: the client's token; client: the token sent.
        self.token = token
        #: Server: ``A`` (the client name); client: ``B`` (the server name).
        self.peer_name = peer_name
        self.material = material

    def __repr__(self) -> str:
        return (
            f"<ExchangeResult success={self.success} peer={self.peer_name!r} error={self.error!r}>"
        )


def _m1_error(conn: CedarConnection) -> Send:
    w = conn.writer().put_int(STATUS_ERROR).put_int(0).put_string("").put_string("").put_int(0)
    return Send(w)


def _m2_error(conn: CedarConnection) -> Send:
    w = conn.writer().put_int(STATUS_ERROR).put_int(0).put_string("")
    w.put_int(0).put_string("").put_int(0).put_int(0).put_int(0)
    return Send(w)


def _m3_error(conn: CedarConnection) -> Send:
    return Send(conn.writer().put_int(STATUS_ERROR).put_int(0).put_string("").put_int(0).put_int(0))


def _read_blob(reader: Any, limit: int, what: str) -> bytes:
    length = reader.get_int()
    if length < 0 or length > limit:
        raise ProtocolError(f"TOKEN {what} length {length} out of range")
    return bytes(reader.get_bytes(length))


def client_exchange(
    conn: CedarConnection, token: IdToken | None, *, ra: bytes | None = None
) -> Protocol[ExchangeResult]:
    """The client side: M1, read M2 and check ``hkt``, M3 (spec 04 §5.6)."""
    if token is None or token.name is None:
        yield _m1_error(conn)
        reply = yield Receive()
        yield _m3_error(conn)
        del reply
        return ExchangeResult(False, "no usable IDTOKEN")
    a = token.name
    k, _k_prime = derive_k(token.signature, token.signing_input)
    ra = os.urandom(NONCE_SIZE) if ra is None else ra
    m1 = conn.writer().put_int(STATUS_OK).put_int(len(a.encode())).put_string(a)
    m1.put_string(token.signing_input).put_int(len(ra)).put_bytes(ra)
    yield Send(m1)
    reply = yield Receive()
    status = reply.get_int()
    error: str | None = None
    rb = b""
    b = ""
    if status != STATUS_OK:
        error = "the server refused the token (unknown key, expired, revoked or malformed)"
    else:
        reply.get_int()
        echoed_a = reply.get_string()
        reply.get_int()
        b = reply.get_string()
        echoed_ra = _read_blob(reply, NONCE_SIZE, "nonce")
        rb = _read_blob(reply, NONCE_SIZE, "nonce")
        hkt = _read_blob(reply, MAX_MAC_SIZE, "MAC")
        if len(echoed_ra) != NONCE_SIZE or len(rb) != NONCE_SIZE:
            error = "the server sent nonces of the wrong size"
        elif echoed_a != a or echoed_ra != ra or not b:
            error = "the server's reply does not match our request"
        elif not same_bytes(hkt[:MAC_SIZE], server_mac(k, a, b, ra, rb)):
            error = (
                "the server's proof did not verify: the token was signed with a key the "
                "server does not have"
            )
    if error is not None:
        yield _m3_error(conn)
        return ExchangeResult(False, error, token=token)
    m3 = conn.writer().put_int(STATUS_OK).put_int(len(a.encode())).put_string(a)
    m3.put_int(len(rb)).put_bytes(rb).put_int(MAC_SIZE).put_bytes(client_mac(k, a, rb))
    yield Send(m3)
    return ExchangeResult(True, token=token, peer_name=b, material=session_material(rb))


def server_exchange(
    conn: CedarConnection,
    keys: SigningKeyStore,
    *,
    server_name: str = SERVER_NAME,
    now: float | None = None,
    max_age: float | None = None,
    rb: bytes | None = None,
) -> Protocol[ExchangeResult]:
    """The server side: read M1, analyse the token, M2, read and check M3 (spec 04 §5.6).

    Failures found after M2 (bad ``hk``, ``A != sub``) are not signalled to the client, as in
    the reference; the result says what went wrong.
    """
    message = yield Receive()
    status = message.get_int()
    error: str | None = None
    token: IdToken | None = None
    a = ""
    ra = b""
    signature = b""
    if status != STATUS_OK:
        error = "the client has no usable IDTOKEN"
    else:
        message.get_int()  # len(A): not checked by the reference
        a = message.get_string()
        signing_input = message.get_string()
        ra_len = message.get_int()
        if ra_len < 0 or ra_len > NONCE_SIZE:
            raise ProtocolError(f"TOKEN nonce length {ra_len} out of range")
        ra = message.get_bytes(ra_len)
        if ra_len != NONCE_SIZE:
            error = f"client nonce has {ra_len} bytes, not {NONCE_SIZE}"
        elif not a or len(a) > MAX_NAME:
            error = "client name is empty or too long"
        else:
            try:
                header_part, _, payload_part = signing_input.partition(".")
                token = IdToken.parse(f"{header_part}.{payload_part}.")
                _key, signature = verify_token(token, keys, now=now, max_age=max_age)
            except TokenError as exc:
                error = f"token refused: {exc}"
    if error is not None:
        yield _m2_error(conn)
        reply = yield Receive()
        del reply
        return ExchangeResult(False, error, token=token, peer_name=a or None)
    assert token is not None
    k, _k_prime = derive_k(signature, token.signing_input)
    rb = os.urandom(NONCE_SIZE) if rb is None else rb
    m2 = conn.writer().put_int(STATUS_OK).put_int(len(a.encode())).put_string(a)
    m2.put_int(len(server_name.encode())).put_string(server_name)
    m2.put_int(len(ra)).put_bytes(ra).put_int(len(rb)).put_bytes(rb)
    m2.put_int(MAC_SIZE).put_bytes(server_mac(k, a, server_name, ra, rb))
    yield Send(m2)
    reply = yield Receive()
    if reply.get_int() != STATUS_OK:
        return ExchangeResult(
            False,
            "the client rejected the server's proof (token signed with another key?)",
            token=token,
            peer_name=a,
        )
    reply.get_int()
    echoed_a = reply.get_string()
    echoed_rb = _read_blob(reply, NONCE_SIZE, "nonce")
    hk = _read_blob(reply, MAX_MAC_SIZE, "MAC")
    if echoed_a != a or echoed_rb != rb:
        return ExchangeResult(False, "client reply does not match the exchange", token, a)
    if not same_bytes(hk, client_mac(k, a, rb)):
        return ExchangeResult(False, "client proof did not verify", token, a)
    if a != token.name:
        return ExchangeResult(False, "client name differs from the token's subject", token, a)
    return ExchangeResult(True, token=token, peer_name=a, material=session_material(rb))


__all__ = [
    "SEED_KA",
    "SEED_KB",
    "SERVER_NAME",
    "ExchangeResult",
    "FoundToken",
    "IdToken",
    "TokenError",
    "acceptable",
    "b64url_decode",
    "b64url_encode",
    "client_exchange",
    "client_mac",
    "compact_json",
    "create_token",
    "derive_k",
    "discover_tokens",
    "select_token",
    "server_exchange",
    "server_mac",
    "server_name_for",
    "session_material",
    "sign",
    "split_issuer_keys",
    "token_files",
    "verify_token",
]
