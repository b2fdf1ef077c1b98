"""Lowering passes: what turns checked IR into the IR the back ends evaluate.

The package sits between :mod:`tlop.ir` and :mod:`tlop.backends` (``tests/test_architecture.py``):
it imports the IR and its semantics (:mod:`tlop.ir.taulop`), never a back end or an analysis.

* :mod:`tlop.lower.closedform` — schedule → closed form: a stage of a recognised pattern becomes
  ordinary cost IR for a mapping kind, with its side conditions;
* :mod:`tlop.lower.schedules` — the lowered algorithm an engine compiles: ``if conditions then
  closed form else schedule`` when a closed form is derived, the schedule itself otherwise, and
  the reason when it is not (logged once at DEBUG, kept on the JIT's ``Evaluator.lowering``).

The expansion of parallel compositions by the τ-Lop rule stays with the rule
(:class:`tlop.ir.taulop.ExpandParComps`); the expansion of transmissions into a profile's transfer
tables reads a profile and stays an analysis (:func:`tlop.analysis.closedform.expand_transmissions`).

What it does not do: simplify with the rewrite rules or prove anything (:mod:`tlop.analysis`),
evaluate (:mod:`tlop.backends`), or choose an engine.
"""
