"""filesystem and storage: each caller's staging area, ``{root}/{user}``, and the spec's
operations on it, each run as a task.

A path is relative to the caller's area.  Refused with a Problem, before anything is touched:
an absolute path, ``..``, NUL or backslash, a name over 255 bytes or a path over 4096, and any
path that goes through a symbolic link (links are never created here, and one left by anything
else is not followed).  Names and archives go through :mod:`cedar.http_api.sandbox`, the checks the
``/api/v1`` sandboxes use.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import os
import shutil
import stat
import tarfile
from pathlib import Path
from typing import Any

import trio
from starlette.requests import Request

from cedar.http_api.iri.call import Call, handler
from cedar.http_api.iri.problem import Problem
from cedar.http_api.iri.resources import STAGING_ID, iso
from cedar.http_api.iri.tasks import run_task
from cedar.http_api.sandbox import HostileInput, TooLarge, extract_tar, safe_relative, write_file

#: Longest path and name accepted; most entries one listing or archive holds.
MAX_PATH, MAX_NAME, MAX_ENTRIES = 4096, 255, 10000
#: Largest file a view, head, tail or download returns in its task's result.
MAX_CONTENT = 16 << 20
_COMPRESSION = {"gzip": "gz", "bzip2": "bz2", "xz": "xz", "none": ""}


def user_root(call: Call, user: str) -> Path:
    """The caller's area (made on first use, mode 0700)."""
    safe = "".join(c if c.isalnum() or c in "@._-" else f"%{ord(c):02x}" for c in user)
    root = Path(call.state.settings.staging_root, safe)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


def resolve(root: Path, path: str | None) -> Path:
    """``path`` inside ``root``, refused if it leaves it in any way (see the module doc)."""
    text = path if path not in (None, "", ".", "./") else "."
    assert text is not None
    if len(text.encode()) > MAX_PATH:
        raise HostileInput(f"path longer than {MAX_PATH} bytes")
    if text != ".":
        relative = safe_relative(text)
        if any(len(p.encode()) > MAX_NAME for p in relative.parts):
            raise HostileInput(f"a name longer than {MAX_NAME} bytes")
        parts = relative.parts
    else:
        parts = ()
    current = root
    for part in parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(mode):
            raise HostileInput(f"{text!r} goes through a symbolic link")
    return current


def staging_dir(call: Call, user: str, directory: str) -> str:
    """A job's directory in the caller's area (made if absent), as an absolute path."""
    found = resolve(user_root(call, user), directory)
    found.mkdir(mode=0o700, parents=True, exist_ok=True)
    return str(found)


def _entry(root: Path, path: Path, numeric: bool = True) -> dict[str, Any]:
    info = os.lstat(path)
    kind = "directory" if stat.S_ISDIR(info.st_mode) else "file"
    return {
        "name": path.name,
        "path": str(path.relative_to(root)) if path != root else ".",
        "type": kind,
        "size": info.st_size,
        "permissions": stat.filemode(info.st_mode),
        "mode": oct(info.st_mode & 0o7777),
        "last_modified": iso(info.st_mtime),
    }


def _exists(path: Path) -> Path:
    if not os.path.lexists(path):
        raise Problem(404, "no such file or directory")
    return path


async def _operate(call: Call, command: str, work: Any) -> dict[str, Any]:
    """Run ``work(root)`` in a worker thread as the caller's task."""
    user = await call.user()
    root = user_root(call, user)
    args = dict(call.body or {})

    async def run() -> Any:
        return await trio.to_thread.run_sync(work, root)

    return await run_task(call, command, args, run)


def _read(path: Path, offset: int, size: int) -> str:
    with open(_exists(path), "rb") as data:
        data.seek(offset)
        return data.read(min(size, MAX_CONTENT)).decode("utf-8", "replace")


@handler("ls", resource="storage")
async def ls(call: Call) -> Any:
    body = call.body

    def work(root: Path) -> Any:
        target = _exists(resolve(root, body["path"]))
        if not target.is_dir():
            return [_entry(root, target)]
        found: list[dict[str, Any]] = []
        walker = (
            os.walk(target) if body.get("recursive") else [(str(target), [], os.listdir(target))]
        )
        for directory, _, names in walker:
            for name in sorted(names):
                if name.startswith(".") and not body.get("showHidden"):
                    continue
                found.append(_entry(root, Path(directory, name)))
                if len(found) >= MAX_ENTRIES:
                    return found
        return found

    return await _operate(call, "ls", work)


