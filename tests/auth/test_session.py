"""Session caches: keys per (tag, address, command), duration and lease (spec 03 §6.2)."""

from __future__ import annotations

import time

from cedar.auth.session import ClientSessionCache, ServerSessionCache, Session


def make(sid="s1", duration=60.0, lease=3600.0, commands=(5, 6)) -> Session:
    return Session(
        sid=sid, key=bytes(32), crypto_method="AES", user="u@d", method="FS",
        valid_commands=frozenset(commands), duration=duration, lease=lease,
    )  # fmt: skip


def test_lookup_by_address_and_command():
    cache = ClientSessionCache()
    cache.store(make(), "<127.0.0.1:9618>")
    assert cache.lookup("<127.0.0.1:9618>", 5).sid == "s1"
    assert cache.lookup("<127.0.0.1:9618>", 7) is None
    assert cache.lookup("<127.0.0.1:9619>", 5) is None
    assert cache.lookup("<127.0.0.1:9618>", 5, tag="other") is None


def test_duration_expires_sessions():
    cache = ClientSessionCache()
    session = make(duration=60)
    session.created -= 61
    cache.store(session, "a")
    assert cache.lookup("a", 5) is None and len(cache) == 0


def test_lease_expires_idle_sessions_and_use_renews_it():
    cache = ClientSessionCache()
    session = make(duration=0, lease=100)
    session.last_used -= 90
    cache.store(session, "a")
    assert cache.lookup("a", 5) is session  # renews the lease
    assert session.last_used > time.time() - 5
    session.last_used -= 101
    assert cache.lookup("a", 5) is None


def test_invalidate_drops_every_mapping():
    cache = ClientSessionCache()
    cache.store(make(), "a")
    cache.invalidate("s1")
    assert cache.lookup("a", 5) is None and cache.lookup("a", 6) is None


def test_server_cache_allows_slop_and_is_bounded():
    cache = ServerSessionCache(max_sessions=2)
    session = make(duration=60)
    session.created -= 70  # expired for the client, still inside the server's 20 s slop
    cache.add(session)
    assert cache.get("s1") is session
    cache.add(make("s2"))
    cache.add(make("s3"))
    assert len(cache) == 2 and cache.get("s1") is None


def test_repr_hides_key_and_id():
    text = repr(make(sid="host:1:2:3"))
    assert "host:1:2:3" not in text and "00000000" not in text and "FS" in text
