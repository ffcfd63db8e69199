"""Every hypothesis test says which property it checks (issue 26: no fuzz test that cannot fail).

A fuzz test without a stated property tends to assert nothing but "did not crash"; one with a
docstring sentence is reviewed against it. This scans the test tree's source (no import).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _is_given(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Name) and target.id == "given") or (
        isinstance(target, ast.Attribute) and target.attr == "given"
    )


def _fuzz_tests_without_property() -> tuple[int, list[str]]:
    """How many ``@given`` tests there are, and those whose docstring is missing (the nested
    ``check`` of a parametrized test counts through the test that defines it)."""
    count, missing = 0, []
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test"):
                continue
            inner = [
                n
                for n in ast.walk(node)
                if isinstance(n, ast.FunctionDef) and any(_is_given(d) for d in n.decorator_list)
            ]
            if not inner:
                continue
            count += 1
            doc = ast.get_docstring(node) or ""
            if len(doc.split()) < 5:
                missing.append(f"{path.relative_to(TESTS)}::{node.name}")
    return count, missing


def test_every_hypothesis_test_states_its_property() -> None:
    count, missing = _fuzz_tests_without_property()
    assert count >= 40  # the scan does find the suite's hypothesis tests
    assert not missing, "hypothesis tests without a property in their docstring:\n" + "\n".join(
        missing
    )
