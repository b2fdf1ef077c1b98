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

A confirmed counterexample must rest on tables the model's axioms allow: the solver made its
choices satisfy the axioms only at the applications the encoding met, so a re-evaluation that
reads a table, parameter-free transmission or stage value anywhere else (a value the model
merely completes) is not a confirmation: it comes back with ``fails`` None and the reason.
Schedules are evaluated with ``mapping`` (the ``P`` in scope is the process count, as the
engines bind it); without one a schedule cannot be evaluated, which is said.

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

    def __init__(self, program: ir.Program, model, enc, mapping=None):
        super().__init__(program, None, mapping)
        self.model, self.enc = model, enc
        self.reads_profile = False
        self.chosen = _chosen(model, enc)
        #: a value read where the solver did not choose it consistently with the axioms
        self.unchosen: Optional[str] = None

    def _app(self, name: str, args) -> float:
        from tlop.analysis.smt import z3_value

        self.reads_profile = True
        f = self.enc.func(name, len(args))
        key = (self.enc.prefix + name, tuple(float(a) for a in args))
        if key not in self.chosen and self.unchosen is None:
            self.unchosen = f"{name.partition('_')[2]}({', '.join(f'{float(a):g}' for a in args)})"
        return z3_value(self.model.eval(f(*(_real(a) for a in args)), model_completion=True))

    def _transmit(self, name, model_channel, size, conc, span):
        """A schedule's send: the transmission's value as the solver chose it."""
        import numpy as np

        ch = float(self.program.channels.index(model_channel))
        size, conc = np.broadcast_arrays(np.asarray(size, dtype=float), np.asarray(conc, dtype=float))
        out = np.array([self._app("xmit_" + name, [ch, s, c]) for s, c in zip(size.ravel(), conc.ravel())])
        return out.reshape(size.shape) if size.ndim else float(out[0])

    def _eval_Stage(self, e, env, conc):
        if self.mapping is None:
            raise TlopError("a schedule needs a process mapping to be evaluated: give one with --mapping "
                            "(e.g. --mapping 'sequential(4)')")
        P = env.get("P")
        if P is None:
            raise TlopError("a stage outside an algorithm with a parameter P")
        self.mapping.check(int(P))
        env = dict(env)
        env[ir.RANKS] = P
        return super()._eval_Stage(e, env, conc)

    def _eval_Lookup(self, e, env, conc):
        from tlop.backends.interp import check_size

        sig = self.program.tables.get(e.table)
        args = [float(self._eval(a, env, conc)) for a in e.args]
        if sig is not None and args:  # as the interpreter checks a lookup (the size comes first)
            rest = [a for i, a in enumerate(args) if i != sig.tau_index]
            if rest:
                check_size(f"table '{e.table}'", rest[0], e.span)
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
        from tlop.backends.interp import check_size

        ch = float(self._eval(e.channel, env, conc))
        size = float(self._eval(e.size, env, conc))
        check_size(f"transmission '{e.name}'", size, e.span)  # as the interpreter checks it
        return self._app("xmit_" + e.name, [ch, size, float(conc)])


def _chosen(model, enc) -> set:
    """``(function name, argument values)`` of every table and transmission application the
    encoding met, at the model's values: the points where the solver's choice satisfies the
    axioms."""
    from tlop.analysis.smt import z3_value

    terms = [t for apps in enc._table_apps.values() for _, t, _ in apps]
    terms += [t for _, t in enc._linear_apps]
    terms += [t for apps in enc._xmit_apps.values() for _, _, t in apps]
    out = set()
    for t in terms:
        try:
            args = tuple(z3_value(model.eval(t.arg(i), model_completion=True)) for i in range(t.num_args()))
        except Exception:  # noqa: BLE001 - an argument with no numeral value cannot match a read
            continue
        out.add((t.decl().name(), args))
    return out


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
            values: dict, mapping=None) -> Recheck:
    """Evaluate ``lhs`` and ``rhs`` at ``values`` (the counterexample's variables) with the
    interpreter, profile access answered by ``model`` and schedules evaluated with ``mapping``
    (see the module docstring); ``relation(a, b)`` is the claim's relation on floats."""
    prog = program if program is not None else ir.Program((), {}, {}, {}, {})
    if mapping is not None:
        from tlop.backends.binding import as_mapping

        mapping = as_mapping(mapping)
    it = _ModelInterpreter(prog, model, enc, mapping)
    env = {k: float(v) for k, v in values.items() if v is not None}
    for name, term in enc.vars.items():  # the point must be exactly the solver's
        inexact = _inexact(model.eval(term, model_completion=True))
        if inexact:
            return Recheck(None, None, None, False, f"{name} = {inexact} is not exactly a double")
    try:
        a = float(it.eval(lhs, env))
        b = float(it.eval(rhs, env))
    except (TlopError, ArithmeticError, ValueError, TypeError) as err:
        msg = err.diagnostics[0].message if isinstance(err, TlopError) and err.diagnostics else str(err)
        return Recheck(None, None, None, it.reads_profile, msg)
    if not (math.isfinite(a) and math.isfinite(b)):
        return Recheck(a, b, None, it.reads_profile, "a side is not finite there")
    fails = not relation(a, b)
    if it.unchosen is not None:
        return Recheck(a, b, None, it.reads_profile,
                       f"its evaluation reads a value the solver did not choose consistently with the model's "
                       f"axioms ({it.unchosen}), so it shows nothing either way (there lhs = {a:.10g}, "
                       f"rhs = {b:.10g})")
    return Recheck(a, b, fails, it.reads_profile)
