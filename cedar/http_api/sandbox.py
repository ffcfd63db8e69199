"""Sandboxes over HTTP: uploads checked before a byte lands outside their directory, downloads
packed from what the schedd sent.

Every name is relative, without ``..``, NUL or backslash; only regular files and directories
are taken (symlinks, hard links, devices and FIFOs are refused, not skipped, so the caller knows);
sizes are counted as they arrive, so an oversize upload is stopped at the limit, not after.
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO

from cedar.service_core import ServiceError

#: Most entries one uploaded sandbox may have.
MAX_ENTRIES = 10000


class HostileInput(ServiceError):
    """An upload or name that would leave its sandbox (400)."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


class TooLarge(ServiceError):
    """More bytes than the configured limit (413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"upload larger than the limit of {limit} bytes")


def safe_relative(name: str) -> PurePosixPath:
    """``name`` as a relative path that stays inside its directory, or :class:`HostileInput`."""
    if not name or "\x00" in name or "\\" in name:
        raise HostileInput(f"file name {name!r} is not allowed")
    path = PurePosixPath(name)
    if path.is_absolute():
        raise HostileInput(f"absolute file name {name!r} is not allowed")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        raise HostileInput(f"file name {name!r} leaves the sandbox")
    return PurePosixPath(*parts)


def _target(root: Path, relative: PurePosixPath) -> Path:
    target = root.joinpath(*relative.parts)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    real_root = os.path.realpath(root)
    if os.path.commonpath([os.path.realpath(parent), real_root]) != real_root:
        raise HostileInput(f"file name {str(relative)!r} leaves the sandbox")
    return target


def write_file(root: Path, name: str, source: IO[bytes], budget: list[int], limit: int) -> str:
    """Copy ``source`` to ``root/name`` (new file, no symlink followed), charging ``budget``."""
    relative = safe_relative(name)
    target = _target(root, relative)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    if target.is_symlink() or target.is_dir():
        raise HostileInput(f"file name {name!r} names a directory or link")
    fd = os.open(target, flags, 0o644)
    with os.fdopen(fd, "wb") as out:
        while True:
            chunk = source.read(1 << 16)
            if not chunk:
                break
            budget[0] += len(chunk)
            if budget[0] > limit:
                raise TooLarge(limit)
            out.write(chunk)
    return str(relative)


def extract_tar(source: IO[bytes], root: Path, limit: int) -> list[str]:
    """Unpack a tar stream (any compression) into ``root``; returns the files written."""
    budget = [0]
    names: list[str] = []
    try:
        archive = tarfile.open(fileobj=source, mode="r|*")  # noqa: SIM115 (closed by the with below)
    except tarfile.TarError as exc:
        raise HostileInput(f"not a tar archive: {exc}") from None
    with archive:
        try:
            for count, member in enumerate(archive):
                if count >= MAX_ENTRIES:
                    raise HostileInput(f"more than {MAX_ENTRIES} entries in the archive")
                relative = safe_relative(member.name)
                if member.issym() or member.islnk():
                    raise HostileInput(f"link {member.name!r} is not allowed in a sandbox")
                if member.isdir():
                    _target(root, relative / "x").parent.mkdir(exist_ok=True)
                    continue
                if not member.isreg():
                    raise HostileInput(f"special file {member.name!r} is not allowed")
                if budget[0] + member.size > limit:
                    raise TooLarge(limit)
                data = archive.extractfile(member)
                if data is None:
                    raise HostileInput(f"cannot read {member.name!r}")
                names.append(write_file(root, str(relative), data, budget, limit))
        except tarfile.TarError as exc:
            raise HostileInput(f"broken tar archive: {exc}") from None
    return names


def sandbox_files(root: Path) -> Iterator[Path]:
    """The regular files below ``root`` (links and specials skipped), in name order."""
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(directory, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                yield path


def pack_tar(root: Path, out: IO[bytes]) -> int:
    """Write the files below ``root`` as a tar to ``out``; returns the number of files."""
    count = 0
    with tarfile.open(fileobj=out, mode="w|") as archive:
        for path in sandbox_files(root):
            info = archive.gettarinfo(str(path), arcname=str(path.relative_to(root)))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(path, "rb") as data:
                archive.addfile(info, data)
            count += 1
    return count


def resolve_file(root: Path, name: str) -> Path:
    """The file ``name`` below ``root`` for a download, never outside it (404 if absent)."""
    from cedar.service_core import NotFound

    relative = safe_relative(name)
    target = root.joinpath(*relative.parts)
    real_root = os.path.realpath(root)
    real = os.path.realpath(target)
    if os.path.commonpath([real, real_root]) != real_root:
        raise HostileInput(f"file name {name!r} leaves the sandbox")
    if not os.path.isfile(real):
        raise NotFound(f"no file {name!r} in the job's output sandbox")
    return Path(real)
