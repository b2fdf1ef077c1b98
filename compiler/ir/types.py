"""Types of .tlop values: dimensions (exponents of seconds and bytes) and the typing rules.

What it does: defines :class:`Type` — a number with a *dimension* ``s^a · B^b`` (rational
exponents ``a``, ``b``; ``a = b = 0`` is dimensionless, which is ``int`` or ``real``), or a
``bool``, or a ``channel`` — its spelling in source (``time/bytes``, :func:`parse_type`) and in
messages (``time (s)``, ``bytes² (B²)``), and one function per operator that gives the type of
the result from the types of the operands or raises :class:`TypeRuleError` saying which operand
is wrong and why.  The front end (checking source) and the IR verifier (checking passes) both
use these rules, so there is one definition of what is well-typed.

The rules: ``+ − % min max``, comparisons and the branches of ``if`` need equal dimensions;
``*`` and ``/`` add and subtract exponents; ``^`` needs a dimensionless exponent, and a
dimensionless base unless the exponent is a constant integer; ``log2 exp ln`` take and give
plain numbers; ``sqrt`` halves the exponents; ``ceil floor abs`` keep the dimension
(``ceil``/``floor`` of a plain number is ``int``); ``A ‖ cost`` needs a plain ``A`` and a time.
``int`` is kept apart from ``real`` only for plain numbers (sums, products, remainders, ceil,
floor and powers of ints are ints; ``/`` gives ``real``).  Known hole, kept from before for
compatibility: ``int ^ int`` is ``int`` even when the exponent is negative (``2 ^ -1``).

What it does not do: know about syntax trees or IR nodes (:mod:`tlop.ir.typecheck` applies
these rules to IR nodes, :mod:`tlop.frontend.elaborate` to source).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Sequence

__all__ = ["Type", "TypeRuleError", "INT", "REAL", "TIME", "BYTES", "BOOL", "CHANNEL", "ERROR", "ITEM",
           "integer_op",
           "parse_type", "arith", "compare", "logic", "negate", "logical_not", "function", "branches",
           "conc", "reduction_bound", "accepts", "TYPE_NAMES"]


@dataclass(frozen=True)
class Type:
    """A type: ``kind`` is ``"num"``, ``"bool"``, ``"channel"``, ``"item"`` (an item of a
    schedule stage: a send, a computation, a ``par``/``seq`` loop or a block; it has no value of
    its own) or ``"error"`` (an operand that already has a reported error; every rule accepts
    it silently).  A number has the dimension
    ``s^time · B^bytes``; ``integer`` marks ``int`` and is only ever set on dimensionless numbers."""
    kind: str
    time: Fraction = Fraction(0)
    bytes: Fraction = Fraction(0)
    integer: bool = False

    def __post_init__(self):
        object.__setattr__(self, "time", Fraction(self.time))
        object.__setattr__(self, "bytes", Fraction(self.bytes))
        if self.kind != "num" or self.time or self.bytes:
            object.__setattr__(self, "integer", False)
        if self.kind != "num":
            object.__setattr__(self, "time", Fraction(0))
            object.__setattr__(self, "bytes", Fraction(0))

    def __eq__(self, other) -> bool:
        # the generated comparison, with the common case first: a program's types are mostly
        # the same few objects (INT, TIME …), and comparing two Fractions is slow.  (The
        # dataclass still makes __hash__ from the fields.)
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.kind == other.kind and self.integer == other.integer and self.time == other.time
                and self.bytes == other.bytes)

    # ------------------------------------------------------------------ predicates
    @property
    def is_num(self) -> bool:
        return self.kind == "num"

    @property
    def is_error(self) -> bool:
        return self.kind == "error"

    @property
    def dimensionless(self) -> bool:
        """A plain number (``int`` or ``real``)."""
        return self.kind == "num" and not self.time and not self.bytes

    def same_dimension(self, other: "Type") -> bool:
        """Both numbers of one dimension (``int`` and ``real`` are the same dimension)."""
        if self is other:
            return self.kind == "num"
        return self.kind == other.kind == "num" and self.time == other.time and self.bytes == other.bytes

    # ------------------------------------------------------------------ algebra
    def __mul__(self, other: "Type") -> "Type":
        return Type("num", self.time + other.time, self.bytes + other.bytes, self.integer and other.integer)

    def __truediv__(self, other: "Type") -> "Type":
        return Type("num", self.time - other.time, self.bytes - other.bytes)

    def power(self, k: Fraction) -> "Type":
        return Type("num", self.time * k, self.bytes * k)

    def real(self) -> "Type":
        """The same dimension, not an integer."""
        return Type(self.kind, self.time, self.bytes)

    # ------------------------------------------------------------------ spelling
    def __str__(self) -> str:
        """The type as written in source: ``int``, ``time``, ``time/bytes``, ``bytes^2``."""
        hit = _STR_MEMO.get(id(self))
        if hit is not None:
            return hit[1]
        text = self._spelling()
        if len(_STR_MEMO) < 4096:
            _STR_MEMO[id(self)] = (self, text)
        return text

    def _spelling(self) -> str:
        if self.kind != "num":
            return self.kind
        if self.dimensionless:
            return "int" if self.integer else "real"
        num, den = [], []
        for name, e in (("time", self.time), ("bytes", self.bytes)):
            if e > 0:
                num.append(name + ("" if e == 1 else "^" + _exp_text(e)))
            elif e < 0:
                den.append(name + ("" if e == -1 else "^" + _exp_text(-e)))
        return "*".join(num or ["real"]) + "".join("/" + d for d in den)

    def pretty(self) -> str:
        """The type for people: ``time``, ``time/bytes``, ``bytes²``, ``time·bytes``."""
        return _pretty(self, {"time": "time", "bytes": "bytes"}, "·")

    def units(self) -> str:
        """The SI unit of a dimensioned number: ``s``, ``s/B``, ``B²``."""
        return _pretty(self, {"time": "s", "bytes": "B"}, "·")

    def describe(self) -> str:
        """The type in an error message: ``time (s)``, ``size (B)``, ``bytes² (B²)``, ``int``."""
        if self.kind == "item":
            return "a schedule item"
        if self.kind != "num" or self.dimensionless:
            return str(self)
        if self == TIME:
            return "time (s)"
        if self == BYTES:
            return "size (B)"
        return f"{self.pretty()} ({self.units()})"


#: the spelling of each Type object printed, by id (each held, so its id is not reused): the
#: elaborator spells the type of every parameter; bounded
_STR_MEMO: dict = {}

_SUPER = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _exp_text(e: Fraction) -> str:
    if e.denominator == 1:
        return str(e.numerator)
    return repr(float(e))


def _pretty(t: Type, names: dict, dot: str) -> str:
    num, den = [], []
    for key in ("time", "bytes"):
        e = getattr(t, key)
        if not e:
            continue
        mag = abs(e)
        sup = "" if mag == 1 else (str(mag.numerator).translate(_SUPER) if mag.denominator == 1
                                   else f"^({mag})")
        (num if e > 0 else den).append(names[key] + sup)
    text = dot.join(num) if num else "1"
    return text + "".join("/" + d for d in den)


INT = Type("num", integer=True)
REAL = Type("num")
TIME = Type("num", time=1)
BYTES = Type("num", bytes=1)
BOOL = Type("bool")
CHANNEL = Type("channel")
ERROR = Type("error")
ITEM = Type("item")

#: the base type names of the language (``cost`` is another name for ``time``)
TYPE_NAMES = {"int": INT, "real": REAL, "bytes": BYTES, "time": TIME, "cost": TIME,
              "channel": CHANNEL, "bool": BOOL}

_FACTOR = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:\^\s*(-?\d+(?:\.\d+)?))?\s*")


def parse_type(text: str) -> Optional[Type]:
    """``"time/bytes"`` → the type; None when the text is not a type.  A compound type is a
    product or quotient of ``int real bytes time cost`` with optional constant exponents
    (``bytes^2``, ``real/time``); ``bool`` and ``channel`` stand alone."""
    text = text.strip()
    if text in TYPE_NAMES:
        return TYPE_NAMES[text]
    out = REAL
    pos, sign = 0, 1
    while True:
        m = _FACTOR.match(text, pos)
        if not m or m.group(1) not in TYPE_NAMES or TYPE_NAMES[m.group(1)].kind != "num":
            return None
        base = TYPE_NAMES[m.group(1)]
        k = Fraction(m.group(2)) if m.group(2) else Fraction(1)
        out = out * base.power(sign * k)
        pos = m.end()
        if pos == len(text):
            return out.real()
        if text[pos] not in "*/":
            return None
        sign = 1 if text[pos] == "*" else -1
        pos += 1


# ============================================================================ rules

class TypeRuleError(Exception):
    """An operand of the wrong type: ``operand`` is its index (None: the whole expression)."""

    def __init__(self, message: str, operand: Optional[int] = None):
        super().__init__(message)
        self.message = message
        self.operand = operand


def _numbers(what: str, types: Sequence[Type]):
    for i, t in enumerate(types):
        if not t.is_num:
            raise TypeRuleError(f"{what} needs numbers, found {t.describe()}", i)


def _hint(a: Type, b: Type) -> str:
    """Advice when a plain number meets a dimensioned one (a unit forgotten)."""
    if a.is_num and b.is_num and a.dimensionless != b.dimensionless:
        return ": give the plain number a unit (2us, 64KiB) or multiply it by one"
    return ""


def _same(verb: str, a: Type, b: Type, joiner: str = "and"):
    if not a.same_dimension(b):
        raise TypeRuleError(f"cannot {verb} {a.describe()} {joiner} {b.describe()}{_hint(a, b)}")


_VERB = {"%": "take the remainder of"}


#: results of :func:`arith` without an exponent, by (op, id(a), id(b)), each with its operands
#: (held, so their ids are not reused): a program combines a few Type objects in many
#: expressions, a Type (two Fractions) is slow to build, and hashing one is slow too; bounded
_ARITH_MEMO: dict = {}

#: one Type object for each type the memoized rules returned (the named ones first): results
#: equal to ``TIME`` are ``TIME`` itself, so comparing them (``accepts``) is an identity test
#: instead of two Fraction comparisons.  Only an optimisation: Types always compare by value.
_CANONICAL: dict = {t: t for t in (INT, REAL, TIME, BYTES, BOOL, CHANNEL, ERROR, ITEM)}


def _canonical(t: Type) -> Type:
    if len(_CANONICAL) >= 4096:
        return t
    return _CANONICAL.setdefault(t, t)


def arith(op: str, a: Type, b: Type, exponent: Optional[Fraction] = None) -> Type:
    """``a op b`` for ``+ - * / % ^``.  ``exponent`` is the value of a constant exponent of
    ``^`` (a literal, possibly negated), or None."""
    if exponent is not None:
        return _arith(op, a, b, exponent)
    key = (op, id(a), id(b))
    hit = _ARITH_MEMO.get(key)
    if hit is not None:
        return hit[2]
    out = _canonical(_arith(op, a, b, None))  # a TypeRuleError is raised each time, never stored
    if len(_ARITH_MEMO) < 4096:
        _ARITH_MEMO[key] = (a, b, out)
    return out


def _arith(op: str, a: Type, b: Type, exponent: Optional[Fraction]) -> Type:
    if a.is_error or b.is_error:
        return ERROR
    _numbers(f"operator '{op}'", (a, b))
    if op == "+":
        _same("add", a, b)
        return Type("num", a.time, a.bytes, a.integer and b.integer)
    if op == "-":
        if not a.same_dimension(b):
            raise TypeRuleError(f"cannot subtract {b.describe()} from {a.describe()}{_hint(a, b)}")
        return Type("num", a.time, a.bytes, a.integer and b.integer)
    if op == "%":
        _same(_VERB[op], a, b, "by")
        return Type("num", a.time, a.bytes, a.integer and b.integer)
    if op == "*":
        return a * b
    if op == "/":
        return a / b
    if op == "^":
        if not b.dimensionless:
            raise TypeRuleError(f"the exponent of '^' must be a plain number, found {b.describe()}", 1)
        if a.dimensionless:
            return INT if a.integer and b.integer else REAL
        if exponent is None or exponent.denominator != 1:
            raise TypeRuleError(f"'^' of {a.describe()} needs a constant integer exponent "
                                f"(only a plain number can be raised to any power)", 1)
        return a.power(exponent)
    raise TypeRuleError(f"unknown operator '{op}'")


def integer_op(op: str, a: Type, b: Type) -> Type:
    """``a div b``, ``a xor b``, ``a & b``, ``a << b``, ``a >> b``: both operands ``int``, an
    ``int`` result."""
    if a.is_error or b.is_error:
        return ERROR
    for i, t in enumerate((a, b)):
        if t != INT:
            raise TypeRuleError(f"'{op}' needs integers (int), found {t.describe()}", i)
    return INT


def compare(op: str, a: Type, b: Type) -> Type:
    """``a op b`` for the comparisons: numbers of one dimension, or two channels (== and !=)."""
    if a.is_error or b.is_error:
        return BOOL
    if a.kind == b.kind == "channel" and op in ("==", "!="):
        return BOOL
    if not a.is_num or not b.is_num:
        raise TypeRuleError(f"cannot compare {a.describe()} with {b.describe()}", 0 if not a.is_num else 1)
    if not a.same_dimension(b):
        raise TypeRuleError(f"cannot compare {a.describe()} with {b.describe()}{_hint(a, b)}")
    return BOOL


def logic(op: str, a: Type, b: Type) -> Type:
    """``a and b``, ``a or b``."""
    for i, t in enumerate((a, b)):
        if t.kind not in ("bool", "error"):
            raise TypeRuleError(f"'{op}' needs conditions (bool), found {t.describe()}", i)
    return BOOL


def logical_not(a: Type) -> Type:
    if a.kind not in ("bool", "error"):
        raise TypeRuleError(f"'not' needs a condition (bool), found {a.describe()}", 0)
    return BOOL


def negate(a: Type) -> Type:
    if a.is_error:
        return ERROR
    if not a.is_num:
        raise TypeRuleError(f"cannot negate a {a.describe()}", 0)
    return a


#: results of :func:`function` by (name, ids of the argument types), with the types held (as
#: :data:`_ARITH_MEMO`); bounded
_FUNCTION_MEMO: dict = {}


def function(name: str, args: Sequence[Type]) -> Type:
    """A built-in function of the argument types (arity is checked by the caller)."""
    args = tuple(args)
    key = (name,) + tuple(map(id, args))
    hit = _FUNCTION_MEMO.get(key)
    if hit is not None:
        return hit[1]
    out = _canonical(_function(name, args))  # a TypeRuleError is raised each time, never stored
    if len(_FUNCTION_MEMO) < 4096:
        _FUNCTION_MEMO[key] = (args, out)
    return out


def _function(name: str, args: Sequence[Type]) -> Type:
    if any(t.is_error for t in args):
        return ERROR
    _numbers(f"'{name}'", args)
    a = args[0]
    if name in ("ceil", "floor"):
        return INT if a.dimensionless else a.real()
    if name == "abs":
        return a
    if name == "sqrt":
        return a.power(Fraction(1, 2))
    if name in ("log2", "exp", "ln"):
        if not a.dimensionless:
            raise TypeRuleError(f"'{name}' needs a plain number (no unit), found {a.describe()}", 0)
        return REAL
    if name in ("min", "max"):
        for i, t in enumerate(args[1:], 1):
            if not a.same_dimension(t):
                raise TypeRuleError(f"cannot take the {name} of {a.describe()} and {t.describe()}", i)
        return Type("num", a.time, a.bytes, all(t.integer for t in args))
    raise TypeRuleError(f"unknown function '{name}'")


def branches(a: Type, b: Type) -> Type:
    """The type of ``if … then a else b``."""
    if a.is_error or b.is_error:
        return ERROR
    if a.kind == b.kind and a.kind != "num":
        return a
    if not a.same_dimension(b):
        raise TypeRuleError(f"the branches of 'if' have different types: {a.describe()} and {b.describe()}")
    return Type("num", a.time, a.bytes, a.integer and b.integer)


def conc(factor: Type, body: Type) -> Type:
    """``factor ‖ body``: a plain count and a cost."""
    if not factor.dimensionless and not factor.is_error:
        raise TypeRuleError(f"the left side of 'A || …' must be a plain number (a count), "
                            f"found {factor.describe()}", 0)
    if body != TIME and not body.is_error:
        raise TypeRuleError(f"the right side of 'A || …' must be a cost, found {body.describe()}", 1)
    return TIME


def reduction_bound(kind: str, t: Type):
    """The bounds of ``sum``/``max``/``min`` are ints."""
    if t != INT and not t.is_error:
        raise TypeRuleError(f"the bounds of '{kind}' must be integers (int), found {t.describe()}; "
                            f"use ceil or floor", 0)


def accepts(want: Type, got: Type) -> bool:
    """Whether a value of type ``got`` may be passed where ``want`` is declared (an ``int`` is a
    ``real``; otherwise the types are equal)."""
    if want is got or want.is_error or got.is_error:
        return True
    if want == got:
        return True
    return want == REAL and got == INT
