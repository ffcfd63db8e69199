"""``cedar``: one command with subcommands, in the spirit of the condor_* tools.

``ping``, ``query`` (alias ``status``), ``token`` and ``decode`` are the stand-alone tools
mounted here (their modules own their parsers; a new tool is one more :data:`MOUNTED` entry);
``submit``, ``q``, ``hold``, ``release``, ``rm``, ``edit`` and ``history`` talk to a schedd;
``demo`` and ``pool`` run an embedded mock pool.  Every subcommand accepts condor-style
single-dash options (``-af``, ``-long``, ``-const``...), ``--timeout`` and ``--debug``, and
reports errors through :func:`cedar.cli.common.guarded` (one line, documented exit codes).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from cedar.cli.common import (
    EXIT_REFUSED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    guarded,
    parse_command_line,
)

if TYPE_CHECKING:
    from cedar.auth.client_config import ClientSecurity

#: Subcommands implemented by other modules: name -> (module, one-line help).  A module has
#: ``build_parser()`` and ``run(args)`` (one command), or ``subcommand_parser(name)`` and
#: ``run(args)`` (several), or just ``main(argv)``.  Only the named module is imported.
MOUNTED = {
    "ping": ("cedar.cli.ping", "check that a daemon answers and what we may do there"),
    "whoami": ("cedar.cli.whoami", "who a daemon authenticates us as (method, identity, route)"),
    "q": ("cedar.cli.q", "show the job queue (like condor_q)"),
    "query": ("cedar.cli.query", "query the collector (like condor_status)"),
    "status": ("cedar.cli.query", "the same as query (condor_status's name)"),
    "token": ("cedar.cli.token", "IDTOKEN tools (like condor_token_create, _list)"),
    "decode": ("cedar.cli.decode", "decode a capture of CEDAR traffic"),
    "conformance": ("cedar.cli.conformance", "run the CEDAR conformance battery against a pool"),
    "tail": ("cedar.cli.tail", "show the end of a running job's output (like condor_tail)"),
    "mcp": ("cedar.mcp.cli", "serve HTCondor to AI agents (Model Context Protocol)"),
    "serve": ("cedar.http_api.cli", "serve the pool over HTTP (needs the [serve] extra)"),
    "submit": ("cedar.cli.schedd_tools", "submit jobs from a submit description file"),
    "history": ("cedar.cli.history", "job, epoch, transfer, startd history (condor_history)"),
    "rm": ("cedar.cli.actions", "remove jobs (like condor_rm)"),
    "hold": ("cedar.cli.actions", "hold jobs (like condor_hold)"),
    "release": ("cedar.cli.actions", "release held jobs (like condor_release)"),
    "edit": ("cedar.cli.actions", "set job attributes (like condor_qedit)"),
    "transfer-data": (
        "cedar.cli.spool_tools",
        "fetch the output files of spooled jobs (like condor_transfer_data)",
    ),
    "condor-commands": (
        "cedar.cli.condor_names",
        "write condor_q, condor_submit, ... launchers into a directory (opt-in)",
    ),
}
#: HTCondor's tool names cedar answers to (``cedar condor-commands``, or a link to ``cedar``
#: of that name): condor_* name -> the subcommand that does its work (``None``: done here).
CONDOR_NAMES: dict[str, str | None] = {
    "condor_submit": "submit",
    "condor_q": "q",
    "condor_rm": "rm",
    "condor_hold": "hold",
    "condor_release": "release",
    "condor_history": "history",
    "condor_status": "status",
    "condor_tail": "tail",
    "condor_qedit": "edit",
    "condor_ping": "ping",
    "condor_version": None,
    "condor_vacate": None,
    "condor_transfer_data": "transfer-data",
}
#: Subcommands of this module.
LOCAL = {
    "demo": "run a whole job lifecycle against an embedded mock pool",
    "pool": "run a mock pool (collector + schedd) in the foreground",
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: only ``--help``/``--version`` and the list of subcommands (each
    subcommand parses its own arguments, so its errors show its own usage)."""
    parser = argparse.ArgumentParser(
        prog="cedar",
        description="HTCondor CEDAR client tools (pure Python). "
        "'cedar COMMAND --help' describes a command.",
        epilog="exit codes: 0 ok, 1 refused/not found, 2 usage, 3 cannot reach the daemon, "
        "70 internal error, 130 interrupted, 141 output closed",
    )
    parser.add_argument("--version", action="version", version=version_text())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, text) in MOUNTED.items():
        sub.add_parser(name, help=text, add_help=False)
    for name, text in LOCAL.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def local_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``cedar demo`` or ``cedar pool``."""
    if name == "demo":
        demo = argparse.ArgumentParser(prog="cedar demo", description=LOCAL["demo"])
        demo.add_argument("--debug", action="store_true", help="show tracebacks")
        demo.set_defaults(handler=run_demo)
        return demo
    pool = argparse.ArgumentParser(prog="cedar pool", description=LOCAL["pool"])
    pool.add_argument("--port", type=int, default=0, help="port to listen on (default: any)")
    pool.add_argument("--host", default="127.0.0.1")
    pool.add_argument("--run-time", type=float, default=10.0, help="simulated job run time (s)")
    pool.add_argument(
        "--security",
        choices=["fs", "claimtobe-clear", "tokens", "kerberos"],
        default="fs",
        help="fs: FS (or CLAIMTOBE) with AES-GCM required (default); claimtobe-clear: CLAIMTOBE, "
        "no encryption; tokens: IDTOKENS only (a token for you is written to a new directory); "
        "kerberos: KERBEROS only, keys from KERBEROS_SERVER_KEYTAB (docs/kerberos.md)",
    )
    pool.add_argument("--schedd-name", help="the schedd's Name (default: this host's full name)")
    pool.add_argument(
        "--ccb",
        choices=["startd", "schedd"],
        help="put a daemon behind the collector's CCB broker: startd (a one-slot startd) or "
        "schedd; it listens nowhere and is reached only through the broker (docs/ccb.md)",
    )
    pool.add_argument(
        "--spool-dir", help="where spooled sandboxes are kept (default: a temporary directory)"
    )
    pool.add_argument("--debug", action="store_true", help="show tracebacks")
    pool.set_defaults(handler=run_pool)
    return pool


def version_text() -> str:
    """``cedar X.Y.Z (Python A.B.C)``."""
    import platform
    from importlib import metadata

    try:
        version = metadata.version("htc-cedar")
    except metadata.PackageNotFoundError:  # running from a source tree
        version = "(not installed)"
    return f"cedar {version} (Python {platform.python_version()})"


def _mounted(name: str, argv: Sequence[str], out: TextIO, prog: str | None = None) -> int:
    """Run the mounted subcommand ``name``; ``prog`` is the name it reports under (default
    ``cedar NAME``; ``condor_q`` when cedar runs as that tool)."""
    prog = prog or f"cedar {name}"
    module_name, _ = MOUNTED[name]
    try:
        module: Any = _import_frozen(module_name)
    except ImportError:
        print(f"cedar {name}: not available in this installation", file=sys.stderr)
        return EXIT_USAGE
    main_accepts = _parameters(module.main) if hasattr(module, "main") else ()
    if hasattr(module, "subcommand_parser"):
        parser = module.subcommand_parser(name)
    elif "out" in main_accepts or not hasattr(module, "build_parser"):
        # a condor-style scanner of its own (q, status, history, ...): it parses and reports
        extra: dict[str, Any] = {}
        if "prog" in main_accepts:
            extra["prog"] = prog
        if "out" in main_accepts:
            extra["out"] = out
        return int(module.main(list(argv), **extra))
    else:
        parser = module.build_parser()
    parser.prog = prog
    parser.set_defaults(prog=parser.prog, command=name)
    args = parse_command_line(parser, argv)
    if hasattr(module, "subcommand_parser"):
        return int(module.run(args, out))
    return int(module.run(args))


def _import_frozen(module_name: str) -> Any:
    """Import a subcommand's module with the cyclic garbage collector paused, then move what
    the imports made (functions, classes, constants: alive until exit) out of its sight with
    ``gc.freeze()``.  Its full collections during the imports walked every module object
    loaded so far, several times (issue 39: ~5 % of a ``cedar q``); the collector is on again
    before the command does anything, and later garbage is collected as before."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(module_name)
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


