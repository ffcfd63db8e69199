"""``remote_config_value_async``: a running daemon's value of one knob (DC_CONFIG_VAL)."""

from __future__ import annotations

from cedar.auth.client_config import ClientSecurity
from cedar.commands._async.command import run_command_async
from cedar.commands.base import DEFAULT_TIMEOUT
from cedar.commands.config_val import config_val_body
from cedar.numbers import Command


async def remote_config_value_async(
    address: str, name: str, *, security: ClientSecurity, timeout: float = DEFAULT_TIMEOUT
) -> str | None:
    """``name``'s value in the daemon at ``address`` (None: not defined there)."""
    value: str | None = await run_command_async(
        address, Command.DC_CONFIG_VAL, config_val_body(name), security=security, timeout=timeout
    )
    return value
