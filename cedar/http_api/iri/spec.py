"""The official IRI Facility API v2 document, and requests checked against it.

The document (``openapi_v2.json``: the YAML of ``doe-iri/iri-facility-api-docs`` as JSON, unchanged,
BSD-3-Clause, see ``LICENSE-openapi_v2``) is the contract: it is served as ``/openapi.json``, its
paths are the routes, and each request's parameters and body are checked against its schemas
before a handler runs, so a handler only sees values of the declared shapes.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any

from cedar.http_api.iri.problem import Problem

#: Methods an OpenAPI path item may hold.
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)
_INTEGER = re.compile(r"[+-]?[0-9]{1,400}\Z")


@functools.cache
def document() -> dict[str, Any]:
    """The official document (read once)."""
    text = resources.files("cedar.http_api.iri").joinpath("openapi_v2.json").read_text("utf-8")
    found: dict[str, Any] = json.loads(text)
    return found


@functools.cache
def document_bytes() -> bytes:
    return json.dumps(document(), separators=(",", ":")).encode()


def parse_date_time(text: str) -> datetime | None:
    """An RFC 3339 date-time with its offset (the spec's "strict ISO8601"), else None."""
    if not _DATE_TIME.match(text):
        return None
    try:
        return datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(frozen=True)
class Operation:
    """One operation of the document: its method, path template and what it takes."""

    operation_id: str
    method: str
    path: str
    pattern: re.Pattern[str]
    parameters: tuple[dict[str, Any], ...]
    body: dict[str, Any] | None
    body_required: bool
    secured: bool
    status: int = 200
    names: tuple[str, ...] = field(default=())


def _pattern(path: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    names = tuple(re.findall(r"\{([A-Za-z_]+)\}", path))
    regex = re.escape(path)
    for name in names:
        regex = regex.replace(re.escape("{" + name + "}"), f"(?P<{name}>[^/]+)")
    return re.compile(regex + r"\Z"), names


@functools.cache
def operations() -> tuple[Operation, ...]:
    """Every operation of the document, literal paths before templated ones."""
    found: list[Operation] = []
    for path, item in document()["paths"].items():
        for method, op in item.items():
            if method not in METHODS:
                continue
            body = op.get("requestBody")
            content = (body or {}).get("content", {})
            media = next(iter(content.values()), None)
            codes = [int(c) for c in op["responses"] if c.isdigit() and 200 <= int(c) < 300]
            pattern, names = _pattern(path)
            found.append(
                Operation(
                    operation_id=op["operationId"],
                    method=method.upper(),
                    path=path,
                    pattern=pattern,
                    parameters=tuple(op.get("parameters", ())),
                    body=None if media is None else {"media": next(iter(content)), **media},
                    body_required=bool((body or {}).get("required")),
                    secured=bool(op.get("security")),
                    status=min(codes) if codes else 200,
                    names=names,
                )
            )
    found.sort(key=lambda o: (len(o.names), o.path))
    return tuple(found)


#: Schemas checked so far, by their JSON text (each gets one validator).
_SCHEMAS: dict[str, dict[str, Any]] = {}


def _is_date_time(value: object) -> bool:
    return not isinstance(value, str) or parse_date_time(value) is not None


@functools.cache
def _validator(key: str) -> Any:
    """The JSON Schema validator of the schema ``key`` is the text of (refs into the document)."""
    from jsonschema import Draft202012Validator, FormatChecker

    checker = FormatChecker(formats=())
    checker.checks("date-time")(_is_date_time)
    schema = {**_SCHEMAS[key], "components": document()["components"]}
    return Draft202012Validator(schema, format_checker=checker)


def check(schema: dict[str, Any], value: Any, where: str) -> None:
    """Refuse ``value`` (422 Problem) when ``schema`` (from the document) does not hold it."""
    key = json.dumps(schema, sort_keys=True)
    _SCHEMAS.setdefault(key, schema)
    error = next(iter(_validator(key).iter_errors(value)), None)
    if error is not None:
        place = ".".join(str(p) for p in error.absolute_path)
        detail = f"{where}{'.' + place if place else ''}: {error.message}"
        raise Problem(422, detail[:500])


def is_array(schema: dict[str, Any]) -> bool:
    """Whether a query parameter is repeated (an ``array`` schema)."""
    return "array" in _types(schema)


def _types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a parameter's schema allows (through ``anyOf`` and ``$ref``)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return _types(document()["components"]["schemas"][name])
    if "anyOf" in schema:
        return set().union(*(_types(s) for s in schema["anyOf"]))
    kind = schema.get("type")
    return {kind} if isinstance(kind, str) else {"string"}


def coerce(schema: dict[str, Any], text: str | list[str]) -> Any:
    """A query string's value as the type its schema says (else the text, refused later); an
    array's items are the parameter's repeated values."""
    if isinstance(text, list):
        items = schema.get("items", {})
        return [coerce(items, t) for t in text]
    kinds = _types(schema)
    if "integer" in kinds and _INTEGER.match(text):
        return int(text)
    if "boolean" in kinds and text in ("true", "false"):
        return text == "true"
    return text
