"""Kerberos encryption: RFC 3961's simplified profile with RFC 3962's AES enctypes (17, 18).

Built on ``cryptography`` (AES, HMAC, PBKDF2).  These are the enctypes MIT 1.20's defaults issue
(spec 10 §6.1): every key, ticket and session key of the test realm is etype 18.  aes-sha2
(19/20, RFC 8009) and older enctypes are refused with a clear error naming the enctype.
"""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass
from hashlib import sha1

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.hashes import SHA1
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

from cedar.auth.errors import KerberosError

AES128_CTS_HMAC_SHA1_96 = 17
AES256_CTS_HMAC_SHA1_96 = 18
#: enctype -> key size; the checksum type of each (RFC 3962 §7: hmac-sha1-96-aes128/256).
KEY_SIZES = {AES128_CTS_HMAC_SHA1_96: 16, AES256_CTS_HMAC_SHA1_96: 32}
CHECKSUM_TYPES = {AES128_CTS_HMAC_SHA1_96: 15, AES256_CTS_HMAC_SHA1_96: 16}
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
                "(aes128/aes256-cts-hmac-sha1-96 only)"
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


def _usage_key(key: Key, usage: int, kind: int) -> bytes:
    return _derive(key.data, usage.to_bytes(4, "big") + bytes([kind]))


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


def encrypt(key: Key, usage: int, plain: bytes, confounder: bytes | None = None) -> bytes:
    """RFC 3961 encryption: confounder, CTS ciphertext, truncated HMAC-SHA1 of the plaintext."""
    data = (confounder if confounder is not None else os.urandom(BLOCK)) + plain
    ke, ki = _usage_key(key, usage, 0xAA), _usage_key(key, usage, 0x55)
    mac = hmac.new(ki, data, sha1).digest()[:MAC_SIZE]
    return _cts_encrypt(ke, data) + mac


def decrypt(key: Key, usage: int, cipher: bytes) -> bytes:
    """Inverse of :func:`encrypt`; a wrong key or altered data raises :class:`KerberosError`."""
    if len(cipher) < BLOCK + MAC_SIZE:
        raise KerberosError("Kerberos ciphertext too short")
    body, mac = cipher[:-MAC_SIZE], cipher[-MAC_SIZE:]
    ke, ki = _usage_key(key, usage, 0xAA), _usage_key(key, usage, 0x55)
    data = _cts_decrypt(ke, body)
    if not hmac.compare_digest(hmac.new(ki, data, sha1).digest()[:MAC_SIZE], mac):
        raise KerberosError("Kerberos integrity check failed (wrong key or altered message)")
    return data[BLOCK:]


def checksum(key: Key, usage: int, data: bytes) -> tuple[int, bytes]:
    """The keyed checksum of ``data`` (hmac-sha1-96-aes*): ``(cksumtype, value)``."""
    kc = _usage_key(key, usage, 0x99)
    return CHECKSUM_TYPES[key.etype], hmac.new(kc, data, sha1).digest()[:MAC_SIZE]


def string_to_key(etype: int, password: str, salt: str, iterations: int = 4096) -> Key:
    """RFC 3962 §4: PBKDF2-HMAC-SHA1 then DK(tkey, "kerberos") (tests, ``kinit``-like tools)."""
    size = KEY_SIZES.get(etype)
    if size is None:
        raise KerberosError(f"Kerberos {enctype_name(etype)} keys are not supported by cedar")
    kdf = PBKDF2HMAC(SHA1(), size, salt.encode(), iterations)
    tkey = kdf.derive(password.encode())
    return Key(etype, _derive(tkey, b"kerberos"))


__all__ = [
    "AES128_CTS_HMAC_SHA1_96",
    "AES256_CTS_HMAC_SHA1_96",
    "Key",
    "checksum",
    "decrypt",
    "encrypt",
    "enctype_name",
    "nfold",
    "string_to_key",
]
