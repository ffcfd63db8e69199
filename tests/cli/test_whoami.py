"""``cedar whoami`` and ``cedar.whoami`` against the mock pool (the live comparison with
``condor_ping -verbose`` is tests/live_pool/test_whoami_live.py)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
import trio

from cedar.cli.main import main
from cedar.cli.whoami import describe
from cedar.commands import ping, whoami, whoami_async
from cedar.commands.ping import Identity, PingResult
from cedar.daemons.pool import MockPool


@pytest.fixture(scope="module")
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        yield running


def cedar(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(list(argv), out=io.StringIO())
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_text_names_the_identity_method_session_and_route(
    pool: MockPool, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--pool", pool.host_port, "--type", "schedd", "--name", pool.schedd.name]
    status, out, err = cedar("whoami", *where, capsys=capsys)
    assert (status, err) == (0, "")
    fields = dict(line.split(":", 1) for line in out.splitlines())
    assert fields["Destination"].strip().startswith("<127.0.0.1:")
    reference = ping(fields["Destination"].strip(), "WRITE", timeout=20)
    assert fields["Remote Mapping"].strip() == reference.user
    assert fields["Authenticated using"].strip() == reference.method
    assert fields["Session"].strip().startswith("new, kept for later commands (")
    assert fields["Route"].strip() == "direct"
    assert fields["Authorized (WRITE)"].strip() == "TRUE"


def test_json(pool: MockPool, capsys: pytest.CaptureFixture[str]) -> None:
    where = ["--pool", pool.host_port, "--type", "schedd", "--name", pool.schedd.name]
    status, out, _ = cedar("whoami", *where, "--json", capsys=capsys)
    shown = json.loads(out)
    assert status == 0
    assert shown["level"] == "WRITE" and shown["route"] == "direct"
    assert shown["identity"] and shown["method"] and shown["authorized"] is True
    assert set(shown) == set(Identity.__dataclass_fields__)
    assert "session_id" not in out


def test_unreachable_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cedar(
        "whoami", "--address", "<127.0.0.1:1>", "--timeout", "5", capsys=capsys
    )
    assert status == 3 and out == "" and err.startswith("cedar whoami: ")
    status, _, err = cedar("whoami", "--address", "<127.0.0.1:1>", "NOSUCHLEVEL", capsys=capsys)
    assert status == 2 and "unknown permission level" in err


def test_library_calls_sync_and_async(pool: MockPool) -> None:
    address = pool.schedd.address
    blocking = whoami(address, timeout=20)

    async def asking() -> Identity:
        return await whoami_async(address, timeout=20)

    assert trio.run(asking).identity == blocking.identity
    assert blocking.address == address and blocking.route == "direct"
    assert blocking.session.startswith("new, kept") and blocking.session_duration


def test_describe_uses_condor_pings_spellings() -> None:
    result = PingResult("WRITE", 60021, True, "testuser@minicondor", "TOKEN", "AES", True, "v")
    text = describe(Identity.from_ping("<a>", result))
    assert "Authenticated using:  IDTOKENS\n" in text
    assert "Session:              new, not kept\n" in text
    kerberos = PingResult("WRITE", 60021, False, "u@d", "KERBEROS", None, False, None, "no")
    kerberos.principal = "testuser@MINICONDOR.TEST"
    text = describe(Identity.from_ping("<a>", kerberos))
    assert "Principal:            testuser@MINICONDOR.TEST\n" in text
    assert text.endswith("Authorized (WRITE):   FALSE\nError:                no")
