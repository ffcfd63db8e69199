"""The IRI API's lasting state: one table of JSON documents by kind and id, in SQLite (a file,
the default) or PostgreSQL (a ``postgresql://`` URL, shared by replicas).

Idempotency keys, tasks, observed resources, events and incidents and staged-job records are
all documents here; nothing the API answers from lives only in a process.  Calls are short and
synchronous (a local file or a loopback database); the PostgreSQL driver (psycopg 3) is imported
only when a URL asks for it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from cedar.errors import ConfigError

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS cedar_iri_docs ("
    " kind TEXT NOT NULL, id TEXT NOT NULL, owner TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,"
    " body TEXT NOT NULL, PRIMARY KEY (kind, id))"
)


@dataclass(frozen=True)
class Record:
    """One stored document."""

    kind: str
    id: str
    owner: str
    created: float
    body: dict[str, Any]


class Store:
    """The documents, behind one interface for both databases."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.Lock()
        self._postgres = url.startswith(("postgresql://", "postgres://"))
        self._mark = "%s" if self._postgres else "?"
        if self._postgres:
            try:
                import psycopg
            except ImportError:
                raise ConfigError(
                    "CEDAR_SERVE_IRI_DATABASE is a PostgreSQL URL but psycopg is not installed "
                    "(pip install 'htc-cedar[serve]')"
                ) from None
            self._conn: Any = psycopg.connect(url, autocommit=True)
        else:
            directory = os.path.dirname(os.path.abspath(url))
            os.makedirs(directory, mode=0o700, exist_ok=True)
            self._conn = sqlite3.connect(url, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=5000")
        with self._cursor() as cur:
            cur.execute(_SCHEMA)

    def __repr__(self) -> str:  # a URL may carry a password
        return f"<Store {'postgresql' if self._postgres else 'sqlite'}>"

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        with self._lock:
            cur = self._conn.cursor()
            try:
                yield cur
            finally:
                cur.close()

    def _sql(self, text: str) -> str:
        return text.replace("?", self._mark)

    def add(self, kind: str, id: str, owner: str, body: dict[str, Any]) -> bool:
        """Store a new document; False (nothing changed) when ``kind``/``id`` exists already.
        The one atomic claim replicas share (an idempotency key, a task id)."""
        with self._cursor() as cur:
            cur.execute(
                self._sql(
                    "INSERT INTO cedar_iri_docs (kind, id, owner, created, body) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (kind, id) DO NOTHING"
                ),
                (kind, id, owner, time.time(), json.dumps(body)),
            )
            return bool(cur.rowcount)

    def put(self, kind: str, id: str, owner: str, body: dict[str, Any]) -> None:
        """Store or replace a document (its creation time kept)."""
        if self.add(kind, id, owner, body):
            return
        with self._cursor() as cur:
            cur.execute(
                self._sql(
                    "UPDATE cedar_iri_docs SET body = ?, owner = ? WHERE kind = ? AND id = ?"
                ),
                (json.dumps(body), owner, kind, id),
            )

    def get(self, kind: str, id: str) -> Record | None:
        with self._cursor() as cur:
            cur.execute(
                self._sql(
                    "SELECT kind, id, owner, created, body FROM cedar_iri_docs "
                    "WHERE kind = ? AND id = ?"
                ),
                (kind, id),
            )
            row = cur.fetchone()
        return None if row is None else _record(row)

    def list(self, kind: str, owner: str | None = None) -> list[Record]:
        """The documents of a kind (of one owner), oldest first."""
        query = "SELECT kind, id, owner, created, body FROM cedar_iri_docs WHERE kind = ?"
        args: tuple[str, ...] = (kind,)
        if owner is not None:
            query += " AND owner = ?"
            args += (owner,)
        with self._cursor() as cur:
            cur.execute(self._sql(query + " ORDER BY created, id"), args)
            rows = cur.fetchall()
        return [_record(row) for row in rows]

    def delete(self, kind: str, id: str) -> bool:
        with self._cursor() as cur:
            cur.execute(
                self._sql("DELETE FROM cedar_iri_docs WHERE kind = ? AND id = ?"), (kind, id)
            )
            return bool(cur.rowcount)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _record(row: Any) -> Record:
    kind, id, owner, created, body = row
    return Record(kind, id, owner, float(created), json.loads(body))
