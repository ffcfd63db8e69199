"""The typed contract of every tool: its arguments and its result, as pydantic models.

The input and output JSON schemas the server lists are generated from these models, and every
argument is validated by them before a handler runs, so the schemas cannot drift from what the
handlers accept and return.  Job ads travel as JSON objects in the one ClassAd<->JSON mapping
(:mod:`cedar.classad_wire.jsonfmt`), the one ``cedar serve`` uses.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cedar.jobid import PROC_ID_PATTERN

JOB_ID = PROC_ID_PATTERN
ATTRIBUTE = r"^[A-Za-z_][A-Za-z0-9_.]*$"
#: Longest constraint or expression text accepted (bounded memory and parse time).
MAX_EXPRESSION = 8192

Constraint = Field(
    default=None,
    max_length=MAX_EXPRESSION,
    description="a ClassAd constraint in condor_q's syntax, e.g. 'JobStatus == 1'",
)
Projection = Field(
    default=None,
    max_length=200,
    description="attributes to return (default: all)",
)
JobId = Field(pattern=JOB_ID, max_length=40, description="a job id, cluster.proc, e.g. '12.0'")

Ad = dict[str, Any]


class Args(BaseModel):
    """Arguments: unknown members are refused, so a typo is an error, not ignored."""

    model_config = ConfigDict(extra="forbid")


class Result(BaseModel):
    """A result; ``hints`` name what the agent may do next (short, structured)."""

    hints: list[str] = Field(default_factory=list, description="what may be done next")


# --------------------------------------------------------------------------- arguments


class QueryJobsArgs(Args):
    constraint: str | None = Constraint
    projection: list[str] | None = Projection
    limit: int = Field(default=100, ge=1, le=500, description="at most this many jobs")


class JobArgs(Args):
    job_id: str = JobId


class GetJobArgs(Args):
    job_id: str = JobId
    projection: list[str] | None = Projection


class InputFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(
        min_length=1, max_length=255, description="file name (no directories), as the job sees it"
    )
    content: str = Field(max_length=1_500_000, description="the file's content")
    encoding: Literal["text", "base64"] = "text"
    executable: bool = False


class SubmitJobArgs(Args):
    description: str = Field(
        min_length=1,
        max_length=65536,
        description="a submit description (condor_submit's language, with a queue statement)",
    )
    input_files: list[InputFile] = Field(
        default_factory=list,
        max_length=100,
        description="small input files sent with the job (the job's sandbox is spooled)",
    )
    defer_input: bool = Field(
        default=False,
        description="submit without sending input: the jobs wait (held) until upload_job_input "
        "sends each one's files",
    )


class EditJobArgs(Args):
    job_id: str = JobId
    attribute: str = Field(pattern=ATTRIBUTE, max_length=100)
    value: str = Field(
        max_length=MAX_EXPRESSION,
        description='new value as ClassAd expression text, e.g. 2048 or "text"',
    )


class ActionArgs(Args):
    job_id: str = JobId
    reason: str | None = Field(default=None, max_length=500)


class OutputArgs(Args):
    job_id: str = JobId


class StreamArgs(Args):
    """A job's stdout or stderr (get_job_stdout, get_job_stderr): the stream is in the name."""

    job_id: str = JobId
    lines: int = Field(default=20, ge=1, le=1000)
    follow_seconds: float = Field(
        default=0,
        ge=0,
        le=30,
        description="for a running job: also wait this long for new lines (sent as progress)",
    )


class TailArgs(StreamArgs):
    stream: Literal["stdout", "stderr"] = "stdout"


class ArchiveArgs(Args):
    constraint: str | None = Constraint
    projection: list[str] | None = Projection
    limit: int = Field(default=50, ge=1, le=500)


class EpochArgs(Args):
    job_id: str | None = Field(default=None, pattern=JOB_ID, max_length=40)
    constraint: str | None = Constraint
    limit: int = Field(default=50, ge=1, le=500)


class NoArgs(Args):
    pass


class DescribeArgs(Args):
    name: str = Field(pattern=ATTRIBUTE, max_length=100, description="an attribute name")


# --------------------------------------------------------------------------- results


class JobsResult(Result):
    jobs: list[Ad]
    count: int
    truncated: bool = Field(description="more jobs matched than were returned")


class JobResult(Result):
    job: Ad


class SubmitResultModel(Result):
    cluster: int
    job_ids: list[str]
    spooled_files: list[str] = Field(default_factory=list)


class EditResult(Result):
    job_id: str
    attribute: str
    value: str
    jobs_changed: int


class ActionResultModel(Result):
    job_id: str
    action: str
    result: str = Field(description="the schedd's answer for the job, e.g. 'success'")
    succeeded: bool


class PerJob(BaseModel):
    job_id: str
    result: str
    succeeded: bool


class OutputFile(BaseModel):
    name: str
    size: int
    content: str | None = Field(default=None, description="the text, when small enough")
    link: str | None = Field(default=None, description="where to fetch it (cedar serve)")
    truncated: bool = False


class OutputResult(Result):
    job_id: str
    files: list[OutputFile]


class TailResult(Result):
    job_id: str
    stream: str
    lines: list[str]
    source: str = Field(description="where the text came from")


