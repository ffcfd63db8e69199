"""The public client API: sync and async alike, generated code fresh, natural arguments accepted,
per-call results returned (not stored), every deliberate error a CedarError."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
import trio

import cedar
from cedar.auth.client_config import SecurityConfig
from cedar.classad_wire import ClassAd
from cedar.commands import AsyncCollector, AsyncSchedd, Collector, Schedd
from cedar.daemons.pool import MockPool
from cedar.errors import CedarError, InvalidArgument
from cedar.numbers import AdType, DaemonType, JobAction, JobStatus
from cedar.submit_language import SubmitSettings

ROOT = Path(__file__).resolve().parents[2]


def _unasync_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unasync", ROOT / "tools" / "unasync.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["unasync"] = module
    spec.loader.exec_module(module)
    return module


def test_generated_sync_clients_are_fresh() -> None:
    stale = _unasync_tool().stale()
    assert not stale, f"run `python tools/unasync.py`: stale {[str(p) for p in stale]}"


def _public(cls: type) -> dict[str, list[str]]:
    return {
        name: list(inspect.signature(member).parameters)
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and callable(member)
    }


@pytest.mark.parametrize(("sync", "async_"), [(Schedd, AsyncSchedd), (Collector, AsyncCollector)])
def test_sync_and_async_clients_have_the_same_methods(sync: type, async_: type) -> None:
    assert _public(sync) == _public(async_)
    for name in ("hold", "release", "remove", "act", "edit", "submit", "history", "query"):
        if sync is Schedd:
            assert name in _public(AsyncSchedd)


def test_enums_answer_to_both_spellings() -> None:
    # (by name: type checkers take an enum alias for a member of its own)
    assert AdType["Schedd"] is AdType.SCHEDD and AdType["StartDaemon"] is AdType.START_DAEMON
    assert DaemonType["Schedd"] is DaemonType.SCHEDD
    assert JobAction["HOLD"] is JobAction.Hold and JobAction["REMOVE_X"] is JobAction.RemoveX
    assert JobStatus["Held"] is JobStatus.HELD and JobStatus.HELD.letter == "H"
    assert [m.name for m in DaemonType][:2] == ["MASTER", "SCHEDD"]  # aliases do not iterate


@pytest.mark.parametrize(
    "call",
    [
        lambda: AdType.from_name("no-such-type"),
        lambda: DaemonType.from_name("no-such-daemon"),
        lambda: JobAction.from_name("no-such-action"),
        lambda: JobAction.from_name(99),
        lambda: cedar.commands.schedd.query_request("JobStatus =="),
        lambda: cedar.commands.schedd.parse_job_spec(["1.x"]),
        lambda: cedar.commands.collector.update_command("NO_SUCH_COMMAND"),
        lambda: Schedd(ClassAd({"Name": "x"})),
    ],
)
def test_bad_arguments_are_cedar_errors(call: Callable[[], object]) -> None:
    with pytest.raises(InvalidArgument) as info:
        call()
    assert isinstance(info.value, CedarError) and isinstance(info.value, ValueError)


def test_error_hierarchy() -> None:
    for name in ("TokenError", "SciTokenError", "TlsFailure", "SubmitRejected", "CommandDenied"):
        assert issubclass(getattr(cedar, name), CedarError), name
    assert not issubclass(cedar.TokenError, ValueError)


@pytest.fixture
def pool() -> Iterator[MockPool]:
    with MockPool().run_in_thread() as running:
        yield running


def test_schedd_accepts_what_users_pass(pool: MockPool) -> None:
    location = Collector(pool.address).locate(DaemonType.Schedd)
    ad = Collector(pool.address).query(AdType.Schedd)[0]
    for where in (location, ad, pool.schedd_address):
        assert Schedd(where).query() == []
    assert Schedd(name=location.name, pool=pool.address).query() == []


def test_security_config_is_accepted_everywhere(pool: MockPool) -> None:
    config = SecurityConfig(methods=["FS"])
    assert Collector(pool.address, security=config).query(AdType.SCHEDD)
    assert Schedd(pool.schedd_address, security=config).query() == []
    assert cedar.ping(pool.address, "READ", security=config).authorized


def test_submit_does_not_change_the_callers_settings(pool: MockPool) -> None:
    settings = SubmitSettings()
    before = dataclasses.replace(settings)
    schedd = Schedd(pool.schedd_address, settings=settings)
    schedd.submit("executable = /bin/true\nqueue\n")
    assert settings == before and settings.submit_method is None


def test_summary_belongs_to_each_query(pool: MockPool) -> None:
    schedd = Schedd(pool.schedd_address)
    schedd.submit("executable = /bin/true\nqueue 2\n")
    first, second = schedd.query_iter(limit=1), schedd.query_iter()
    assert len(list(second)) == 2 and len(list(first)) == 1
    assert first.summary is not None and second.summary is not None
    assert not hasattr(schedd, "last_summary")


def test_async_schedd_by_name_never_blocks_the_trio_loop() -> None:
    """The pool runs in the same Trio loop: one blocking call in the client would deadlock it
    (the timeout turns that into a failure instead of a hang)."""

    async def main() -> None:
        pool = MockPool()
        async with trio.open_nursery() as nursery:
            await nursery.start(pool.serve)
            schedd = AsyncSchedd(name="mock-schedd", pool=pool.address, timeout=10)
            with trio.fail_after(120):  # generous: only a deadlock should reach it
                assert await schedd.query() == []
                result = await schedd.submit("executable = /bin/true\nqueue\n")
                held = await schedd.hold(result.cluster)
                assert held.succeeded == 1
                assert (await schedd.release(result.cluster)).succeeded == 1
                assert (await schedd.remove(result.cluster)).succeeded == 1
                query = schedd.query_iter()
                assert [ad async for ad in query] == [] and query.summary is not None
            nursery.cancel_scope.cancel()

    trio.run(main)
