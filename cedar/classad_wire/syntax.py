"""Lexer and recursive-descent parser for ClassAd expressions (spec 02 §4, §5).

One parser serves both dialects; ``old=True`` selects the wire ("old ClassAd") string rules.
Binary operators are parsed with an explicit operator stack and unary prefixes with a loop,
so Python recursion only grows with real nesting (parentheses, lists, records, calls,
subscripts); the reference's nesting-depth limit of 500 is counted the way the reference counts
it (one unit per expression, unary and postfix level), which keeps the recursion well inside
Python's default limit.
"""

from __future__ import annotations

import re
from typing import NoReturn

from cedar.classad_wire.expr import (
    INT64_MAX,
    INT64_MIN,
    AttrRef,
    Binary,
    Call,
    Elvis,
    Expr,
    ListExpr,
    Literal,
    Paren,
    RecordExpr,
    Select,
    Subscript,
    Ternary,
    Unary,
    make_literal,
)
from cedar.classad_wire.values import Error, Undefined, parse_abstime, parse_reltime
from cedar.errors import ClassAdParseError

#: Deeper nesting is a parse failure, as in the reference (spec 02 §2.9).
MAX_DEPTH = 500

_WS = " \t\n\r\v\f"
_NUMBER = re.compile(r"(\d*)(\.\d+)?([eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_FULL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PLAIN_NEW = re.compile(r'[^"\\]*')

_KEYWORDS: dict[str, tuple[str, object]] = {
    "true": ("lit", True),
    "false": ("lit", False),
    "undefined": ("lit", Undefined),
    "error": ("lit", Error),
    "is": ("op", "=?="),
    "isnt": ("op", "=!="),
}
_SIMPLE_ESCAPES = {
    '"': 34,
    "'": 39,
    "?": 63,
    "\\": 92,
    "a": 7,
    "b": 8,
    "f": 12,
    "n": 10,
    "r": 13,
    "t": 9,
    "v": 11,
}
_OPS3 = (">>>", "=?=", "=!=")
_OPS2 = frozenset(("&&", "||", "<=", ">=", "==", "!=", "<<", ">>"))
_OPS1 = frozenset(".*/%+-~^?:;,[](){}&|<>=!")
#: Token kinds after which ``-`` is an operator rather than a sign (spec 02 §4 "Integers").
_VALUE_END = frozenset(("lit", "name"))
_VALUE_END_OPS = frozenset((".", "]", ")", "}"))

BINARY_PRECEDENCE = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "=?=": 6,
    "=!=": 6,
    "<": 7,
    "<=": 7,
    ">": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    ">>>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
}
_UNARY = frozenset("-+!~")

# A token is (kind, value, position); kinds: lit, name, op, eof, err.
Token = tuple[str, object, int]


def is_identifier(name: str) -> bool:
    """True when ``name`` can be written without quotes (keywords aside)."""
    return _IDENT_FULL.match(name) is not None


