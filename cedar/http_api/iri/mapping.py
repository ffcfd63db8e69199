"""IRI jobs and HTCondor jobs: a ``JobSpec`` as one job's submit description, a job ad as a
``JobStatus``.  Pure functions; the choices are explained in ``docs/iri.md``."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from cedar.http_api.iri.problem import Problem
from cedar.numbers import JobStatus

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}\Z")
#: Attributes a job's custom attributes may not set: the schedd's own, and those the
#: translation sets from the spec's fields.
PROTECTED = frozenset(
    name.lower()
    for name in (
        "Owner",
        "User",
        "ClusterId",
        "ProcId",
        "JobStatus",
        "Iwd",
        "Cmd",
        "Args",
        "Arguments",
        "Environment",
        "Env",
        "In",
        "Out",
        "Err",
        "JobUniverse",
        "RequestCpus",
        "RequestGpus",
        "RequestMemory",
        "AcctGroup",
        "AcctGroupUser",
        "AccountingGroup",
        "JobBatchName",
        "ContainerImage",
        "AllowedExecuteDuration",
        "QDate",
        "GlobalJobId",
        "TransferInput",
        "TransferExecutable",
        "ShouldTransferFiles",
        "WhenToTransferOutput",
        "EnteredCurrentStatus",
        "HoldReason",
        "HoldReasonCode",
        "ExitCode",
        "IriQueueName",
        "IriJob",
        "LeaveJobInQueue",
    )
)
#: The spec's fields HTCondor cannot honour, with why (a 422 when given).
REFUSED = {
    "pre_launch": "HTCondor runs no pre-launch script outside the job; put it in the executable",
    "post_launch": "HTCondor runs no post-launch script outside the job; put it in the executable",
    "launcher": "no parallel launcher: a vanilla-universe job is one process on one machine",
}
MIB = 1 << 20


def _quoted(text: str, what: str) -> str:
    """One word of HTCondor's new argument/environment syntax: single-quoted runs with each
    ``"`` written as ``""`` between them, outside the single quotes (condor_submit reads a
    ``""`` inside single quotes as ``"`` too, cedar's submit translation keeps it doubled
    there; outside, both read one ``"``, observed with ``condor_submit -dry-run``)."""
    if any(c in text for c in "\n\r\0"):
        raise Problem(422, f"{what} holds a line break or NUL, which a job cannot be given")
    return '""'.join("'" + piece.replace("'", "''") + "'" for piece in text.split('"'))


def _positive(spec: dict[str, Any] | None, name: str) -> int | None:
    value = (spec or {}).get(name)
    return int(value) if value is not None else None


def submit_description(
    spec: dict[str, Any], *, account: str | None, transfer_inputs: list[str]
) -> dict[str, str]:
    """The submit description of one job for ``spec`` (paths relative to the job's directory),
    or a 422 Problem saying what HTCondor cannot honour."""
    for key, why in REFUSED.items():
        if spec.get(key) is not None:
            raise Problem(422, f"{key}: {why}")
    lines: dict[str, str] = {}
    container = spec.get("container")
    executable = spec.get("executable")
    if container is not None:
        if container.get("volume_mounts"):
            raise Problem(422, "container.volume_mounts: HTCondor mounts no host paths per job")
        lines["universe"] = "container"
        lines["container_image"] = container["image"]
    else:
        lines["universe"] = "vanilla"
    if executable is None:
        if container is None:
            raise Problem(422, "executable: a job without a container needs an executable")
        raise Problem(422, "executable: HTCondor needs the command to run in the container")
    lines["executable"] = executable
    if executable.startswith("/"):
        lines["transfer_executable"] = "false"
    arguments = spec.get("arguments") or []
    if arguments:
        lines["arguments"] = '"' + " ".join(_quoted(a, "arguments") for a in arguments) + '"'
    environment = spec.get("environment") or {}
    if environment:
        words = []
        for name, value in environment.items():
            if not _NAME.match(name):
                raise Problem(422, f"environment: {name[:60]!r} is not a variable name")
            words.append(f"{name}={_quoted(value, 'environment')}")
        lines["environment"] = '"' + " ".join(words) + '"'
    for key, command in (
        ("stdin_path", "input"),
        ("stdout_path", "output"),
        ("stderr_path", "error"),
    ):
        if spec.get(key) is not None:
            lines[command] = spec[key]
    if spec.get("name") is not None:
        lines["batch_name"] = spec["name"]
    lines.update(_resources(spec.get("resources")))
    lines.update(_attributes(spec.get("attributes"), account))
    lines["My.IriJob"] = "true"  # submitted through the IRI API (a constraint finds them all)
    lines["should_transfer_files"] = "YES"
    lines["when_to_transfer_output"] = "ON_EXIT"
    if transfer_inputs:
        lines["transfer_input_files"] = ",".join(transfer_inputs)
    for key, value in lines.items():
        if any(c in value for c in "\n\r\0"):
            raise Problem(422, f"{key}: a line break or NUL cannot be in a submit command")
    return lines


