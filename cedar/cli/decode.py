"""``cedar decode``: a readable transcript of the CEDAR traffic in a pcap/pcapng capture.

One line per message (conversation.message, direction, payload size, what it is), ClassAds in
full with ``-v``, JSON with ``--json``.  Meant for someone debugging a security or protocol
problem: it shows the handshake decisions, the authentication methods tried and why they failed,
and where AES-GCM starts (decrypting it when the session key is given with ``--key``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from cedar.capture.dissect import DecodedMessage, DissectedConversation, dissect
from cedar.errors import CedarError

EXIT_OK = 0
#: The capture was read but some message could not be decoded or the capture breaks off.
EXIT_PROBLEMS = 1
#: The capture (or the arguments) could not be used at all.
EXIT_ERROR = 2


def _key(text: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError("a session key is 64 hexadecimal digits") from None
    if len(key) != 32:
        raise argparse.ArgumentTypeError(
            f"an AES session key is 32 bytes (64 hex digits), not {len(key)}"
        )
    return key


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The argument parser (``parser`` lets the top-level ``cedar`` CLI mount it as a command)."""
    if parser is None:
        parser = argparse.ArgumentParser(
            prog="cedar decode",
            description="Decode the CEDAR (HTCondor) traffic in a pcap or pcapng capture.",
        )
    parser.add_argument("file", metavar="FILE", help="pcap or pcapng capture")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--conversation",
        "-c",
        type=int,
        metavar="N",
        help="only conversation N (numbered from 1 in order of appearance)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="show ClassAds in full (-vv: also the payload bytes)",
    )
    parser.add_argument(
        "--key",
        type=_key,
        action="append",
        default=[],
        metavar="HEX",
        help="AES-GCM session key (64 hex digits) to decrypt encrypted conversations; "
        "may be given several times",
    )
    return parser


def _header(conv: DissectedConversation) -> str:
    facts = conv.facts
    parts = [conv.command_name, conv.start or "?"]
    if "auth_command" in facts:
        parts[0] += f" for {facts['auth_command']}"
    if facts.get("shared_port_id"):
        parts.append(f"shared port id {facts['shared_port_id']}")
    if facts.get("method"):
        parts.append(f"authenticated by {facts['method']}")
    elif facts.get("authentication") == "failed":
        parts.append("authentication failed")
    if facts.get("user"):
        parts.append(f"as {facts['user']}")
    if facts.get("encrypted"):
        parts.append("AES-GCM")
    if facts.get("session"):
        parts.append(f"session {facts['session']}")
    return f"== conversation {conv.number}: {conv.label}  " + ", ".join(parts)


def _hexdump(data: bytes, indent: str) -> list[str]:
    lines = []
    for pos in range(0, len(data), 16):
        chunk = data[pos : pos + 16]
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{indent}{pos:04x}  {chunk.hex(' '):<47}  {text}")
    return lines


def _message_lines(message: DecodedMessage, verbose: int) -> list[str]:
    where = f"{message.conversation}.{message.index}"
    lines = [f"  {where:<7} {message.direction} {message.size:>6}  {message.summary}"]
    if message.problem:
        lines.append(f"          !! cannot decode: {message.problem} (offset {message.offset})")
    if verbose:
        for label, ad in message.ads:
            lines.append(f"          [{label}] {len(ad)} attributes")
            for name in ad:
                value = ad.raw_text(name).replace("\n", "⏎")
                lines.append(f"              {name} = {value}")
    if verbose > 1 and message.payload is not None:
        lines.extend(_hexdump(message.payload, "          "))
    return lines


def render_text(conversations: list[DissectedConversation], out: TextIO, verbose: int = 0) -> None:
    """Write the transcript of ``conversations`` to ``out``."""
    for conv in conversations:
        print(_header(conv), file=out)
        for message in conv.messages:
            for line in _message_lines(message, verbose):
                print(line, file=out)
        if conv.error is not None:
            print(f"  !! {conv.error}", file=out)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Decode ``args.file``; returns the exit status (0 ok, 1 problems found, 2 unusable)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        conversations = dissect(args.file, keys=list(args.key))
    except CedarError as exc:
        print(f"cedar decode: {exc}", file=err)
        return EXIT_ERROR
    if args.conversation is not None:
        chosen = [c for c in conversations if c.number == args.conversation]
        if not chosen:
            print(
                f"cedar decode: no conversation {args.conversation} "
                f"(the capture has {len(conversations)})",
                file=err,
            )
            return EXIT_ERROR
        conversations = chosen
    if args.json:
        json.dump(
            {
                "file": str(args.file),
                "conversations": [c.to_json(verbose=bool(args.verbose)) for c in conversations],
            },
            out,
            indent=2,
            ensure_ascii=False,
            default=str,
        )
        print(file=out)
    else:
        render_text(conversations, out, args.verbose)
    problems = [m for c in conversations for m in c.problems]
    errors = [c.error for c in conversations if c.error is not None]
    for error in errors:
        print(f"cedar decode: {error}", file=err)
    return EXIT_PROBLEMS if problems or errors else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run as a program (``python -m cedar.cli.decode``)."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
