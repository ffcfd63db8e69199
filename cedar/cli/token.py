"""``cedar token``: mint IDTOKENS, list the tokens a client would present, create signing keys.

``create`` signs with a key file (scrambled, as HTCondor stores it) and prints the token or writes
it to a file (mode 0600).  ``list`` never prints a signature.  ``create-signing-key`` writes a new
random key file, the server side of IDTOKENS.  Mounted by the top-level CLI as ``cedar token``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from collections.abc import Sequence

from cedar.auth.signing_key import POOL_KEY_NAME, CredentialError, SigningKey, write_secure_file
from cedar.auth.token import IdToken, TokenError, create_token, discover_tokens
from cedar.config import Config, default_config
from cedar.errors import CedarError


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The ``token`` command's parser (or fill in ``parser``, for mounting as a subcommand)."""
    if parser is None:
        parser = argparse.ArgumentParser(prog="cedar token", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="token_command", metavar="COMMAND")
    sub.required = True

    create = sub.add_parser(
        "create",
        help="mint an IDTOKEN signed with a signing key (like condor_token_create)",
        description="cedar token create -identity USER@DOMAIN [-key KEYID] [-authz AUTHZ]... "
        "[-lifetime SECONDS] [-token NAME | -file FILE]; single- or double-dash spellings. "
        "Without -token or -file the token is printed.",
    )
    create.add_argument(
        "--identity",
        "--subject",
        dest="identity",
        required=True,
        help="the token's subject, e.g. alice@example.org",
    )
    create.add_argument(
        "--key", dest="key_name", default=None, help="signing key name (kid); default POOL"
    )
    create.add_argument(
        "--key-file",
        default=None,
        help="signing key file (default: from the configuration for the name)",
    )
    create.add_argument(
        "--issuer",
        "--trust-domain",
        dest="issuer",
        default=None,
        help="issuer (iss); default TRUST_DOMAIN",
    )
    create.add_argument(
        "--authz",
        action="append",
        default=[],
        metavar="LEVEL",
        help="limit the token to this authorization level (repeatable)",
    )
    create.add_argument("--scope", action="append", default=[], help="extra scope item")
    create.add_argument(
        "--lifetime",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds until the token expires (default: never)",
    )
    where = create.add_mutually_exclusive_group()
    where.add_argument(
        "--token",
        dest="token_name",
        default=None,
        metavar="NAME",
        help="write the token to NAME in the token directory (SEC_TOKEN_DIRECTORY), mode 0600",
    )
    where.add_argument(
        "--file",
        dest="output",
        default=None,
        metavar="FILE",
        help="write the token to FILE (mode 0600) instead of printing it",
    )

    listing = sub.add_parser(
        "list",
        help="list the tokens a client would find (like condor_token_list)",
        description="Print each token's header and payload (never its signature) as "
        "condor_token_list does. condor options cedar lacks: -capability, -pool, -name, -type.",
    )
    listing.add_argument("--dir", default=None, help="token directory (default: configured)")
    listing.add_argument("--file", default=None, help="list the token(s) in this file")
    listing.add_argument("--json", action="store_true", help="print JSON")

    key = sub.add_parser("create-signing-key", help="create a new random signing key file")
    key.add_argument("path", help="file to create (mode 0600)")
    key.add_argument("--force", action="store_true", help="overwrite an existing file")
    key.add_argument("--size", type=int, default=64, help="random bytes (default 64)")
    return parser


def _key_file(config: Config, name: str) -> str:
    if name == POOL_KEY_NAME:
        path = config.pool_signing_key_file()
    else:
        directory = config.password_directory()
        path = f"{directory}/{name}" if directory else None
    if not path:
        raise CedarError(f"no key file configured for signing key {name!r}; use --key-file")
    return path


def _create(args: argparse.Namespace, config: Config) -> int:
    name = args.key_name or POOL_KEY_NAME
    key = SigningKey.load(args.key_file or _key_file(config, name), name)
    issuer = args.issuer or config.trust_domain()
    if not issuer:
        raise CedarError("no issuer: pass --issuer or configure TRUST_DOMAIN")
    token = create_token(
        key,
        issuer=issuer,
        subject=args.identity,
        lifetime=args.lifetime,
        authorizations=args.authz,
        scopes=args.scope,
    )
    if args.token_name:
        directory = config.token_directory()
        if not directory:
            raise CedarError("no token directory configured (SEC_TOKEN_DIRECTORY); use -file")
        args.output = os.path.join(directory, args.token_name)
    if args.output:
        write_secure_file(args.output, (token + "\n").encode(), overwrite=True)
    else:
        print(token)
    return 0


def _when(seconds: int | None) -> str:
    if seconds is None:
        return "never"
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat()


def _condor_json(value: object) -> str:
    """JSON as condor_token_list prints it: keys sorted, no spaces, ``/`` escaped."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).replace("/", "\\/")


def _list(args: argparse.Namespace, config: Config) -> int:
    if args.file:
        from cedar.auth.signing_key import read_secure_file
        from cedar.auth.token import iter_token_lines

        found = []
        for line in iter_token_lines(read_secure_file(args.file)):
            try:
                found.append((IdToken.parse(line), args.file))
            except TokenError:
                continue
        directory = args.file
    else:
        directory = args.dir or config.token_directory()
        found = [
            (item.token, item.source.rsplit(":", 1)[0])
            for item in discover_tokens(
                directory, exclude=config.exclude_regexp(), subsystem=config.subsystem
            )
        ]
    if args.json:
        rows = [
            {"source": path, **dict(token.summary()), "expires": _when(token.expires_at)}
            for token, path in found
        ]
        print(json.dumps(rows, indent=2, sort_keys=True))
        return 0
    for token, path in found:
        print(
            f"Header: {_condor_json(dict(token.header))} "
            f"Payload: {_condor_json(dict(token.claims))} File: {path}"
        )
    return 0


def _create_key(args: argparse.Namespace) -> int:
    key = SigningKey.generate(POOL_KEY_NAME, args.size)
    write_secure_file(args.path, key.file_bytes(), overwrite=args.force)
    print(f"created signing key {args.path}")
    return 0


def run(args: argparse.Namespace, config: Config | None = None) -> int:
    """Run a parsed ``token`` command; errors are printed, the exit status returned."""
    try:
        if args.token_command == "create-signing-key":
            return _create_key(args)
        config = config or default_config()
        if args.token_command == "create":
            return _create(args, config)
        return _list(args, config)
    except (CedarError, CredentialError, TokenError, OSError) as exc:
        print(f"cedar token {args.token_command}: {exc}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point for running this module directly."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
