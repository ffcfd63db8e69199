"""A bad submit description is the caller's input: ``POST /api/v1/jobs`` answers 400 with the
parser's reason (it answered 502, as for a daemon's failure), and nothing is queued."""

from __future__ import annotations

import pytest

from tests.http_api.conftest import Api

#: Descriptions the parser refuses (at reading or at building the ads), and its reason.
BAD = [
    ("executable = /bin/echo\n+Name%s = 1\nqueue\n", "line 2: syntax error: +Name%s = 1"),
    ("executable = /bin/echo\n+ = 1\nqueue\n", "line 2: syntax error: + = 1"),
    ("executable = /bin/echo\n+A = (\nqueue\n", "Parse error in expression: A = ("),
    ("executable = /bin/echo\nif\nqueue\n", "endif(s) not found before end-of-file"),
    ("executable = /bin/echo\npriority = abc\nqueue\n", "priority = abc is not an integer"),
]


@pytest.mark.parametrize(("text", "reason"), BAD, ids=[reason[:24] for _, reason in BAD])
@pytest.mark.parametrize("spool", [False, True], ids=["direct", "spool"])
def test_bad_description_is_400_with_the_reason(
    api: Api, text: str, reason: str, spool: bool
) -> None:
    before = api.pool.pool.schedd.queue.all_jobs()
    answer = api.alice.post("/api/v1/jobs", json={"submit_file": text, "spool": spool})
    assert answer.status_code == 400, answer.text
    assert answer.json() == {"error": answer.json()["error"], "status": 400}
    assert reason in answer.json()["error"]
    assert api.pool.pool.schedd.queue.all_jobs() == before