class _Lexer:
    """Produces tokens on demand; the sign rule needs the previous token's kind."""

    __slots__ = ("text", "old", "pos", "prev", "open_comment")

    def __init__(self, text: str, old: bool) -> None:
        self.text = text
        self.old = old
        self.pos = 0
        #: Position of a ``//`` comment that no newline ends (the reference's expression
        #: parser rejects one; its ad readers stop before it).
        self.open_comment = -1
        self.prev: Token = ("op", "(", 0)

    def next(self) -> Token:
        tok = self._scan()
        self.prev = tok
        return tok

    def _skip_space(self, pos: int) -> int | Token:
        text = self.text
        end = len(text)
        while pos < end:
            ch = text[pos]
            if ch in _WS:
                pos += 1
            elif ch == "/" and text.startswith("//", pos):
                nl = text.find("\n", pos)
                if nl < 0:
                    self.open_comment = pos
                pos = end if nl < 0 else nl + 1
            elif ch == "/" and text.startswith("/*", pos):
                close = text.find("*/", pos + 2)
                if close < 0:
                    return ("err", "unterminated /* comment", pos)
                pos = close + 2
            else:
                break
        return pos

    def _scan(self) -> Token:
        skipped = self._skip_space(self.pos)
        if isinstance(skipped, tuple):
            self.pos = len(self.text)
            return skipped
        pos = skipped
        text = self.text
        if pos >= len(text):
            self.pos = pos
            return ("eof", None, pos)
        ch = text[pos]
        nxt = text[pos + 1 : pos + 2]
        if ch.isdigit() and ch.isascii() or (ch == "." and nxt.isdigit() and nxt.isascii()):
            return self._number(pos, pos)
        if ch == "-" and self._sign_allowed(pos + 1):
            return self._number(pos, pos + 1)
        match = _IDENT.match(text, pos)
        if match:
            self.pos = match.end()
            word = match.group()
            keyword = _KEYWORDS.get(word.lower())
            if keyword is not None:
                return (keyword[0], keyword[1], pos)
            return ("name", word, pos)
        if ch == '"':
            return self._string(pos)
        if ch == "'":
            value = self._quoted(pos, "'")
            if isinstance(value, tuple):
                return value
            return ("name", value, pos)
        return self._operator(pos)

    def _sign_allowed(self, after: int) -> bool:
        text = self.text
        if not (
            text[after : after + 1].isdigit()
            or (text[after : after + 1] == "." and text[after + 1 : after + 2].isdigit())
        ):
            return False
        kind, value, _ = self.prev
        return not (kind in _VALUE_END or (kind == "op" and value in _VALUE_END_OPS))

    def _number(self, start: int, digits_at: int) -> Token:
        text = self.text
        match = _NUMBER.match(text, digits_at)
        assert match is not None  # the pattern matches the empty string
        end = match.end()
        whole, frac, exp = match.groups()
        if not frac and text[end : end + 1] == ".":
            return self._fail("a digit must follow the decimal point", end)
        if not exp and text[end : end + 1] in ("e", "E"):
            return self._fail("an exponent needs digits", end)
        self.pos = end
        literal = text[start:end]
        if frac or exp:
            try:
                return ("lit", float(literal), start)
            except ValueError:
                return self._fail(f"bad real number {literal!r}", start)
        if (
            whole.startswith("0")
            and start == digits_at
            and (len(whole) > 1 or text[end : end + 1] in ("x", "X"))
        ):
            return self._fail(f"integer {literal!r} has a leading zero", start)
        # More than 19 digits cannot be in range (and int() refuses > 4300 digits).
        value = int(literal) if len(whole.lstrip("0")) <= 19 else 0
        if value < INT64_MIN or value > INT64_MAX:
            value = 0  # the reference maps out-of-range integers to 0 (spec 02 §4)
        return ("lit", value, start)

    def _fail(self, message: str, pos: int) -> Token:
        self.pos = len(self.text)
        return ("err", message, pos)

    def _string(self, pos: int) -> Token:
        if self.old:
            value = self._quoted(pos, '"')
            if isinstance(value, tuple):
                return value
            return ("lit", value, pos)
        parts: list[str] = []
        while True:
            value = self._quoted(self.pos if parts else pos, '"')
            if isinstance(value, tuple):
                return value
            parts.append(value)
            # New syntax concatenates string literals separated only by whitespace.
            after = self.pos
            while after < len(self.text) and self.text[after] in _WS:
                after += 1
            if self.text[after : after + 1] != '"':
                break
            self.pos = after
        return ("lit", "".join(parts), pos)

    def _quoted(self, pos: int, quote: str) -> str | Token:
        """The body of a string or quoted name starting at ``pos``; sets ``self.pos`` after it."""
        if self.old:
            return self._quoted_old(pos, quote)
        return self._quoted_new(pos, quote)

    def _quoted_old(self, pos: int, quote: str) -> str | Token:
        # Wire syntax: no escapes except that \" followed by more text is a literal quote.
        text = self.text
        start = pos + 1
        chunks: list[str] = []
        scan = start
        while True:
            close = text.find(quote, scan)
            if close < 0:
                return self._fail("unterminated string", pos)
            if (
                close > start
                and text[close - 1] == "\\"
                and close + 1 < len(text)
                and text[close + 1] != "\n"
            ):
                chunks.append(text[start : close - 1])
                chunks.append(quote)
                start = scan = close + 1
                continue
            chunks.append(text[start:close])
            self.pos = close + 1
            return "".join(chunks)

    def _quoted_new(self, pos: int, quote: str) -> str | Token:
        text = self.text
        end = len(text)
        out = bytearray()
        i = pos + 1
        plain = re.compile(r"[^\\" + quote + "]*") if quote == "'" else _PLAIN_NEW
        while True:
            match = plain.match(text, i)
            assert match is not None
            if match.end() > i:
                out += match.group().encode("utf-8", "surrogateescape")
            i = match.end()
            if i >= end:
                return self._fail("unterminated string", pos)
            if text[i] == quote:
                self.pos = i + 1
                return out.decode("utf-8", "surrogateescape")
            # A backslash escape.
            i += 1
            if i >= end:
                return self._fail("unterminated string", pos)
            ch = text[i]
            if ch in "01234567":
                value = int(ch)
                i += 1
                if i < end and text[i] in "01234567":
                    value = value * 8 + int(text[i])
                    i += 1
                    if value < 0x20 and i < end and text[i] in "01234567":
                        value = value * 8 + int(text[i])
                        i += 1
                if value == 0:
                    return self._fail("NUL character in string", pos)
                out.append(value)
                continue
            simple = _SIMPLE_ESCAPES.get(ch)
            if simple is not None:
                out.append(simple)
            else:
                out += ch.encode("utf-8", "surrogateescape")
            i += 1

    def _operator(self, pos: int) -> Token:
        text = self.text
        three = text[pos : pos + 3]
        if three in _OPS3:
            self.pos = pos + 3
            return ("op", three, pos)
        two = text[pos : pos + 2]
        if two == "=?":
            return self._fail(f"{two!r} must be followed by '='", pos)
        if two in _OPS2:
            self.pos = pos + 2
            return ("op", two, pos)
        ch = text[pos]
        if ch == "?":
            after = pos + 1
            while after < len(text) and text[after] in _WS:
                after += 1
            if text[after : after + 1] == ":":
                self.pos = after + 1
                return ("op", "?:", pos)
        if ch in _OPS1:
            self.pos = pos + 1
            return ("op", ch, pos)
        return self._fail(f"unexpected character {ch!r}", pos)


