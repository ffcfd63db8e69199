"""condor_shared_port's HTTP forwarding, played by the test: a CEDAR message holding
SHARED_PORT_PASS_SOCK (76) and one byte carrying the accepted socket (SCM_RIGHTS), as 25.13.2's
shared port sends them (observed; see docs/serve.md)."""

from __future__ import annotations

import array
import contextlib
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio

from cedar.config import Config
from cedar.errors import ConfigError
from cedar.http_api.sharedport import forwarding_socket_path, serve_forwarding
from cedar.stream.connection import CedarConnection
from tests.http_api.conftest import Api

PASS_SOCK = 76


def pass_socket(path: str, passed: socket.socket, command: int = PASS_SOCK) -> None:
    conn = CedarConnection()
    message = conn.send_message(conn.writer().put_int(command))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
        unix.connect(path)
        unix.sendall(message)
        fds = array.array("i", [passed.fileno()])
        unix.sendmsg([b"\0"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())])


def test_socket_path_from_the_configuration() -> None:
    config = Config.from_text("LOCK = /var/lock/condor\nDAEMON_SOCKET_DIR = auto\n")
    assert forwarding_socket_path(config, "web") == "/var/lock/condor/daemon_sock/web"
    config = Config.from_text("DAEMON_SOCKET_DIR = /run/condor\n")
    assert forwarding_socket_path(config, "web") == "/run/condor/web"
    with pytest.raises(ConfigError):
        forwarding_socket_path(config, "../x")


def test_a_passed_connection_reaches_the_api(api: Api, tmp_path: Path) -> None:
    path = str(tmp_path / "daemon_sock" / "cedarserve")
    ready = threading.Event()
    stop: list[trio.CancelScope] = []
    token: list[trio.lowlevel.TrioToken] = []

    async def main() -> None:
        token.append(trio.lowlevel.current_trio_token())
        with trio.CancelScope() as scope:
            stop.append(scope)
            async with trio.open_nursery() as nursery:
                await nursery.start(serve_forwarding, path, api.server.port)
                ready.set()

    thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
    thread.start()
    try:
        assert ready.wait(20)
        client, accepted = socket.socketpair()
        with client, accepted:
            client.sendall(
                b"GET /api/v1/version HTTP/1.1\r\nHost: pool\r\nConnection: close\r\n\r\n"
            )
            pass_socket(path, accepted)
            accepted.close()
            client.settimeout(20)
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200")
        assert b'"condor_version"' in answer
        # something that is not the pass-socket message is dropped, and serving goes on
        other, spare = socket.socketpair()
        with other, spare, contextlib.suppress(BrokenPipeError, ConnectionResetError):
            # the server may drop the wrong message's connection before its socket is sent
            pass_socket(path, spare, command=75)
        client, accepted = socket.socketpair()
        with client, accepted:
            client.sendall(b"GET /healthz HTTP/1.1\r\nHost: pool\r\nConnection: close\r\n\r\n")
            pass_socket(path, accepted)
            accepted.close()
            client.settimeout(20)
            assert client.recv(65536).startswith(b"HTTP/1.1 200")
    finally:
        if stop and token:
            trio.from_thread.run_sync(stop[0].cancel, trio_token=token[0])
        thread.join(10)


def test_import_cedar_does_not_load_the_server() -> None:
    code = (
        "import sys, cedar, cedar.commands, cedar.service_core\n"
        "loaded = [m for m in ('fastapi', 'starlette', 'hypercorn', 'cedar.http_api') "
        "if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_tls_listener(api: Api, tmp_path: Path) -> None:
    """``--tls-cert``/``--tls-key``: the same API over HTTPS."""
    import datetime
    import ipaddress
    import ssl
    from dataclasses import replace

    import httpx
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    from tests.http_api.conftest import RunningServer

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    settings = replace(
        api.server.settings,
        tls_cert=str(tmp_path / "cert.pem"),
        tls_key=str(tmp_path / "key.pem"),
    )
    server = RunningServer(settings).start()
    try:
        url = server.url.replace("http://", "https://")
        trust = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
        answer = httpx.get(f"{url}/healthz", verify=trust, timeout=20)
        assert answer.status_code == 200
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{server.url}/healthz", timeout=5)  # plain HTTP is not served
    finally:
        server.stop()
