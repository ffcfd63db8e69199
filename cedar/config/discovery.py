"""What the configuration reader detects about the machine and finds on disk (spec 06 §1.1, §1.8).

The built-in macros (host names, addresses, user, architecture), password-database homes, and
the root configuration file a tool reads (``CONDOR_CONFIG``, ``ONLY_ENV``, ``/dev/null``, the
default locations).
"""

from __future__ import annotations

import os
import pwd
import re
import socket

from cedar.config.defaults import DEFAULT_ROOT_FILES
from cedar.errors import ConfigError


def _canonical_hostname() -> str:
    """``gethostname`` replaced by the forward lookup's canonical name (spec 06 §1.8)."""
    name = socket.gethostname()
    # An ASCII name goes as bytes: a str is IDNA-encoded first, and importing that codec
    # (encodings.idna, stringprep, unicodedata) costs a client ~2 ms of start-up.
    host: str | bytes = name.encode("ascii") if name.isascii() else name
    try:
        info = socket.getaddrinfo(host, None, flags=socket.AI_CANONNAME)
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


def _detect_ip6() -> str:
    """The IPv6 source address for an outside route ("" when the machine has none)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as probe:
            probe.connect(("2001:db8::1", 9))  # documentation prefix: nothing is sent
            return str(probe.getsockname()[0]).split("%", 1)[0]
    except OSError:
        return ""


def interface_address(pattern: str) -> tuple[str, str]:
    """The (IPv4, IPv6) addresses ``NETWORK_INTERFACE`` selects: a literal address, or the
    first interface whose name or IPv4 address matches the (``*``-wildcard) pattern."""
    try:
        socket.inet_pton(socket.AF_INET, pattern)
    except (OSError, ValueError):
        pass
    else:
        return pattern, ""  # an IPv4 literal, the common case (no ipaddress: start-up)
    import fnmatch
    import ipaddress

    try:
        literal = ipaddress.ip_address(pattern)
    except ValueError:
        literal = None
    if literal is not None:
        return (str(literal), "") if literal.version == 4 else ("", str(literal))
    for _, name in _interfaces():
        address = _ipv4_of(name)
        if address and (fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(address, pattern)):
            return address, ""
    return "", ""


def _interfaces() -> list[tuple[int, str]]:
    try:
        return list(socket.if_nameindex())
    except OSError:
        return []


def _ipv4_of(interface: str) -> str:
    """The IPv4 address of a network interface (Linux ``SIOCGIFADDR``; "" elsewhere)."""
    import fcntl
    import struct

    siocgifaddr = 0x8915
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            packed = struct.pack("256s", interface.encode()[:15])
            answer = fcntl.ioctl(probe.fileno(), siocgifaddr, packed)
    except OSError:
        return ""
    return socket.inet_ntoa(answer[20:24])


def _os_release() -> dict[str, str]:
    values: dict[str, str] = {}
    try:
        with open("/etc/os-release", encoding="utf-8") as file:
            text = file.read()
    except OSError:
        return values
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip('"')
    return values


def _memory_mb() -> str:
    try:
        with open("/proc/meminfo", encoding="utf-8") as file:
            text = file.read()
        for line in text.splitlines():
            if line.startswith("MemTotal:"):
                return str(int(line.split()[1]) // 1024)
    except (OSError, ValueError, IndexError):
        pass
    return "0"


def _operating_system(opsys: str) -> dict[str, str]:
    """The ``OPSYS*`` family the reference detects (from ``/etc/os-release`` on Linux)."""
    release = _os_release()
    name = release.get("NAME", os.uname().sysname).split()[0]
    major = release.get("VERSION_ID", "0").split(".", 1)[0]
    try:
        version = int(major) * 100
    except ValueError:
        version = 0
    return {
        "OPSYSANDVER": f"{name}{major}",
        "OPSYSLEGACY": opsys,
        "OPSYSLONGNAME": release.get("PRETTY_NAME", name).split(" (", 1)[0],
        "OPSYSMAJORVER": major,
        "OPSYSNAME": name,
        "OPSYSSHORTNAME": name,
        "OPSYSVER": str(version),
    }


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
    machine = os.uname().machine  # what platform.machine() reads (platform: ~1 ms to import)
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
    system = os.uname().sysname  # platform.system() on POSIX
    opsys = {"Linux": "LINUX", "Darwin": "MACOSX", "Windows": "WINDOWS"}.get(system, system.upper())
    ip = _detect_ip()
    uname = os.uname()
    cores = str(os.cpu_count() or 1)
    macros = {
        "FULL_HOSTNAME": full,
        "HOSTNAME": short,
        "IP_ADDRESS": ip,
        "IPV4_ADDRESS": ip,
        "IPV6_ADDRESS": _detect_ip6(),
        "IP_ADDRESS_IS_IPV6": "false",
        "SUBSYSTEM": subsystem,
        "LOCALNAME": local_name or subsystem,
        "USERNAME": username,
        "PID": str(os.getpid()),
        "PPID": str(os.getppid()),
        "REAL_UID": str(os.getuid()),
        "REAL_GID": str(os.getgid()),
        "ARCH": _arch(),
        "OPSYS": opsys,
        **_operating_system(opsys),
        "UNAME_ARCH": uname.machine,
        "UNAME_OPSYS": uname.sysname,
        "UTSNAME_MACHINE": uname.machine,
        "UTSNAME_NODENAME": uname.nodename,
        "UTSNAME_RELEASE": uname.release,
        "UTSNAME_SYSNAME": uname.sysname,
        "UTSNAME_VERSION": uname.version,
        "DETECTED_CORES": cores,
        "DETECTED_CPUS": cores,
        "DETECTED_PHYSICAL_CPUS": cores,
        "DETECTED_MEMORY": _memory_mb(),
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
        if condor_config and os.path.isdir(condor_config):
            raise ConfigError(
                f"File specified in CONDOR_CONFIG environment variable: "
                f'"{condor_config}" is a directory.  Please specify a file.'
            )
        if not condor_config or not os.path.isfile(condor_config):
            raise ConfigError(
                f'File specified in CONDOR_CONFIG environment variable: "{condor_config}" '
                "does not exist."
            )
        root = condor_config
    return root, only_env


__all__ = ["detected_macros", "find_root_file", "home_of", "interface_address"]
