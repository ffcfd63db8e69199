"""``cedar q -better-analyze`` rendering (cedar/cli/analyze.py) on recorded inputs, no pool."""

from __future__ import annotations

import io
import json

import pytest

from cedar.analysis.fetch import AnalysisInputs
from cedar.cli.analyze import build_parser, render, wants_analysis
from tests.analysis.recorded import BANNER, recording


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def _inputs(name: str) -> AnalysisInputs:
    rec = recording(name)
    return AnalysisInputs(
        jobs=rec.jobs,
        slots=rec.slots,
        analyze=rec.analyze,
        schedd_name=BANNER[0],
        schedd_address=BANNER[1],
    )


def _render(mode: str, name: str, *argv: str) -> str:
    args = build_parser().parse_args(list(argv))
    args.mode = mode
    out = io.StringIO()
    assert render(args, _inputs(name), out) == 0
    return out.getvalue()


def test_the_q_hook_recognises_the_analyze_options() -> None:
    assert wants_analysis(["-better-analyze", "12.0"])
    assert wants_analysis(["12.0", "-better-analyze:reverse", "-machine", "slot2@vm"])
    assert wants_analysis(["--analyze"])
    assert not wants_analysis(["-nobatch", "-constraint", 'x == "better-analyze"'])
    assert not wants_analysis(["--", "-analyze"])


@pytest.mark.parametrize(
    ("mode", "name"),
    [
        ("better", "q-better-analyze-held-raw"),
        ("analyze", "q-analyze-memory-raw"),
        ("summary", "q-better-analyze-summary-raw"),
    ],
)
def test_text_modes(mode: str, name: str) -> None:
    assert _render(mode, name) == recording(name).expected


def test_reverse_with_machine() -> None:
    name = "q-better-analyze-reverse-raw"
    assert _render("reverse", name, "--machine", "slot2@vm") == recording(name).expected


def test_json_and_verbose() -> None:
    (result,) = json.loads(_render("better", "q-better-analyze-memory-plain", "--json"))
    assert result["job_id"] == "10.0"
    assert result["counts"]["rejected_by_job"] == 4
    text = _render("better", "q-better-analyze-memory-plain", "--verbose")
    assert text.startswith(recording("q-better-analyze-memory-plain").expected)
    assert "suggestion: lower RequestMemory to 1024 to match 4 slots" in text
