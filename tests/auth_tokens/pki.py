"""Throwaway test PKI made at test time: a CA, host and client certificates, a SciToken issuer."""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(**parts: str) -> x509.Name:
    oids = {"O": NameOID.ORGANIZATION_NAME, "CN": NameOID.COMMON_NAME}
    return x509.Name([x509.NameAttribute(oids[k], v) for k, v in parts.items()])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@dataclass
class Pki:
    """Paths of one CA with a server and a client certificate."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def make_ca(
    directory: Path, name: str = "cedar test CA"
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(O="condor", CN=name))
        .issuer_name(_name(O="condor", CN=name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    path = directory / f"{name.replace(' ', '_')}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key, cert, path


def issue(
    directory: Path,
    stem: str,
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    *,
    common_name: str,
    dns: list[str] | None,
    server: bool,
) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(O="authlab", CN=common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False
        )
    cert = builder.sign(ca_key, hashes.SHA256())
    cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(_pem_key(key))
    key_path.chmod(0o600)
    return cert_path, key_path


def make_pki(directory: Path, host: str = "cedar-test.example") -> Pki:
    ca_key, ca_cert, ca_path = make_ca(directory)
    server_cert, server_key = issue(
        directory, "server", ca_key, ca_cert, common_name=host, dns=[host], server=True
    )
    client_cert, client_key = issue(
        directory, "client", ca_key, ca_cert, common_name="alice", dns=None, server=False
    )
    return Pki(ca_path, server_cert, server_key, client_cert, client_key)


@dataclass
class Issuer:
    """A local SciToken issuer: its URL, key id and key pair."""

    url: str
    kid: str
    key: ec.EllipticCurvePrivateKey

    @property
    def public_pem(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def mint(self, **overrides: Any) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.url,
            "sub": "alice",
            "aud": "https://server.authlab.test:9618",
            "scope": "condor:/READ condor:/WRITE",
            "iat": now - 5,
            "nbf": now - 5,
            "exp": now + 600,
            "jti": "cedar-test-jti",
            "ver": "scitoken:2.0",
        }
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(
            claims, self.key, algorithm="ES256", headers={"kid": self.kid, "typ": "JWT"}
        )


def make_issuer(url: str = "https://issuer.authlab.test") -> Issuer:
    return Issuer(url, "key-es256", ec.generate_private_key(ec.SECP256R1()))
