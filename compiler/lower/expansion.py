"""Expansions that lower IR toward what back ends evaluate.

What it does: re-exports the expansion of parallel compositions by the one τ-Lop rule — the pass
:class:`~tlop.ir.taulop.ExpandParComps` and :func:`~tlop.ir.taulop.expand_parcomp`, which the
interpreter, the JIT, the Z3 encoder and the simplifier consume — under the lowering layer.

What it does not do: define the rule (:mod:`tlop.ir.taulop`), or expand transmissions into a
profile's transfer tables (that reads a profile: :func:`tlop.analysis.closedform.expand_transmissions`).
"""

from tlop.ir.taulop import ExpandParComps, Expansion, expand_parcomp  # noqa: F401

__all__ = ["ExpandParComps", "Expansion", "expand_parcomp"]
