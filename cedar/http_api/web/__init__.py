"""The web page of ``cedar serve``: batches, submit, job, archive, for people (issue 24).

Server-rendered pages from the package with a small vanilla script (no CDN, no Node).  The
page's scripts call ``/web/api/...``, which forwards to ``/api/v1`` with the signed-in caller's
token, so the daemons authorize exactly as for the API.  :func:`mount` adds the routes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from cedar.service_core import ServiceSettings


def mount(app: FastAPI, settings: ServiceSettings) -> None:
    """Add the web page to ``app`` (see :mod:`cedar.http_api.web.routes`)."""
    from cedar.http_api.web.routes import mount as add

    add(app, settings)


__all__ = ["mount"]