def _resources(resources: dict[str, Any] | None) -> dict[str, str]:
    nodes = _positive(resources, "node_count")
    if nodes is not None and nodes > 1:
        raise Problem(
            422,
            "resources.node_count: a vanilla-universe job runs on one node (asked for "
            f"{nodes}); submit one job per node",
        )
    processes = _positive(resources, "process_count") or _positive(resources, "processes_per_node")
    cores = (_positive(resources, "cpu_cores_per_process") or 1) * (processes or 1)
    lines = {"request_cpus": str(cores)}
    gpus = _positive(resources, "gpu_cores_per_process")
    if gpus is not None:
        lines["request_gpus"] = str(gpus * (processes or 1))
    memory = _positive(resources, "memory")
    if memory is not None:
        lines["request_memory"] = f"{max(1, math.ceil(memory / MIB))}M"
    return lines


def _attributes(attributes: dict[str, Any] | None, account: str | None) -> dict[str, str]:
    attributes = attributes or {}
    lines: dict[str, str] = {}
    if attributes.get("reservation_id") is not None:
        raise Problem(422, "attributes.reservation_id: HTCondor pools have no reservations")
    if attributes.get("duration") is not None:
        lines["allowed_execute_duration"] = str(int(attributes["duration"]))
    if attributes.get("queue_name") is not None:
        lines["My.IriQueueName"] = classad_string(attributes["queue_name"])
    if account is not None:
        lines["accounting_group"] = account
    for name, value in (attributes.get("custom_attributes") or {}).items():
        if not _NAME.match(name) or name.lower() in PROTECTED:
            raise Problem(422, f"attributes.custom_attributes: {name[:60]!r} cannot be set")
        lines[f"My.{name}"] = classad_string(value)
    return lines


def classad_string(text: str) -> str:
    """A ClassAd string literal of ``text``."""
    return json.dumps(text, ensure_ascii=False)


def job_state(ad: Any) -> tuple[str, str | None]:
    """The IRI ``JobState`` of a job ad, and the message that explains it."""
    status = ad.get("JobStatus")
    if status == JobStatus.HELD:
        if ad.get("HoldReasonCode") == 16:  # the spooling hold: its input is not here yet
            return "new", "waiting for its input files"
        return "held", str(ad.get("HoldReason") or "held")
    if status == JobStatus.REMOVED:
        return "canceled", str(ad.get("RemoveReason") or "removed")
    if status == JobStatus.COMPLETED:
        if ad.get("ExitBySignal"):
            return "failed", f"killed by signal {ad.get('ExitSignal')}"
        code = ad.get("ExitCode")
        return ("completed", None) if code == 0 else ("failed", f"exit code {code}")
    if status in (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT, JobStatus.SUSPENDED):
        return "active", None
    return "queued", None


def job_status(ad: Any) -> dict[str, Any]:
    """A job ad as the spec's ``JobStatus``."""
    state, message = job_state(ad)
    code = ad.get("ExitCode")
    entered = ad.get("EnteredCurrentStatus")
    return {
        "state": state,
        "time": float(entered) if isinstance(entered, (int, float)) else None,
        "message": message,
        "exit_code": code if isinstance(code, int) and not isinstance(code, bool) else None,
        "meta_data": {"JobStatus": ad.get("JobStatus")},
    }


#: The attributes read to report a job.
STATUS_ATTRS = [
    "ClusterId", "ProcId", "JobStatus", "HoldReason", "HoldReasonCode", "RemoveReason",
    "ExitCode", "ExitBySignal", "ExitSignal", "EnteredCurrentStatus", "JobBatchName", "Owner",
]  # fmt: skip


#: What ``PUT`` may change on an idle job, by the spec's field: the job attribute and its value.
def editable(spec: dict[str, Any]) -> dict[str, str]:
    """The job attributes an update of ``spec`` sets (ClassAd expressions)."""
    resources = _resources(spec.get("resources"))
    found = {
        "RequestCpus": resources["request_cpus"],
        "RequestGpus": resources.get("request_gpus", "0"),
    }
    if "request_memory" in resources:
        found["RequestMemory"] = resources["request_memory"].rstrip("M")
    attributes = spec.get("attributes") or {}
    if attributes.get("duration") is not None:
        found["AllowedExecuteDuration"] = str(int(attributes["duration"]))
    if spec.get("name") is not None:
        found["JobBatchName"] = classad_string(spec["name"])
    for line, value in _attributes(attributes, None).items():
        if line.startswith("My."):
            found[line[3:]] = value
    return found