class _Parser:
    __slots__ = ("lexer", "tok", "depth", "text")

    def __init__(self, text: str, old: bool) -> None:
        self.text = text
        self.lexer = _Lexer(text, old)
        self.tok = self.lexer.next()
        self.depth = 0

    # -- helpers ---------------------------------------------------------------------------
    def _error(self, message: str, pos: int | None = None) -> NoReturn:
        raise ClassAdParseError(
            message, text=self.text, position=self.tok[2] if pos is None else pos
        )

    def _unexpected(self, wanted: str) -> NoReturn:
        kind, value, pos = self.tok
        if kind == "err":
            self._error(str(value), pos)
        if kind == "eof":
            self._error(f"expected {wanted}, found end of input", pos)
        self._error(f"expected {wanted}, found {value!r}", pos)

    def _advance(self) -> None:
        self.tok = self.lexer.next()

    def _is_op(self, op: str) -> bool:
        return self.tok[0] == "op" and self.tok[1] == op

    def _expect(self, op: str) -> None:
        if not self._is_op(op):
            self._unexpected(repr(op))
        self._advance()

    def _enter(self, units: int) -> None:
        self.depth += units
        if self.depth > MAX_DEPTH:
            self._error(f"expression nested more than {MAX_DEPTH} levels deep")

    def _name(self) -> str:
        if self.tok[0] != "name":
            self._unexpected("an attribute name")
        name = self.tok[1]
        assert isinstance(name, str)
        self._advance()
        return name

    # -- grammar ---------------------------------------------------------------------------
    def expression(self) -> Expr:
        """Expression := binary-chain [ "?" Expression ":" Expression ]."""
        self._enter(1)
        operands = [self._operand()]
        ops: list[str] = []
        precedence = BINARY_PRECEDENCE
        while self.tok[0] == "op" and self.tok[1] in precedence:
            op = self.tok[1]
            assert isinstance(op, str)
            level = precedence[op]
            while ops and precedence[ops[-1]] >= level:
                right = operands.pop()
                operands.append(Binary(ops.pop(), operands.pop(), right))
            ops.append(op)
            self._advance()
            operands.append(self._operand())
        while ops:
            right = operands.pop()
            operands.append(Binary(ops.pop(), operands.pop(), right))
        result = operands[0]
        if self._is_op("?"):
            self._advance()
            then = self.expression()
            self._expect(":")
            result = Ternary(result, then, self.expression())
        self.depth -= 1
        return result

    def _operand(self) -> Expr:
        """Unary := {prefix operator} Postfix (collected in a loop, not recursively)."""
        prefixes: list[str] = []
        while self.tok[0] == "op" and self.tok[1] in _UNARY:
            prefixes.append(self.tok[1])
            self._advance()
        self._enter(len(prefixes) + 1)
        result = self._postfix()
        for op in reversed(prefixes):
            result = Unary(op, result)
        self.depth -= len(prefixes) + 1
        return result

    def _postfix(self) -> Expr:
        """Primary followed by ``.name``, ``[index]`` and ``?: Postfix``.

        Each ``.``/``[]`` counts one nesting unit: the tree grows one level per operator and
        evaluating or printing it recurses along that chain.
        """
        self._enter(1)
        entered = 1
        result = self._primary()
        while self.tok[0] == "op":
            op = self.tok[1]
            if op in (".", "["):
                self._enter(1)
                entered += 1
            if op == ".":
                self._advance()
                result = Select(result, self._name())
            elif op == "[":
                self._advance()
                index = self.expression()
                self._expect("]")
                result = Subscript(result, index)
            elif op == "?:":
                self._advance()
                result = Elvis(result, self._postfix())
            else:
                break
        self.depth -= entered
        return result

    def _primary(self) -> Expr:
        kind, value, pos = self.tok
        if kind == "lit":
            self._advance()
            return Literal(value)  # type: ignore[arg-type]
        if kind == "name":
            assert isinstance(value, str)
            self._advance()
            if self._is_op("("):
                return self._call(value, pos)
            return AttrRef(value)
        if kind != "op":
            self._unexpected("an expression")
        if value == "(":
            self._advance()
            inner = self.expression()
            self._expect(")")
            return Paren(inner)
        if value == "{":
            return self._list()
        if value == "[":
            return self._record()
        if value == ".":
            self._advance()
            return AttrRef(self._name(), absolute=True)
        self._unexpected("an expression")

    def _call(self, name: str, pos: int) -> Expr:
        self._advance()  # the "("
        args: list[Expr] = []
        if not self._is_op(")"):
            args.append(self.expression())
            while self._is_op(",") or self._is_op(";"):
                self._advance()
                args.append(self.expression())
        self._expect(")")
        folded = name.lower()
        if (
            folded in ("abstime", "reltime")
            and len(args) == 1
            and isinstance(args[0], Literal)
            and isinstance(args[0].val, str)
        ):
            text = args[0].val
            parsed = parse_abstime(text) if folded == "abstime" else parse_reltime(text)
            if parsed is None:
                self._error(f"invalid {name} string {text!r}", pos)
            return Literal(parsed)
        return Call(name, args)

    def _list(self) -> Expr:
        self._advance()  # the "{"
        items: list[Expr] = []
        if not self._is_op("}"):
            items.append(self.expression())
            while self._is_op(","):
                self._advance()
                items.append(self.expression())
        self._expect("}")
        return ListExpr(items)

    def _record(self) -> Expr:
        self._advance()  # the "["
        members: list[tuple[str, Expr]] = []
        separators = 0
        while self._is_op(";"):
            self._advance()
            separators += 1
        if separators and self._is_op("]"):
            self._error("an ad of separators only")  # observed: [;] is rejected, [;a=1] not
        while not self._is_op("]"):
            name = self._name()
            self._expect("=")
            members.append((name, self.expression()))
            if self._is_op("]"):
                break
            self._expect(";")
            while self._is_op(";"):
                self._advance()
        self._advance()  # the "]"
        return RecordExpr(members)


