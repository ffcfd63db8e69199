"""MkDocs hook: the reference pages are generated from the code, so they cannot drift.

A page asks for a table with a marker line ``<!-- generated: KIND -->``:

- ``cli``: every ``cedar`` subcommand's ``--help``, from its own argument parser;
- ``condor-names``: the ``--help`` of each ``condor_*`` name cedar answers to;
- ``http``: every route of ``cedar serve``'s OpenAPI documents (the REST API's, generated
  from the handlers, and the official IRI document the IRI API serves);
- ``mcp``: the tool table of ``cedar mcp`` (name, title, annotations, description).

Loaded by ``mkdocs.yml`` (``hooks:``); nothing here is imported by ``cedar``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
from collections.abc import Callable
from typing import Any

_MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)


def _help_of(argv: list[str], entry: Callable[[list[str]], Any]) -> str:
    """What ``entry(argv)`` prints for ``--help``, at a fixed width (argparse reads COLUMNS)."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    out, err = io.StringIO(), io.StringIO()
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            contextlib.suppress(SystemExit),
        ):
            entry(argv)
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return (out.getvalue() or err.getvalue()).rstrip()


def _fenced(text: str) -> str:
    return "```text\n" + text + "\n```\n"


def cli_reference() -> str:
    """One section per subcommand, its parser's own help."""
    from cedar.cli import main as cli

    parts = [_fenced(_help_of(["--help"], cli.main))]
    for name in [*cli.MOUNTED, *cli.LOCAL]:
        parts.append(f"## `cedar {name}`\n\n" + _fenced(_help_of([name, "--help"], cli.main)))
    return "\n".join(parts)


def condor_names_reference() -> str:
    """Each ``condor_*`` name's ``--help``, when this tree has the names."""
    try:
        names = importlib.import_module("cedar.cli.condor_names")
    except ImportError:
        return "*This build has no `condor_*` names.*\n"
    parts = []
    for name in getattr(names, "NAMES", ()):
        text = _help_of(["--help"], lambda argv, n=name: names.main(n, argv))
        parts.append(f"## `{name}`\n\n" + _fenced(text))
    return "\n".join(parts)


def _routes_table(document: dict[str, Any], prefix: str = "") -> str:
    rows = ["| method | path | what |", "|---|---|---|"]
    for path, operations in sorted(document.get("paths", {}).items()):
        for method, operation in operations.items():
            if method not in {"get", "put", "post", "delete", "patch"}:
                continue
            summary = (operation.get("summary") or operation.get("operationId") or "").strip()
            rows.append(f"| {method.upper()} | `{prefix}{path}` | {summary.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def http_reference() -> str:
    """The routes of ``cedar serve``, from the OpenAPI documents the running service serves."""
    from cedar.http_api.app import create_app
    from cedar.service_core.settings import ServiceSettings

    app = create_app(ServiceSettings(collector="127.0.0.1:9618"))
    parts = [
        "## The REST API (`/openapi.json`)\n\n" + _routes_table(app.openapi()),
    ]
    from cedar.http_api.iri.settings import IriSettings
    from cedar.http_api.iri.spec import document

    prefix = IriSettings().prefix
    parts.append(
        f"## The DOE IRI Facility API v2 (`{prefix}/openapi.json`)\n\n"
        + _routes_table(document(), prefix)
    )
    return "\n".join(parts)


def mcp_reference() -> str:
    """The MCP tool table."""
    from cedar.mcp.tools import TOOLS

    rows = [
        "| tool | title | read-only | destructive | idempotent | what |",
        "|---|---|---|---|---|---|",
    ]
    for spec in TOOLS.values():
        flags = [
            "yes" if flag else "no" for flag in (spec.read_only, spec.destructive, spec.idempotent)
        ]
        description = spec.description.replace("|", "/").replace("\n", " ")
        rows.append(f"| `{spec.name}` | {spec.title} | {' | '.join(flags)} | {description} |")
    return f"{len(TOOLS)} tools.\n\n" + "\n".join(rows) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "condor-names": condor_names_reference,
    "http": http_reference,
    "mcp": mcp_reference,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs event: replace each marker with its generated text (an unknown kind fails)."""

    def generated(match: re.Match[str]) -> str:
        kind = match.group(1)
        if kind not in GENERATORS:
            raise ValueError(f"unknown generated section {kind!r}")
        return GENERATORS[kind]()

    return _MARKER.sub(generated, markdown)
