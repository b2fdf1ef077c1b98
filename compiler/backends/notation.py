"""Printing cost IR in the papers' notation, as Unicode text or as LaTeX.

What it does: turns an IR expression into the formula a τ-Lop paper would write —
``Σ_{i=0}^{⌈log2 P⌉−1} 2^i ‖ T^shm(m)`` in text, ``\\sum_{i=0}^{\\lceil \\log_2 P \\rceil - 1}
2^{i} \\parallel T^{\\mathrm{shm}}(m)`` in LaTeX — with the fewest parentheses that keep the
meaning (the precedence of the ``.tlop`` grammar: ``+``/``−`` below ``‖`` below ``·``/``/``
below ``^``).  Channel indices are printed by name when a :class:`~tlop.ir.Program` is given.

What it does not do: simplify or reorder anything (that is :mod:`tlop.analysis.simplify`), or produce
text the ``.tlop`` parser reads back (the notation is for people).

Public API: :func:`format_text`, :func:`format_latex`, and :class:`Formula` (an object with
``__str__`` and ``_repr_latex_`` for Jupyter).
"""

from __future__ import annotations

import math
from typing import Optional

from tlop import ir

__all__ = ["format_text", "format_latex", "Formula", "format_number"]

# precedence levels (higher binds tighter)
_LOW = 0        # let, if, reductions (extend to the right)
_OR = 1
_AND = 2
_CMP = 3
_ADD = 4
_CONC = 5
_MUL = 6
_UNARY = 7
_POW = 8
_ATOM = 9

_XOR, _BITAND, _SHIFT = 3.25, 3.5, 3.75  # between comparisons and + −, as in the grammar

_BIN_PREC = {"or": _OR, "and": _AND, "+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL, "%": _MUL, "^": _POW,
             "div": _MUL, "xor": _XOR, "&": _BITAND, "<<": _SHIFT, ">>": _SHIFT}
for _op in ir.COMPARE_OPS:
    _BIN_PREC[_op] = _CMP


def format_number(v: float) -> str:
    """``116.0`` → ``116``; other values in the shortest round-tripping form."""
    if isinstance(v, bool):
        v = float(v)
    if math.isfinite(v) and float(v).is_integer() and abs(v) < 1e16:
        return str(int(v))
    r = repr(float(v))
    return r


