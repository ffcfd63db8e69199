"""The web page's browser scenario, run against ``cedar serve --demo`` (tests/web) and the real
pool (tests/live_pool/test_web_live.py): sign in, submit a 3-job batch from a CSV with an input
file, watch it complete, download one output file, hold and release, explain and fix an idle
over-asking job, the archive, a second user who sees none of it, and no request leaving the
server."""

from __future__ import annotations

import json
import os
import re
import tarfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.web.browser import SCREENSHOTS, chromium

DESCRIPTION = """\
executable = /bin/sh
transfer_executable = false
arguments = "-c 'echo $(word); cat greeting.txt'"
output = out-$(Process).txt
error = err-$(Process).txt
log = job-$(Process).log
request_memory = 64MB
"""
LIVE = """\
executable = /bin/sh
transfer_executable = false
arguments = "-c 'echo started; sleep 120'"
output = live.txt
error = live.err
should_transfer_files = YES
"""
#: The viewer's time zone the browser is given (times must be shown in it).
ZONE = "Pacific/Auckland"
BIG = """\
executable = /bin/sh
transfer_executable = false
arguments = "-c 'echo $(word)'"
request_memory = {memory}
"""
GREETING = "hello from the web page\n"
WORDS = ("alpha", "beta", "gamma")


@dataclass
class Target:
    """Where the scenario runs: the server's URL, a token per user, and what a job's stdout
    holds there (a real job prints; the mock lists the files it was given)."""

    url: str
    alice: str
    bob: str
    stdout_ok: Callable[[str, str], bool]
    #: Seconds to wait for jobs to finish.
    patience: float = 60.0
    #: Memory an over-asking job requests (more than any slot has).
    too_much: str = "100GB"
    #: Prefix of the screenshots' names (demo, pool).
    label: str = "demo"
    #: Whether jobs really run (live output while running; the job's own event log).
    real: bool = False
    shots: list[Path] = field(default_factory=list)


#: Every wait below may take this many times its stated seconds: the stated figure is what a
#: quiet machine needs, and a loaded CI machine running Chromium beside the suite is slower (a
#: wait that only ends sooner costs nothing; a false timeout costs the whole run).
SLACK = 5


