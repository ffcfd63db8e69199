"""The file-transfer sub-protocol (spec 07 §7) with both roles in memory, clear and AES-GCM."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cedar.commands.filetransfer import (
    MISSING_FILE_PERMISSIONS,
    PARTIAL_PREFIX,
    FileTransferError,
    SandboxDestination,
    UploadItem,
    check_name,
    download_sandbox,
    expand_inputs,
    upload_sandbox,
)
from cedar.errors import ConnectionClosed, ProtocolError
from cedar.stream.connection import CedarConnection
from cedar.stream.drivers import MemoryPair
from cedar.stream.primitives import MessageReader

KEY = bytes(range(32))


def make_pair(aes: bool) -> MemoryPair:
    client, server = CedarConnection(), CedarConnection()
    if aes:
        client.install_aes_key(KEY)
        server.install_aes_key(KEY)
    return MemoryPair(client, server)


def make_tree(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "job.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "job.sh", 0o755)
    (root / "blob.bin").write_bytes(bytes(range(256)))
    os.chmod(root / "blob.bin", 0o600)
    (root / "sub").mkdir()
    os.chmod(root / "sub", 0o750)
    (root / "sub" / "data.txt").write_text("line one\nline two\n")
    os.chmod(root / "sub" / "data.txt", 0o640)
    (root / "sub" / "empty.dat").write_bytes(b"")


def leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if p.name.startswith(PARTIAL_PREFIX)]


@pytest.mark.parametrize("aes", [False, True], ids=["clear", "aes"])
def test_tree_round_trip(tmp_path: Path, aes: bool) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    make_tree(src)
    dst.mkdir()
    items = expand_inputs(["sub", "blob.bin", "job.sh"], src)
    assert [i.name for i in items] == ["sub", "sub/data.txt", "sub/empty.dat", "blob.bin", "job.sh"]
    pair = make_pair(aes)
    up, down = pair.run(
        upload_sandbox(pair.client_conn, items, final_transfer=False),
        download_sandbox(pair.server_conn, SandboxDestination(dst)),
    )
    assert up.ok and down.ok
    assert down.sandbox_size == 256 + 18 + len("#!/bin/sh\necho hi\n")
    for rel in ["job.sh", "blob.bin", "sub/data.txt", "sub/empty.dat"]:
        assert (dst / rel).read_bytes() == (src / rel).read_bytes()
        assert (dst / rel).stat().st_mode & 0o777 == (src / rel).stat().st_mode & 0o777
    assert (dst / "sub").stat().st_mode & 0o777 == 0o750
    assert not leftovers(dst)


def test_clear_bodies_are_raw_bytes(tmp_path: Path) -> None:
    """In clear mode the body follows the size message with no packet header (spec 01 §7.2)."""
    (tmp_path / "a").write_bytes(b"0123456789")
    pair = make_pair(False)
    pair.run(
        upload_sandbox(pair.client_conn, [UploadItem("a", tmp_path / "a")], final_transfer=True),
        download_sandbox(pair.server_conn, SandboxDestination(tmp_path / "out")),
    )
    assert b"0123456789" in pair.sent["c2s"]
    assert (
        pair.sent["c2s"][0]
        == bytes.fromhex("0100000023")
        + bytes(7)
        + b"\x01"
        + bytes(7)
        + b"\x01"
        + b"SandboxSize = 10\x00\x00\x00"
    )


def test_missing_and_unreadable_sources_fail_at_the_end(tmp_path: Path) -> None:
    (tmp_path / "ok").write_bytes(b"fine")
    items = [UploadItem("gone", tmp_path / "gone"), UploadItem("ok", tmp_path / "ok")]
    pair = make_pair(False)
    up, down = pair.run(
        upload_sandbox(pair.client_conn, items, final_transfer=False),
        download_sandbox(pair.server_conn, SandboxDestination(tmp_path / "out")),
    )
    assert not up.ok and not down.ok
    assert up.code == 13 and up.subcode == 2
    assert down.code == 13 and down.subcode == 2
    assert (tmp_path / "out" / "ok").read_bytes() == b"fine"
    assert not (tmp_path / "out" / "gone").exists()
    sent = b"".join(pair.sent["c2s"])
    assert MISSING_FILE_PERMISSIONS.to_bytes(8, "big") in sent


def test_expand_inputs_rules(tmp_path: Path) -> None:
    make_tree(tmp_path)
    names = [i.name for i in expand_inputs(["sub/", "http://x/y", "nothere", "blob.bin"], tmp_path)]
    assert names == ["data.txt", "empty.dat", "nothere", "blob.bin"]
    os.symlink(tmp_path / "sub", tmp_path / "linkdir")
    os.mkfifo(tmp_path / "fifo")
    items = expand_inputs(["linkdir", "fifo", "blob.bin", "blob.bin"], tmp_path)
    assert [(i.name, i.directory) for i in items] == [("linkdir", False), ("blob.bin", False)]


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape", "a/../../b", "", "a/.."])
def test_check_name_refuses_escapes(name: str) -> None:
    assert check_name(name) is not None


# ----------------------------------------------------------------------------- hostile senders


def hostile_sender(conn: CedarConnection, items: list[tuple[int, str, bytes, int | None]]):
    """A sender that announces ``declared`` bytes but sends ``body`` (then closes)."""
    w = conn.writer().put_int(1)
    from cedar.classad_wire import ClassAd, put_classad

    put_classad(w, ClassAd({"SandboxSize": 1}))
    from cedar.stream.protocol import Receive, Send, SendRaw

    yield Send(w)
    for index, (command, name, body, declared) in enumerate(items):
        yield Send(conn.writer().put_int(command))
        yield Send(conn.writer().put_string(name))
        if index == 0:
            yield Send(conn.writer().put_int(300))
            yield Receive()
            yield Receive()
            g = conn.writer()
            put_classad(g, ClassAd({"Result": 2}))
            yield Send(g)
        yield Send(conn.writer().put_int(0o644))
        yield Send(conn.writer().put_int(len(body) if declared is None else declared))
        if body:
            yield SendRaw(body)
    return None


def test_truncated_body_leaves_no_file(tmp_path: Path) -> None:
    pair = make_pair(False)
    with pytest.raises(ConnectionClosed, match="middle of a file"):
        pair.run(
            hostile_sender(pair.client_conn, [(1, "big.dat", b"x" * 100, 10_000)]),
            download_sandbox(pair.server_conn, SandboxDestination(tmp_path)),
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["../outside.txt", "/tmp/cedar-abs-test.txt", "a/../../x"])
def test_escaping_names_write_nothing_outside(tmp_path: Path, name: str) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    pair = make_pair(False)

    def sender():
        yield from hostile_sender(
            pair.client_conn, [(1, name, b"evil", None), (1, "ok", b"good", None)]
        )
        from cedar.classad_wire import ClassAd, put_classad
        from cedar.stream.protocol import Receive, Send

        yield Send(pair.client_conn.writer().put_int(0))
        w = pair.client_conn.writer()
        put_classad(w, ClassAd({"Result": 0}))
        yield Send(w)
        reply = yield Receive()
        return reply

    _, report = pair.run(sender(), download_sandbox(pair.server_conn, SandboxDestination(dest)))
    assert not report.ok and report.code == 12 and report.subcode == 1  # EPERM
    assert (dest / "ok").read_bytes() == b"good"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["dest", "ok"]
    assert not Path("/tmp/cedar-abs-test.txt").exists()


def test_endless_sandbox_is_cut_off(tmp_path: Path) -> None:
    pair = make_pair(False)
    items = [(1, f"f{i}", b"x", None) for i in range(50)]
    with pytest.raises(FileTransferError, match="more than 20 items"):
        pair.run(
            hostile_sender(pair.client_conn, items),
            download_sandbox(pair.server_conn, SandboxDestination(tmp_path), max_items=20),
        )


def test_byte_limit(tmp_path: Path) -> None:
    pair = make_pair(False)
    with pytest.raises(FileTransferError, match="limit"):
        pair.run(
            hostile_sender(pair.client_conn, [(1, "f", b"x" * 100, None)]),
            download_sandbox(pair.server_conn, SandboxDestination(tmp_path), max_bytes=50),
        )
    assert list(tmp_path.iterdir()) == []


def test_unknown_command_is_refused(tmp_path: Path) -> None:
    pair = make_pair(False)
    with pytest.raises(FileTransferError, match="command 4"):
        pair.run(
            hostile_sender(pair.client_conn, [(4, "proxy", b"", None)]),
            download_sandbox(pair.server_conn, SandboxDestination(tmp_path)),
        )


def test_aes_chunk_past_size_is_protocol_error(tmp_path: Path) -> None:
    from cedar.classad_wire import ClassAd, put_classad
    from cedar.stream.protocol import Receive, Send

    pair = make_pair(True)
    conn = pair.client_conn

    def sender():
        w = conn.writer().put_int(0)
        put_classad(w, ClassAd({"SandboxSize": 4}))
        yield Send(w)
        yield Send(conn.writer().put_int(1))
        yield Send(conn.writer().put_string("f"))
        yield Send(conn.writer().put_int(300))
        yield Receive()
        yield Receive()
        g = conn.writer()
        put_classad(g, ClassAd({"Result": 2}))
        yield Send(g)
        yield Send(conn.writer().put_int(0o600))
        yield Send(conn.writer().put_int(4).put_int(262144))
        yield Send(b"way more than four bytes")

    with pytest.raises(ProtocolError, match="past its announced size"):
        pair.run(sender(), download_sandbox(pair.server_conn, SandboxDestination(tmp_path)))
    assert list(tmp_path.iterdir()) == []


def test_progress_callback(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(os.urandom(700_000))
    seen = []
    pair = make_pair(True)
    pair.run(
        upload_sandbox(
            pair.client_conn, [UploadItem("big", tmp_path / "big")], final_transfer=True
        ),
        download_sandbox(
            pair.server_conn, SandboxDestination(tmp_path / "o"), progress=seen.append
        ),
    )
    assert [p.file_done for p in seen] == [262144, 524288, 700_000]
    assert seen[-1].total_done == seen[-1].total_size == 700_000
    assert (tmp_path / "o" / "big").read_bytes() == (tmp_path / "big").read_bytes()
    _ = MessageReader


@pytest.mark.parametrize("aes", [False, True], ids=["clear", "aes"])
def test_large_file_in_bounded_memory(tmp_path: Path, aes: bool) -> None:
    """A 256 MiB (sparse) file crosses in chunks: peak traced memory stays a few MiB."""
    import tracemalloc

    size = 256 << 20
    source = tmp_path / "big.dat"
    with open(source, "wb") as handle:
        handle.seek(size - 5)
        handle.write(b"tail!")
    pair = make_pair(aes)
    pair.sent = {"c2s": _Discard(), "s2c": _Discard()}  # type: ignore[dict-item]
    pair.log = _Discard()  # type: ignore[assignment]
    tracemalloc.start()
    try:
        _, report = pair.run(
            upload_sandbox(pair.client_conn, [UploadItem("big.dat", source)], final_transfer=True),
            download_sandbox(pair.server_conn, SandboxDestination(tmp_path / "out")),
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.ok and report.bytes == size
    received = tmp_path / "out" / "big.dat"
    assert received.stat().st_size == size
    with open(received, "rb") as handle:
        handle.seek(size - 5)
        assert handle.read() == b"tail!"
    assert peak < 16 << 20, f"peak traced memory {peak} bytes"


class _Discard(list):  # type: ignore[type-arg]
    """A list that keeps nothing (the in-memory driver's recordings, for big transfers)."""

    def append(self, item: object) -> None:
        pass


def test_unreadable_source_is_sent_empty_and_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the reference (spec 07 §7.5.3): the item's real mode, an empty file, code 13/EACCES.
    (Root reads a mode-000 file, so the open failure is injected.)"""
    import builtins
    import errno as errnos

    import cedar.commands.filetransfer as ft

    (tmp_path / "secret").write_bytes(b"hidden")
    os.chmod(tmp_path / "secret", 0)

    def refusing_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).endswith("secret"):
            raise PermissionError(errnos.EACCES, "Permission denied")
        return builtins.open(path, *args, **kwargs)

    monkeypatch.setattr(ft, "open", refusing_open, raising=False)
    pair = make_pair(False)
    up, down = pair.run(
        upload_sandbox(
            pair.client_conn, [UploadItem("secret", tmp_path / "secret")], final_transfer=False
        ),
        download_sandbox(pair.server_conn, SandboxDestination(tmp_path / "out")),
    )
    assert (up.ok, up.code, up.subcode) == (False, 13, 13)
    assert (down.code, down.subcode) == (13, 13)
    assert "Permission denied" in (up.error or "")
    assert (tmp_path / "out" / "secret").read_bytes() == b""  # the empty file is created


def test_empty_sandbox_has_no_go_ahead(tmp_path: Path) -> None:
    """Header, I(0) and the reports only (spec 07 §10.6)."""
    pair = make_pair(False)
    up, down = pair.run(
        upload_sandbox(pair.client_conn, [], final_transfer=True),
        download_sandbox(pair.server_conn, SandboxDestination(tmp_path)),
    )
    assert up.ok and down.ok and down.files == []
    assert [direction for direction, _ in pair.log] == ["c2s", "c2s", "c2s", "s2c"]


def test_a_file_larger_than_the_free_space_is_refused_up_front(tmp_path: Path) -> None:
    """A sender announcing an endless file is stopped before anything is written."""
    pair = make_pair(False)
    with pytest.raises(FileTransferError, match="bytes free") as info:
        pair.run(
            hostile_sender(pair.client_conn, [(1, "endless", b"x" * 10, 1 << 62)]),
            download_sandbox(pair.server_conn, SandboxDestination(tmp_path)),
        )
    assert info.value.subcode == 28  # ENOSPC
    assert list(tmp_path.iterdir()) == []
