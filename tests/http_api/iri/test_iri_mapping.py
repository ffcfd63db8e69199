"""JobSpec -> submit description and job ad -> JobStatus, as pure functions."""

from __future__ import annotations

import pytest

from cedar.http_api.iri.mapping import job_state, submit_description
from cedar.http_api.iri.problem import Problem
from cedar.submit_language.encodings import encode_arguments, parse_environment, v2_tokens


def test_a_full_spec() -> None:
    lines = submit_description(
        {
            "executable": "run.sh",
            "arguments": ["a b", "it's", 'say "hi"', ""],
            "environment": {"GREETING": "hello world", "Q": '"x"'},
            "stdin_path": "in",
            "stdout_path": "out",
            "stderr_path": "err",
            "name": "batch",
            "resources": {"process_count": 2, "cpu_cores_per_process": 3,
                          "gpu_cores_per_process": 1, "memory": (5 << 20) + 1},
            "attributes": {"duration": 90, "queue_name": "debug",
                           "custom_attributes": {"Color": 'bl"ue'}},
        },
        account="group_physics",
        transfer_inputs=["run.sh", "data"],
    )  # fmt: skip
    assert encode_arguments(lines["arguments"])[0] == "Arguments"
    assert v2_tokens(lines["arguments"][1:-1]) == ["a b", "it's", 'say "hi"', ""]
    environment, v2 = parse_environment(lines["environment"])
    assert v2 and environment == {"GREETING": "hello world", "Q": '"x"'}
    assert {k: lines[k] for k in ("request_cpus", "request_gpus", "request_memory")} == {
        "request_cpus": "6",
        "request_gpus": "2",
        "request_memory": "6M",
    }
    assert lines["accounting_group"] == "group_physics"
    assert lines["allowed_execute_duration"] == "90"
    assert lines["My.Color"] == '"bl\\"ue"'
    assert lines["transfer_input_files"] == "run.sh,data"
    assert (lines["input"], lines["output"], lines["error"]) == ("in", "out", "err")
    assert "transfer_executable" not in lines  # a relative executable travels with the job
    assert (
        submit_description({"executable": "/bin/true"}, account=None, transfer_inputs=[])[
            "transfer_executable"
        ]
        == "false"
    )


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"container": {"image": "x", "volume_mounts": [{"source": "/a", "target": "/b"}]}},
        {"executable": "x", "environment": {"1BAD": "v"}},
        {"executable": "x", "attributes": {"reservation_id": "r"}},
        {"executable": "x", "pre_launch": "module load"},
        {"executable": "x", "stdout_path": "a\nb"},
    ],
)
def test_what_htcondor_cannot_honour_is_422(spec: dict[str, object]) -> None:
    with pytest.raises(Problem) as caught:
        submit_description(spec, account=None, transfer_inputs=[])
    assert caught.value.status == 422


@pytest.mark.parametrize(
    ("ad", "state"),
    [
        ({"JobStatus": 1}, ("queued", None)),
        ({"JobStatus": 2}, ("active", None)),
        ({"JobStatus": 3, "RemoveReason": "by you"}, ("canceled", "by you")),
        ({"JobStatus": 4, "ExitCode": 0}, ("completed", None)),
        ({"JobStatus": 4, "ExitCode": 1}, ("failed", "exit code 1")),
        ({"JobStatus": 4, "ExitBySignal": True, "ExitSignal": 9}, ("failed", "killed by signal 9")),
        ({"JobStatus": 5, "HoldReason": "why", "HoldReasonCode": 1}, ("held", "why")),
        ({"JobStatus": 5, "HoldReasonCode": 16}, ("new", "waiting for its input files")),
        ({"JobStatus": 6}, ("active", None)),
        ({"JobStatus": 7}, ("active", None)),
    ],
)
def test_job_states(ad: dict[str, object], state: tuple[str, str | None]) -> None:
    assert job_state(ad) == state
