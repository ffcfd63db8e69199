"""Running the app: Hypercorn's Trio worker, in this process (``cedar serve``, the tests, the
benchmark), optionally over the embedded mock pool (``--demo``)."""

from __future__ import annotations

import getpass
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import trio

from cedar.config import Config
from cedar.service_core import ServiceSettings


@dataclass
class Demo:
    """What ``--demo`` made: the mock pool and a token per demo user."""

    pool: Any
    tokens: dict[str, str]
    token_dir: str


def start_demo_pool() -> tuple[Any, dict[str, str]]:
    """A mock pool with IDTOKENs (FS off), and tokens for ``alice``, ``bob`` and this user."""
    from cedar.auth.signing_key import SigningKeyStore
    from cedar.auth.token import create_token
    from cedar.daemons.pool import MockPool
    from cedar.http_api.web.demo import furnish

    pool = MockPool.for_setup("tokens", simulate=True, run_time=2.0)
    furnish(pool)  # slots for the web page's match analysis
    store = pool.policy.options["signing_keys"]
    assert isinstance(store, SigningKeyStore)
    key = store.get("POOL")
    assert key is not None
    domain = pool.policy.trust_domain or pool.policy.uid_domain
    tokens = {
        user: create_token(key, issuer=domain, subject=f"{user}@{domain}")
        for user in ("alice", "bob", getpass.getuser())
    }
    return pool, tokens


def write_tokens(tokens: dict[str, str], directory: str | None = None) -> str:
    """The demo tokens as files ``DIR/<user>.token`` (mode 0600; DIR new unless given)."""
    if directory is None:
        directory = tempfile.mkdtemp(prefix="cedar-serve-demo-")
    os.makedirs(directory, mode=0o700, exist_ok=True)
    for user, token in tokens.items():
        path = os.path.join(directory, f"{user}.token")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
            out.write(token + "\n")
    return directory


def hypercorn_config(settings: ServiceSettings) -> Any:
    """Hypercorn's settings for ours (bind, TLS, bounded waits for slow clients)."""
    from hypercorn.config import Config as HypercornConfig

    config = HypercornConfig()
    config.bind = [f"{settings.host}:{settings.port}"]
    config.accesslog = None
    # A connection that has not finished sending its request head within this time is closed
    # (Hypercorn counts it as idle), which bounds slow-header clients.  No read_timeout: Hypercorn
    # applies it while a response streams too, and would cut a long listing (observed: 60 s).
    config.keep_alive_timeout = 15
    config.read_timeout = None
    config.h11_max_incomplete_size = 64 * 1024  # request line + headers
    config.graceful_timeout = 5
    if settings.tls_cert and settings.tls_key:
        config.certfile = settings.tls_cert
        config.keyfile = settings.tls_key
    return config


async def serve(
    settings: ServiceSettings,
    *,
    demo: bool = False,
    demo_tokens: str | None = None,
    announce: Callable[[str], None] = print,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
    shutdown_trigger: Callable[[], Awaitable[None]] | None = None,
    mount: Callable[[Any], None] | None = None,
) -> None:
    """Serve the API until cancelled; ``task_status.started`` gets the bound URLs."""
    from hypercorn.trio import serve as hypercorn_serve

    from cedar.http_api.app import create_app, pool_problem, warm_up

    async with trio.open_nursery() as nursery:
        if demo:
            pool, tokens = start_demo_pool()
            await nursery.start(pool.serve)
            settings = replace(settings, collector=pool.address, schedd=pool.schedd_address)
            directory = write_tokens(tokens, demo_tokens)
            announce(f"demo pool (mock collector + schedd, IDTOKENs) on {pool.host_port}")
            announce(f"demo tokens in {directory}: " + ", ".join(f"{u}.token" for u in tokens))
        app = create_app(settings)
        if mount is not None:
            mount(app)
        await warm_up(app)
        svc = app.state.services
        if svc.settings.metrics_interval > 0:
            from cedar.http_api.metrics import watch as watch_pool

            # the pool page's series: one reading an interval for as long as the server runs
            nursery.start_soon(watch_pool, svc.access, svc.gauges, svc.settings.metrics_interval)
        if getattr(app.state, "iri", None) is not None:
            from cedar.http_api.iri.app import watch

            nursery.start_soon(watch, app.state.iri)  # the IRI API's outage watcher

        async def started(
            *, task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED
        ) -> None:
            await hypercorn_serve(
                app,  # type: ignore[arg-type]
                hypercorn_config(settings),
                shutdown_trigger=shutdown_trigger,
                task_status=task_status,
            )

        urls = await nursery.start(started)
        for url in urls:
            announce(f"cedar serve: listening on {url} (docs: {url}/docs)")

        async def say_whether_the_pool_answers() -> None:
            problem = await pool_problem(app.state.services)
            where = settings.collector or "the configured collector"
            if problem is None:
                announce(f"cedar serve: the pool's collector ({where}) answers")
            else:  # served anyway: /readyz turns ready when the pool does
                announce(f"cedar serve: the pool's collector ({where}) does not answer: {problem}")

        nursery.start_soon(say_whether_the_pool_answers)  # in the background: serving has begun
        if settings.shared_port_id:
            from cedar.http_api.sharedport import forwarding_socket_path, serve_forwarding

            path = forwarding_socket_path(settings.config or Config(), settings.shared_port_id)
            port = int(urls[0].rsplit(":", 1)[1])
            await nursery.start(serve_forwarding, path, port)
            announce(f"cedar serve: answering the shared port's HTTP forwarding on {path}")
        task_status.started(urls)
