"""The API's types: the OpenAPI document is generated from these and the handlers' signatures."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


def package_version() -> str:
    """htc-cedar's version (the one source, :mod:`cedar.version`)."""
    from cedar.version import __version__

    return __version__


#: A job ad in the ClassAd JSON mapping (``"/Expr(...)/"`` strings for expressions).
JobAd = dict[str, Any]


class ErrorBody(BaseModel):
    """Every error: what went wrong and the HTTP status."""

    error: str
    status: int


class JobList(BaseModel):
    """A page of jobs (the Go server's shape)."""

    jobs: list[JobAd]
    total_returned: int
    has_more: bool
    next_page_token: str | None = None


class SubmitRequest(BaseModel):
    """A submit description, as condor_submit reads it."""

    submit_file: str = Field(max_length=1 << 20)
    #: Submit on the spooling hold: the jobs wait for ``PUT /jobs/{id}/input``.
    spool: bool = False
    #: The jobs' initial working directory on the pool's side (not spooled jobs).
    iwd: str | None = None
    count: int | None = Field(default=None, ge=1, le=100000)


class SubmitResponse(BaseModel):
    cluster_id: int
    job_ids: list[str]
    spooled: bool = False
    warnings: list[str] = []


class ActionRequest(BaseModel):
    reason: str | None = Field(default=None, max_length=4096)


class BulkActionRequest(BaseModel):
    """Act on every job of yours matching ``constraint``."""

    constraint: str = Field(max_length=65536)
    reason: str | None = Field(default=None, max_length=4096)


class JobResult(BaseModel):
    job_id: str
    result: str


class ActionResponse(BaseModel):
    action: str
    succeeded: int
    results: list[JobResult]


class EditRequest(BaseModel):
    """Attributes to set, typed by the ClassAd JSON mapping: a string is a string, a number or a
    boolean itself, ``null`` undefined, ``"/Expr(<expression>)/"`` an expression."""

    attributes: dict[str, Any]


class BulkEditRequest(EditRequest):
    constraint: str = Field(max_length=65536)


class EditResponse(BaseModel):
    jobs_changed: int
    attributes: list[str]


class UploadResponse(BaseModel):
    job_id: str
    files: list[str]
    bytes: int


class WhoAmI(BaseModel):
    """What the schedd authenticated (never a claim read from the token)."""

    authenticated: bool
    user: str | None = None
    method: str | None = None


class PingResponse(BaseModel):
    daemon: str
    address: str
    level: str
    authorized: bool
    user: str | None = None
    method: str | None = None
    encrypted: bool
    remote_version: str | None = None
    error: str | None = None


class VersionResponse(BaseModel):
    cedar: str
    condor_version: str
    api: str = "v1"


class Health(BaseModel):
    status: str
    detail: str | None = None


class AdList(BaseModel):
    ads: list[JobAd]
    total_returned: int


class AdvertiseRequest(BaseModel):
    """Ads to advertise (``command``: e.g. ``UPDATE_AD_GENERIC``)."""

    ads: list[JobAd] = Field(max_length=1000)
    command: str = "UPDATE_AD_GENERIC"


class AdvertiseResponse(BaseModel):
    advertised: int


class EventList(BaseModel):
    events: list[JobAd]


class TailFile(BaseModel):
    """Bytes of one file of a running job: ``data_base64`` starts at byte ``offset``."""

    name: str
    offset: int
    next_offset: int
    text: str
    data_base64: str


class TailResponse(BaseModel):
    files: list[TailFile]
    missing: list[str] = []