@handler("stat", resource="storage")
async def stat_(call: Call) -> Any:
    return await _operate(
        call, "stat", lambda root: _entry(root, _exists(resolve(root, call.body["path"])))
    )


@handler("file", resource="storage")
async def file_(call: Call) -> Any:
    def work(root: Path) -> Any:
        target = _exists(resolve(root, call.body["path"]))
        if target.is_dir():
            return {"type": "directory"}
        with open(target, "rb") as data:
            head = data.read(4096)
        try:
            head.decode("utf-8")
            return {"type": "text" if head else "empty"}
        except UnicodeDecodeError:
            return {"type": "data"}

    return await _operate(call, "file", work)


@handler("view", resource="storage")
async def view(call: Call) -> Any:
    body = call.body
    size = body.get("size") or MAX_CONTENT
    return await _operate(
        call, "view", lambda root: _read(resolve(root, body["path"]), body.get("offset", 0), size)
    )


def _lines(call: Call, tail: bool) -> Any:
    body = call.body

    def work(root: Path) -> Any:
        target = _exists(resolve(root, body["path"]))
        if target.is_dir():
            raise Problem(422, "a directory has no lines")
        size = target.stat().st_size
        if body.get("bytes") is not None:
            count = max(0, int(body["bytes"]))
            return _read(target, max(0, size - count) if tail else 0, count)
        lines = 10 if body.get("lines") is None else max(0, int(body["lines"]))
        text = _read(target, max(0, size - MAX_CONTENT) if tail else 0, MAX_CONTENT)
        parts = text.splitlines(keepends=True)
        return "".join(parts[-lines:] if tail and lines else parts[:lines])

    return work


@handler("head", resource="storage")
async def head(call: Call) -> Any:
    return await _operate(call, "head", _lines(call, False))


@handler("tail", resource="storage")
async def tail(call: Call) -> Any:
    return await _operate(call, "tail", _lines(call, True))


@handler("checksum", resource="storage")
async def checksum(call: Call) -> Any:
    def work(root: Path) -> Any:
        target = _exists(resolve(root, call.body["path"]))
        digest = hashlib.sha256()
        with open(target, "rb") as data:
            while chunk := data.read(1 << 20):
                digest.update(chunk)
        return {"algorithm": "sha256", "checksum": digest.hexdigest()}

    return await _operate(call, "checksum", work)


@handler("mkdir", resource="storage")
async def mkdir(call: Call) -> Any:
    def work(root: Path) -> Any:
        target = resolve(root, call.body.get("path"))
        try:
            target.mkdir(mode=0o755, parents=bool(call.body.get("parent")))
        except FileExistsError:
            raise Problem(409, "it exists already") from None
        except FileNotFoundError:
            raise Problem(404, "the parent directory does not exist") from None
        return _entry(root, target)

    return await _operate(call, "mkdir", work)


def _two(call: Call, root: Path) -> tuple[Path, Path]:
    source = _exists(resolve(root, call.body.get("path")))
    target = resolve(root, call.body["target_path"])
    if source == root or target == root:
        raise HostileInput("the staging area itself cannot be moved, copied or replaced")
    if os.path.lexists(target):
        raise Problem(409, "the target exists already")
    return source, target


@handler("mv", resource="storage")
async def mv(call: Call) -> Any:
    def work(root: Path) -> Any:
        source, target = _two(call, root)
        os.rename(source, target)
        return _entry(root, target)

    return await _operate(call, "mv", work)


@handler("cp", resource="storage")
async def cp(call: Call) -> Any:
    def work(root: Path) -> Any:
        source, target = _two(call, root)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copyfile(source, target, follow_symlinks=False)
        return _entry(root, target)

    return await _operate(call, "cp", work)


@handler("rm", resource="storage")
async def rm(call: Call) -> Any:
    def work(root: Path) -> Any:
        target = _exists(resolve(root, call.body["path"]))
        if target == root:
            raise HostileInput("the staging area itself cannot be removed")
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
        return {"removed": call.body["path"]}

    return await _operate(call, "rm", work)


@handler("chmod", resource="storage")
async def chmod(call: Call) -> Any:
    def work(root: Path) -> Any:
        target = _exists(resolve(root, call.body.get("path")))
        try:
            mode = int(call.body["mode"], 8)
        except ValueError:
            raise Problem(422, "mode: an octal number such as 644") from None
        if mode & ~0o777:
            raise Problem(422, "mode: only the permission bits (0-777) may be set")
        os.chmod(target, mode)
        return _entry(root, target)

    return await _operate(call, "chmod", work)


