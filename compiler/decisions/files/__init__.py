"""The tuning files the libraries load, written from a selection (:mod:`tlop.decisions.rules`).

One module per format: :mod:`.openmpi_classic` (Open MPI's coll/tuned dynamic rules, classic
text), :mod:`.openmpi_json` (Open MPI 6.0's JSON rules), :mod:`.mpich_json` (MPICH's JSON
collective selection), :mod:`.nccl_csv` (NVIDIA's example NCCL tuner plugin's CSV).  Each has
``write(rules, …) -> str``.  They write only the rules they are given — a library algorithm the
caller did not price never appears — and each states in the file, where the format allows
comments, what wrote it and the caller's header lines (mapping, profile) and predicted costs.

What they do not do: choose, price, or run anything.
"""
