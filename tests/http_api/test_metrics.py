"""``/metrics`` carries the pool's gauges (jobs by status, slots by state), read at most once
an interval, in text the Prometheus parser reads; ``/readyz`` says 503 once the collector is
gone (issue 37, point 4)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from cedar.config import Config
from cedar.daemons.pool import MockPool
from cedar.service_core import ServiceSettings
from tests.http_api.conftest import RunningServer, client, serving
from tests.http_api.test_api import submit
from tests.service_core.conftest import TokenPool

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus-client (test extra)")


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in parser.text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_metrics_parse_and_carry_the_pool_gauges(
    token_pool: TokenPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cedar.http_api.metrics as metrics

    readings: list[int] = []
    read = metrics._read

    async def counted(*args: Any) -> None:
        readings.append(1)
        await read(*args)

    monkeypatch.setattr(metrics, "_read", counted)
    with serving(token_pool, metrics_interval=3600) as api:
        submit(api.alice, 2)
        first = _samples(api.anonymous.get("/metrics").text)
        submit(api.alice, 1)
        second = _samples(api.anonymous.get("/metrics").text)
    assert first[("cedar_serve_pool_up", ())] == 1
    assert first[("cedar_serve_pool_jobs", (("status", "Idle"),))] >= 2
    assert {labels for name, labels in first if name == "cedar_serve_pool_jobs"} >= {
        (("status", s),) for s in ("Idle", "Running", "Held", "Completed", "Removed")
    }
    # one reading an interval, whatever the scrape rate: the second scrape reuses the first
    assert len(readings) == 1
    assert (
        second[("cedar_serve_pool_jobs", (("status", "Idle"),))]
        == first[("cedar_serve_pool_jobs", (("status", "Idle"),))]
    )
    assert any(name == "cedar_serve_requests_total" for name, _ in second)


def test_readyz_is_503_and_the_pool_down_once_the_collector_stops() -> None:
    pool = MockPool.for_setup("tokens", simulate=False)
    with pool.run_in_thread():
        settings = ServiceSettings(
            collector=pool.address, schedd=pool.schedd_address, config=Config(), rate=0
        )
        server = RunningServer(replace(settings, metrics_interval=0)).start()
        with client(server.url) as anonymous:
            assert anonymous.get("/readyz").status_code == 200
    # the pool stopped: its ports refuse
    try:
        with client(server.url) as anonymous:
            ready = anonymous.get("/readyz")
            assert ready.status_code == 503 and ready.json()["status"] == "unavailable"
            down = _samples(anonymous.get("/metrics").text)
            assert down[("cedar_serve_pool_up", ())] == 0
            assert down[("cedar_serve_pool_errors_total", ())] >= 1
    finally:
        server.stop()


def test_the_server_reads_the_pool_each_interval_without_a_request(token_pool: TokenPool) -> None:
    """The pool page's series covers the time the server ran: cedar serve's watcher reads the
    gauges once an interval although nobody scrapes or looks."""
    import trio

    from cedar.http_api.metrics import PoolGauges, watch
    from cedar.service_core import PoolAccess

    gauges = PoolGauges()
    access = PoolAccess(replace(token_pool.settings, schedd=token_pool.pool.schedd_address))

    async def main() -> None:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch, access, gauges, 0.05)
                while len(gauges.history) < 3:
                    await trio.sleep(0.05)
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert gauges.up and len(gauges.history) >= 3
    times = [t for t, _ in gauges.history]
    assert times == sorted(times) and all("idle" in jobs or jobs for _, jobs in gauges.history)


def test_metrics_count_daemon_round_trips_and_errors(token_pool: TokenPool) -> None:
    """Every command a client ran, by daemon type and command name, its seconds, and errors by
    kind (a token the schedd refuses); labels from fixed tables: no job id, user or address."""
    with serving(token_pool, metrics_interval=3600) as api:
        jobs = submit(api.alice, 1)
        assert api.alice.get(f"/api/v1/jobs/{jobs[0]}").status_code == 200
        forged = {"Authorization": f"Bearer {token_pool.foreign}"}
        assert api.anonymous.get("/api/v1/jobs", headers=forged).status_code == 401
        text = api.anonymous.get("/metrics").text
    samples = _samples(text)  # the Prometheus parser reads it all
    calls = {
        dict(labels)["command"]: value
        for (name, labels), value in samples.items()
        if name == "cedar_serve_daemon_requests_total" and dict(labels)["daemon"] == "schedd"
    }
    assert calls["QUERY_JOB_ADS"] >= 1 and calls["QMGMT_WRITE_CMD"] >= 1, calls
    assert any(
        name == "cedar_serve_daemon_requests_total" and dict(labels)["daemon"] == "collector"
        for name, labels in samples
    )
    assert any(name == "cedar_serve_daemon_request_seconds_total" for name, _ in samples)
    errors = {
        (dict(labels)["command"], dict(labels)["kind"])
        for (name, labels), _ in samples.items()
        if name == "cedar_serve_daemon_errors_total"
    }
    assert any(command == "DC_SEC_QUERY" for command, _ in errors), errors
    daemon_lines = [line for line in text.splitlines() if "cedar_serve_daemon" in line]
    for secret in (jobs[0], "alice", "127.0.0.1", token_pool.foreign[:20]):
        assert not any(secret in line for line in daemon_lines), secret


def test_daemon_error_kinds_are_bounded() -> None:
    from cedar.http_api.metrics import MAX_ERROR_KINDS, DaemonCalls
    from cedar.numbers import Command

    calls = DaemonCalls()
    for number in range(MAX_ERROR_KINDS + 10):
        kind = type(f"Kind{number}", (Exception,), {})
        calls.record(Command.QUERY_JOB_ADS, kind(), 0.01)
    calls.record(Command.QUERY_STARTD_ADS, None, 0.01)
    calls.record(Command.STARTER_PEEK, GeneratorExit(), 0.01)  # an early stop: no error
    kinds = {kind for _, _, kind in calls.errors}
    assert len(kinds) == MAX_ERROR_KINDS + 1 and "other" in kinds
    assert calls.errors[("schedd", "QUERY_JOB_ADS", "other")] == 10
    assert calls.calls[("collector", "QUERY_STARTD_ADS")] == 1
    assert calls.calls[("starter", "STARTER_PEEK")] == 1
    assert not [key for key in calls.errors if key[1] == "STARTER_PEEK"]
