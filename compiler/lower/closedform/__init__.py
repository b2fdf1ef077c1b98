"""Schedule → closed form (a lowering pass): the cost of a stage for symbolic ``P`` and ranks per node ``Q``.

What it does: :func:`derive` replaces every ``Stage`` of an algorithm's cost by an expression of
ordinary cost IR — transmissions ``W ‖ T[c](s)`` on the platform's channels, with the number of
transfers per contention group counted in closed form — for a mapping *kind*, ``sequential`` or
``round_robin``, with ``Q`` (ranks per node) a variable and ``P`` the algorithm's process count.
The ``sum``/``stages``/``let`` around the stages are kept (a stage that does not depend on its
stage variable then sums to ``(b − a + 1)·stage`` in the simplifier).  The result is typed
(:func:`tlop.ir.typecheck.annotate`) and holds no schedule node, so every engine — the JIT
included — evaluates it.  :func:`closed_form` is the small API the fast paths use.

Recognised stages (one ``par`` whose body is one ``send``, size and weight independent of the
``par`` variable; index expressions are normalised exactly as sums of ``c · x^k · 2^(linear)``
terms, ``<<`` included, so equal indices are recognised whatever their spelling):

``par p in 0 .. P−1: send p -> (p + d) % P : s``  (shift; ``d`` may depend on the stage variable)
    ``sequential(Q)``, with ``d' = d mod P``, ``r = d' mod Q``, ``q = d' div Q``: every node keeps
    ``[q = 0]·(Q − r) + [q = P/Q − 1]·r`` of its ``Q`` sends inside (the rest leave it, and as
    many enter it); ``round_robin(Q)`` (``P/Q`` nodes, ``p mod (P/Q)``): all ``Q`` inside when
    ``P/Q`` divides ``d``, else all cross.  For ``d = ±1`` (the ring) the cases are written out:
    ``Q = 1``, ``Q = P`` and ``1 < Q < P``.
binomial-tree pairs ``send (a·t + b) % P -> (a·t + b + δ) % P`` with ``a = 2δ``,
``where a·t + δ < P``, ``t in 0 .. h`` with ``(h + 1)·a = 2^S`` and ``S = ⌈log2 P⌉`` (MPICH's
binomial broadcast, ``taulop/bcast binomial``)
    ``sequential(Q)``, when ``Q`` is a power of two and ``b mod Q = 0``: a stage with
    ``δ < Q`` is ``Q/a`` shared-memory transfers per node, one with ``δ ≥ Q`` one network transfer
    per node.  ``round_robin(Q)``, when ``P/Q`` (the node count M) is a power of two, any root: a
    stage with ``δ ≥ M`` is ``⌈(P − δ)/a⌉`` shared-memory transfers in the root's node, one with
    ``δ < M`` is ``Q`` network transfers into (and out of) each of ``M/a`` nodes.

``par p in 0 .. P−1 [where p < (p xor d)]: send p -> p xor d : s``  (recursive doubling, ``d`` a
power of two, possibly depending on the stage variable)
    for ``P`` a power of two (a condition; then ``Q`` is one too): the partner shares the node
    when ``d < Q`` (``sequential``) or ``d ≥ P/Q`` (``round_robin``): ``Q`` transfers per node
    inside (``Q/2`` with the ``where``), else ``Q`` entering and leaving each node.  A ``let``
    bound to ``P − 2^⌊log2 P⌋`` (the fold of MPICH's recursive doubling for other P, as in
    ``taulop/allgather rda``) is 0 under that condition: it is substituted, the index and size
    expressions are folded (:func:`_peval`), and the fold's ``if r > 0 then stage … else 0``
    stages vanish.

Each channel's group size follows the platform's declared contention key (``node``/``either``
on a channel between nodes counts a transfer in both of its nodes' groups).  All members of a
group have the same size, so A2 is ``W ‖ T[c](s)`` with ``W`` the summed weights, and A3 the
``max`` across channels; a stage of size ``s ≤ 0`` costs 0 (the increment is dropped), written
``if s <= 0 then 0 else …`` and hoisted out of ``sum`` and ``let`` when it does not depend on
them.

Side conditions: ``Q ≥ 1`` and ``Q | P`` always (and the binomial's two above); they are returned
explicitly (:attr:`Derivation.conditions`).  :func:`closed_form` returns ``if conditions then
closed form else the schedule``, which is correct everywhere.

What it does not do: guess.  A stage that matches none of the patterns (several items, ``seq``,
computations, sizes that depend on the rank, layouts) gives no closed form and a reason
(:attr:`Derivation.reason`); such schedules are evaluated by enumeration.  It does not prove
the derivations: the tests check every closed form against enumeration for P ≤ 64 and Q ∈
{1, 2, 4, 8} on every bundled profile.

The derivation is split by job: :mod:`~tlop.lower.closedform.normal` (exact normal forms of
index expressions), :mod:`~tlop.lower.closedform.peval` (partial evaluation, substitution, guard
hoisting), :mod:`~tlop.lower.closedform.patterns` (the recognised stages and their counts, priced
by the one τ-Lop rule and contention table of :mod:`tlop.ir.taulop`) and
:mod:`~tlop.lower.closedform.derive` (:func:`derive`, :func:`closed_form`).  The simplifier and
the notation are not used here: :mod:`tlop.analysis.closedform` passes them in (``simplify``,
``describe``) for what users read.
"""

from tlop.lower.closedform.base import KINDS, Derivation, NoClosedForm, parse_kind  # noqa: F401
from tlop.lower.closedform.derive import closed_form, derive, typed  # noqa: F401
from tlop.lower.closedform.normal import poly  # noqa: F401

__all__ = ["Derivation", "NoClosedForm", "derive", "closed_form", "KINDS", "parse_kind", "poly", "typed"]
