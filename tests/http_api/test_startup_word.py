"""``cedar serve`` says at start-up whether the pool's collector answers (issue 38): a reader who
gave a wrong ``--pool`` learns it from the first lines, not from the first failed request."""

from __future__ import annotations

import socket
from dataclasses import replace

import trio

from cedar.http_api.server import serve
from cedar.service_core import ServiceSettings
from tests.service_core.conftest import TokenPool, token_pool  # noqa: F401 (a fixture)


def _announced(settings: ServiceSettings) -> list[str]:
    """What serve() announces until its word on the pool, then stop it."""
    lines: list[str] = []

    async def main() -> None:
        heard = trio.Event()

        def announce(text: str) -> None:
            lines.append(text)
            if "collector" in text and ("answers" in text or "does not answer" in text):
                heard.set()

        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                await nursery.start(
                    lambda task_status: serve(settings, announce=announce, task_status=task_status)
                )
                await heard.wait()
                nursery.cancel_scope.cancel()

    trio.run(main)
    return lines


def test_a_pool_that_answers_is_said_so(token_pool: TokenPool) -> None:  # noqa: F811
    settings = replace(token_pool.settings, host="127.0.0.1", port=0)
    lines = _announced(settings)
    assert any(line.endswith(") answers") for line in lines), lines


def test_a_pool_that_does_not_answer_is_said_so(token_pool: TokenPool) -> None:  # noqa: F811
    with socket.socket() as bound:  # bound, never listening: a connection is refused
        bound.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{bound.getsockname()[1]}"
        settings = replace(
            token_pool.settings, host="127.0.0.1", port=0, collector=dead, timeout=10.0
        )
        lines = _announced(settings)
    said = [line for line in lines if "does not answer" in line]
    assert said and dead in said[0], lines
    assert any("listening on" in line for line in lines)  # it serves anyway