class _Printer:
    """Shared recursive printer; subclasses provide the concrete symbols."""

    def __init__(self, program: Optional[ir.Program]):
        self.program = program

    # ----------------------------------------------------------------- entry
    def show(self, e: ir.Expr, compact: bool = False) -> str:
        text, _ = self.fmt(e, compact)
        return text

    def wrap(self, e: ir.Expr, need: int, compact: bool, open_ok: bool = True,
             brackets: bool = False) -> str:
        """``e`` printed, parenthesised when its precedence is below ``need`` or when it is
        open to the right (Σ, let, if) and something follows it (``open_ok`` False)."""
        text, prec = self.fmt(e, compact)
        if prec < need or (not open_ok and prec == _LOW):
            return self.paren(text, brackets)
        return text

    # ----------------------------------------------------------------- nodes
    def fmt(self, e: ir.Expr, compact: bool):
        method = getattr(self, "f_" + type(e).__name__, None)
        if method is None:
            return (f"<{type(e).__name__}>", _ATOM)
        return method(e, compact)

    def f_Num(self, e, compact):
        if e.value < 0:
            return (self.minus_sign() + self.quantity(-e.value, e.ty), _UNARY)
        return (self.quantity(e.value, e.ty), _ATOM)

    def quantity(self, v: float, ty) -> str:
        """A constant with the unit of its dimension (``1 µs``, ``4KiB``, ``2e-10 s/B``), so that
        a printed time is never read as a plain number; zero and plain numbers print bare."""
        if ty is None or v == 0 or not math.isfinite(v) or getattr(ty, "kind", "num") != "num" \
                or (not ty.time and not ty.bytes):
            return format_number(v)
        if ty.time == 1 and not ty.bytes:
            for unit, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
                if v >= f or unit == "ns":
                    return self.with_unit(format_number(float(f"{v / f:.12g}")), unit)
        if ty.bytes == 1 and not ty.time:
            for unit, f in (("TiB", 2.0 ** 40), ("GiB", 2.0 ** 30), ("MiB", 2.0 ** 20), ("KiB", 1024.0)):
                if v >= f and v % f == 0:
                    return self.with_unit(format_number(v / f), unit)
            return self.with_unit(format_number(v), "B")
        return self.with_unit(format_number(v), ty.units())

    def with_unit(self, number: str, unit: str) -> str:
        return f"{number} {unit}"

    def f_Var(self, e, compact):
        return (self.name(e.name), _ATOM)

    def f_Neg(self, e, compact):
        return (self.minus_sign() + self.wrap(e.operand, _UNARY, compact, False), _UNARY)

    def f_Not(self, e, compact):
        return (self.not_sign() + self.wrap(e.operand, _UNARY, compact, False), _UNARY)

    def f_Bin(self, e, compact):
        prec = _BIN_PREC[e.op]
        if e.op == "^":
            base = self.wrap(e.lhs, _ATOM, True, False)
            return (self.power(base, self.show(e.rhs, True)), _POW)
        if e.op == "/" and self.fraction_ok():
            return (self.fraction(self.show(e.lhs, compact), self.show(e.rhs, compact)), _ATOM)
        # left-associative: the right operand needs strictly higher precedence for - and /
        right_need = prec + 1 if e.op in ("-", "/", "%", "div", "<<", ">>") or prec == _CMP else prec
        lhs = self.wrap(e.lhs, prec, compact, False)
        rhs = self.wrap(e.rhs, right_need, compact, True)
        return (lhs + self.binop(e.op, compact) + rhs, prec)

    def f_Fn(self, e, compact):
        n = e.name
        if n in ("ceil", "floor") and len(e.args) == 1:
            inner = self.show(e.args[0], compact)
            return (self.ceil(inner) if n == "ceil" else self.floor(inner), _ATOM)
        if n == "abs":
            return (self.abs(self.show(e.args[0], compact)), _ATOM)
        if n == "log2":
            return (self.log2(e.args[0], compact), _UNARY)
        if n in ("min", "max"):
            inner = ", ".join(self.show(a, compact) for a in e.args)
            return (self.minmax(n, inner), _ATOM)
        if n == "sqrt":
            return (self.sqrt(self.show(e.args[0], compact)), _ATOM)
        args = ", ".join(self.show(a, compact) for a in e.args)
        return (self.func(n) + "(" + args + ")", _ATOM)

    def f_Cond(self, e, compact):
        return (self.cond(self.show(e.test), self.show(e.then_), self.show(e.else_)), _LOW)

    def f_Let(self, e, compact):
        binds = ", ".join(self.name(n) + " = " + self.show(v) for n, v in e.bindings)
        return (self.let(binds, self.show(e.body)), _LOW)

    def f_Reduce(self, e, compact):
        lo = self.show(e.lo, True)
        hi = self.show(e.hi, True)
        body = self.wrap(e.body, _CONC, compact, True, brackets=True)
        return (self.reduce(e.kind, self.name(e.var), lo, hi, body), _LOW)

    def f_Lookup(self, e, compact):
        args = ", ".join(self.show(a) for a in e.args)
        return (self.channelled(e.table, e.channel) + "(" + args + ")", _ATOM)

    def f_Scalar(self, e, compact):
        return (self.channelled(e.name, e.channel), _ATOM)

    def f_Transmit(self, e, compact):
        return (self.channelled(e.name, e.channel) + "(" + self.show(e.size) + ")", _ATOM)

    def f_Xmit(self, e, compact):
        t = self.channelled(e.name, e.channel) + "(" + self.show(e.size) + ")"
        if isinstance(e.count, ir.Num) and e.count.value == 1:
            return (t, _ATOM)
        return (self.conc_join(self.wrap(e.count, _MUL, compact, False), t, e.count), _CONC)

    def f_Conc(self, e, compact):
        factor = self.wrap(e.factor, _MUL, compact, False)
        body = self.wrap(e.body, _CONC + 1, compact, True, brackets=True)
        return (self.conc_join(factor, body, e.factor), _CONC)

    def f_ParComp(self, e, compact):
        # ‖ is one left-associative operator: an operand that is itself "A ‖ T(m)" (an Xmit with
        # a multiplicity) is parenthesised, or "A‖T(S) ‖ T(m)" would read as A ‖ (T(S) ‖ T(m))
        parts = []
        for op in e.operands:
            items = [self.fmt(x, compact) for x in op]
            text = " + ".join(t for t, _ in items)
            if len(items) > 1:
                parts.append(self.paren(text, True))
            elif len(e.operands) > 1 and items[0][1] <= _CONC:
                parts.append(self.paren(text))
            else:
                parts.append(text)
        return (self.par_sep().join(parts), _CONC)

    # ----------------------------------------------------------------- schedules
    def f_NodeOf(self, e, compact):
        return (self.func("node") + "(" + self.show(e.rank, True) + ")", _ATOM)

    def f_ConfigRef(self, e, compact):
        name = self.name(f"{e.config}.{e.field}")
        return (name + ("[" + self.show(e.index, True) + "]" if e.index is not None else ""), _ATOM)

    def f_PerRankArg(self, e, compact):
        return (self.name(e.name) + "[" + self.show(e.index, True) + "]", _ATOM)

    def f_Stage(self, e, compact):
        return (self.stage([self.show(i, True) for i in e.items]), _ATOM)

    def f_Block(self, e, compact):
        return (self.block([self.show(i, True) for i in e.items]), _ATOM)

    def f_Loop(self, e, compact):
        where = None
        if not (isinstance(e.where, ir.Num) and e.where.value == 1):
            where = self.show(e.where, True)
        return (self.loop(e.kind, self.name(e.var), self.show(e.lo, True), self.show(e.hi, True), where,
                          self.show(e.body, True)), _LOW)

    def f_Send(self, e, compact):
        text = self.send(self.show(e.src, True), self.show(e.dst, True), self.show(e.size, True))
        if isinstance(e.weight, ir.Num) and e.weight.value == 1:
            return (text, _ATOM)
        return (self.conc_join(self.wrap(e.weight, _MUL, True, False), self.paren(text), e.weight), _CONC)

    def f_Compute(self, e, compact):
        return (self.compute(self.show(e.rank, True), self.show(e.cost, True)), _ATOM)

    # ----------------------------------------------------------------- helpers
    def channel_name(self, ch: ir.Expr) -> str:
        if isinstance(ch, ir.Num) and self.program is not None:
            i = ch.value
            if float(i).is_integer() and 0 <= int(i) < len(self.program.channels):
                return self.program.channels[int(i)]
        return self.show(ch, True)

    def conc_join(self, factor: str, body: str, factor_expr: ir.Expr) -> str:
        simple = isinstance(factor_expr, (ir.Num, ir.Var))
        return factor + (self.par_tight() if simple else self.par_spaced()) + body


