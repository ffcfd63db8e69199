"""``/metrics`` carries the pool's gauges (jobs by status, slots by state), read at most once
an interval, in text the Prometheus parser reads; ``/readyz`` says 503 once the collector is
gone (issue 37, point 4)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from cedar.config import Config
from cedar.server.pool import MockPool
from cedar.service import ServiceSettings
from tests.serve.conftest import RunningServer, client, serving
from tests.serve.test_api import submit
from tests.service.conftest import TokenPool

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
    import cedar.serve.metrics as metrics

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

    from cedar.serve.metrics import PoolGauges, watch
    from cedar.service import PoolAccess

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