class RecordsResult(Result):
    records: list[Ad]
    count: int
    truncated: bool


class Clause(BaseModel):
    expression: str
    slots_matching: int


class Suggestion(BaseModel):
    attribute: str
    value: str
    why: str


class MatchResult(Result):
    job_id: str
    job_status: str
    slots_total: int
    slots_matching: int = Field(description="slots whose requirements and the job's both hold")
    clauses: list[Clause] = Field(description="each part of the job's Requirements")
    explanation: list[str]
    suggestions: list[Suggestion]
    text: str = Field(description="the analysis as condor_q -better-analyze prints it")
    detail: Ad = Field(description="the whole structured analysis (cedar.analysis)")


class QueueTotals(BaseModel):
    user: str
    idle: int
    running: int
    held: int


class PoolSummaryResult(Result):
    slots_total: int
    slots_by_state: dict[str, int]
    cpus_free: int
    memory_free_mb: int
    queue: list[QueueTotals]


class WhoamiResult(Result):
    identity: str
    method: str | None
    admin: bool
    transport: str
    read_only: bool


class AttributeResult(Result):
    name: str
    known: bool
    type: str | None = None
    meaning: str | None = None
    submit_command: str | None = None
    values: dict[str, str] | None = None
    ad: str | None = Field(default=None, description="'job', 'machine' or 'config' (a knob)")


# --------------------------------------------------------------------------- the pool's ads


class AdvertiseArgs(Args):
    ad: str = Field(
        min_length=1,
        max_length=65536,
        description="the ad, as a JSON object or in the old ClassAd syntax (one 'Name = value' "
        "a line); it needs MyType, and Name for most types",
    )
    command: str | None = Field(
        default=None,
        pattern=r"^[A-Z_]+$",
        max_length=60,
        description="the collector command, e.g. UPDATE_AD_GENERIC (the default) or "
        "UPDATE_STARTD_AD",
    )
    invalidate: bool = Field(
        default=False, description="remove the ad of this MyType and Name instead of sending it"
    )


class AdvertiseResult(Result):
    my_type: str
    name: str | None
    command: str
    invalidated: bool


# --------------------------------------------------------------------------- reference


class NameArgs(Args):
    name: str = Field(pattern=ATTRIBUTE, max_length=100, description="the name to look up")


class SearchArgs(Args):
    text: str = Field(
        min_length=2, max_length=100, description="words or a part of a name, e.g. 'memory'"
    )
    limit: int = Field(default=30, ge=1, le=200)


class ReferenceEntry(BaseModel):
    name: str
    kind: str = Field(description="'job' or 'machine' attribute, 'submit' command, or 'config'")
    type: str
    meaning: str
    submit_command: str | None = None


class SearchResult(Result):
    matches: list[ReferenceEntry]
    truncated: bool


# --------------------------------------------------------------------------- a job's files


class JobLogResult(Result):
    job_id: str
    events: list[Ad] = Field(description="the log's events, MyType is the event's name")
    source: str


class UploadArgs(Args):
    job_id: str = JobId
    input_files: list[InputFile] = Field(
        min_length=1,
        max_length=100,
        description="the job's input files, its executable among them unless it is not sent",
    )


class UploadResult(Result):
    job_id: str
    spooled_files: list[str]


# --------------------------------------------------------------------------- history summary


class HistorySummaryArgs(Args):
    constraint: str | None = Constraint
    window_hours: float | None = Field(
        default=None,
        gt=0,
        le=24 * 366,
        description="only jobs that completed within this many hours before now",
    )
    scan_limit: int = Field(default=10000, ge=1, le=100000, description="read at most this many")


class Distribution(BaseModel):
    count: int
    min: float | None = None
    p25: float | None = None
    median: float | None = None
    p75: float | None = None
    p95: float | None = None
    max: float | None = None


class HistorySummaryResult(Result):
    as_of: int = Field(description="when the summary was taken (epoch seconds)")
    jobs: int
    truncated: bool = Field(description="scan_limit stopped the scan")
    by_status: dict[str, int]
    by_owner: dict[str, int]
    by_exit_code: dict[str, int]
    by_hold_reason: dict[str, int]
    run_time_seconds: Distribution = Field(
        description="the last run's length: CompletionDate - JobCurrentStartDate"
    )
    wall_time_seconds: Distribution = Field(
        description="time in slots over all runs (RemoteWallClockTime)"
    )


# --------------------------------------------------------------------------- bulk actions


class BulkArgs(Args):
    constraint: str = Field(min_length=1, max_length=MAX_EXPRESSION)
    reason: str | None = Field(default=None, max_length=500)
    confirm: bool = Field(default=False, description="act; without it only count the matching jobs")


class BulkEditArgs(Args):
    constraint: str = Field(min_length=1, max_length=MAX_EXPRESSION)
    attribute: str = Field(pattern=ATTRIBUTE, max_length=100)
    value: str = Field(
        max_length=MAX_EXPRESSION,
        description='new value as ClassAd expression text, e.g. 2048 or "text"',
    )
    confirm: bool = Field(default=False, description="act; without it only count the matching jobs")


class BulkResult(Result):
    matched: int
    confirmed: bool = Field(description="false: a dry run, nothing was changed")
    changed: int
    results: list[PerJob] = Field(default_factory=list)
