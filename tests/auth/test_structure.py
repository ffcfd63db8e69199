"""The shape of ``cedar/auth``: short functions, and one module for its exception classes.

Issue 26 asks that the handshake read as small named steps (no function over 80 lines) and
that a package define its errors in one module; both are checked here on the source (AST), so a
change that grows a function back or adds an exception class elsewhere fails at once.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cedar.auth
import cedar.auth.client
import cedar.auth.errors
import cedar.auth.scitoken
import cedar.auth.signing_key
import cedar.auth.tls
import cedar.auth.token

AUTH = Path(cedar.auth.__file__).parent
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(AUTH.rglob("*.py"))


def _long_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{path.name}:{node.lineno} {node.name} {length}")
    return found


def test_no_function_in_auth_is_over_80_lines() -> None:
    too_long = [entry for path in _modules() for entry in _long_functions(path)]
    assert too_long == [], f"functions over {MAX_FUNCTION_LINES} lines: {too_long}"


def test_the_handshakes_are_tables_of_steps() -> None:
    """Each role's new session is its step table run in order (spec 03's exchanges)."""
    from cedar.auth.client import CLIENT_STEPS
    from cedar.auth.server import SERVER_STEPS

    assert [step.__name__ for step in CLIENT_STEPS] == [
        "_send_policy_ad",
        "_read_response",
        "_authenticate_step",
        "_read_post_auth_ad",
    ]
    assert [step.__name__ for step in SERVER_STEPS] == [
        "_own_policy",
        "_reconcile",
        "_choose_crypto",
        "_session_times",
        "_send_response",
        "_authenticate",
        "_install_key",
    ]


def test_the_check_sees_a_long_function(tmp_path: Path) -> None:
    """The counter itself works: a generated 81-line function is reported."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    source = tmp_path / "long.py"
    source.write_text(f"def long() -> None:\n{body}\n")
    assert _long_functions(source) == ["long.py:1 long 81"]


def _exception_classes(path: Path) -> list[str]:
    """Classes whose bases name an error/exception/denial: how every cedar exception is spelled."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(base) for base in node.bases]
            if any(
                word in base
                for base in bases
                for word in ("Error", "Exception", "Denied", "Rejected", "Failure")
            ):
                found.append(node.name)
    return found


def test_exception_classes_of_auth_live_in_errors_py() -> None:
    elsewhere = {
        str(path.relative_to(AUTH)): names
        for path in _modules()
        if path.name != "errors.py" and (names := _exception_classes(path))
    }
    assert elsewhere == {}
    assert set(_exception_classes(AUTH / "errors.py")) == set(cedar.auth.errors.__all__)


def test_errors_stay_importable_from_their_old_homes() -> None:
    errors = cedar.auth.errors
    assert cedar.auth.client.CommandDenied is errors.CommandDenied
    assert cedar.auth.client.SessionRejected is errors.SessionRejected
    assert cedar.auth.CommandDenied is errors.CommandDenied
    assert cedar.auth.SessionRejected is errors.SessionRejected
    assert cedar.auth.tls.TlsFailure is errors.TlsFailure
    assert cedar.auth.scitoken.SciTokenError is errors.SciTokenError
    assert cedar.auth.signing_key.CredentialError is errors.CredentialError
    assert cedar.auth.token.TokenError is errors.TokenError
    import cedar as top

    public = ["CommandDenied", "CredentialError", "SciTokenError", "SessionRejected", "TlsFailure",
              "TokenError"]  # fmt: skip
    for name in public:
        assert getattr(top, name) is getattr(errors, name)
