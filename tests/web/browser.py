"""Headless Chromium through Selenium for the web page's tests (Debian's chromium and
chromium-driver; ``.ci/run`` installs them), and the ``cedar serve --demo`` process they drive."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Where the suite's screenshots go (docs/ keeps the two the README shows).
SCREENSHOTS = Path(os.environ.get("CEDAR_WEB_SCREENSHOTS", tempfile.gettempdir())) / "cedar-web"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1000",
)


def need_browser() -> None:
    """Skip without Chromium, except under ``.ci/run`` (``CEDAR_WEB_REQUIRE_BROWSER=1``), where
    its absence is a failure."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium")
    if missing:
        if os.environ.get("CEDAR_WEB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"the browser tests need {', '.join(missing)} (.ci/run installs them)")
        pytest.skip(f"no {', '.join(missing)} (apt-get install -y chromium chromium-driver)")


@contextmanager
def chromium(downloads: Path) -> Iterator[Any]:
    """A fresh headless Chromium (its own profile directory) that saves downloads in
    ``downloads`` and keeps a performance log of every request it makes."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_AVOID_STATS", "true")
    profile = tempfile.mkdtemp(prefix="cedar-web-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def demo_server() -> Iterator[tuple[str, dict[str, str]]]:
    """``cedar serve --demo`` as its own process: (URL, {user: token}).  It binds port 0 and
    says which port it got ("listening on URL"): no free port probed, so none to lose."""
    code = "import sys; from cedar.cli.main import main; sys.exit(main(sys.argv[1:]))"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--demo", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    tokens: dict[str, str] = {}
    url = ""
    deadline = time.monotonic() + 60
    try:
        for line in process.stdout:
            found = re.search(r"demo tokens in (\S+):", line)
            if found:
                directory = Path(found.group(1))
                tokens = {p.stem: p.read_text().strip() for p in directory.glob("*.token")}
            found = re.search(r"listening on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
            if time.monotonic() > deadline:
                break
        assert url and tokens, "cedar serve --demo did not start"
        # keep reading what it says, so a full pipe never blocks it
        threading.Thread(target=process.stdout.read, daemon=True).start()
        yield url, tokens
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
