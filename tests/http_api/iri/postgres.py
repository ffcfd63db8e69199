"""A throw-away PostgreSQL cluster for tests: Debian's ``postgresql`` package (``.ci/run``
installs it), ``initdb`` + ``pg_ctl`` as the ``postgres`` user in a temporary directory,
listening on a Unix socket in that directory only (no TCP port to collide on)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


def _bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return os.path.dirname(found[-1]) if found else None


def _as_postgres(*argv: str) -> None:
    command = list(argv)
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    subprocess.run(command, check=True, capture_output=True, timeout=120)


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """A running cluster's URL (``postgresql:///postgres?host=DIR``), removed at the end."""
    binaries = _bin()
    if binaries is None:
        pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql)")
    pytest.importorskip("psycopg")
    directory = tempfile.mkdtemp(prefix="cedar-iri-pg-")
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    data = os.path.join(directory, "data")
    _as_postgres(f"{binaries}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
    options = f"-c listen_addresses='' -c unix_socket_directories='{directory}' -c fsync=off"
    _as_postgres(
        f"{binaries}/pg_ctl", "-D", data, "-o", options, "-w", "-l", f"{directory}/log", "start"
    )
    try:
        yield f"postgresql:///postgres?host={directory}&user=postgres"
    finally:
        _as_postgres(f"{binaries}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(directory, ignore_errors=True)