#: The literal shapes worth recognising without the tokenizer, one group each: a plain int (at
#: most 18 digits, so always in range), a backslash-free string, a plain real, a boolean.
_SIMPLE_LITERAL = re.compile(
    r'(-?(?:0|[1-9][0-9]{0,17}))|"([^"\\\n]*)"|(-?[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?)'
    r"|(true|TRUE)|(false|FALSE)"
)
_TRUE = Literal(True)
_FALSE = Literal(False)


def simple_value(text: str) -> int | float | str | bool | None:
    """The Python value of ``text`` when it is exactly one of the common literal shapes.

    ``None`` otherwise.  Reading every value of a query result is dominated by these, so they
    skip the tokenizer (and, for callers that want the value, the expression node); the value
    is the one the parser's literal would hold.
    """
    try:
        return _SIMPLE_VALUES[text]
    except KeyError:
        pass
    match = _SIMPLE_LITERAL.fullmatch(text)
    value: int | float | str | bool | None
    if match is None:
        value = None
    else:
        kind = match.lastindex
        if kind == 1:
            value = int(text)
        elif kind == 2:
            value = match.group(2)
        elif kind == 3:
            value = float(text)
        else:
            value = kind == 4
    if len(text) <= _SIMPLE_CACHED_LENGTH:
        if len(_SIMPLE_VALUES) >= _SIMPLE_CACHED_VALUES:
            _SIMPLE_VALUES.clear()
        _SIMPLE_VALUES[text] = value
    return value


