"""A seeded, grammar-directed generator of ClassAd expressions for the classad2 differential.

Every operator, the functions of ``test_functions_reference.FUNCTIONS`` with their arities,
nested ads (selected from, with references between their attributes), lists (subscripted),
``undefined``/``error``, strings with escapes and numbers at the edges of their types, composed
to a bounded depth.  The same seed always gives the same expressions (no clock, no host).

    python -m tests.classad.random_expressions [SEED] [COUNT]   # prints each disagreement
"""

from __future__ import annotations

import random
import sys

from tests.classad.test_functions_reference import FUNCTIONS

BINARY = [
    "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "=?=", "=!=", "is", "isnt",
    "&&", "||", "&", "|", "^", "<<", ">>", ">>>",
]  # fmt: skip
UNARY = ["-", "+", "!", "~"]
ATOMS = [
    "0", "1", "-1", "7", "2147483647", "2147483648", "-2147483648", "9223372036854775807",
    "-9223372036854775807", "0.0", "-0.0", "0.5", "1.5", "-2.5", "1e308", "-1e308", "1e-308",
    "4.9e-324", "1e15", "123456789.125", 'real("INF")', 'real("-INF")', 'real("NaN")', "true",
    "false", "undefined", "error", '""', '"a"', '"abc"', '"A b"', '"1.5"', '"10"', '"x\\ny"',
    '"t\\tq"', '"q\\"q"', '"back\\\\slash"', '"\\u00e9"', '"a,b, c"', "{}", "{1, 2, 3}",
    '{"a", "B"}', "{1, undefined, 2.5}", "[]", "[a = 1; b = a + 1]", "x", "y", "z", "l",
]  # fmt: skip
#: Functions whose value depends on the moment or the machine (not comparable).
UNSTABLE = {"random", "time", "dayTime", "userHome", "debug", "userMap"}
NAMES = sorted(name for name in FUNCTIONS if name not in UNSTABLE)
#: The ad the expressions are evaluated in: ``x``, ``y``, ``z``, ``l`` name its attributes.
CONTEXT = '[x = 3; y = "b"; z = 2.5; l = {1, "a", [q = 4]}]'


class Generator:
    """Expressions of at most ``depth`` levels, from ``random.Random(seed)``."""

    def __init__(self, seed: int, depth: int = 3) -> None:
        self.rng = random.Random(seed)
        self.depth = depth

    def expression(self, depth: int | None = None) -> str:
        depth = self.depth if depth is None else depth
        if depth <= 0:
            return self.rng.choice(ATOMS)
        kind = self.rng.choices(
            ["atom", "binary", "unary", "ternary", "elvis", "call", "list", "ad", "index"],
            weights=[3, 6, 1, 1, 1, 6, 1, 1, 1],
        )[0]
        sub = depth - 1
        if kind == "atom":
            return self.rng.choice(ATOMS)
        if kind == "binary":
            op = self.rng.choice(BINARY)
            return f"({self.expression(sub)} {op} {self.expression(sub)})"
        if kind == "unary":
            return f"{self.rng.choice(UNARY)}({self.expression(sub)})"
        if kind == "ternary":
            return f"({self.expression(sub)} ? {self.expression(sub)} : {self.expression(sub)})"
        if kind == "elvis":
            return f"({self.expression(sub)} ?: {self.expression(sub)})"
        if kind == "call":
            name = self.rng.choice(NAMES)
            count = self.rng.choice(FUNCTIONS[name][0])
            args = ", ".join(self.expression(sub) for _ in range(count))
            return f"{name}({args})"
        if kind == "list":
            items = [self.expression(sub) for _ in range(self.rng.randint(0, 3))]
            return "{" + ", ".join(items) + "}"
        if kind == "ad":
            ad = f"[a = {self.expression(sub)}; b = a; c = {self.expression(sub)}]"
            return f"{ad}.{self.rng.choice('abcd')}"
        index = self.rng.choice(["0", "1", "-1", "2", "x", '"a"', self.expression(sub)])
        return f"{{{self.expression(sub)}, {self.expression(sub)}}}[{index}]"


def main(argv: list[str]) -> int:
    import classad2

    from tests.classad.test_random_expressions import COUNTS, compare

    classad2.parseOne("A = 1")
    seed = int(argv[0]) if argv else 39
    count = int(argv[1]) if len(argv) > 1 else 1000
    generator = Generator(seed)
    differ = 0
    for _ in range(count):
        text = generator.expression()
        problem = compare(classad2, text)
        if problem:
            differ += 1
            print(problem)
    print(f"{differ} of {count} differ ({COUNTS['compared']} compared, {COUNTS['skipped']} not)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
