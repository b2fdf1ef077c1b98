"""Applications of the compiler from the papers: programs that use tlop's models to answer a
question of their own, not analyses of the IR.

* :mod:`tlop.apps.gridcast` — paper 001's grid-aware broadcast (clustering, heuristics, pricing);
* :mod:`tlop.apps.plan` — execution plans of schedules (who sends what to whom, per stage and
  phase), which ``tlop validate`` runs with MPI;
* :mod:`tlop.apps.segsearch` — the segment size search of paper 004 (``tlop tune``);
* :mod:`tlop.apps.contention` — paper 004's contention ratio γ fitted to a measured all-to-all.

What it does not do: define the language, lower or evaluate IR, or analyse it (those layers come
before this one; ``tests/test_architecture.py``).  ``tlop.grid`` (the API's grid of points) is
not here: ``AlgorithmHandle.grid`` returns it, so it is part of the API.
"""
