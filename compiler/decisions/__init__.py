"""Decisions for real MPI libraries: which of a library's own algorithms to run at each (P, m).

What it holds: the libraries' algorithm catalogues (:mod:`tlop.decisions.catalogue`: every
algorithm of Open MPI's coll/tuned and MPICH's collective selection, each tied to the stdlib
schedule that follows its source), the libraries' built-in decisions (what each runs by default),
the files the libraries load, the selection that ``tlop tune`` prints and writes, the audit of
the defaults, and the real-run check of a written file.

What it does not do: define any model or price anything itself — schedules are priced by the
engines of :mod:`tlop.backends` through :mod:`tlop.api`.
"""
