"""The credential-based methods are registered as stand-ins that import their module on first
use; the stand-ins must say exactly what the real methods would say before that."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cedar.auth.methods import AuthMethod, DeferredMethod, get_method
from cedar.auth.methods.registration import DEFERRED_METHODS


@pytest.mark.parametrize("kind", DEFERRED_METHODS, ids=lambda kind: kind.name)
def test_stand_in_matches_the_real_method(kind: type[DeferredMethod]) -> None:
    real = kind().load()
    assert not isinstance(real, DeferredMethod)
    assert (real.name, real.bit) == (kind.name, kind.bit)
    # The stand-in answers the client's offer without loading: the real method must keep
    # AuthMethod's client hooks (always offered, nothing added to M1).
    assert type(real).client_available is AuthMethod.client_available
    assert type(real).client_ad_attributes is AuthMethod.client_ad_attributes


def test_registry_holds_stand_ins_that_load_once() -> None:
    method = get_method("IDTOKENS")
    assert isinstance(method, DeferredMethod) and method.name == "TOKEN"
    assert method.method is method.method
    assert type(method.method).__name__ == "IdTokens"


def test_offering_every_method_imports_none_of_theirs() -> None:
    """Building a client's offer (every configured method) loads no credential module."""
    code = (
        "import sys\n"
        "from cedar.auth.client import offered_methods\n"
        "from cedar.auth.client_config import SecurityConfig\n"
        "from cedar.auth.methods import AuthContext\n"
        "config = SecurityConfig(methods=['FS', 'IDTOKENS', 'SSL', 'SCITOKENS', 'CLAIMTOBE'])\n"
        "print(offered_methods(config, AuthContext(role='client')))\n"
        "heavy = ('ssl', 'cedar.auth.token', 'cedar.auth.tls', 'cedar.auth.scitoken')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    offered, loaded = result.stdout.splitlines()
    assert offered == "['FS', 'TOKEN', 'SSL', 'SCITOKENS', 'CLAIMTOBE']"
    assert loaded == "[]"
