"""FS and FS_REMOTE: prove a local (or NFS-shared) user id by directory ownership (spec 04 §2).

The server names a directory, the client creates it mode 0700, the server ``lstat``s it and maps
the owner uid to a user name.  Directory names are capabilities of a sort, so they are never put
into logs or error messages.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import socket
import stat

from cedar.auth.methods import AuthContext, AuthMethod, MethodResult
from cedar.lazy import LazyLogger
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Protocol, Receive, Send

log = LazyLogger("cedar.auth.fs")

#: ``string.ascii_letters + string.digits`` (spelled out: no ``string`` import at start-up).
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def format_endpoint(address: tuple[str, int]) -> str:
    """``ip:port`` with IPv6 in brackets, the channel-binding text of spec 04 §2.3."""
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _binding_mismatch(prefix: str, name: str, ext: str) -> str | None:
    """Why the server will reject ``ext``: its name says it is at another endpoint (or ``None``).

    A current server names ``<dir>/<prefix>_<ip>_<port>_XXX<6>_`` with its own end of this
    connection and accepts only that endpoint back (spec 04 §2.1, §2.4).  Through a TCP proxy
    our view of the server differs, and the server answers ``-1`` whatever we create.
    """
    parts = os.path.basename(name).split("_")
    if len(parts) < 4 or parts[0] != prefix or not parts[2].isdigit():
        return None  # an older or unknown layout: let the server decide
    server_view = format_endpoint((parts[1], int(parts[2])))
    if server_view == ext:
        return None
    return (
        f"the server sees this connection arrive at {server_view}, we reached {ext}: a proxy "
        "or NAT is in between, and FS needs both ends on one host"
    )


def parse_endpoint(text: str) -> tuple[str, int] | None:
    """Inverse of :func:`format_endpoint` (split at the last ``:``); ``None`` if malformed."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return None
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        return None
    return host, int(port)


def _same_endpoint(a: tuple[str, int], b: tuple[str, int]) -> bool:
    try:
        family = socket.AF_INET6 if ":" in a[0] else socket.AF_INET
        return (
            a[1] == b[1]
            and (":" in a[0]) == (":" in b[0])
            and socket.inet_pton(family, a[0]) == socket.inet_pton(family, b[0])
        )
    except OSError:
        return False


