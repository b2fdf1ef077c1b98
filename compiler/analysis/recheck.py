"""Re-evaluating a solver's counterexample: the values a refuted claim really has there.

What it does: :func:`recheck` evaluates both sides of a claim at the point of a Z3 model with
the reference interpreter (:class:`tlop.backends.interp.Interpreter`): arithmetic, ``log2``,
powers, ``sqrt``, ``exp``, ``ln`` and sums are computed for real, where the encoding of
:mod:`tlop.analysis.smt` only abstracts them (as uninterpreted functions with a few sound facts,
which lets Z3 give them any value those facts allow: ``c(P) = P^P`` at ``P = 1`` came out as
0.25).  What a claim may legitimately leave open — profile tables, scalar parameters and
transmission costs, which a claim quantifies over — takes the value the solver chose: the
model's interpretation of ``tbl_*``, ``param_*`` and ``xmit_*`` at the arguments the
interpreter computes.

The result says whether the relation fails at the re-evaluated values (the counterexample is
real: show those values) or holds there (the counterexample came from an abstraction: it is
spurious, and the claim is not refuted).

What it does not do: search for another counterexample, or re-evaluate rule counterexamples
(rules have no program point to evaluate).  A point that a double cannot hold exactly (an
integer beyond 2^53, ``m = 1/3``) is not re-evaluated (the interpreter would evaluate another
point); the solver's values are shown then, with that reason.  Table values chosen by the solver are read at the
interpreter's double-precision arguments; where the solver's point is not a double (``m = 1/3``)
the model's default value is read, which at worst makes a real counterexample look spurious
(reported as unknown, never as a wrong refutation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import z3

from tlop import ir
from tlop.backends.interp import Interpreter
from tlop.runtime.diagnostics import TlopError

__all__ = ["Recheck", "recheck"]


@dataclass
class Recheck:
    """Both sides re-evaluated at a counterexample; ``fails`` is whether the claim's relation
    fails there (None when re-evaluation itself failed: ``error`` says why)."""
    lhs: Optional[float]
    rhs: Optional[float]
    fails: Optional[bool]
    reads_profile: bool = False
    error: str = ""


def _real(x) -> z3.ArithRef:
    x = float(x)
    if not math.isfinite(x):
        raise TlopError(f"a value is {x} at the counterexample")
    f = Fraction(x)
    return z3.RatVal(f.numerator, f.denominator)


class _ModelInterpreter(Interpreter):
    """The interpreter with profile access answered by a Z3 model (see the module docstring)."""

    def __init__(self, program: ir.Program, model, enc):
        super().__init__(program, None)
        self.model, self.enc = model, enc
        self.reads_profile = False

    def _app(self, name: str, args) -> float:
        from tlop.analysis.smt import z3_value

        self.reads_profile = True
        f = self.enc.func(name, len(args))
        return z3_value(self.model.eval(f(*(_real(a) for a in args)), model_completion=True))

    def _eval_Lookup(self, e, env, conc):
        sig = self.program.tables.get(e.table)
        args = [float(self._eval(a, env, conc)) for a in e.args]
        if sig is not None and sig.tau_index is not None:
            args[sig.tau_index] *= float(conc)
        ch = [float(self._eval(e.channel, env, conc))] if e.channel is not None else []
        return self._app("tbl_" + e.table, ch + args)

    def _eval_Scalar(self, e, env, conc):
        from tlop.analysis.smt import z3_value

        if e.channel is None:
            self.reads_profile = True
            return z3_value(self.model.eval(z3.Real(self.enc.prefix + "param_" + e.name), model_completion=True))
        return self._app("param_" + e.name, [float(self._eval(e.channel, env, conc))])

    def _eval_Transmit(self, e, env, conc):
        ch = float(self._eval(e.channel, env, conc))
        size = float(self._eval(e.size, env, conc))
        return self._app("xmit_" + e.name, [ch, size, float(conc)])


def _inexact(v) -> str:
    """The text of model value ``v`` when a double cannot hold it exactly, else ''."""
    try:
        if z3.is_int_value(v):
            exact = Fraction(v.as_long())
        elif z3.is_rational_value(v):
            exact = Fraction(v.numerator_as_long(), v.denominator_as_long())
        else:
            return str(v)  # algebraic (irrational)
    except Exception:  # noqa: BLE001 - anything unexpected is not a double
        return str(v)
    return "" if Fraction(float(exact)) == exact else str(v)


def recheck(program: Optional[ir.Program], model, enc, lhs: ir.Expr, rhs: ir.Expr, relation,
            values: dict) -> Recheck:
    """Evaluate ``lhs`` and ``rhs`` at ``values`` (the counterexample's variables) with the
    interpreter, profile access answered by ``model`` (see the module docstring);
    ``relation(a, b)`` is the claim's relation on floats."""
    prog = program if program is not None else ir.Program((), {}, {}, {}, {})
    it = _ModelInterpreter(prog, model, enc)
    env = {k: float(v) for k, v in values.items() if v is not None}
    for name, term in enc.vars.items():  # the point must be exactly the solver's
        inexact = _inexact(model.eval(term, model_completion=True))
        if inexact:
            return Recheck(None, None, None, False, f"{name} = {inexact} is not exactly a double")
    try:
        a = float(it.eval(lhs, env))
        b = float(it.eval(rhs, env))
    except (TlopError, ArithmeticError, ValueError) as err:
        msg = err.diagnostics[0].message if isinstance(err, TlopError) and err.diagnostics else str(err)
        return Recheck(None, None, None, it.reads_profile, msg)
    if not (math.isfinite(a) and math.isfinite(b)):
        return Recheck(a, b, None, it.reads_profile, "a side is not finite there")
    return Recheck(a, b, not relation(a, b), it.reads_profile)
