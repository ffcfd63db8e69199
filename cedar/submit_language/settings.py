"""The configuration a submit translation depends on (spec 06 §5.7), with the defaults a
release has compiled in; read from the HTCondor configuration by :meth:`SubmitSettings.from_config`.

Its own module, below the translator and the job-ad parts, because both read it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cedar.errors import CedarError
from cedar.version import VERSION_STRING

if TYPE_CHECKING:
    from cedar.config import Config

CONDOR_VERSION = VERSION_STRING
CONDOR_PLATFORM = "$CondorPlatform: X86_64-Linux $"
DEFAULT_REQUEST_DISK = "MAX({1024, (TransferInputSizeMB+1) * 1.25}) * 1024"


@dataclass
class SubmitSettings:
    """Configuration the translation depends on (spec 06 §5.7); defaults as compiled in."""

    filesystem_domain: str = ""
    arch: str = "X86_64"
    opsys: str = "LINUX"
    default_universe: str = "vanilla"
    default_request_cpus: str = "1"
    default_request_memory: str = "128"
    default_request_disk: str = DEFAULT_REQUEST_DISK
    default_lease_duration: str = "2400"
    default_job_max_retries: str = "2"
    #: The schedd's SCHEDD_INTERVAL, which deferred and cron jobs carry as ScheddInterval.
    schedd_interval: str = "300"
    submit_method: int | None = None
    condor_version: str = CONDOR_VERSION
    condor_platform: str = CONDOR_PLATFORM
    user: str = ""
    spool: str = ""

    @classmethod
    def from_config(cls, config: Config | None = None) -> SubmitSettings:
        """Settings from the HTCondor configuration (subsystem SUBMIT) when it can be read."""
        settings = cls()
        try:
            import pwd

            settings.user = pwd.getpwuid(os.getuid()).pw_name
        except (ImportError, KeyError):
            settings.user = os.environ.get("USER", "")
        try:
            import platform
            import socket

            machine = platform.machine().lower()
            settings.arch = {"x86_64": "X86_64", "amd64": "X86_64", "aarch64": "aarch64"}.get(
                machine, machine.upper()
            )
            settings.opsys = {"linux": "LINUX", "darwin": "MACOSX", "windows": "WINDOWS"}.get(
                platform.system().lower(), platform.system().upper()
            )
            settings.filesystem_domain = socket.getfqdn()
        except OSError:
            pass
        lookup = config_lookup(config)
        if lookup is not None:
            for knob, attr in (
                ("FILESYSTEM_DOMAIN", "filesystem_domain"),
                ("DEFAULT_UNIVERSE", "default_universe"),
                ("JOB_DEFAULT_REQUESTCPUS", "default_request_cpus"),
                ("JOB_DEFAULT_REQUESTMEMORY", "default_request_memory"),
                ("JOB_DEFAULT_REQUESTDISK", "default_request_disk"),
                ("JOB_DEFAULT_LEASE_DURATION", "default_lease_duration"),
                ("DEFAULT_JOB_MAX_RETRIES", "default_job_max_retries"),
                ("SCHEDD_INTERVAL", "schedd_interval"),
                ("ARCH", "arch"),
                ("OPSYS", "opsys"),
                ("SPOOL", "spool"),
            ):
                value = lookup(knob)
                if value:
                    setattr(settings, attr, value)
        return settings


def config_lookup(config: Config | None) -> Callable[[str], str | None] | None:
    if config is None:
        from cedar.config import default_config

        try:
            config = default_config()
        except CedarError:
            return None
    return config.get


__all__ = [
    "CONDOR_PLATFORM",
    "CONDOR_VERSION",
    "DEFAULT_REQUEST_DISK",
    "SubmitSettings",
    "config_lookup",
]