class FileSystem(AuthMethod):
    """FS: both peers on one host."""

    name = "FS"
    bit = 0x0004
    prefix = "FS"
    dir_knob = "FS_LOCAL_DIR"

    def parent_directory(self, ctx: AuthContext) -> str:
        """The directory the server names entries in (default ``/tmp``, trailing ``/`` stripped)."""
        value = str(ctx.options.get(self.dir_knob) or "/tmp").rstrip("/")
        return value or "/"

    # -- server ---------------------------------------------------------------------------------

    def _server_name(self, ctx: AuthContext) -> str:
        parent = self.parent_directory(ctx)
        host, port = ctx.local_address or ("0.0.0.0", 0)
        for _attempt in range(20):
            import secrets  # FS only (a start-up import)

            rand = "".join(secrets.choice(_ALNUM) for _ in range(6))
            base = os.path.join(parent, f"{self.prefix}_{host}_{port}_XXX{rand}")
            try:  # reserve the name the way mkstemp does, then give it back
                fd = os.open(base, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                continue
            except OSError:
                return ""
            os.close(fd)
            os.unlink(base)
            return base + "_"
        return ""

    def _refresh_remote(self, ctx: AuthContext) -> None:
        """Hook for FS_REMOTE (forces an NFS attribute refresh)."""

    def server(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Name a directory, wait for the client to create it, check its owner."""
        name = self._server_name(ctx)
        yield Send(conn.writer().put_string(name))
        reply = yield Receive()
        client_result = reply.get_int()
        ext = None if reply.at_end() else reply.get_string()
        reply.end_of_message()
        error = None
        user = None
        if not name:
            error = "the server could not create a directory name"
        elif client_result != 0:
            error = "the client could not create the directory"
        elif ext is not None and not self._extension_ok(ext, ctx):
            error = "the client's channel-binding address does not match this connection"
        else:
            self._refresh_remote(ctx)
            user, error = self._check_directory(name + (ext or ""), ctx)
        yield Send(conn.writer().put_int(0 if error is None else -1))
        if error is not None:
            log.info("%s authentication failed: %s", self.name, error)
            return MethodResult.failed(f"{self.name}: {error}")
        assert user is not None
        domain = ctx.uid_domain or None
        return MethodResult(True, user=user, domain=domain, authenticated_name=user)

    def _extension_ok(self, ext: str, ctx: AuthContext) -> bool:
        if "/" in ext:
            return False
        address, _sep, sock = ext.partition("?sock=")
        if _sep and sock != (ctx.shared_port_id or ""):
            return False
        endpoint = parse_endpoint(address)
        return (
            endpoint is not None
            and ctx.local_address is not None
            and _same_endpoint(endpoint, ctx.local_address)
        )

    def _check_directory(self, path: str, ctx: AuthContext) -> tuple[str | None, str | None]:
        try:
            info = os.lstat(path)
        except OSError:
            return None, "the directory the client should have created does not exist"
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            return None, "the client's entry is not a plain directory"
        if stat.S_IMODE(info.st_mode) != 0o700:
            return None, "the client's directory does not have mode 0700"
        if info.st_nlink not in (1, 2):
            return None, "the client's directory has an unexpected link count"
        try:
            user = pwd.getpwuid(info.st_uid).pw_name
        except KeyError:
            return None, f"uid {info.st_uid} has no user name"
        if user == "root" and ctx.options.get("FS_ROOT_TO_CONDOR"):
            user = str(ctx.options.get("CONDOR_USER") or "condor")
        return user, None

    # -- client ---------------------------------------------------------------------------------

    def client(self, conn: CedarConnection, ctx: AuthContext) -> Protocol[MethodResult]:
        """Create the directory the server named, channel-bound to the server's endpoint.

        When the client already knows that FS fails here (the name is unusable, or names a
        server endpoint other than the one we reached: a proxy or NAT is in between, where the
        server's channel-binding check rejects us anyway), it answers ``-1`` without waiting
        for the server's verdict: after a ``-1`` the server always answers ``-1`` (spec 04
        §2.4), so the next method mask can follow at once (``MethodResult.unread``).
        """
        message = yield Receive()
        name = message.get_string()
        message.end_of_message()
        ext, error = self._client_extension(name, ctx)
        if error is None and ext is not None:
            error = _binding_mismatch(self.prefix, name, ext)
        if error is not None:
            yield Send(conn.writer().put_int(-1), flush=False)
            return MethodResult(False, error=f"{self.name}: {error}", unread=1)
        created: str | None = None
        path = name + (ext or "")
        try:
            os.mkdir(path, 0o700)
            created = path
            os.chmod(path, 0o700)  # a restrictive umask must not change the mode
        except OSError as exc:
            error = f"could not create the directory the server named ({exc.strerror})"
        try:
            out = conn.writer().put_int(0 if error is None else -1)
            if ext is not None and error is None:
                out.put_string(ext)
            yield Send(out)
            answer = yield Receive()
            server_result = answer.get_int()
            answer.end_of_message()
        finally:
            if created is not None:
                with contextlib.suppress(OSError):
                    os.rmdir(created)
        if error is not None:
            return MethodResult.failed(f"{self.name}: {error}")
        if server_result != 0:
            return MethodResult.failed(
                f"{self.name}: the server rejected the directory (it must run on this host "
                "and see the same directory tree)"
            )
        return MethodResult(True)

    def _client_extension(self, name: str, ctx: AuthContext) -> tuple[str | None, str | None]:
        if not name:
            return None, "the server could not name a directory"
        if "\0" in name or ".." in name.split("/"):
            return None, "the server named an unsafe path"
        parent = os.path.dirname(name)
        if ctx.options.get("FS_CHECK_PARENT", True) and os.path.normpath(
            parent
        ) != os.path.normpath(self.parent_directory(ctx)):
            return None, "the server named a directory outside the expected parent directory"
        if ctx.peer_address is None:
            return None, "the server's address of this connection is unknown"
        base = os.path.basename(name)
        if name.endswith("_"):
            return format_endpoint(ctx.peer_address), None
        host, port = ctx.peer_address[0], ctx.peer_address[1]
        if not base.startswith(f"{self.prefix}_{host}_{port}_"):
            return None, "the directory name does not match the server's network address"
        return None, None


class FileSystemRemote(FileSystem):
    """FS_REMOTE: like FS, in a directory shared between hosts (``FS_REMOTE_DIR``)."""

    name = "FS_REMOTE"
    bit = 0x0008
    prefix = "FS_REMOTE"
    dir_knob = "FS_REMOTE_DIR"

    def parent_directory(self, ctx: AuthContext) -> str:
        """``FS_REMOTE_DIR``; the reference falls back to ``/tmp`` (with an error) when unset."""
        if not ctx.options.get(self.dir_knob):
            log.error("FS_REMOTE_DIR is not set; using /tmp for FS_REMOTE")
        return super().parent_directory(ctx)

    def _refresh_remote(self, ctx: AuthContext) -> None:
        parent = self.parent_directory(ctx)
        path = os.path.join(
            parent, f"FS_REMOTE_{socket.gethostname()}_{os.getpid()}_{os.urandom(3).hex()}"
        )
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
            os.unlink(path)
        except OSError:
            pass
