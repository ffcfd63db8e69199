"""A protocol conformance battery for CEDAR daemons: ``cedar conformance`` and ``tests/live_pool``.

Each check is a function of a :class:`Target` (a pool address plus the credentials it was given)
that returns a short detail on success, raises :class:`Skipped` when it cannot apply, and raises
anything else on failure.  The live tests parametrize over :data:`CHECKS`, so the product and the
project's own suite run the same code.
"""

from __future__ import annotations

from cedar.conformance.checks import (
    CHECKS,
    Check,
    CheckFailed,
    Outcome,
    Skipped,
    Target,
    run_checks,
)

__all__ = ["CHECKS", "Check", "CheckFailed", "Outcome", "Skipped", "Target", "run_checks"]
