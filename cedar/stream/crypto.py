"""AES-256-GCM packet protection (spec 01 §4.2) and session-key derivation (spec 03 §5).

Each packet is one GCM operation with a 16-byte nonce derived from the direction's base IV and
its packet counter.  The first packet of each direction carries the base IV and authenticates the
SHA-256 transcript digests of the plaintext handshake in its AAD.
"""

from __future__ import annotations

import base64
import binascii
import os
import struct
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as _hmac
from cryptography.hazmat.primitives.asymmetric import ec

from cedar.errors import IntegrityError, InvalidArgument, ProtocolError
from cedar.stream.framing import encode_header

if TYPE_CHECKING:  # AES-GCM and HKDF are imported when a key exists (a client starts faster)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

IV_SIZE = 16
TAG_SIZE = 16
KEY_SIZE = 32
DIGEST_SIZE = 32
ZERO_DIGEST = bytes(DIGEST_SIZE)
#: The reference refuses to use this counter value (spec 01 §4.2.1).
MAX_PACKET_COUNTER = 0xFFFFFFFF
HKDF_SALT = b"htcondor"
HKDF_INFO = b"keygen"

#: Digest names of :func:`hmac_digest` and :func:`sha256`'s family.
_DIGESTS: dict[str, type[hashes.HashAlgorithm]] = {
    "sha1": hashes.SHA1,
    "sha256": hashes.SHA256,
    "sha384": hashes.SHA384,
    "sha512": hashes.SHA512,
}


def hmac_digest(key: bytes, message: bytes, digest: str) -> bytes:
    """HMAC of ``message`` (``digest`` one of sha1, sha256, sha384, sha512).

    Through ``cryptography``, which a session key needs anyway: the standard library's
    ``hmac``/``hashlib`` would load a second copy of OpenSSL at start-up (issue 39).
    """
    mac = _hmac.HMAC(key, _DIGESTS[digest]())
    mac.update(message)
    return mac.finalize()


def same_bytes(a: bytes, b: bytes) -> bool:
    """Equality of two MACs that leaks nothing through its timing: their HMACs under a fresh
    random key are compared (double HMAC), so ``==``'s early exit tells an attacker nothing;
    ``hmac.compare_digest`` would import the standard library's OpenSSL at start-up."""
    key = os.urandom(32)
    return hmac_digest(key, a, "sha256") == hmac_digest(key, b, "sha256")


def sha256() -> hashes.Hash:
    """A running SHA-256 (``update``; ``copy().finalize()`` reads it without ending it)."""
    return hashes.Hash(hashes.SHA256())


_BE32 = struct.Struct(">I")


def nonce_for(base_iv: bytes, counter: int) -> bytes:
    """``BE32(BE32(base[0:4]) + n mod 2**32) || base[4:16]`` (spec 01 §4.2.2)."""
    first = (_BE32.unpack_from(base_iv)[0] + counter) & 0xFFFFFFFF
    return _BE32.pack(first) + base_iv[4:]