#: Recent answers of simple_value: the ads of one query repeat most of their values.  Bounded
#: in entries and text length, so a peer cannot make it hold much; all values are immutable.
_SIMPLE_VALUES: dict[str, int | float | str | bool | None] = {}
_SIMPLE_CACHED_VALUES = 16384
_SIMPLE_CACHED_LENGTH = 64


def simple_literal(text: str) -> Expr | None:
    """``text`` as a literal when it is exactly one of the common shapes (see simple_value)."""
    match = _SIMPLE_LITERAL.fullmatch(text)
    if match is None:
        return None
    kind = match.lastindex
    if kind == 1:
        return make_literal(int(text))
    if kind == 2:
        return make_literal(match.group(2))
    if kind == 3:
        return make_literal(float(text))
    return _TRUE if kind == 4 else _FALSE


def parse_expr(
    text: str, old: bool = False, *, full: bool = True, open_comment: bool = False
) -> Expr:
    """Parse one expression; with ``full=False`` trailing text is ignored (wire lines, §2.8).

    A ``//`` comment that no newline ends is an error (as the reference's expression parser
    and condor_status -constraint say) unless ``open_comment`` (its ``eval()`` allows one).
    """
    stripped = text.strip(_WS)
    fast = simple_literal(stripped)
    if fast is not None:
        return fast
    parser = _Parser(text, old)
    try:
        result = parser.expression()
    except RecursionError:
        raise ClassAdParseError("expression nested too deeply", text=text) from None
    if full and parser.tok[0] != "eof":
        parser._unexpected("end of expression")
    if full and not old and not open_comment and parser.lexer.open_comment >= 0:
        parser._error("a // comment must end with a newline", parser.lexer.open_comment)
    return result


def parse_record_prefix(text: str) -> tuple[RecordExpr | None, int]:
    """The ``[ ... ]`` record at the start of ``text`` and the offset just after it.

    Leading blanks and comments are skipped; (None, len) when there is nothing else.  Used to
    read several new-syntax ads from one text (they are not one expression: ``[a][b]`` would
    parse as a subscript).
    """
    parser = _Parser(text, old=False)
    if parser.tok[0] == "eof":
        return None, len(text)
    if not parser._is_op("["):
        parser._unexpected("'[' starting a ClassAd")
    try:
        record = parser._record()
    except RecursionError:
        raise ClassAdParseError("expression nested too deeply", text=text) from None
    assert isinstance(record, RecordExpr)
    end = len(text) if parser.tok[0] == "eof" else parser.tok[2]
    return record, end


def literal_token(text: str) -> Expr | None:
    """A right-hand side that is exactly one literal token, for the pre-auth reader (§2.10)."""
    lexer = _Lexer(text, old=True)
    kind, value, _ = lexer.next()
    if kind != "lit" or lexer.next()[0] != "eof":
        return None
    return Literal(value)  # type: ignore[arg-type]


__all__ = [
    "BINARY_PRECEDENCE",
    "MAX_DEPTH",
    "is_identifier",
    "literal_token",
    "parse_expr",
    "parse_record_prefix",
    "simple_literal",
    "simple_value",
]
