"""What the configuration reader detects about the machine and finds on disk (spec 06 §1.1, §1.8).

The built-in macros (host names, addresses, user, architecture), password-database homes, and
the root configuration file a tool reads (``CONDOR_CONFIG``, ``ONLY_ENV``, ``/dev/null``, the
default locations).
"""

from __future__ import annotations

import os
import platform
import pwd
import re
import socket
from pathlib import Path

from cedar.config.defaults import DEFAULT_ROOT_FILES
from cedar.errors import ConfigError


def _canonical_hostname() -> str:
    """``gethostname`` replaced by the forward lookup's canonical name (spec 06 §1.8)."""
    name = socket.gethostname()
    try:
        info = socket.getaddrinfo(name, None, flags=socket.AI_CANONNAME)
        if info and info[0][3]:
            return info[0][3]
    except OSError:
        pass
    return name


def _detect_ip() -> str:
    """An interface address: the source address the kernel would use for an outside route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet is sent for UDP connect
            return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"


def home_of(user: str | None = None, uid: int | None = None) -> str | None:
    """Password-database home directory (``$HOME`` is deliberately ignored, spec 06 §1.2)."""
    try:
        entry = (
            pwd.getpwnam(user)
            if user is not None
            else pwd.getpwuid(os.geteuid() if uid is None else uid)
        )
    except KeyError:
        return None
    return entry.pw_dir


def _arch() -> str:
    machine = platform.machine()
    lowered = machine.lower()
    if lowered in {"x86_64", "amd64"}:
        return "X86_64"
    if re.fullmatch(r"i[3-6]86", lowered):
        return "INTEL"
    return {"ppc64": "PPC64", "ia64": "IA64"}.get(lowered, machine)


def detected_macros(subsystem: str, local_name: str | None) -> dict[str, str]:
    """The built-in macros a client needs (spec 06 §1.8)."""
    full = _canonical_hostname()
    short = full.split(".", 1)[0]
    euid = os.geteuid()
    try:
        username = pwd.getpwuid(euid).pw_name
    except KeyError:
        username = str(euid)
    opsys = {"Linux": "LINUX", "Darwin": "MACOSX", "Windows": "WINDOWS"}.get(
        platform.system(), platform.system().upper()
    )
    ip = _detect_ip()
    macros = {
        "FULL_HOSTNAME": full,
        "HOSTNAME": short,
        "IP_ADDRESS": ip,
        "IPV4_ADDRESS": ip,
        "IPV6_ADDRESS": "",
        "IP_ADDRESS_IS_V6": "false",
        "SUBSYSTEM": subsystem,
        "LOCALNAME": local_name or subsystem,
        "USERNAME": username,
        "PID": str(os.getpid()),
        "PPID": str(os.getppid()),
        "ARCH": _arch(),
        "OPSYS": opsys,
        "CondorIsAdmin": "true" if euid == 0 else "false",
    }
    tilde = home_of("condor")
    if tilde is not None:
        macros["TILDE"] = tilde
    return macros


def find_root_file(condor_config: str | None) -> tuple[str | None, bool]:
    """The root configuration source and whether ``ONLY_ENV`` was asked for (spec 06 §1.1).

    ``condor_config`` is the ``CONDOR_CONFIG`` value (``None``: unset, search the default
    locations).  ``None`` as the source means "read no file" (``ONLY_ENV``, ``/dev/null``).
    """
    only_env = False
    root: str | None = None
    if condor_config is None:
        candidates = list(DEFAULT_ROOT_FILES)
        condor_home = home_of("condor")
        if condor_home:
            candidates.append(os.path.join(condor_home, "condor_config"))
        root = next((c for c in candidates if os.access(c, os.R_OK)), None)
        if root is None:
            raise ConfigError(
                "Neither the environment variable CONDOR_CONFIG, /etc/condor/, "
                "/usr/local/etc/, nor ~condor/ contain a condor_config source; set "
                "CONDOR_CONFIG (to a file, /dev/null or ONLY_ENV)"
            )
    elif condor_config.upper() == "ONLY_ENV":
        only_env = True
    elif condor_config == "/dev/null":
        pass
    elif condor_config.rstrip().endswith("|"):
        root = condor_config
    else:
        path = Path(condor_config)
        if condor_config and path.is_dir():
            raise ConfigError(
                f"File specified in CONDOR_CONFIG environment variable: "
                f'"{condor_config}" is a directory.  Please specify a file.'
            )
        if not condor_config or not path.is_file():
            raise ConfigError(
                f'File specified in CONDOR_CONFIG environment variable: "{condor_config}" '
                "does not exist."
            )
        root = condor_config
    return root, only_env


__all__ = ["detected_macros", "find_root_file", "home_of"]
