"""Where the TOKEN/SSL/SCITOKENS methods get their settings: explicit options, then configuration.

A method reads a knob from ``ctx.options`` first (explicit Python settings win), then from a
:class:`~cedar.config.Config` passed as ``ctx.options["config"]``, then from the process-wide
configuration.  Python objects (a :class:`SigningKeyStore`, TLS settings, SciToken issuers) are
passed in ``ctx.options`` under the lower-case keys documented on each method.
"""

from __future__ import annotations

from typing import Any

from cedar.auth.methods import AuthContext
from cedar.config import Config, default_config


def config_of(ctx: AuthContext) -> Config:
    """The configuration behind a context."""
    config = ctx.options.get("config")
    return config if isinstance(config, Config) else default_config()


def knob(ctx: AuthContext, name: str) -> str | None:
    """A knob's value as text: ``ctx.options`` first, then the configuration."""
    if name in ctx.options:
        value = ctx.options[name]
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (list, tuple)):
            return ",".join(str(v) for v in value)
        return str(value)
    return config_of(ctx).get(name)


def knob_bool(ctx: AuthContext, name: str, default: bool) -> bool:
    """A boolean knob (first letter T/Y/1 is true)."""
    value = knob(ctx, name)
    if value is None or not value.strip():
        return default
    return value.strip()[:1].upper() in ("T", "Y", "1")


def ad_get(ad: Any, name: str) -> Any:
    """An attribute of a handshake ad (a ClassAd or a mapping), ``None`` if absent."""
    if ad is None:
        return None
    try:
        return ad.get(name)
    except AttributeError:
        return None
