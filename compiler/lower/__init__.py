"""Lowering passes: what turns checked IR into the IR the back ends evaluate.

The package sits between :mod:`tlop.ir` and :mod:`tlop.backends` (``tests/test_architecture.py``):
it imports the IR and its semantics (:mod:`tlop.ir.taulop`), never a back end or an analysis.

* :mod:`tlop.lower.closedform` — schedule → closed form: a stage of a recognised pattern becomes
  ordinary cost IR for a mapping kind, with its side conditions;
* :mod:`tlop.lower.schedules` — the lowered algorithm an engine compiles: ``if conditions then
  closed form else schedule`` when a closed form is derived, the schedule itself otherwise, and
  the reason when it is not (reported once, in debug output and by ``tlop explain``);
* :mod:`tlop.lower.expansion` — the expansions of parallel compositions (the τ-Lop rule,
  :class:`~tlop.ir.taulop.ExpandParComps`) and of ``‖`` factors into transfer tables.

What it does not do: simplify with the rewrite rules or prove anything (:mod:`tlop.analysis`),
evaluate (:mod:`tlop.backends`), or choose an engine.
"""