class _TextPrinter(_Printer):
    def minus_sign(self):
        return "−"

    def not_sign(self):
        return "¬"

    def name(self, n):
        return n

    def func(self, n):
        return n

    def paren(self, text, brackets=False):
        return "[" + text + "]" if brackets else "(" + text + ")"

    def fraction_ok(self):
        return False

    def binop(self, op, compact):
        sym = {"*": "·", "-": "−", "<=": "≤", ">=": "≥", "!=": "≠", "==": "=", "%": " mod ",
               "and": " ∧ ", "or": " ∨ ", "div": " div ", "xor": " ⊕ ", "&": " & ", "<<": " ≪ ",
               ">>": " ≫ "}.get(op, op)
        if op in ("*", "/", "^"):
            return sym
        if op in ("%", "and", "or", "div", "xor", "&", "<<", ">>"):
            return sym
        return sym if compact else " " + sym + " "

    def power(self, base, exp):
        simple = all(ch.isalnum() or ch in "_" for ch in exp)
        return base + "^" + (exp if simple else "{" + exp + "}")

    def ceil(self, x):
        return "⌈" + x + "⌉"

    def floor(self, x):
        return "⌊" + x + "⌋"

    def abs(self, x):
        return "|" + x + "|"

    def sqrt(self, x):
        return "√(" + x + ")"

    def log2(self, arg, compact):
        text, prec = self.fmt(arg, compact)
        if prec == _ATOM and not text.startswith(("⌈", "⌊", "|")):
            return "log2 " + text
        return "log2(" + text + ")"

    def minmax(self, n, inner):
        return n + "{" + inner + "}"

    def cond(self, t, a, b):
        return "if " + t + " then " + a + " else " + b

    def let(self, binds, body):
        return "let " + binds + " in " + body

    def reduce(self, kind, var, lo, hi, body):
        sym = {"sum": "Σ", "max": "max", "min": "min"}[kind]
        return f"{sym}_{{{var}={lo}}}^{{{hi}}} {body}"

    def channelled(self, name, ch):
        if ch is None:
            return name
        return name + "^" + self.channel_name(ch)

    def par_tight(self):
        return "‖"

    def par_spaced(self):
        return " ‖ "

    def par_sep(self):
        return " ‖ "

    def stage(self, items):
        return "stage{" + "; ".join(items) + "}"

    def block(self, items):
        return "⟨" + "; ".join(items) + "⟩"

    def loop(self, kind, var, lo, hi, where, body):
        sym = "‖" if kind == "par" else "seq"
        cond = f" | {where}" if where is not None else ""
        return f"{sym}_{{{var}={lo}}}^{{{hi}{cond}}} {body}"

    def send(self, src, dst, size):
        return f"{src} → {dst} : {size}"

    def compute(self, rank, cost):
        return f"compute({rank} : {cost})"


_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "theta", "lambda", "mu", "nu", "rho",
          "sigma", "tau", "phi", "psi", "omega", "eta", "kappa", "xi", "chi", "zeta"}


