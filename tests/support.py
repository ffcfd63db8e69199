"""Helpers shared by several test packages (``from tests.support import ...``)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

from cedar.auth.client import CommandSession
from cedar.classad_wire import ClassAd, get_classad, put_classad
from cedar.stream.connection import CedarConnection
from cedar.stream.protocol import Receive, Send

#: The recorded traffic and its pool files, copied into the repository (self-contained in CI).
CAPTURES = Path(__file__).resolve().parent.parent / "captures"
#: The checkout these tests belong to.
REPO = Path(__file__).resolve().parent.parent


def per_checkout(directory: Path) -> Path:
    """``directory`` with a suffix naming this checkout (a hash of its path), for a cache kept
    outside the checkout (a venv under ``/var/tmp``): two checkouts on one machine then never
    use, or re-point to themselves, each other's."""
    key = hashlib.sha256(str(REPO).encode()).hexdigest()[:8]
    return directory.with_name(f"{directory.name}-{key}")


def world_usable(path: str | Path) -> bool:
    """Whether another user (the pool's job user) can reach ``path``: every directory up to it
    is world-searchable (a pyenv or checkout under root's 0700 home is not)."""
    real = Path(os.path.realpath(path))
    return all(os.stat(parent).st_mode & 0o001 for parent in real.parents)


def unavailable(reason: str) -> None:
    """Skip -- but fail under CI (``CI`` set): there a test's programs must run, not vanish."""
    import pytest

    if os.environ.get("CI"):
        pytest.fail(f"CI is set and this test cannot run: {reason}")
    pytest.skip(reason)


def reference_import_problem(timeout: float = 60) -> str | None:
    """Why the reference client (``htcondor2``) cannot be used, or None when it can.

    Probed in a subprocess because the reference reads its configuration at import time; tests
    that need it skip with this text, so a skip always says why.
    """
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "import htcondor2"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "CONDOR_CONFIG": "/dev/null"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run the reference client: {exc}"
    if probe.returncode == 0:
        return None
    return f"import htcondor2 failed: {(probe.stderr.strip().splitlines() or ['?'])[-1]}"


def query_names(session: CommandSession, query_ad: ClassAd) -> Generator[Any, Any, list[str]]:
    """Send ``query_ad`` as the payload of a QUERY_* command; the ``Name`` of each ad returned."""
    writer = session.payload_writer()
    put_classad(writer, query_ad)
    yield Send(writer)
    reply = yield Receive()
    names = []
    while reply.get_int() == 1:
        names.append(get_classad(reply)["Name"])
    return names


def ad_messages(*ads: dict[str, Any], extra: bytes = b"") -> bytes:
    """Wire bytes of one plain message per ad (as a peer before encryption sends them)."""
    conn = CedarConnection()
    out = b""
    for attributes in ads:
        writer = conn.writer()
        put_classad(writer, ClassAd(attributes))
        out += conn.send_message(writer)
    return out + extra