def _parameters(function: Any) -> tuple[str, ...]:
    """The parameter names of a plain Python function (``inspect`` costs ~5 ms to import)."""
    code = function.__code__
    return tuple(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


def _wants_debug(argv: Sequence[str]) -> bool:
    return any(arg in ("--debug", "-debug") for arg in argv)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``cedar`` console script; started under a ``condor_*`` name (a
    link to it named ``condor_q``), it behaves as that tool."""
    if argv is None and sys.argv:
        tool = tool_name(sys.argv[0])
        if tool is not None:
            return run_as(tool, sys.argv[1:], out)
    argv = list(sys.argv[1:] if argv is None else argv)
    _escape_unencodable(sys.stdout, sys.stderr)
    return guarded("cedar", _wants_debug(argv), lambda: _main(argv, out or sys.stdout))


def console() -> int:
    """The ``cedar`` program (and its ``condor_*`` names): :func:`main`, then a quick exit.

    Tearing the interpreter down (every module emptied, a last full garbage collection) cost
    ~4 % of a ``cedar q`` (issue 39) and frees nothing the system does not free at exit.  The
    quick exit flushes the standard streams and runs the ``atexit`` handlers first; it is not
    taken when a thread may still run (``threading`` loaded: the interpreter waits for its
    threads) or when a standard stream cannot be flushed (the interpreter reports that)."""
    status = main()
    _exit_quickly(status)
    return status


def _exit_quickly(status: int) -> None:
    if "threading" in sys.modules:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()
    os._exit(status)


def run_as(tool: str, argv: Sequence[str], out: TextIO | None = None) -> int:
    """Run cedar as HTCondor's ``tool`` (a name of :data:`CONDOR_NAMES`)."""
    argv = list(argv)
    stdout = out or sys.stdout
    _escape_unencodable(sys.stdout, sys.stderr)
    if argv and argv[0] in HELP_WORDS:
        return _condor_usage(tool, argv[0], stdout)
    name = CONDOR_NAMES[tool]
    if name is None:
        return guarded(tool, _wants_debug(argv), lambda: _condor_own(tool, argv, stdout))
    status = guarded(tool, _wants_debug(argv), lambda: _mounted(name, argv, stdout, prog=tool))
    return CONDOR_STATUS.get(status, status)


#: The exit statuses cedar's own that condor's tools do not have: condor_q, condor_rm,
#: condor_submit, ... exit 1 on a usage error and on an unreachable daemon alike (observed).
CONDOR_STATUS = {EXIT_USAGE: EXIT_REFUSED, EXIT_UNREACHABLE: EXIT_REFUSED}


#: The words that ask a condor_* tool for its usage (as the first argument).
HELP_WORDS = ("-help", "--help", "-h")


def _condor_usage(tool: str, word: str, out: TextIO) -> int:
    """The real 25.13.2 tool's answer to ``-help``/``--help``/``-h``: its usage text on its
    stream, with its exit status (recorded from the tools into ``condor_usage.json``; some
    print the name they were started under, others their own name)."""
    import json

    path = os.path.join(os.path.dirname(__file__), "condor_usage.json")
    with open(path, encoding="utf-8") as handle:
        answer = json.load(handle)[tool][word]
    prog = _started_as(tool)
    out.write(answer["stdout"].replace("{prog}", prog))
    out.flush()
    sys.stderr.write(answer["stderr"].replace("{prog}", prog))
    return int(answer["status"])


def _started_as(tool: str) -> str:
    """The name a program would see in ``argv[0]``: the bare name when PATH finds this very
    file under it (a script's ``sys.argv[0]`` is always its path, a program's is what was
    typed), else the path it was started by."""
    import shutil

    started = sys.argv[0] if sys.argv and tool_name(sys.argv[0]) == tool else tool
    found = shutil.which(tool)
    if found and os.path.abspath(found) == os.path.abspath(started):
        return tool
    return started


def tool_name(argv0: str) -> str | None:
    """The condor_* name a program was started as (``/x/condor_q`` -> ``condor_q``), if any."""
    base = os.path.basename(argv0)
    return base if base in CONDOR_NAMES else None


def _condor_own(tool: str, argv: list[str], out: TextIO) -> int:
    """The condor_* tools with no cedar subcommand behind them."""
    if tool == "condor_version":
        return _condor_version(argv, out)
    sys.stderr.write(
        f"{tool}: cedar does not vacate machines (it has no startd client); "
        "condor_rm or condor_hold end a job's run\n"
    )
    return EXIT_REFUSED


def _condor_version(argv: list[str], out: TextIO) -> int:
    """condor_version: the version and platform pair (naming cedar), or with ``-arch`` and
    ``-opsys`` the platform's two halves; other words are refused as condor_version refuses
    them (its message, its usage, exit 1: observed on 25.13.2)."""
    from cedar.version import PLATFORM_STRING, VERSION_STRING

    arch, _, opsys = PLATFORM_STRING.split()[1].partition("-")
    lines = []
    for word in argv:
        if word in ("-arch", "-opsys"):
            lines.append(arch if word == "-arch" else opsys)
            continue
        kind = "unrecognized" if word.startswith("-") else "invalid"
        sys.stderr.write(f"ERROR: {kind} argument: '{word}'\n")
        _condor_usage("condor_version", "-help", out)
        return EXIT_REFUSED
    out.write("".join(f"{line}\n" for line in lines or [VERSION_STRING, PLATFORM_STRING]))
    return 0


def _main(argv: list[str], out: TextIO) -> int:
    if argv and argv[0] in MOUNTED:
        name = argv[0]
        return guarded(f"cedar {name}", _wants_debug(argv), lambda: _mounted(name, argv[1:], out))
    if argv and argv[0] in LOCAL:
        args = parse_command_line(local_parser(argv[0]), argv[1:])
        args.command = argv[0]
        return guarded(f"cedar {args.command}", args.debug, lambda: int(args.handler(args, out)))
    parser = build_parser()
    parser.parse_args(argv)  # --help, --version, or an unknown command (usage, exit 2)
    parser.print_help(out)
    return EXIT_USAGE


def _escape_unencodable(*streams: TextIO) -> None:
    """Print bytes the terminal cannot encode (non-UTF-8 data from a peer) as escapes."""
    for stream in streams:
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


# --------------------------------------------------------------------------- demo and pool


DEMO_SUBMIT = """\
executable = /bin/echo
arguments  = hello from job $(Process)
output     = /dev/null
queue 3
"""


def _demo_security() -> ClientSecurity:
    from cedar.auth.client_config import ClientSecurity, SecurityConfig
    from cedar.auth.policy import Requirement

    return ClientSecurity(
        SecurityConfig(
            methods=["FS"], encryption=Requirement.REQUIRED, integrity=Requirement.REQUIRED
        )
    )


def run_demo(args: argparse.Namespace, out: TextIO) -> int:
    """Start a mock pool on loopback (FS + AES-GCM) and walk a job through its life."""
    import tempfile
    import time

    from cedar.cli import spool_tools
    from cedar.commands import Collector, Schedd, ping
    from cedar.config import Config, set_default_config
    from cedar.daemons.pool import MockPool
    from cedar.submit_language import Submit

    # The demo is self-contained: no HTCondor configuration on this machine is read or needed.
    set_default_config(Config())
    security = _demo_security()

    def step(text: str) -> None:
        out.write(f"\n== {text}\n")
        out.flush()

    with MockPool().run_in_thread() as pool:
        out.write(f"mock pool listening on {pool.host_port} (collector + schedd, FS + AES-GCM)\n")
        step("ping the schedd at WRITE")
        result = ping(pool.schedd_address, "WRITE", security=security)
        out.write(
            f"authorized={result.authorized} user={result.user} method={result.method} "
            f"encryption={result.crypto if result.encrypted else 'none'}\n"
        )
        if not result.authorized or not result.encrypted:
            out.write("demo failed: expected an authorized, encrypted session\n")
            return 1
        step("status: the collector's schedd ads")
        collector = Collector(pool.address, security=security)
        for ad in collector.query("schedd", projection=["Name", "MyAddress"]):
            out.write(f"{ad.get('Name')}  {ad.get('MyAddress')}\n")
        schedd = Schedd(collector.locate("schedd").address, security=security)
        step("submit 3 jobs")
        with tempfile.TemporaryDirectory() as directory:
            submitted = schedd.submit(Submit(DEMO_SUBMIT), submit_dir=directory)
        cluster = submitted.cluster
        out.write(f"{submitted.num_procs} job(s) submitted to cluster {cluster}.\n")
        step("q")
        for ad in schedd.query(
            f"ClusterId == {cluster}", ["ClusterId", "ProcId", "JobStatus", "Args"]
        ):
            out.write(
                f"{ad['ClusterId']}.{ad['ProcId']}  status={ad['JobStatus']}  args={ad['Args']!r}\n"
            )
        step(f"hold cluster {cluster}")
        held = schedd.hold(cluster, "demo hold")
        out.write(f"All jobs in cluster {cluster} have been held ({held.succeeded} jobs)\n")
        step(f"release job {cluster}.0")
        released = schedd.release(f"{cluster}.0", "demo release")
        out.write(f"Job {cluster}.0 released ({released.succeeded} job)\n")
        step(f"run: the schedd starts job {cluster}.0 and it completes")
        now = time.time()
        pool.schedd.queue.step(now)
        pool.schedd.queue.step(now + pool.schedd.queue.run_time)
        step(f"rm cluster {cluster}")
        removed = schedd.remove(cluster, "demo remove")
        out.write(
            f"All jobs in cluster {cluster} have been marked for removal "
            f"({removed.succeeded} jobs)\n"
        )
        step("history")
        records = list(
            schedd.history(f"ClusterId == {cluster}", ["ClusterId", "ProcId", "JobStatus"])
        )
        for ad in records:
            out.write(f"{ad['ClusterId']}.{ad['ProcId']}  status={ad['JobStatus']}\n")
        step("history -epochs: one record per run (SPAWN when it starts, EPOCH when it ends)")
        epochs = list(
            schedd.history(
                f"ClusterId == {cluster}",
                ["ClusterId", "ProcId", "RunInstanceID", "EpochAdType", "ExitCode"],
                source="epochs",
                record_types="ALL",
            )
        )
        for ad in epochs:
            out.write(
                f"{ad['ClusterId']}.{ad['ProcId']}  run {ad['RunInstanceID']}  "
                f"{ad['EpochAdType']}  exit={ad.get('ExitCode', '-')}\n"
            )
        remaining = schedd.query(f"ClusterId == {cluster}")
        step("remote submit: the input travels to the schedd, the output comes back")
        spooled_ok = spool_tools.demo_spool(schedd, pool, out)
        ok = spooled_ok and (
            held.succeeded == 3
            and released.succeeded == 1
            and removed.succeeded == 2
            and len(records) == 3
            and [ad["EpochAdType"] for ad in epochs] == ["EPOCH", "SPAWN"]
            and not remaining
        )
        out.write("\ndemo " + ("succeeded" if ok else "FAILED") + "\n")
        return 0 if ok else 1


def run_pool(args: argparse.Namespace, out: TextIO) -> int:
    """Serve a mock pool until interrupted and say how to point clients at it."""
    import trio

    from cedar.daemons.pool import MockPool, host_name

    pool = MockPool.for_setup(
        args.security,
        host=args.host,
        port=args.port,
        simulate=True,
        run_time=args.run_time,
        schedd_name=args.schedd_name or host_name(),
        spool_dir=args.spool_dir,
        ccb=args.ccb,
    )

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(pool.serve)
            hp = pool.host_port
            exports = "".join(f"  export {k}={v}\n" for k, v in pool.client_environment().items())
            out.write(
                f"mock pool (collector + schedd, {args.security}) on {hp}\n\n"
                f"cedar clients:\n"
                f"  cedar q --pool {hp}\n"
                f"  cedar submit --pool {hp} job.sub\n\n"
                f"HTCondor tools and htcondor2 (run as this user):\n"
                f"{exports}"
                "  condor_q; condor_submit job.sub; condor_status -any  # or htcondor2\n\n"
                f"schedd {pool.schedd.name}: {pool.schedd_address}\n"
                + (
                    f"{args.ccb} reachable only through CCB: {pool.behind_broker.address}\n"
                    f"  cedar ping --verbose --address '{pool.behind_broker.address}' READ\n"
                    if pool.behind_broker is not None
                    else ""
                )
                + "Ctrl-C stops the pool.\n"
            )
            out.flush()

    try:
        trio.run(serve)
    except KeyboardInterrupt:
        out.write("stopped\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
