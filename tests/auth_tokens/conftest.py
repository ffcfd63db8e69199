"""Fixtures: a test PKI, a SciToken issuer, signing keys, our daemon, the reference client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from cedar.auth import LevelPolicy, ServerPolicy
from cedar.auth.scitoken import MapFile, SciTokenIssuer, SciTokenServerSettings
from cedar.auth.signing_key import SigningKey, SigningKeyStore
from cedar.auth.sinful import Sinful
from cedar.auth.tls import TlsServerSettings
from cedar.config import Config
from cedar.daemons.daemon import Daemon
from tests.support import reference_import_problem

from .pki import Issuer, Pki, make_issuer, make_pki

TRUST_DOMAIN = "example.com"
HOST = "cedar-test.example"
AUDIENCE = "https://server.authlab.test:9618"


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"), HOST)


@pytest.fixture(scope="session")
def other_pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A second, unrelated CA (its certificates are untrusted by the first)."""
    return make_pki(tmp_path_factory.mktemp("pki2"), HOST)


@pytest.fixture(scope="session")
def issuer() -> Issuer:
    return make_issuer()


@pytest.fixture(scope="session")
def pool_key() -> SigningKey:
    return SigningKey.generate("POOL")


def server_options(pki: Pki, issuer: Issuer, key: SigningKey) -> dict[str, Any]:
    mapfile = MapFile.parse(
        rf"SCITOKENS ^https://issuer\.authlab\.test,(.*)$ \1@{TRUST_DOMAIN}"
        "\n"
        rf"SSL ^/O=authlab/CN=(alice)$ \1@{TRUST_DOMAIN}"
    )
    return {
        "config": Config(),
        "signing_keys": SigningKeyStore([key]),
        "ssl_server": TlsServerSettings(
            certfiles=[str(pki.server_cert)],
            keyfiles=[str(pki.server_key)],
            cafile=str(pki.ca),
            use_default_cas=False,
        ),
        "certificate_mapfile": mapfile,
        "scitokens_server": SciTokenServerSettings(
            issuers=[SciTokenIssuer.with_key(issuer.url, issuer.public_pem, issuer.kid)],
            audiences=[AUDIENCE],
            mapfile=mapfile,
        ),
    }


@pytest.fixture()
def serve(pki: Pki, issuer: Issuer, pool_key: SigningKey) -> Callable[..., Any]:
    """``with serve(methods) as address:`` runs our daemon with every credential configured."""

    @contextmanager
    def run(methods: list[str], **overrides: Any) -> Iterator[str]:
        options = server_options(pki, issuer, pool_key)
        options.update(overrides)
        policy = ServerPolicy(
            levels={"DEFAULT": LevelPolicy(methods=methods, authentication="REQUIRED")},
            options=options,
            trust_domain=TRUST_DOMAIN,
            uid_domain=TRUST_DOMAIN,
        )
        daemon = Daemon("cedar-test", "SCHEDD", policy=policy)
        with daemon.run_in_thread():
            sinful = Sinful.parse(daemon.address)
            host, port = sinful.endpoint
            yield f"<{host}:{port}?alias={HOST}>"

    return run


_REFERENCE = """
import json, sys
import htcondor2
htcondor2.enable_debug()
try:
    ad = htcondor2.ping(sys.argv[1], sys.argv[2])
    plain = (str, int, bool)
    print(json.dumps({k: ad[k] if isinstance(ad[k], plain) else str(ad[k]) for k in ad.keys()}))
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
"""


@pytest.fixture(scope="session")
def reference_ping(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., dict[str, Any]]:
    """``reference_ping(address, level, **knobs)`` runs ``htcondor2.ping`` in a subprocess."""
    problem = reference_import_problem()
    if problem is not None:
        pytest.skip(problem)
    logdir = tmp_path_factory.mktemp("reflog")

    def ping(
        address: str, level: str, env: dict[str, str] | None = None, **knobs: str
    ) -> dict[str, Any]:
        base = {k: v for k, v in os.environ.items() if not k.lower().startswith("_condor_")}
        base.pop("BEARER_TOKEN", None)
        base.pop("BEARER_TOKEN_FILE", None)
        log = logdir / f"log{len(os.listdir(logdir))}"
        base.update(
            {
                "CONDOR_CONFIG": "/dev/null",
                "XDG_RUNTIME_DIR": str(logdir),
                "_condor_TOOL_DEBUG": "D_FULLDEBUG D_SECURITY",
                "_condor_TOOL_LOG": str(log),
                "_condor_TRUST_DOMAIN": TRUST_DOMAIN,
                "_condor_SEC_TOKEN_DIRECTORY": str(logdir / "no-tokens"),
            }
        )
        base.update({f"_condor_{k}": v for k, v in knobs.items()})
        base.update(env or {})
        result = subprocess.run(
            [sys.executable, "-c", _REFERENCE, address, level],
            capture_output=True,
            text=True,
            timeout=90,
            env=base,
        )
        assert result.returncode == 0, result.stderr
        answer: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
        answer["_log"] = (log.read_text(errors="replace") if log.exists() else "") + result.stderr
        return answer

    return ping


def token_dir(tmp_path: Path, *tokens: str) -> Path:
    """A token directory with one file per token, mode 0600."""
    directory = tmp_path / "tokens.d"
    directory.mkdir(exist_ok=True)
    for index, token in enumerate(tokens):
        path = directory / f"token{index}"
        path.write_text(token + "\n")
        path.chmod(0o600)
    return directory
