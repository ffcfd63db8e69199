"""Hostile ad lines from a peer are read in linear time (no regex backtracking blow-up).

Each case is a 2 MB line shaped to defeat a backtracking pattern; quadratic matching would take
hours, linear matching milliseconds.  The watchdog only catches a hang: it asserts completion,
not speed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

SIZE = 2_000_000
CASES = {
    "spaces after '='": "'a=' + ' ' * SIZE",
    "spaces inside the name": "'a' + ' ' * SIZE + 'b = 1'",
    "leading whitespace": "' ' * SIZE + 'a = 1'",
    "alternating name, no '='": "'a' + ' b' * (SIZE // 2)",
    "blank value after spaces": "'a = ' + ' ' * SIZE + '\\t'",
    "long name, no '='": "'a' * SIZE",
}
PROBE = """
from cedar.classad_wire import get_classad
from cedar.errors import CedarError
from cedar.stream import MessageReader, MessageWriter
SIZE = {size}
line = {line}
data = MessageWriter().put_int(1).put_string(line).put_string("").put_string("").getvalue()
try:
    print(len(get_classad(MessageReader(data))))
except CedarError as exc:
    print(type(exc).__name__)
"""


@pytest.mark.parametrize("line", list(CASES.values()), ids=list(CASES))
def test_hostile_line_is_read_without_hanging(line: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(size=SIZE, line=line)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() in {"1", "ProtocolError"}
