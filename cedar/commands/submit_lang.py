"""Former home of the submit language, kept so existing imports work: see
:mod:`cedar.commands.submit`."""

from __future__ import annotations

from cedar.commands.submit import (
    JobAds,
    QueueSpec,
    Submit,
    SubmitError,
    SubmitSettings,
    parse_queue,
)

__all__ = ["JobAds", "QueueSpec", "Submit", "SubmitError", "SubmitSettings", "parse_queue"]