class _LatexPrinter(_Printer):
    def with_unit(self, number: str, unit: str) -> str:
        return number + "\\,\\mathrm{" + unit.replace("µ", "\\mu ") + "}"

    def minus_sign(self):
        return "-"

    def not_sign(self):
        return "\\neg "

    def name(self, n):
        base, _, sub = n.partition("_")
        if base in _GREEK:
            base = "\\" + base
        elif len(base) > 1:
            base = "\\mathit{" + base + "}"
        if sub:
            return base + "_{" + self.name(sub) + "}"
        return base

    def func(self, n):
        return "\\operatorname{" + n + "}"

    def paren(self, text, brackets=False):
        return ("\\left[" + text + "\\right]") if brackets else ("\\left(" + text + "\\right)")

    def fraction_ok(self):
        return True

    def fraction(self, a, b):
        return "\\frac{" + a + "}{" + b + "}"

    def binop(self, op, compact):
        sym = {"*": "\\cdot", "<=": "\\le", ">=": "\\ge", "!=": "\\ne", "==": "=", "%": "\\bmod",
               "and": "\\land", "or": "\\lor", "div": "\\mathbin{\\mathrm{div}}", "xor": "\\oplus",
               "&": "\\mathbin{\\&}", "<<": "\\ll", ">>": "\\gg"}.get(op, op)
        return " " + sym + " "

    def power(self, base, exp):
        return base + "^{" + exp + "}"

    def ceil(self, x):
        return "\\lceil " + x + " \\rceil"

    def floor(self, x):
        return "\\lfloor " + x + " \\rfloor"

    def abs(self, x):
        return "\\left|" + x + "\\right|"

    def sqrt(self, x):
        return "\\sqrt{" + x + "}"

    def log2(self, arg, compact):
        text, prec = self.fmt(arg, compact)
        if prec == _ATOM and not text.startswith("\\left") and not text.startswith("\\frac"):
            return "\\log_2 " + text
        return "\\log_2\\left(" + text + "\\right)"

    def minmax(self, n, inner):
        return "\\" + n + "\\{" + inner + "\\}"

    def cond(self, t, a, b):
        return "\\begin{cases} " + a + " & \\text{if } " + t + " \\\\ " + b + " & \\text{otherwise} \\end{cases}"

    def let(self, binds, body):
        return body + " \\quad\\text{where } " + binds

    def reduce(self, kind, var, lo, hi, body):
        sym = {"sum": "\\sum", "max": "\\max", "min": "\\min"}[kind]
        return f"{sym}_{{{var}={lo}}}^{{{hi}}} {body}"

    def channelled(self, name, ch):
        base = self.name(name)
        if ch is None:
            return base
        return base + "^{\\mathrm{" + self.channel_name(ch) + "}}"

    def channel_name(self, ch):
        n = super().channel_name(ch)
        return n.replace("_", "\\_")

    def par_tight(self):
        return " \\parallel "

    def par_spaced(self):
        return " \\parallel "

    def par_sep(self):
        return " \\parallel "

    def stage(self, items):
        return "\\mathrm{stage}\\left\\{" + ";\\ ".join(items) + "\\right\\}"

    def block(self, items):
        return "\\left\\langle " + ";\\ ".join(items) + " \\right\\rangle"

    def loop(self, kind, var, lo, hi, where, body):
        sym = "\\mathop{\\Big\\|}" if kind == "par" else "\\mathop{\\mathrm{seq}}"
        cond = f" \\mid {where}" if where is not None else ""
        return f"{sym}_{{{var}={lo}}}^{{{hi}{cond}}} {body}"

    def send(self, src, dst, size):
        return f"{src} \\to {dst} : {size}"

    def compute(self, rank, cost):
        return f"\\operatorname{{compute}}({rank} : {cost})"


def format_text(expr: ir.Expr, program: Optional[ir.Program] = None) -> str:
    """``expr`` in the papers' notation as Unicode text, e.g. ``Σ_{i=0}^{⌈log2 P⌉−1} 2^i ‖ T^shm(m)``."""
    return _TextPrinter(program).show(expr)


def format_latex(expr: ir.Expr, program: Optional[ir.Program] = None) -> str:
    """``expr`` as a LaTeX math-mode formula (no surrounding ``$``)."""
    return _LatexPrinter(program).show(expr)


class Formula:
    """A cost expression that shows itself in the papers' notation: ``str()`` gives text and
    Jupyter renders ``_repr_latex_``."""

    def __init__(self, expr: ir.Expr, program: Optional[ir.Program] = None):
        self.expr = expr
        self.program = program

    def __str__(self) -> str:
        return format_text(self.expr, self.program)

    def __repr__(self) -> str:
        return f"Formula({format_text(self.expr, self.program)!r})"

    def _repr_latex_(self) -> str:
        return "$" + format_latex(self.expr, self.program) + "$"
