"""Shared pieces of the collector tests: the captured pool, a mock collector, the reference client.

The mock pool is built from what a real 25.13.2 pool sent in the captures (slots, schedd,
master, collector, negotiator, submitter ads), so queries run against realistic ads.  The
store's clock is pinned to the capture time: expiry never depends on the wall clock.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cedar.capture.messages import load_conversations
from cedar.classad_wire import ClassAd
from cedar.commands.collector import read_query_results
from cedar.daemons.collector import AdStore, MockCollector
from cedar.stream import CedarConnection, ReplayChannel
from cedar.stream.protocol import Protocol, StreamedMessage
from tests.support import CAPTURES

#: A moment just after the captures were taken (their ads' LastHeardFrom is 1795307123).
CAPTURE_TIME = 1795307200


def capture_path(name: str) -> Path:
    path = CAPTURES / f"{name}.pcap"
    if not path.exists():
        pytest.skip(f"capture {path} is not available")
    return path


def capture_streams(name: str) -> tuple[list[bytes], bytes]:
    """(client message payloads, server wire bytes) of the first conversation of a capture."""
    conversation = load_conversations(capture_path(name))[0]
    client = [m.body for m in conversation.messages if m.direction == "C→S"]
    server = b"".join(m.wire for m in conversation.messages if m.direction == "S→C")
    return client, server


def _results() -> Protocol[int]:
    return (yield from read_query_results(StreamedMessage()))


def captured_ads(name: str) -> list[ClassAd]:
    """The ads a real collector sent in a captured query, decoded by our reader."""
    _client, server = capture_streams(name)
    return list(ReplayChannel(server).iterate(_results()))


def expected_output(name: str) -> str:
    """What the tool printed, without the trailing ``exit status`` line the recorder added."""
    text = (CAPTURES / f"{name}.out").read_text()
    return text[: text.rindex("exit status")]


POOL_CAPTURES = (
    "status-startd-long-raw",
    "status-schedd-long-raw",
    "status-master-long-raw",
    "status-collector-long-raw",
    "status-negotiator-long-raw",
    "status-submitters-raw",
)


def pool_ads() -> list[ClassAd]:
    """Every full ad of the captured pool (submitters are projected, but keyed and usable)."""
    ads: list[ClassAd] = []
    for name in POOL_CAPTURES:
        for ad in captured_ads(name):
            if "MyType" not in ad:
                ad["MyType"] = "Submitter"
            if "MyAddress" not in ad:
                ad["MyAddress"] = "<127.0.0.1:9618?sock=schedd_7324_5fc6>"
            ads.append(ad)
    return ads


def new_store() -> AdStore:
    store = AdStore(clock=lambda: CAPTURE_TIME)
    for ad in pool_ads():
        store.add(ad)
    return store


def host_port(collector: MockCollector) -> str:
    return f"127.0.0.1:{collector.port}"


def raw_exchange(port: int, *payloads: bytes) -> bytes:
    """Send whole clear-text messages on one connection, then read until the server closes.

    A server that closes early makes later sends fail or turns its close into a reset (our
    unread bytes were still queued); both just mean "closed" here.
    """
    conn = CedarConnection()
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            for payload in payloads:
                sock.sendall(conn.send_message(payload))
            sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(65536):
                data += chunk
        except OSError:  # EPIPE, ECONNRESET, ENOTCONN: the server is gone
            pass
    return data


# -- the reference client in a subprocess --------------------------------------------------------

try:  # decide once; the subprocess uses the same interpreter
    import htcondor2  # noqa: F401

    REFERENCE_MISSING: str | None = None
except Exception as exc:  # pragma: no cover - depends on the machine
    REFERENCE_MISSING = f"import htcondor2 failed: {exc!r}"

_PRELUDE = """
import json, sys
import htcondor2, classad2
def plain(ad):
    return {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in ad.items()}
"""


def reference(code: str, *, negotiate: bool = False, timeout: float = 60, **env: str) -> Any:
    """Run ``code`` with htcondor2 in a subprocess and return what it printed as JSON.

    Configuration comes only from the environment (``CONDOR_CONFIG=/dev/null``); without
    ``negotiate`` the client starts commands raw.  The tool's debug log goes to a temporary file
    that is shown when the script fails.
    """
    if REFERENCE_MISSING:
        pytest.skip(REFERENCE_MISSING)
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"cedar-ref-{os.getpid()}.log"
    environment = dict(os.environ)
    environment.update(
        CONDOR_CONFIG="/dev/null",
        _condor_SEC_CLIENT_AUTHENTICATION_METHODS="FS",
        _condor_TOOL_DEBUG="D_FULLDEBUG D_SECURITY",
        _condor_TOOL_LOG=str(log),
    )
    if not negotiate:
        environment["_condor_SEC_CLIENT_NEGOTIATION"] = "NEVER"
    environment.update(env)
    result = subprocess.run(
        [sys.executable, "-c", _PRELUDE + code],
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        detail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise AssertionError(
            f"reference client failed:\n{result.stderr[-3000:]}\n--- tool log ---\n{detail}"
        )
    return json.loads(result.stdout.strip().splitlines()[-1])