@handler("chown", resource="storage")
async def chown(call: Call) -> Any:
    raise Problem(
        403, "every file of the staging area belongs to the service; owners cannot change"
    )


@handler("symlink", resource="storage")
async def symlink(call: Call) -> Any:
    raise Problem(403, "symbolic links are not allowed in the staging area (they could leave it)")


@handler("compress", resource="storage")
async def compress(call: Call) -> Any:
    body = call.body
    kind = body.get("compression", "urn:doe-iri:compression:gzip").rsplit(":", 1)[1]
    if kind not in _COMPRESSION:
        raise Problem(422, f"compression {kind!r}: one of {', '.join(_COMPRESSION)}")

    def work(root: Path) -> Any:
        source, target = _two(call, root)
        pattern = body.get("match_pattern")
        mode = f"w:{_COMPRESSION[kind]}" if _COMPRESSION[kind] else "w"
        count = 0
        with tarfile.open(target, mode) as archive:  # type: ignore[call-overload]
            paths = [source] if source.is_file() else sorted(source.rglob("*"))
            for path in paths:
                info = os.lstat(path)
                if not stat.S_ISREG(info.st_mode) or (
                    pattern and not fnmatch.fnmatch(path.name, pattern)
                ):
                    continue
                archive.add(path, arcname=str(path.relative_to(source.parent)), recursive=False)
                count += 1
        return {"files": count, "target_path": body["target_path"]}

    return await _operate(call, "compress", work)


@handler("extract", resource="storage")
async def extract(call: Call) -> Any:
    def work(root: Path) -> Any:
        source = _exists(resolve(root, call.body.get("path")))
        target = resolve(root, call.body["target_path"])
        target.mkdir(mode=0o755, parents=True, exist_ok=True)
        with open(source, "rb") as data:
            names = extract_tar(data, target, call.state.settings.max_upload)
        return {"files": names}

    return await _operate(call, "extract", work)


@handler("download", resource="storage")
async def download(call: Call) -> Any:
    def work(root: Path) -> Any:
        target = _exists(resolve(root, call.body["path"]))
        if not target.is_file() or target.stat().st_size > MAX_CONTENT:
            raise Problem(422, f"only a regular file of at most {MAX_CONTENT} bytes is downloaded")
        return {"content_base64": base64.b64encode(target.read_bytes()).decode("ascii")}

    return await _operate(call, "download", work)


@handler("upload", resource="storage")
async def upload(call: Call) -> Any:
    """A multipart ``file`` written to ``path`` (bounded as it arrives: over the limit, the
    upload stops and nothing is kept)."""
    limit = call.state.settings.max_upload
    length = call.request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit + (1 << 16):
        raise TooLarge(limit)
    user = await call.user()
    root = user_root(call, user)
    target = resolve(root, call.query["path"])
    if target == root or target.is_dir():
        raise HostileInput("path names a directory: give the file's path")
    received = [0]
    receive = call.request.receive

    async def bounded() -> Any:
        message = await receive()
        received[0] += len(message.get("body", b""))
        if received[0] > limit + (1 << 16):
            raise TooLarge(limit)
        return message

    form = await Request(call.request.scope, bounded).form(max_files=1, max_fields=10)
    part = form.get("file")
    if part is None or isinstance(part, str):
        raise Problem(422, "body: a multipart part 'file' with the file is required")
    relative = str(target.relative_to(root))
    data = part.file

    def work(root: Path) -> Any:
        write_file(root, relative, data, [0], limit)
        return _entry(root, root / relative)

    async def run() -> Any:
        try:
            return await trio.to_thread.run_sync(work, root)
        finally:
            await form.close()

    return await run_task(call, "upload", {"path": call.query["path"]}, run)


@handler("getStorageLocations", resource="storage")
async def storage_locations(call: Call) -> Any:
    user = await call.user()
    user_root(call, user)
    if call.query.get("logicalpath") not in (None, "scratch"):
        return []
    return [
        {
            "logical_name": "scratch",
            "path": ".",
            "filesystem": "cedar staging area",
            "shared": False,
            "access": {"read": True, "write": True, "execute": True},
        }
    ]


@handler("getStorageAccessEndpoints", resource="storage")
async def storage_endpoints(call: Call) -> Any:
    """None: the staging area is reached through this API only (no Globus, XRootD or S3)."""
    await call.user()
    return []


__all__ = ["STAGING_ID", "resolve", "staging_dir", "user_root"]
