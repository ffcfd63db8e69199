"""CEDAR servers: the :class:`Daemon` framework, its policy, and the shared-port router."""

from cedar.auth.server_policy import LevelPolicy, ServerPolicy
from cedar.daemons.daemon import CommandRequest, Daemon, Handler
from cedar.daemons.router import SharedPortRouter

__all__ = ["CommandRequest", "Daemon", "Handler", "LevelPolicy", "ServerPolicy", "SharedPortRouter"]
