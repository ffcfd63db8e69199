"""Kerberos encryption: RFC 3961's simplified profile with RFC 3962's AES enctypes (17, 18)
and RFC 8009's aes-sha2 enctypes (19, 20).

Built on ``cryptography`` (AES, HMAC, PBKDF2).  17/18 are what MIT 1.20's defaults issue (spec 10
§6.1: every key of the test realm is etype 18); 19/20 are for realms configured for them.  Older
enctypes (DES, 3DES, RC4, camellia) are refused with a clear error naming the enctype.
"""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass
from hashlib import sha1

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.hashes import SHA1, SHA256, SHA384
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

from cedar.auth.errors import KerberosError

AES128_CTS_HMAC_SHA1_96 = 17
AES256_CTS_HMAC_SHA1_96 = 18
AES128_CTS_HMAC_SHA256_128 = 19
AES256_CTS_HMAC_SHA384_192 = 20


@dataclass(frozen=True)
class _Profile:
    """One enctype: key and MAC sizes, its checksum type, and the hash (SHA-1: RFC 3962's
    n-fold key derivation; SHA-256/384: RFC 8009's KDF, MAC over IV|ciphertext)."""

    key_size: int
    mac_size: int
    checksum_type: int
    hash: str
    integrity_key_size: int


PROFILES = {
    17: _Profile(16, 12, 15, "sha1", 16),
    18: _Profile(32, 12, 16, "sha1", 32),
    19: _Profile(16, 16, 19, "sha256", 16),
    20: _Profile(32, 24, 20, "sha384", 24),
}
#: enctype -> key size; the checksum type of each (RFC 3962 §7, RFC 8009 §8).
KEY_SIZES = {etype: p.key_size for etype, p in PROFILES.items()}
CHECKSUM_TYPES = {etype: p.checksum_type for etype, p in PROFILES.items()}
ENCTYPE_NAMES = {
    17: "aes128-cts-hmac-sha1-96",
    18: "aes256-cts-hmac-sha1-96",
    19: "aes128-cts-hmac-sha256-128",
    20: "aes256-cts-hmac-sha384-192",
    23: "rc4-hmac",
}
BLOCK = 16
MAC_SIZE = 12


def enctype_name(etype: int) -> str:
    """The MIT name of an enctype, for messages."""
    return ENCTYPE_NAMES.get(etype, f"enctype {etype}")


@dataclass(frozen=True)
class Key:
    """A Kerberos key: enctype and key bytes (never shown in a repr)."""

    etype: int
    data: bytes

    def __post_init__(self) -> None:
        if self.etype not in KEY_SIZES:
            raise KerberosError(
                f"Kerberos {enctype_name(self.etype)} keys are not supported by cedar "
                "(AES enctypes only: aes128/aes256-cts-hmac-sha1-96, -sha256-128, -sha384-192)"
            )
        if len(self.data) != KEY_SIZES[self.etype]:
            raise KerberosError(f"a {enctype_name(self.etype)} key has the wrong length")

    def __repr__(self) -> str:
        return f"<Kerberos key {enctype_name(self.etype)}>"

    @classmethod
    def random(cls, etype: int) -> Key:
        """A fresh random key (subkeys, test tickets)."""
        return cls(etype, os.urandom(KEY_SIZES.get(etype, 0)))


