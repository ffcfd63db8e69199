"""IDTOKENS signing keys on disk and the secure-file rules for credentials (spec 04 §5.2).

Key files are "scrambled" (XOR with ``DE AD BE EF``), must be owned by the reading process's real
uid and carry no group/other permission bits.  The POOL key's material is the unscrambled bytes
doubled (a compatibility rule of the reference); any other named key is used as is.  Key bytes
never appear in a repr, a log line or an exception.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from cedar.auth.errors import CredentialError as CredentialError  # its old home exports it
from cedar.config import Config
from cedar.lazy import LazyLogger
from cedar.record import Record

log = LazyLogger(__name__)

SCRAMBLE_PATTERN = b"\xde\xad\xbe\xef"
POOL_KEY_NAME = "POOL"
#: Size of a freshly generated key (what the collector creates, spec 04 §5.2).
GENERATED_KEY_SIZE = 64
#: Upper bound on a credential file cedar reads (keys and tokens are tiny).
MAX_SECURE_FILE = 1 << 20


def scramble(data: bytes) -> bytes:
    """XOR with the repeating ``DE AD BE EF`` pattern; applying it twice gives the input back."""
    pattern = SCRAMBLE_PATTERN
    return bytes(b ^ pattern[i & 3] for i, b in enumerate(data))


unscramble = scramble


def read_secure_file(path: str | os.PathLike[str], *, check_owner: bool = True) -> bytes:
    """The bytes of a credential file after the reference's ownership and mode checks.

    The file must be a regular file owned by the real uid, with ``mode & 0o077 == 0``, and must not
    change while it is read.
    """
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise CredentialError(f"cannot open {path}: {exc.strerror}") from None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise CredentialError(f"{path} is not a regular file")
        if check_owner and before.st_uid != os.getuid():
            raise CredentialError(
                f"{path}: file must be owned by uid {os.getuid()}, was uid {before.st_uid}"
            )
        if before.st_mode & 0o077:
            raise CredentialError(
                f"{path}: file must not be readable by others (mode {before.st_mode & 0o777:o})"
            )
        if before.st_size > MAX_SECURE_FILE:
            raise CredentialError(f"{path} is too large for a credential file")
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns):
        raise CredentialError(f"{path} changed while it was being read")
    return b"".join(chunks)


def write_secure_file(
    path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False
) -> None:
    """Write a credential file with mode 0600 (created exclusively unless ``overwrite``)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if overwrite else os.O_EXCL)
    try:
        fd = os.open(os.fspath(path), flags, 0o600)
    except FileExistsError:
        raise CredentialError(f"{os.fspath(path)} exists already") from None
    except OSError as exc:
        raise CredentialError(f"cannot create {os.fspath(path)}: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
    finally:
        os.close(fd)


def jwt_key(material: bytes) -> bytes:
    """The HMAC key of every token signed with this key material (spec 04 §5.4)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"htcondor", info=b"master jwt").derive(
        material
    )


class SigningKey(Record, frozen=True, hidden=("material",)):
    """One named signing key.  ``material`` is what HKDF gets (doubled already for POOL)."""

    __slots__ = ("name", "material")
    name: str
    material: bytes

    def __init__(self, name: str, material: bytes) -> None:
        self._set(name, material)

    @classmethod
    def from_file_bytes(cls, name: str, data: bytes, *, is_password: bool = False) -> SigningKey:
        """Decode the scrambled file contents; POOL keys are doubled (spec 04 §5.2)."""
        if is_password:
            data = data.split(b"\0", 1)[0]
        raw = unscramble(data)
        if is_password:
            raw = raw.split(b"\0", 1)[0]
        if name == POOL_KEY_NAME:
            return cls(name, raw + raw)
        return cls(name, raw)

    @classmethod
    def from_raw(cls, name: str, raw: bytes) -> SigningKey:
        """A key from its unscrambled bytes (as stored in the file before scrambling)."""
        return cls(name, raw + raw if name == POOL_KEY_NAME else raw)

    @classmethod
    def load(cls, path: str | os.PathLike[str], name: str | None = None) -> SigningKey:
        """Read a key file; ``name`` defaults to the file name."""
        key_name = name if name is not None else os.path.basename(path)
        return cls.from_file_bytes(key_name, read_secure_file(path))

    @classmethod
    def generate(cls, name: str = POOL_KEY_NAME, size: int = GENERATED_KEY_SIZE) -> SigningKey:
        """A fresh random key."""
        return cls.from_raw(name, os.urandom(size))

    @property
    def raw(self) -> bytes:
        """The unscrambled file bytes (the first half of the material for POOL)."""
        if self.name == POOL_KEY_NAME:
            return self.material[: len(self.material) // 2]
        return self.material

    def file_bytes(self) -> bytes:
        """The scrambled bytes to store on disk."""
        return scramble(self.raw)

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the key file, mode 0600."""
        write_secure_file(path, self.file_bytes(), overwrite=overwrite)

    @property
    def jwt_key(self) -> bytes:
        """The derived HMAC key for tokens."""
        return jwt_key(self.material)

    def __repr__(self) -> str:
        return f"<SigningKey {self.name}>"


class SigningKeyStore:
    """The signing keys a server can verify tokens with, by ``kid``.

    Keys come from explicit :class:`SigningKey` objects and/or from the pool key file plus the
    files of a password directory (read lazily, so a key created later is found).  ``names()`` is
    what the server advertises as ``IssuerKeys``.
    """

    def __init__(
        self,
        keys: Iterable[SigningKey] = (),
        *,
        pool_key_file: str | None = None,
        password_directory: str | None = None,
        exclude: re.Pattern[str] | None = None,
    ) -> None:
        self._keys: dict[str, SigningKey] = {key.name: key for key in keys}
        self.pool_key_file = pool_key_file
        self.password_directory = password_directory
        self._exclude = exclude

    @classmethod
    def from_config(cls, config: Config, keys: Iterable[SigningKey] = ()) -> SigningKeyStore:
        """Pool key file and password directory from an HTCondor configuration."""
        return cls(
            keys,
            pool_key_file=config.pool_signing_key_file(),
            password_directory=config.password_directory(),
            exclude=config.exclude_regexp(),
        )

    def add(self, key: SigningKey) -> None:
        """Add or replace a key."""
        self._keys[key.name] = key

    def _file_for(self, name: str) -> str | None:
        if name == POOL_KEY_NAME and self.pool_key_file:
            return self.pool_key_file
        if self.password_directory and "/" not in name and name not in {"", ".", ".."}:
            return os.path.join(self.password_directory, name)
        return None

    def get(self, name: str) -> SigningKey | None:
        """The key for ``kid``; ``None`` if there is none (or its file is unsafe)."""
        if not name:
            return None
        if name in self._keys:
            return self._keys[name]
        path = self._file_for(name)
        if path is None or not os.path.exists(path):
            return None
        try:
            return SigningKey.from_file_bytes(name, read_secure_file(path))
        except CredentialError as exc:
            log.warning("signing key %s not usable: %s", name, exc)
            return None

    def names(self) -> list[str]:
        """Sorted names of the keys available (the ``IssuerKeys`` list)."""
        names = set(self._keys)
        if self.pool_key_file and os.access(self.pool_key_file, os.R_OK):
            names.add(POOL_KEY_NAME)
        if self.password_directory:
            try:
                entries = os.listdir(self.password_directory)
            except OSError:
                entries = []
            pool_real = os.path.realpath(self.pool_key_file) if self.pool_key_file else None
            for entry in entries:
                full = os.path.join(self.password_directory, entry)
                if self._exclude is not None and self._exclude.search(entry):
                    continue
                if not os.path.isfile(full) or not os.access(full, os.R_OK):
                    continue
                names.add(POOL_KEY_NAME if os.path.realpath(full) == pool_real else entry)
        return sorted(names)

    def __bool__(self) -> bool:
        return bool(self.names())

    def __repr__(self) -> str:
        return f"<SigningKeyStore {', '.join(self.names()) or 'empty'}>"


def key_store_from_options(options: Mapping[str, object]) -> SigningKeyStore:
    """A store from method options: ``signing_keys`` (store or keys) or the config file knobs."""
    value = options.get("signing_keys")
    if isinstance(value, SigningKeyStore):
        return value
    keys = list(value) if isinstance(value, (list, tuple)) else []
    exclude = options.get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP")
    password_dir = options.get("SEC_PASSWORD_DIRECTORY")
    pool_file = options.get("SEC_TOKEN_POOL_SIGNING_KEY_FILE")
    if pool_file is None and password_dir:
        pool_file = os.path.join(str(password_dir), POOL_KEY_NAME)
    return SigningKeyStore(
        keys,
        pool_key_file=str(pool_file) if pool_file else None,
        password_directory=str(password_dir) if password_dir else None,
        exclude=re.compile(str(exclude)) if exclude else None,
    )


__all__ = [
    "POOL_KEY_NAME",
    "CredentialError",
    "SigningKey",
    "SigningKeyStore",
    "jwt_key",
    "key_store_from_options",
    "read_secure_file",
    "scramble",
    "unscramble",
    "write_secure_file",
]
