"""The helpers that keep start-up imports away (issue 39) behave as what they replace."""

from __future__ import annotations

import hashlib
import hmac
import logging
import subprocess
import sys

import pytest

from cedar.lazy import LazyLogger
from cedar.stream.crypto import hmac_digest, same_bytes, sha256


@pytest.mark.parametrize("digest", ["sha1", "sha256", "sha384", "sha512"])
def test_hmac_digest_is_the_standard_hmac(digest: str) -> None:
    for key, message in [(b"", b""), (b"k" * 200, b"message"), (bytes(range(64)), b"\0" * 1000)]:
        assert hmac_digest(key, message, digest) == hmac.new(key, message, digest).digest()


def test_same_bytes() -> None:
    assert same_bytes(b"abc", b"abc")
    assert same_bytes(b"", b"")
    assert not same_bytes(b"abc", b"abd")
    assert not same_bytes(b"abc", b"abcd")


def test_running_sha256_reads_without_ending() -> None:
    running = sha256()
    running.update(b"first ")
    assert running.copy().finalize() == hashlib.sha256(b"first ").digest()
    running.update(b"second")
    assert running.copy().finalize() == hashlib.sha256(b"first second").digest()


def test_lazy_logger_forwards_once_logging_is_configured(caplog: pytest.LogCaptureFixture) -> None:
    log = LazyLogger("cedar.test.lazy")
    with caplog.at_level(logging.DEBUG, logger="cedar.test.lazy"):
        log.debug("debug %s", 1)
        log.info("info %s", 2)
        log.warning("warning %s", 3)
        log.error("error %s", 4)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "debug 1"),
        (logging.INFO, "info 2"),
        (logging.WARNING, "warning 3"),
        (logging.ERROR, "error 4"),
    ]


def test_lazy_logger_imports_logging_only_for_a_warning() -> None:
    code = (
        "import sys\n"
        "from cedar.lazy import LazyLogger\n"
        "log = LazyLogger('cedar.x')\n"
        "log.debug('quiet %s', 1); log.info('quiet')\n"
        "print('logging' in sys.modules)\n"
        "log.warning('shown %s', 2)\n"
        "print('logging' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["False", "True"]
    assert result.stderr.strip() == "shown 2"  # logging's last-resort handler, as before