def nfold(data: bytes, size: int) -> bytes:
    """RFC 3961 §5.1 n-fold of ``data`` to ``size`` bytes."""
    lcm = len(data) * size // _gcd(len(data), size)
    bits = len(data) * 8
    value = int.from_bytes(data, "big")
    buffer = bytearray()
    for i in range(lcm // len(data)):
        shift = (13 * i) % bits
        rotated = ((value >> shift) | (value << (bits - shift))) & ((1 << bits) - 1)
        buffer += rotated.to_bytes(len(data), "big")
    total_value = 0
    for start in range(0, lcm, size):
        total_value += int.from_bytes(buffer[start : start + size], "big")
    modulus = (1 << (8 * size)) - 1
    while total_value > modulus:
        total_value = (total_value & modulus) + (total_value >> (8 * size))
    return total_value.to_bytes(size, "big")  # ones' complement sum (end-around carry)


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def _aes_ecb(key: bytes, block: bytes) -> bytes:
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(block) + encryptor.finalize()


def _derive(key: bytes, constant: bytes) -> bytes:
    """RFC 3961 §5.1 DK for AES: DR by iterated encryption of the n-folded constant."""
    block = nfold(constant, BLOCK)
    out = b""
    while len(out) < len(key):
        block = _aes_ecb(key, block)
        out += block
    return out[: len(key)]


def _kdf_sha2(key: bytes, label: bytes, bits: int, hash_name: str) -> bytes:
    """RFC 8009 §3 KDF-HMAC-SHA2: one HMAC of ``1 | label | 0 | k`` truncated to k bits."""
    digest = hmac.new(key, b"\0\0\0\1" + label + b"\0" + bits.to_bytes(4, "big"), hash_name)
    return digest.digest()[: bits // 8]


def _usage_key(key: Key, usage: int, kind: int) -> bytes:
    """Ke (0xAA), Ki (0x55) or Kc (0x99) for a key usage."""
    label = usage.to_bytes(4, "big") + bytes([kind])
    profile = PROFILES[key.etype]
    if profile.hash == "sha1":
        return _derive(key.data, label)
    size = profile.key_size if kind == 0xAA else profile.integrity_key_size
    return _kdf_sha2(key.data, label, size * 8, profile.hash)


def _cts_encrypt(key: bytes, plain: bytes) -> bytes:
    """AES-CBC with ciphertext stealing, zero IV (RFC 3962 §5)."""
    if len(plain) == BLOCK:
        return _aes_ecb(key, plain)
    padded = plain + bytes(-len(plain) % BLOCK)
    encryptor = Cipher(algorithms.AES(key), modes.CBC(bytes(BLOCK))).encryptor()
    cipher = encryptor.update(padded) + encryptor.finalize()
    last = len(plain) - (len(padded) - BLOCK)
    return cipher[: -2 * BLOCK] + cipher[-BLOCK:] + cipher[-2 * BLOCK : -2 * BLOCK + last]


def _cts_decrypt(key: bytes, cipher: bytes) -> bytes:
    if len(cipher) == BLOCK:
        decryptor = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
        return decryptor.update(cipher) + decryptor.finalize()
    last = len(cipher) % BLOCK or BLOCK
    head, full, tail = cipher[: -BLOCK - last], cipher[-BLOCK - last : -last], cipher[-last:]
    decryptor = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
    plain_full = decryptor.update(full) + decryptor.finalize()
    previous = tail + plain_full[last:]
    rebuilt = head + previous + full
    decryptor = Cipher(algorithms.AES(key), modes.CBC(bytes(BLOCK))).decryptor()
    return (decryptor.update(rebuilt) + decryptor.finalize())[: len(cipher)]


def _mac(key: Key, ki: bytes, data: bytes, cipher: bytes) -> bytes:
    """RFC 3962: HMAC-SHA1 of the plaintext; RFC 8009: HMAC-SHA2 of (zero) IV | ciphertext."""
    profile = PROFILES[key.etype]
    if profile.hash == "sha1":
        return hmac.new(ki, data, sha1).digest()[:MAC_SIZE]
    return hmac.new(ki, bytes(BLOCK) + cipher, profile.hash).digest()[: profile.mac_size]


def encrypt(key: Key, usage: int, plain: bytes, confounder: bytes | None = None) -> bytes:
    """RFC 3961 encryption: confounder and plaintext in CTS, then the truncated HMAC."""
    data = (confounder if confounder is not None else os.urandom(BLOCK)) + plain
    ke, ki = _usage_key(key, usage, 0xAA), _usage_key(key, usage, 0x55)
    cipher = _cts_encrypt(ke, data)
    return cipher + _mac(key, ki, data, cipher)


def decrypt(key: Key, usage: int, cipher: bytes) -> bytes:
    """Inverse of :func:`encrypt`; a wrong key or altered data raises :class:`KerberosError`."""
    size = PROFILES[key.etype].mac_size
    if len(cipher) < BLOCK + size:
        raise KerberosError("Kerberos ciphertext too short")
    body, mac = cipher[:-size], cipher[-size:]
    ke, ki = _usage_key(key, usage, 0xAA), _usage_key(key, usage, 0x55)
    data = _cts_decrypt(ke, body)
    if not hmac.compare_digest(_mac(key, ki, data, body), mac):
        raise KerberosError("Kerberos integrity check failed (wrong key or altered message)")
    return data[BLOCK:]


def checksum(key: Key, usage: int, data: bytes) -> tuple[int, bytes]:
    """The keyed checksum of ``data`` (hmac-sha1-96-aes*, hmac-sha256-128/sha384-192-aes*)."""
    profile = PROFILES[key.etype]
    kc = _usage_key(key, usage, 0x99)
    size = MAC_SIZE if profile.hash == "sha1" else profile.mac_size
    return profile.checksum_type, hmac.new(kc, data, profile.hash).digest()[:size]


def string_to_key(etype: int, password: str, salt: str | bytes, iterations: int = 0) -> Key:
    """RFC 3962 §4 / RFC 8009 §4: PBKDF2 then the "kerberos" derivation (tests, kinit-like tools).

    ``iterations`` 0 means the enctype's default (4096 for SHA-1, 32768 for SHA-2)."""
    profile = PROFILES.get(etype)
    if profile is None:
        raise KerberosError(f"Kerberos {enctype_name(etype)} keys are not supported by cedar")
    raw_salt = salt.encode() if isinstance(salt, str) else salt
    if profile.hash == "sha1":
        kdf = PBKDF2HMAC(SHA1(), profile.key_size, raw_salt, iterations or 4096)
        return Key(etype, _derive(kdf.derive(password.encode()), b"kerberos"))
    algorithm = SHA256() if profile.hash == "sha256" else SHA384()
    saltp = ENCTYPE_NAMES[etype].encode() + b"\0" + raw_salt
    kdf = PBKDF2HMAC(algorithm, profile.key_size, saltp, iterations or 32768)
    tkey = kdf.derive(password.encode())
    return Key(etype, _kdf_sha2(tkey, b"kerberos", profile.key_size * 8, profile.hash))


__all__ = [
    "AES128_CTS_HMAC_SHA1_96",
    "AES128_CTS_HMAC_SHA256_128",
    "AES256_CTS_HMAC_SHA1_96",
    "AES256_CTS_HMAC_SHA384_192",
    "Key",
    "checksum",
    "decrypt",
    "encrypt",
    "enctype_name",
    "nfold",
    "string_to_key",
]
