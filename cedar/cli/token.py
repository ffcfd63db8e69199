"""``cedar token``: mint IDTOKENS, list the tokens a client would present, create signing keys.

``create`` signs with a key file (scrambled, as HTCondor stores it) and prints the token or writes
it to a file (mode 0600).  ``list`` never prints a signature.  ``create-signing-key`` writes a new
random key file, the server side of IDTOKENS.  Mounted by the top-level CLI as ``cedar token``.
"""

from __future__ import annotations

import argparse
import datetime
import json
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

    create = sub.add_parser("create", help="mint an IDTOKEN signed with a signing key")
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
    create.add_argument(
        "--token",
        dest="output",
        default=None,
        metavar="FILE",
        help="write the token to FILE (mode 0600) instead of printing it",
    )

    listing = sub.add_parser("list", help="list the tokens a client would find")
    listing.add_argument("--dir", default=None, help="token directory (default: configured)")
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
    if args.output:
        write_secure_file(args.output, (token + "\n").encode(), overwrite=True)
    else:
        print(token)
    return 0


def _when(seconds: int | None) -> str:
    if seconds is None:
        return "never"
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat()


def _list(args: argparse.Namespace, config: Config) -> int:
    directory = args.dir or config.token_directory()
    found = discover_tokens(directory, exclude=config.exclude_regexp(), subsystem=config.subsystem)
    rows = []
    for item in found:
        token: IdToken = item.token
        rows.append(
            {
                "source": item.source,
                **{k: v for k, v in token.summary().items()},
                "expires": _when(token.expires_at),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2, sort_keys=True))
    elif not rows:
        print(f"no tokens found in {directory}")
    else:
        for row in rows:
            print(
                f"{row['source']}: iss={row.get('iss')} sub={row.get('sub')} kid={row.get('kid')} "
                f"scope={row.get('scope', '-')} expires={row['expires']}"
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
