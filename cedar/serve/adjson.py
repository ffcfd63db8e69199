"""The service core's ad mapping (:mod:`cedar.service.adjson`), under its old import path."""

from cedar.service import typed_values
from cedar.service.adjson import (
    ad_dict,
    ad_json,
    ad_json_bytes,
    json_chunks,
    json_lists,
    json_writers,
    primed,
)

__all__ = [
    "ad_dict",
    "ad_json",
    "ad_json_bytes",
    "json_chunks",
    "json_lists",
    "json_writers",
    "primed",
    "typed_values",
]
