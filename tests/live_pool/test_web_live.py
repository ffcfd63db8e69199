"""The web page's browser scenario (tests/web/scenario.py) against ``cedar serve`` on the real
pool: the same steps as against ``--demo``, with jobs that really run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from cedar.auth.signing_key import SigningKey
from cedar.auth.token import create_token
from cedar.config import Config
from cedar.service_core import ServiceSettings
from tests.http_api.conftest import RunningServer
from tests.live_pool.conftest import readable
from tests.live_pool.test_serve_live import _token_file
from tests.web.browser import need_browser
from tests.web.scenario import GREETING, Target, run


def real_stdout_ok(text: str, word: str) -> bool:
    """The job ran ``echo WORD; cat greeting.txt`` in its sandbox."""
    return text == f"{word}\n{GREETING}"


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    need_browser()
    token = _token_file(os.environ.get("CEDAR_LIVE_TOKEN_DIR"))
    key_path = os.environ.get("CEDAR_LIVE_SIGNING_KEY")
    if token is None or not readable(key_path) or key_path is None:
        pytest.skip("needs the pool's token directory and signing key (run as root)")
    domain = os.environ.get("CEDAR_LIVE_TRUST_DOMAIN", "minicondor")
    other = create_token(
        SigningKey.load(key_path, "POOL"), issuer=domain, subject=f"other@{domain}"
    )
    config = Config.load(condor_config=os.environ.get("CEDAR_LIVE_CONDOR_CONFIG"))
    settings = replace(
        ServiceSettings.from_config(config),
        collector=os.environ["CEDAR_LIVE_COLLECTOR"],
        rate=0,
    )
    server = RunningServer(settings).start()
    try:
        yield Target(
            server.url,
            token,
            other,
            real_stdout_ok,
            patience=240,
            too_much="1TB",
            label="pool",
            real=True,
        )
    finally:
        server.stop()


def test_the_page_in_a_browser_against_the_real_pool(target: Target, tmp_path: Path) -> None:
    run(target, tmp_path, user="testuser@", other="other@")
