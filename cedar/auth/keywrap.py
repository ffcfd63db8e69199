"""The 3DES-CFB64 wrap of a legacy session key under a method's key material (spec 04 §1.4).

TOKEN, PASSWORD, SSL and SCITOKENS protect the post-authentication key message (only sent to
peers that did not offer ECDH) with 3DES-EDE3 in CFB mode, zero IV, keyed by *folding* the
method's key material ``W`` to 24 bytes.
"""

from __future__ import annotations

from collections.abc import Callable

from cryptography.hazmat.primitives.ciphers import Cipher

from cedar.errors import InvalidArgument

try:  # cryptography >= 43 keeps the legacy pieces in "decrepit"
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    from cryptography.hazmat.decrepit.ciphers.modes import CFB
except ImportError:  # pragma: no cover - older cryptography
    from cryptography.hazmat.primitives.ciphers.algorithms import TripleDES
    from cryptography.hazmat.primitives.ciphers.modes import CFB

DES3_KEY_SIZE = 24


def fold_key(material: bytes) -> bytes:
    """24 bytes of ``W``: later bytes XORed into position ``i mod 24``; a short ``W`` repeated."""
    if not material:
        raise InvalidArgument("cannot fold empty key material")
    if len(material) < DES3_KEY_SIZE:
        return (material * (DES3_KEY_SIZE // len(material) + 1))[:DES3_KEY_SIZE]
    folded = bytearray(material[:DES3_KEY_SIZE])
    for i in range(DES3_KEY_SIZE, len(material)):
        folded[i % DES3_KEY_SIZE] ^= material[i]
    return bytes(folded)


def _cipher(material: bytes) -> Cipher[CFB]:
    return Cipher(TripleDES(fold_key(material)), CFB(bytes(8)))


def wrap(material: bytes, data: bytes) -> bytes:
    """Encrypt ``data`` (same length out) under the folded key."""
    encryptor = _cipher(material).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def unwrap(material: bytes, data: bytes) -> bytes:
    """Decrypt what :func:`wrap` produced."""
    decryptor = _cipher(material).decryptor()
    return decryptor.update(data) + decryptor.finalize()


def wrappers(material: bytes) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
    """``(wrap_key, unwrap_key)`` closures for a :class:`MethodResult`."""
    return (lambda data: wrap(material, data)), (lambda data: unwrap(material, data))


__all__ = ["fold_key", "unwrap", "wrap", "wrappers"]