def wait_for(what: str, check: Callable[[], Any], timeout: float, interval: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout * SLACK
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # stale elements while the page redraws
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def shot(driver: Any, target: Target, name: str) -> None:
    """A screenshot of the page as it is; with ``CEDAR_WEB_SCREENSHOTS`` set (the docs'
    pictures: ``CEDAR_WEB_SCREENSHOTS=docs``), also one at 1280x900 in each theme, there."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{target.label}-{name}.png"
    driver.save_screenshot(str(path))
    target.shots.append(path)
    docs = os.environ.get("CEDAR_WEB_SCREENSHOTS")
    if not docs or name == "phone":  # (the phone's is of its own width)
        return
    size = driver.get_window_size()
    driver.set_window_size(1280, 900)
    for theme in ("light", "dark"):
        driver.execute_script(THEME, theme)
        time.sleep(0.2)
        path = Path(docs) / f"web-{target.label}-{name}-{theme}.png"
        driver.save_screenshot(str(path))
        target.shots.append(path)
    driver.execute_script(THEME, None)
    driver.set_window_size(size["width"], size["height"])


#: Show the page in a theme (None: the system's), as the header's switch does.
THEME = """
if (arguments[0]) document.documentElement.setAttribute('data-theme', arguments[0]);
else document.documentElement.removeAttribute('data-theme');
"""


def by_css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def all_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def set_text(driver: Any, selector: str, text: str) -> None:
    """Fill a field as typing would (the page listens for ``input``)."""
    element = by_css(driver, selector)
    driver.execute_script(
        "arguments[0].value = arguments[1];"
        "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));",
        element,
        text,
    )


def sign_in(driver: Any, target: Target, token: str, user: str, keyboard: bool = False) -> None:
    """Sign in through the form (``keyboard``: with Tab, typing and Enter only)."""
    driver.get(target.url + "/")
    wait_for("the sign-in page", lambda: "/signin" in driver.current_url, 10)
    if keyboard:
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        for _ in range(10):  # Tab through the page until the token field has the focus
            ActionChains(driver).send_keys(Keys.TAB).perform()
            if driver.execute_script("return document.activeElement.id") == "token":
                break
        ActionChains(driver).send_keys(token).send_keys(Keys.TAB).perform()
        assert driver.execute_script("return document.activeElement.id") == "signin"
        ActionChains(driver).send_keys(Keys.ENTER).perform()
    else:
        by_css(driver, "#token").send_keys(token)
        by_css(driver, "#signin").click()
    wait_for("signed in", lambda: user in by_css(driver, ".who").text, 20)
    cookie = driver.get_cookie("cedar_session")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert "cedar_session" not in driver.execute_script("return document.cookie")
    assert token not in driver.page_source


def batch_row(driver: Any, name: str) -> Any:
    rows = all_css(driver, f'tr.batch[data-batch="{name}"]')
    return rows[0] if rows else None


def count(driver: Any, name: str, status: str) -> int:
    row = batch_row(driver, name)
    if row is None:
        return -1
    return int(row.find_element("css selector", f'td[data-status="{status}"]').text)


def submit_batch(
    driver: Any,
    target: Target,
    name: str,
    description: str,
    csv: str | Path,
    files: list[Path],
) -> int:
    """Submit from the Submit page (``csv``: pasted text, or a file to upload); returns the
    cluster id."""
    driver.get(target.url + "/submit")
    from selenium.webdriver.support.ui import Select

    Select(by_css(driver, "#template")).select_by_value("custom")
    set_text(driver, "#description", description)
    by_css(driver, "#batch-name").send_keys(name)
    if isinstance(csv, Path):
        by_css(driver, "#csv-file").send_keys(str(csv))
        by_css(driver, "#load-csv").click()
    elif csv:
        set_text(driver, "#csv-text", csv)
        by_css(driver, "#load-csv").click()
    for path in files:
        by_css(driver, "#input-files").send_keys(str(path))
    by_css(driver, "#preview").click()
    wait_for("the preview", lambda: "job(s)" in by_css(driver, "#preview-out").text, 20)
    by_css(driver, "#submit").click()
    wait_for("the batches page", lambda: "submitted=" in driver.current_url, 60)
    return int(driver.current_url.rsplit("=", 1)[1])


def run(target: Target, workdir: Path, user: str = "alice@", other: str = "bob@") -> None:
    """The whole scenario (see the module doc)."""
    downloads = workdir / "downloads"
    downloads.mkdir()
    greeting = workdir / "greeting.txt"
    greeting.write_text(GREETING)
    tag = uuid.uuid4().hex[:6]
    name, idle_name = f"web-{tag}", f"web-{tag}-big"
    with chromium(downloads) as driver:
        driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": ZONE})
        # --- signing in
        sign_in(driver, target, target.alice, user)
        shot(driver, target, "signin")

        # --- a description error is shown inline, before anything is submitted
        driver.get(target.url + "/submit")
        set_text(driver, "#description", "universe = nosuchuniverse\nexecutable = /bin/true\n")
        by_css(driver, "#preview").click()
        wait_for("an inline error", lambda: by_css(driver, "#preview-errors").text, 20)
        assert "universe" in by_css(driver, "#preview-errors").text.lower()

        # --- the submit form: labelled controls, "N copies"
        driver.get(target.url + "/submit")
        unlabelled = driver.execute_script(UNLABELLED)
        assert unlabelled == [], unlabelled
        from selenium.webdriver.support.ui import Select

        Select(by_css(driver, "#template")).select_by_value("sleep")
        by_css(driver, "#copies").clear()
        by_css(driver, "#copies").send_keys("5")
        by_css(driver, "#make-copies").click()
        assert len(all_css(driver, "#rows tbody tr")) == 5
        assert [c.text for c in all_css(driver, "#rows thead th")][1] == "seconds"

        # --- every built-in template previews cleanly once its columns are filled
        script = workdir / "run.sh"
        script.write_text('#!/bin/sh\necho "$@"\n')
        by_css(driver, "#input-files").send_keys(str(script))
        for template in ("sleep", "echo", "script", "container"):
            Select(by_css(driver, "#template")).select_by_value(template)
            for cell in all_css(driver, "#rows tbody input"):
                cell.clear()
                cell.send_keys("x" if template != "sleep" else "1")
            by_css(driver, "#preview").click()
            wait_for(
                f"the {template} preview",
                lambda: (
                    "job(s)" in by_css(driver, "#preview-out").text
                    or by_css(driver, "#preview-errors").text
                ),
                20,
            )
            assert not by_css(driver, "#preview-errors").text, (
                template,
                by_css(driver, "#preview-errors").text,
            )

        shot(driver, target, "submit")

        # --- a 3-job batch from an uploaded CSV, with an input file
        csv = workdir / "jobs.csv"
        csv.write_text("word,unused\n" + "\n".join(f"{w},x" for w in WORDS) + "\n")
        cluster = submit_batch(driver, target, name, DESCRIPTION, csv, [greeting])
        wait_for("the batch row", lambda: batch_row(driver, name), 20)

        # --- watching it complete (the page updates itself)
        wait_for("3 completed jobs", lambda: count(driver, name, "Completed") == 3, target.patience)
        shot(driver, target, "batches")
        driver.set_window_size(390, 844)  # a phone: nothing wider than the screen
        time.sleep(0.5)
        assert driver.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth + 1"
        )
        shot(driver, target, "phone")
        driver.set_window_size(1280, 1000)

        # --- opening a job and downloading one output file
        toggle = batch_row(driver, name).find_element("css selector", "button[aria-expanded]")
        toggle.click()
        link = wait_for(
            "the job rows", lambda: by_css(driver, f'tr.job[data-job="{cluster}.1"] a'), 10
        )
        link.click()
        wait_for("the job page", lambda: by_css(driver, "#job-status").text == "Completed", 30)
        file_link = wait_for(
            "the file link", lambda: by_css(driver, 'a[data-file="out-1.txt"]'), 20
        )
        file_link.click()
        saved = downloads / "out-1.txt"
        try:
            wait_for("the download", lambda: saved.exists() and saved.stat().st_size > 0, 30)
        except AssertionError as exc:
            names = sorted(p.name for p in downloads.iterdir())
            probe = driver.execute_script(
                "return fetch(arguments[0]).then(r => r.status + ' ' + r.statusText)",
                file_link.get_attribute("href"),
            )
            raise AssertionError(f"{exc}; have {names}; GET says {probe}") from None
        text = saved.read_text()
        assert target.stdout_ok(text, WORDS[1]), text
        # ... and then the whole sandbox as a tar (still there after one download)
        by_css(driver, "#tar-link").click()
        tar = downloads / f"job-{cluster}.1-output.tar"
        wait_for("the tar", lambda: tar.exists() and tarfile.is_tarfile(tar), 30)
        with tarfile.open(tar) as archive:
            member = archive.extractfile("out-1.txt")
            assert member is not None and member.read().decode() == text
        by_css(driver, "#show-ad").click()
        assert f"ClusterId = {cluster}" in by_css(driver, "#full-ad").text
        check_local_time(by_css(driver, 'dd[data-attr="QDate"] time'))
        # the job's own event log (from its sandbox), not only "Submitted"
        for kind in ("SubmitEvent", "ExecuteEvent", "JobTerminatedEvent"):
            wait_for(kind, lambda k=kind: all_css(driver, f'#events li[data-event="{k}"]'), 20)
        ended = by_css(driver, '#events li[data-event="JobTerminatedEvent"]').text
        assert "exit code 0" in ended, ended
        driver.execute_script("window.scrollTo(0, 0)")
        shot(driver, target, "job")

        # --- live output while a job runs (the mock runs nothing, so only on a real pool)
        if target.real:
            live = submit_batch(driver, target, f"web-{tag}-live", LIVE, "", [])
            driver.get(f"{target.url}/job/{live}.0")
            wait_for(
                "live stdout",
                lambda: "started" in by_css(driver, "#live-stdout").text,
                target.patience,
                interval=1,
            )
            by_css(driver, 'button[data-action="remove"]').click()
            wait_for("removed", lambda: by_css(driver, "#job-status").text == "Removed", 60)

        # --- an idle over-asking job: hold, release, explained, fixed
        # (not spooled: once done it leaves the queue for the archive at once)
        big = BIG.format(memory=target.too_much)
        big_cluster = submit_batch(driver, target, idle_name, big, "word\ndelta\n", [])
        job = f"{big_cluster}.0"
        wait_for("the idle batch", lambda: count(driver, idle_name, "Idle") == 1, 30)
        row = batch_row(driver, idle_name)
        row.find_element("css selector", 'button[data-action="hold"]').click()
        wait_for("held", lambda: count(driver, idle_name, "Held") == 1, 20)
        # released from the job's own row (the batch row has the same buttons)
        batch_row(driver, idle_name).find_element("css selector", "button[aria-expanded]").click()
        wait_for(
            "the job row", lambda: by_css(driver, f'tr.job[data-job="{job}"]'), 10
        ).find_element("css selector", 'button[data-action="release"]').click()
        wait_for("released", lambda: count(driver, idle_name, "Idle") == 1, 20)
        earlier = held_without_polling(driver, target, idle_name, job)

        driver.get(f"{target.url}/job/{job}")
        wait_for("the idle job", lambda: by_css(driver, "#job-status").text == "Idle", 30)
        by_css(driver, "#analyze").click()
        explanation = wait_for("the explanation", lambda: by_css(driver, "#explanation").text, 30)
        assert "memory" in explanation.lower() and "slot" in explanation.lower(), explanation
        driver.execute_script("document.getElementById('why-h').scrollIntoView()")
        shot(driver, target, "explained")
        fix = by_css(driver, 'button.fix[data-attribute="RequestMemory"]')
        fix.click()
        wait_for(
            "the job to run after the fix",
            lambda: by_css(driver, "#job-status").text in ("Running", "Completed"),
            target.patience,
        )
        shown = by_css(driver, 'dd[data-attr="RequestMemory"]')
        memory = shown.get_attribute("data-value") or ""
        assert memory.isdigit() and int(memory) < 100 * 1024, memory
        # shown in units (the ad's MiB), not as the raw number
        assert re.fullmatch(r"[0-9.]+ (KB|MB|GB)", shown.text), shown.text
        # an expression (the default RequestDisk) shown evaluated, in units, the expression kept
        disk = by_css(driver, 'dd[data-attr="RequestDisk"]')
        assert re.fullmatch(r"[0-9.]+ (KB|MB|GB|TB)", disk.text), disk.text
        assert "TransferInputSizeMB" in (disk.get_attribute("title") or ""), disk.get_attribute(
            "title"
        )

        # --- the archive: the fixed job, once done, with its runs
        def in_archive() -> bool:
            driver.get(target.url + "/archive")
            wait_for("the archive", lambda: all_css(driver, "#archive tbody tr"), 20)
            return bool(all_css(driver, f'#archive tr[data-job="{job}"]'))

        wait_for("the job in the archive", in_archive, target.patience, interval=2)
        by_css(driver, f'#archive tr[data-job="{job}"] button[data-epochs]').click()
        wait_for("its runs", lambda: by_css(driver, "#archive tr.epochs").text, 20)
        # the charts: every listed job counted once by exit code (or removed), runs by duration
        listed = len(all_css(driver, "#archive tbody tr[data-job]"))
        exit_rows = all_css(driver, "#exit-codes .bar-row")
        assert exit_rows, "no exit-code chart"
        assert (
            sum(int(r.find_element("css selector", ".n").text.split()[0]) for r in exit_rows)
            == listed
        )
        assert any(r.text.startswith("exit 0") for r in exit_rows), [r.text for r in exit_rows]
        assert all_css(driver, "#run-times .bar-row"), "no run-time chart"
        shot(driver, target, "archive")

        # --- the finished batch removed from the queue (one button) goes to the archive too
        driver.get(target.url + "/")
        wait_for("the batch", lambda: batch_row(driver, name), 20).find_element(
            "css selector", 'button[data-action="remove"]'
        ).click()
        wait_for("the batch to leave", lambda: batch_row(driver, name) is None, target.patience)
        wait_for(
            "the batch in the archive",
            lambda: (
                driver.get(target.url + "/archive")
                or wait_for("rows", lambda: all_css(driver, "#archive tbody tr[data-job]"), 20)
                and all_css(driver, f'#archive tr[data-job="{cluster}.0"]')
            ),
            target.patience,
            interval=2,
        )
        check_pool_page(driver, target)
        alice_requests = earlier + requests_made(driver)

        # --- a second user sees none of it
        driver.delete_all_cookies()
        sign_in(driver, target, target.bob, other, keyboard=True)
        driver.get(target.url + "/")
        wait_for("bob's batches", lambda: "Loading" not in by_css(driver, "#batches").text, 20)
        assert batch_row(driver, name) is None and batch_row(driver, idle_name) is None
        driver.get(target.url + "/archive")
        wait_for("bob's archive", lambda: "Loading" not in by_css(driver, "#archive").text, 20)
        assert not all_css(driver, f'#archive tr[data-job="{job}"]')
        assert not all_css(driver, f'#archive tr[data-job="{cluster}.0"]')
        driver.get(f"{target.url}/job/{cluster}.0")
        wait_for("refusal", lambda: "Cannot load" in by_css(driver, "#status-line").text, 20)
        answer = driver.execute_script(
            "return fetch('/web/api/jobs/' + arguments[0]).then(r => r.status)", f"{cluster}.0"
        )
        assert answer == 404
        shot(driver, target, "second-user")

        # --- no request left the server
        seen = alice_requests + requests_made(driver)
        assert any(u.startswith(target.url + "/web/api/") for u in seen)  # the log works
        outside = [u for u in seen if not local(u, target)]
        assert not outside, outside


def held_without_polling(driver: Any, target: Target, name: str, job: str) -> list[str]:
    """Hold and release ``job`` through the API, not the page: the open batches page shows each
    change from its event stream, without a reload and without listing the queue again.
    Returns the requests the browser made (read from its log here)."""
    made = requests_made(driver)
    driver.get(target.url + "/")
    wait_for("the stream", lambda: by_css(driver, "#live").text == "live", 20)
    wait_for("the idle batch", lambda: count(driver, name, "Idle") == 1, 20)
    driver.execute_script("window.cedarNotReloaded = true")
    made += requests_made(driver)
    for action, status in (("hold", "Held"), ("release", "Idle")):
        api_call(target, "POST", f"/api/v1/jobs/{job}/{action}", {"reason": "by the test"})
        wait_for(f"{status} without a reload", lambda s=status: count(driver, name, s) == 1, 30)
        after = requests_made(driver)
        listings = [u for u in after if u.startswith(target.url + "/web/api/jobs?")]
        assert not listings, listings
        assert driver.execute_script("return window.cedarNotReloaded === true")
        made += after
    return made


def check_pool_page(driver: Any, target: Target) -> None:
    """The pool page: slots by state with their CPUs, the caller's share of the running jobs
    (in words, not only bars), and the chart of jobs by status drawn as inline SVG."""
    driver.get(target.url + "/pool")
    assert by_css(driver, 'nav a[href="/pool"]').get_attribute("aria-current") == "page"
    rows = wait_for("the slots", lambda: all_css(driver, "#slots tbody tr[data-state]"), 20)
    assert all(int(r.find_elements("css selector", "td")[0].text) >= 1 for r in rows)
    share = wait_for("the share", lambda: by_css(driver, "#share").get_attribute("data-all"), 20)
    assert int(share) >= 0 and " running job" in by_css(driver, "#share").text
    lines = all_css(driver, "#chart svg.chart polyline")
    assert {line.get_attribute("data-series") for line in lines} == {"Idle", "Running", "Held"}
    assert "reading" in by_css(driver, "#chart-text").text
    shot(driver, target, "pool")


def api_call(target: Target, method: str, path: str, body: dict[str, Any]) -> Any:
    """A call to the server's API as alice, from outside the browser."""
    import urllib.request

    request = urllib.request.Request(
        target.url + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {target.alice}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


#: Form controls on the page without an accessible name (a label, aria-label or aria-labelledby).
UNLABELLED = """
return [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
  .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
               && !e.getAttribute('aria-labelledby'))
  .map(e => e.id || e.name || e.outerHTML);
"""


def check_local_time(element: Any) -> None:
    """A shown time is in the viewer's zone (the browser was put in :data:`ZONE`)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    stamp = datetime.fromisoformat(element.get_attribute("datetime").replace("Z", "+00:00"))
    local = stamp.astimezone(ZoneInfo(ZONE))
    shown = element.text
    assert f"{local.hour % 12 or 12}:{local.minute:02d}:{local.second:02d}" in shown, shown
    assert f"{local.month}/{local.day}/{local.year}" in shown, shown


def requests_made(driver: Any) -> list[str]:
    """Every URL the browser requested since the last call (its performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def local(url: str, target: Target) -> bool:
    """A request to the server, or one that never leaves the browser (its own pages such as
    the blank tab it starts with, ``data:`` and ``blob:`` URLs)."""
    if url.startswith(("data:", "blob:", "chrome://", "chrome-untrusted://", "about:")):
        return True
    return url.startswith(target.url + "/") or url == target.url