def derive_session_key(shared_secret: bytes, length: int = KEY_SIZE) -> bytes:
    """HKDF-SHA256(IKM = ECDH secret, salt "htcondor", info "keygen") (spec 03 §5.2)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=length, salt=HKDF_SALT, info=HKDF_INFO).derive(
        shared_secret
    )


class EcdhKeyPair:
    """An ephemeral P-256 key pair; its public half travels base64-encoded in a handshake ad."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey | None = None) -> None:
        self._private = private_key or ec.generate_private_key(ec.SECP256R1())

    @classmethod
    def from_private_value(cls, value: int) -> EcdhKeyPair:
        """A deterministic key pair (for test vectors)."""
        return cls(ec.derive_private_key(value, ec.SECP256R1()))

    def public_bytes(self) -> bytes:
        """The SEC1 uncompressed point, 65 bytes starting 0x04 (written from the point's
        coordinates: cryptography's serialization package costs ~4 ms of start-up)."""
        point = self._private.public_key().public_numbers()
        return b"\x04" + point.x.to_bytes(32, "big") + point.y.to_bytes(32, "big")

    def public_base64(self) -> str:
        """The public point as it appears in ``ECDHPublicKey``."""
        return base64.b64encode(self.public_bytes()).decode("ascii")

    def shared_secret(self, peer_public: bytes | str) -> bytes:
        """The ECDH secret (X coordinate) with the peer's public point (raw or base64)."""
        try:
            if isinstance(peer_public, str):
                peer_public = base64.b64decode(peer_public, validate=True)
            peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), peer_public)
        except (ValueError, binascii.Error) as exc:
            raise ProtocolError(f"peer sent an invalid ECDH public key: {exc}") from None
        return self._private.exchange(ec.ECDH(), peer)

    def session_key(self, peer_public: bytes | str) -> bytes:
        """The 32-byte AES session key agreed with the peer."""
        return derive_session_key(self.shared_secret(peer_public))

    def __repr__(self) -> str:
        return "<EcdhKeyPair P-256>"


class AesGcmDirection:
    """Nonce/counter state of one direction of an AES-GCM protected stream."""

    __slots__ = ("_aead", "base_iv", "counter")

    def __init__(self, aead: AESGCM, base_iv: bytes | None) -> None:
        self._aead = aead
        self.base_iv = base_iv
        self.counter = 0

    def _next_nonce(self) -> bytes:
        if self.counter >= MAX_PACKET_COUNTER:
            raise ProtocolError("hit the maximum number of packets per connection")
        assert self.base_iv is not None
        return nonce_for(self.base_iv, self.counter)

    def seal(self, end: bool, plaintext: bytes, transcript: bytes) -> bytes:
        """One whole packet (header + body).  ``transcript`` is ``D_s || D_r`` for the first."""
        first = self.counter == 0
        assert self.base_iv is not None
        body_len = len(plaintext) + TAG_SIZE + (IV_SIZE if first else 0)
        header = encode_header(end, body_len)
        aad = transcript + header if first else header
        sealed = self._aead.encrypt(self._next_nonce(), plaintext, aad)
        self.counter += 1
        return header + (self.base_iv + sealed if first else sealed)

    def open(self, header: bytes, body: bytes, transcript: bytes) -> bytes:
        """Verify and decrypt one packet body; any failure is fatal for the stream."""
        first = self.counter == 0
        if first:
            if len(body) < IV_SIZE + TAG_SIZE:
                raise IntegrityError("failed to unwrap the packet: first AES packet too short")
            self.base_iv, body = body[:IV_SIZE], body[IV_SIZE:]
        elif len(body) < TAG_SIZE:
            raise IntegrityError("failed to unwrap the packet: AES packet too short")
        aad = transcript + header if first else header
        try:
            plaintext = self._aead.decrypt(self._next_nonce(), body, aad)
        except InvalidTag:
            raise IntegrityError(
                "failed to unwrap the packet: AES-GCM tag did not verify "
                "(tampered data or the two sides disagree on the session key)"
            ) from None
        self.counter += 1
        return plaintext


class AesGcmState:
    """Both directions of one connection's AES-256-GCM protection."""

    __slots__ = ("send", "receive")

    def __init__(
        self, key: bytes, *, send_iv: bytes | None = None, aead: AESGCM | None = None
    ) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidArgument(f"AES-256-GCM needs a {KEY_SIZE}-byte key, got {len(key)} bytes")
        if aead is None:  # a resumed session passes the cipher object it keeps for its key
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            aead = AESGCM(key)
        self.send = AesGcmDirection(aead, send_iv or os.urandom(IV_SIZE))
        self.receive = AesGcmDirection(aead, None)

    def __repr__(self) -> str:
        return "<AesGcmState AES-256-GCM>"
