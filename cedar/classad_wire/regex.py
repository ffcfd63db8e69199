"""A bounded regular-expression matcher for the ClassAd ``regexp`` family.

One module because it is one engine: parser, compiler and backtracking machine share a private node
and instruction set that nothing else uses.

The reference evaluates these with PCRE on the UTF-8 bytes (``"^..$"`` matches ``"é"``), and
gives Error when PCRE's match limit is hit (``regexp("(a+)+$", "aaaa…a!")``).  Python's ``re``
cannot be bounded, so a hostile pattern could freeze a daemon; this module compiles the PCRE
subset the reference accepts (classes, POSIX classes, anchors, groups, alternation, greedy, lazy
and possessive quantifiers, backreferences, look-ahead/behind, inline ``(?imsx)``, ``\\Q..\\E``)
to a small program run by a backtracking machine with an explicit stack and a step budget.
Past :data:`MAX_STEPS` the match gives up with :class:`RegexBudgetExceeded`, so every call is
bounded by ``MAX_STEPS`` (times the pattern size for look-arounds) whatever the input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cedar.errors import RegexBudgetExceeded, RegexError

#: Backtracking steps one match may take (PCRE's default match limit is 10 000 000 calls;
#: this is lower because a Python step costs more; ordinary patterns need a few per byte).
MAX_STEPS = 200_000
#: Largest counted repetition ({n,m}); PCRE's own limit.
MAX_REPEAT = 65535
#: Largest compiled program (instructions).
MAX_PROGRAM = 100_000


_DIGITS = frozenset("0123456789")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE = frozenset(" \t\n\r\f\v")
_ALL = frozenset(chr(c) for c in range(256))
_POSIX = {
    "alpha": frozenset(c for c in _WORD if c.isalpha()),
    "digit": _DIGITS,
    "alnum": frozenset(c for c in _WORD if c.isalnum()),
    "upper": frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    "lower": frozenset("abcdefghijklmnopqrstuvwxyz"),
    "space": _SPACE,
    "blank": frozenset(" \t"),
    "punct": frozenset(chr(c) for c in range(33, 127) if not chr(c).isalnum()),
    "print": frozenset(chr(c) for c in range(32, 127)),
    "graph": frozenset(chr(c) for c in range(33, 127)),
    "cntrl": frozenset(chr(c) for c in range(32)) | {"\x7f"},
    "xdigit": frozenset("0123456789abcdefABCDEF"),
    "word": _WORD,
    "ascii": frozenset(chr(c) for c in range(128)),
}
_ESCAPE_CLASSES = {
    "d": _DIGITS,
    "D": _ALL - _DIGITS,
    "w": _WORD,
    "W": _ALL - _WORD,
    "s": _SPACE,
    "S": _ALL - _SPACE,
    "h": frozenset(" \t\xa0"),
    "H": _ALL - frozenset(" \t\xa0"),
    "v": frozenset("\n\v\f\r\x85"),
    "V": _ALL - frozenset("\n\v\f\r\x85"),
    "N": _ALL - {"\n"},
}
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "e": "\x1b", "a": "\x07", "0": "\0"}


# --- syntax tree -------------------------------------------------------------------------------


@dataclass
class _Node:
    kind: str  # char, set, any, seq, alt, group, repeat, assert, backref, look
    value: object = None
    children: tuple[_Node, ...] = ()
    low: int = 0
    high: int = -1  # -1: unbounded
    mode: str = "greedy"  # greedy, lazy, possessive
    index: int = 0  # capture index (group), or look-around direction
    negate: bool = False


class _Flags:
    __slots__ = ("i", "m", "s", "x")

    def __init__(self, i: bool, m: bool, s: bool, x: bool) -> None:
        self.i, self.m, self.s, self.x = i, m, s, x

    def copy(self) -> _Flags:
        return _Flags(self.i, self.m, self.s, self.x)


class _Parser:
    def __init__(self, pattern: str, flags: _Flags) -> None:
        self.p = pattern
        self.pos = 0
        self.groups = 0
        self.names: dict[str, int] = {}
        self.flags = flags

    def fail(self, message: str) -> RegexError:
        return RegexError(f"{message} at offset {self.pos}")

    def peek(self) -> str:
        return self.p[self.pos] if self.pos < len(self.p) else ""

    def parse(self) -> _Node:
        node = self.alternation()
        if self.pos < len(self.p):
            raise self.fail("unmatched )")
        return node

    def alternation(self) -> _Node:
        saved = self.flags.copy()
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        self.flags = saved
        return branches[0] if len(branches) == 1 else _Node("alt", children=tuple(branches))

    def sequence(self) -> _Node:
        items: list[_Node] = []
        while self.pos < len(self.p) and self.peek() not in "|)":
            atom = self.atom()
            if atom is None:
                continue
            items.append(self.quantified(atom))
        return _Node("seq", children=tuple(items))

    def _skip_extended(self) -> None:
        while self.flags.x and self.pos < len(self.p):
            ch = self.p[self.pos]
            if ch in _SPACE:
                self.pos += 1
            elif ch == "#":
                end = self.p.find("\n", self.pos)
                self.pos = len(self.p) if end < 0 else end + 1
            else:
                break

    def quantified(self, atom: _Node) -> _Node:
        self._skip_extended()
        ch = self.peek()
        if ch in ("*", "+", "?"):
            low, high = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[ch]
            self.pos += 1
        elif ch == "{":
            bounds = self._counted()
            if bounds is None:
                return atom
            low, high = bounds
        else:
            return atom
        if atom.kind in ("assert",) or (atom.kind == "look"):
            pass  # PCRE accepts quantified assertions; they behave as the assertion
        mode = "greedy"
        if self.peek() == "?":
            mode, self.pos = "lazy", self.pos + 1
        elif self.peek() == "+":
            mode, self.pos = "possessive", self.pos + 1
        node = _Node("repeat", children=(atom,), low=low, high=high, mode=mode)
        if self.peek() in ("*", "+", "?") or (self.peek() == "{" and self._looks_counted()):
            raise self.fail("nothing to repeat")
        return node

    def _looks_counted(self) -> bool:
        saved = self.pos
        try:
            return self._counted() is not None
        finally:
            self.pos = saved

    def _counted(self) -> tuple[int, int] | None:
        """``{n}``, ``{n,}``, ``{n,m}``; anything else is a literal ``{`` (as in PCRE)."""
        p, start = self.p, self.pos + 1
        end = p.find("}", start)
        if end < 0:
            return None
        body = p[start:end]
        low_text, comma, high_text = body.partition(",")
        if not low_text.isdigit() or (high_text and not high_text.isdigit()):
            return None
        low = int(low_text)
        high = int(high_text) if high_text else (-1 if comma else low)
        if (high != -1 and high < low) or max(low, high) > 65535:
            raise self.fail("bad repetition count")
        if max(low, high) > MAX_REPEAT:
            raise self.fail("repetition count beyond this matcher's limit")
        self.pos = end + 1
        return low, high

    def atom(self) -> _Node | None:
        self._skip_extended()
        if self.pos >= len(self.p) or self.peek() in "|)":
            return None
        ch = self.p[self.pos]
        self.pos += 1
        if ch == "(":
            return self.group()
        if ch == "[":
            return self.char_class()
        if ch == ".":
            return _Node("any", value=self.flags.s)
        if ch == "^":
            return _Node("assert", value="mbol" if self.flags.m else "bol")
        if ch == "$":
            return _Node("assert", value="meol" if self.flags.m else "eol")
        if ch == "\\":
            return self.escape()
        if ch in "*+?":
            raise self.fail("nothing to repeat")
        return self.char(ch)

    def char(self, ch: str) -> _Node:
        if self.flags.i and ch.isascii() and ch.isalpha():
            return _Node("set", value=frozenset((ch.lower(), ch.upper())))
        return _Node("char", value=ch)

    def group(self) -> _Node | None:
        capture = True
        name = None
        look: tuple[bool, bool] | None = None  # (behind, negate)
        if self.peek() == "?":
            self.pos += 1
            ch = self.peek()
            if ch == ":":
                self.pos += 1
                capture = False
            elif ch in "=!":
                self.pos += 1
                look = (False, ch == "!")
            elif ch == "<" and self.p[self.pos + 1 : self.pos + 2] in ("=", "!"):
                look = (True, self.p[self.pos + 1] == "!")
                self.pos += 2
            elif ch == "#":
                end = self.p.find(")", self.pos)
                if end < 0:
                    raise self.fail("missing ) after comment")
                self.pos = end + 1
                return None
            elif ch in "<'" or (ch == "P" and self.p[self.pos + 1 : self.pos + 2] == "<"):
                self.pos += 2 if ch == "P" else 1
                close = ">" if ch in "<P" else "'"
                end = self.p.find(close, self.pos)
                if end < 0:
                    raise self.fail("bad group name")
                name = self.p[self.pos : end]
                self.pos = end + 1
            elif ch == ">":
                self.pos += 1
                capture = False  # atomic group: treated as a plain group
            else:
                return self.inline_flags()
        if capture and look is None:
            self.groups += 1
            index = self.groups
            if name is not None:
                self.names[name] = index
        saved = self.flags.copy()
        inner = self.alternation()
        self.flags = saved
        if self.peek() != ")":
            raise self.fail("missing )")
        self.pos += 1
        if look is not None:
            return _Node("look", children=(inner,), index=int(look[0]), negate=look[1])
        if capture:
            return _Node("group", children=(inner,), index=index)
        return inner

    def inline_flags(self) -> _Node | None:
        on = True
        flags = self.flags.copy()
        while self.pos < len(self.p):
            ch = self.p[self.pos]
            self.pos += 1
            if ch == "-":
                on = False
            elif ch in "imsx":
                setattr(flags, ch, on)
            elif ch == ")":
                self.flags = flags  # to the end of the enclosing group
                return None
            elif ch == ":":
                saved = self.flags
                self.flags = flags
                inner = self.alternation()
                self.flags = saved
                if self.peek() != ")":
                    raise self.fail("missing )")
                self.pos += 1
                return inner
            else:
                raise self.fail("unknown group syntax")
        raise self.fail("missing )")

    def escape(self) -> _Node:
        if self.pos >= len(self.p):
            raise self.fail("\\ at end of pattern")
        ch = self.p[self.pos]
        self.pos += 1
        if ch in _ESCAPE_CLASSES:
            return _Node("set", value=_ESCAPE_CLASSES[ch])
        if ch in "bB":
            return _Node("assert", value=ch)
        if ch == "A":
            return _Node("assert", value="bos")
        if ch == "z":
            return _Node("assert", value="eos")
        if ch == "Z":
            return _Node("assert", value="eol")
        if ch == "G":
            return _Node("assert", value="bos")
        if ch == "Q":
            end = self.p.find("\\E", self.pos)
            end = len(self.p) if end < 0 else end
            text = self.p[self.pos : end]
            self.pos = min(len(self.p), end + 2)
            return _Node("seq", children=tuple(self.char(c) for c in text))
        if ch == "E":
            return _Node("seq")
        if ch.isdigit() and ch != "0":
            digits = ch
            while self.peek().isdigit() and int(digits + self.peek()) <= max(self.groups, 9):
                digits += self.peek()
                self.pos += 1
            return _Node("backref", index=int(digits))
        if ch == "k" and self.peek() in "<{'":
            close = {"<": ">", "{": "}", "'": "'"}[self.peek()]
            end = self.p.find(close, self.pos + 1)
            name = self.p[self.pos + 1 : end] if end > 0 else ""
            if name not in self.names:
                raise self.fail("reference to a non-existent group")
            self.pos = end + 1
            return _Node("backref", index=self.names[name])
        if ch in "pP":
            return _Node("set", value=self._property(ch == "P"))
        return self.char(self._escaped_char(ch))

    def _property(self, negate: bool) -> frozenset[str]:
        if self.peek() == "{":
            end = self.p.find("}", self.pos)
            if end < 0:
                raise self.fail("malformed \\p")
            name = self.p[self.pos + 1 : end]
            self.pos = end + 1
        else:
            name = self.peek()
            self.pos += 1
        if name.startswith("^"):
            negate, name = not negate, name[1:]
        table = {
            "L": _POSIX["alpha"],
            "Lu": _POSIX["upper"],
            "Ll": _POSIX["lower"],
            "N": _DIGITS,
            "Nd": _DIGITS,
            "P": _POSIX["punct"],
            "Z": frozenset(" "),
            "Zs": frozenset(" "),
            "Any": _ALL,
        }
        if name not in table:
            raise self.fail("unknown property name")
        return _ALL - table[name] if negate else table[name]

    def _escaped_char(self, ch: str) -> str:
        if ch in _SIMPLE_ESCAPES:
            if ch == "0":  # \0 followed by up to two octal digits
                digits = ""
                while len(digits) < 2 and self.peek() in "01234567" and self.peek():
                    digits += self.peek()
                    self.pos += 1
                return chr(int(digits or "0", 8))
            return _SIMPLE_ESCAPES[ch]
        if ch == "x":
            if self.peek() == "{":
                end = self.p.find("}", self.pos)
                text = self.p[self.pos + 1 : end] if end > 0 else ""
                self.pos = end + 1
            else:
                text = ""
                while len(text) < 2 and self.peek() and self.peek() in "0123456789abcdefABCDEF":
                    text += self.peek()
                    self.pos += 1
            try:
                value = int(text or "0", 16)
            except ValueError:
                raise self.fail("bad \\x escape") from None
            if value > 255:
                raise self.fail("character value too large")
            return chr(value)
        if ch == "c":
            if not self.peek():
                raise self.fail("\\c at end of pattern")
            target = self.peek().upper()
            self.pos += 1
            return chr(ord(target) ^ 0x40)
        if ch.isalnum():
            raise self.fail(f"unrecognized escape \\{ch}")
        return ch

    def char_class(self) -> _Node:
        negate = self.peek() == "^"
        if negate:
            self.pos += 1
        members: set[str] = set()
        first = True
        while True:
            if self.pos >= len(self.p):
                raise self.fail("missing terminating ] for character class")
            ch = self.p[self.pos]
            if ch == "]" and not first:
                self.pos += 1
                break
            first = False
            if ch == "[" and self.p[self.pos + 1 : self.pos + 2] == ":":
                end = self.p.find(":]", self.pos + 2)
                if end > 0:
                    name = self.p[self.pos + 2 : end]
                    invert = name.startswith("^")
                    table = _POSIX.get(name.lstrip("^"))
                    if table is None:
                        raise self.fail("unknown POSIX class name")
                    members |= _ALL - table if invert else table
                    self.pos = end + 2
                    continue
            low = self._class_char()
            if isinstance(low, frozenset):
                members |= low
                continue
            if self.peek() == "-" and self.p[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                high = self._class_char()
                if isinstance(high, frozenset):
                    members |= {low, "-"} | high
                    continue
                if ord(high) < ord(low):
                    raise self.fail("range out of order in character class")
                members |= {chr(c) for c in range(ord(low), ord(high) + 1)}
            else:
                members.add(low)
        if self.flags.i:
            members |= {c.swapcase() for c in members if c.isascii() and c.isalpha()}
        value = frozenset(_ALL - members if negate else members)
        return _Node("set", value=value)

    def _class_char(self) -> str | frozenset[str]:
        ch = self.p[self.pos]
        self.pos += 1
        if ch != "\\":
            return ch
        if self.pos >= len(self.p):
            raise self.fail("\\ at end of pattern")
        esc = self.p[self.pos]
        self.pos += 1
        if esc in _ESCAPE_CLASSES:
            return _ESCAPE_CLASSES[esc]
        if esc == "b":
            return "\b"
        if esc in "pP":
            return self._property(esc == "P")
        return self._escaped_char(esc)


# --- compilation to a backtracking program --------------------------------------------------
# Instructions are tuples (opcode, a, b).  Opcodes: CHAR c, SET s, ANY dotall, SPLIT x y
# (try x first), JMP x, SAVE slot, ASSERT kind, BACKREF n, MARK reg, PROGRESS reg (fail when the
# loop body matched nothing), LOOK (program, behind, negate), ATOMIC program, MATCH.


class _Compiler:
    def __init__(self) -> None:
        self.code: list[tuple[str, object, object]] = []
        self.registers = 0

    def emit(self, op: str, a: object = None, b: object = None) -> int:
        if len(self.code) >= MAX_PROGRAM:
            raise RegexError("pattern too large")
        self.code.append((op, a, b))
        return len(self.code) - 1

    def patch(self, at: int, a: object = None, b: object = None) -> None:
        op, old_a, old_b = self.code[at]
        self.code[at] = (op, old_a if a is None else a, old_b if b is None else b)

    def node(self, n: _Node) -> None:
        kind = n.kind
        if kind == "char":
            self.emit("CHAR", n.value)
        elif kind == "set":
            self.emit("SET", n.value)
        elif kind == "any":
            self.emit("ANY", n.value)
        elif kind == "seq":
            for child in n.children:
                self.node(child)
        elif kind == "alt":
            jumps = []
            for child in n.children[:-1]:
                split = self.emit("SPLIT")
                self.patch(split, a=len(self.code))
                self.node(child)
                jumps.append(self.emit("JMP"))
                self.patch(split, b=len(self.code))
            self.node(n.children[-1])
            for jump in jumps:
                self.patch(jump, a=len(self.code))
        elif kind == "group":
            self.emit("SAVE", 2 * n.index)
            self.node(n.children[0])
            self.emit("SAVE", 2 * n.index + 1)
        elif kind == "assert":
            self.emit("ASSERT", n.value)
        elif kind == "backref":
            self.emit("BACKREF", n.index)
        elif kind == "look":
            inner = n.children[0]
            if n.index:  # look-behind: the sub-match must end where we stand
                inner = _Node("seq", children=(inner, _Node("assert", value="eos")))
            self.emit("LOOK", _sub_program(inner, self), (n.index, n.negate))
        elif kind == "repeat":
            self.repeat(n)
        else:  # pragma: no cover - the parser makes no other kinds
            raise RegexError(f"cannot compile {kind}")

    def repeat(self, n: _Node) -> None:
        if n.mode == "possessive":
            inner = _Node("repeat", children=n.children, low=n.low, high=n.high)
            self.emit("ATOMIC", _sub_program(inner, self))
            return
        body = n.children[0]
        for _ in range(n.low):
            self.node(body)
        if n.high == -1:
            register = self.registers
            self.registers += 1
            top = self.emit("SPLIT")
            self.emit("MARK", register)
            self.node(body)
            self.emit("PROGRESS", register)
            self.emit("JMP", top)
            self._order(top, top + 1, len(self.code), n.mode)
            return
        exits = []
        for _ in range(n.high - n.low):
            split = self.emit("SPLIT")
            self.node(body)
            exits.append((split, split + 1))
        for split, enter in exits:
            self._order(split, enter, len(self.code), n.mode)

    def _order(self, split: int, enter: int, leave: int, mode: str) -> None:
        if mode == "lazy":
            self.patch(split, a=leave, b=enter)
        else:
            self.patch(split, a=enter, b=leave)


def _sub_program(node: _Node, parent: _Compiler) -> tuple[tuple[str, object, object], ...]:
    sub = _Compiler()
    sub.registers = parent.registers
    sub.node(node)
    sub.emit("MATCH")
    parent.registers = sub.registers
    return tuple(sub.code)


@dataclass(frozen=True)
class Pattern:
    """A compiled pattern; ``groups`` is the number of capturing groups."""

    program: tuple[tuple[str, object, object], ...]
    groups: int
    registers: int
    required: frozenset[str] = frozenset()

    def search(self, text: str, start: int = 0) -> list[int] | None:
        """Leftmost match at or after ``start`` in ``text`` (a byte string as latin-1 text).

        Returns the capture offsets (``[start0, end0, start1, end1, ...]``, -1 when unset).
        """
        if any(ch not in text for ch in self.required):
            return None  # a character every match contains is absent (PCRE checks this too)
        budget = [MAX_STEPS]
        for begin in range(start, len(text) + 1):
            found = _run(self.program, text, begin, 2 * (self.groups + 1), self.registers, budget)
            if found is not None:
                return found
        return None


def compile_pattern(pattern: str, options: str = "") -> Pattern:
    """Compile ``pattern`` (latin-1 text of its UTF-8 bytes) with the reference's options."""
    flags = _Flags("i" in options, "m" in options, "s" in options, "x" in options)
    parser = _Parser(pattern, flags)
    tree = parser.parse()
    compiler = _Compiler()
    compiler.emit("SAVE", 0)
    compiler.node(tree)
    compiler.emit("SAVE", 1)
    compiler.emit("MATCH")
    if _max_backref(tree) > parser.groups:
        raise RegexError("reference to a non-existent group")
    required = frozenset(_required_chars(tree))
    return Pattern(tuple(compiler.code), parser.groups, compiler.registers, required)


def _required_chars(node: _Node) -> set[str]:
    """Literal characters that every match of ``node`` contains."""
    if node.kind == "char":
        return {str(node.value)}
    if node.kind == "seq":
        found: set[str] = set()
        for child in node.children:
            found |= _required_chars(child)
        return found
    if node.kind == "group" or (node.kind == "repeat" and node.low >= 1):
        return _required_chars(node.children[0])
    return set()


def _max_backref(node: _Node) -> int:
    stack, found = [node], 0
    while stack:
        current = stack.pop()
        if current.kind == "backref":
            found = max(found, current.index)
        stack.extend(current.children)
    return found


def _is_word(text: str, at: int) -> bool:
    return 0 <= at < len(text) and text[at] in _WORD


def _assert(kind: object, text: str, sp: int) -> bool:
    end = len(text)
    if kind == "bol" or kind == "bos":
        return sp == 0
    if kind == "mbol":
        return sp == 0 or text[sp - 1] == "\n"
    if kind == "eol":
        return sp == end or (sp == end - 1 and text[sp] == "\n")
    if kind == "meol":
        return sp == end or text[sp] == "\n"
    if kind == "eos":
        return sp == end
    boundary = _is_word(text, sp - 1) != _is_word(text, sp)
    return boundary if kind == "b" else not boundary


def _run(
    program: tuple[tuple[str, Any, Any], ...],
    text: str,
    begin: int,
    slots: int,
    registers: int,
    budget: list[int],
    caps: list[int] | None = None,
) -> list[int] | None:
    """Run ``program`` anchored at ``begin``; the captures of the first match, or None."""
    end = len(text)
    start_caps = caps if caps is not None else [-1] * slots
    stack: list[tuple[int, int, list[int], list[int]]] = [
        (0, begin, list(start_caps), [-1] * registers)
    ]
    while stack:
        pc, sp, caps_now, regs = stack.pop()
        while True:
            budget[0] -= 1
            if budget[0] < 0:
                raise RegexBudgetExceeded("regular expression match limit exceeded")
            op, a, b = program[pc]
            if op == "CHAR":
                if sp < end and text[sp] == a:
                    pc, sp = pc + 1, sp + 1
                    continue
                break
            if op == "SET":
                if sp < end and text[sp] in a:
                    pc, sp = pc + 1, sp + 1
                    continue
                break
            if op == "ANY":
                if sp < end and (a or text[sp] != "\n"):
                    pc, sp = pc + 1, sp + 1
                    continue
                break
            if op == "SPLIT":
                stack.append((b, sp, list(caps_now), list(regs)))
                pc = a
                continue
            if op == "JMP":
                pc = a
                continue
            if op == "SAVE":
                caps_now[a] = sp
                pc += 1
                continue
            if op == "MARK":
                regs[a] = sp
                pc += 1
                continue
            if op == "PROGRESS":
                if regs[a] == sp:
                    break
                pc += 1
                continue
            if op == "ASSERT":
                if not _assert(a, text, sp):
                    break
                pc += 1
                continue
            if op == "BACKREF":
                low, high = caps_now[2 * a], caps_now[2 * a + 1]
                if low < 0 or high < 0:
                    break  # an unset group fails to match, as in PCRE
                piece = text[low:high]
                if not text.startswith(piece, sp):
                    break
                pc, sp = pc + 1, sp + len(piece)
                continue
            if op == "LOOK":
                behind, negate = b
                matched = _look(a, text, sp, behind, slots, registers, budget, caps_now)
                if (matched is not None) == negate:
                    break
                if matched is not None and not negate:
                    caps_now = matched
                pc += 1
                continue
            if op == "ATOMIC":
                sub = _run(a, text, sp, slots, registers, budget, caps_now)
                if sub is None:
                    break
                caps_now, sp = sub[:slots], sub[-1]
                pc += 1
                continue
            # MATCH
            if caps is not None:
                return _with_end(caps_now, sp)
            return caps_now
    return None


def _with_end(caps: list[int], sp: int) -> list[int]:
    return [*caps, sp]


def _look(
    program: tuple[tuple[str, object, object], ...],
    text: str,
    sp: int,
    behind: int,
    slots: int,
    registers: int,
    budget: list[int],
    caps: list[int],
) -> list[int] | None:
    if not behind:
        found = _run(program, text, sp, slots, registers, budget, caps)
        return None if found is None else found[:slots]
    for begin in range(sp, -1, -1):
        found = _run(program, text[:sp], begin, slots, registers, budget, caps)
        if found is not None:
            return found[:slots]
    return None


__all__ = ["MAX_STEPS", "Pattern", "RegexBudgetExceeded", "RegexError", "compile_pattern"]
