"""A running ``cedar serve`` (Hypercorn on a port the kernel picks, in a thread) over a mock
pool with IDTOKENs for alice and bob; tests talk to it with httpx, as any client would."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
import trio

from cedar.service_core import ServiceSettings
from tests.service_core.conftest import TokenPool, token_pool  # noqa: F401 (a fixture)


class RunningServer:
    """``cedar.http_api.server.serve`` in a background thread until :meth:`stop`."""

    def __init__(self, settings: ServiceSettings, **options: Any) -> None:
        # port 0: Hypercorn binds and says its port (probing for a free one and binding it
        # later raced with other suites)
        self.settings = replace(settings, host="127.0.0.1", port=0)
        self.url = ""
        self.port = 0
        self._options = options
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from cedar.http_api.server import serve

        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            with trio.CancelScope() as scope:
                self._scope = scope
                async with trio.open_nursery() as nursery:
                    urls = await nursery.start(
                        lambda task_status: serve(
                            self.settings,
                            announce=lambda text: None,
                            task_status=task_status,
                            **self._options,
                        )
                    )
                    self.url = urls[0]
                    self.port = int(self.url.rsplit(":", 1)[1])
                    self._ready.set()

        try:
            trio.run(main)
        except BaseException as exc:  # reported by start()
            self._error = exc
        finally:
            self._ready.set()

    def start(self) -> RunningServer:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        if self._token is not None and self._scope is not None:
            scope = self._scope
            with contextlib.suppress(RuntimeError, trio.RunFinishedError):
                trio.from_thread.run_sync(scope.cancel, trio_token=self._token)
        self._thread.join(10)


@dataclass
class Api:
    """The running server and a client per user."""

    server: RunningServer
    pool: TokenPool
    anonymous: httpx.Client
    alice: httpx.Client
    bob: httpx.Client

    @property
    def url(self) -> str:
        return self.server.url


def client(url: str, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def api(token_pool: TokenPool) -> Iterator[Api]:  # noqa: F811
    with serving(token_pool) as running:
        yield running


@contextlib.contextmanager
def serving(token_pool: TokenPool, **changes: Any) -> Iterator[Api]:  # noqa: F811
    """A running server over ``token_pool`` (``changes``: settings other than the tests')."""
    settings = replace(
        token_pool.settings,
        schedd=token_pool.pool.schedd_address,
        max_upload=1 << 20,
        restd_hide_attrs=("Env",),
    )
    server = RunningServer(replace(settings, **changes)).start()
    try:
        with (
            client(server.url) as anonymous,
            client(server.url, token_pool.alice) as alice,
            client(server.url, token_pool.bob) as bob,
        ):
            yield Api(server, token_pool, anonymous, alice, bob)
    finally:
        server.stop()
