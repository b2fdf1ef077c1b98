"""Grid-aware broadcast (paper 001: Steffenel, *Adaptive Collective Communications on
Heterogeneous Networks*): network clustering, inter-cluster schedules, their Monte-Carlo study.

The package's modules, one job each:

* :mod:`.clustering` — Lowekamp's greedy clustering (001 Alg. 1) of a latency matrix with
  tolerance ρ, and 001 Table 4's GRID5000 matrix as an example input;
* :mod:`.problem` — an inter-cluster broadcast problem (g_ij(m), L_ij, T_j, root), the
  intra-cluster times T_j from the cheapest stdlib pLogP broadcast of each cluster, and the whole
  problem from pLogP profiles measured inside each subnet and on each link (001 §4.1.3);
* :mod:`.description` — a grid description file naming those profiles;
* :mod:`.heuristics` — the seven schedulers of 001 §5 (Flat tree, FEF, ECEF, ECEF-LA, ECEF-LAt,
  ECEF-LAT, BottomUp), each returning a schedule: who sends to whom, in which order;
* :mod:`.pricing` — a schedule's completion time under pLogP's dataflow rules (docs/semantics.rst)
  with pairwise g_ij and L_ij, and the schedule as a ``.tlop`` program (with a profile holding
  every link's parameters) that tlop's schedule layer prices the same;
* :mod:`.simulate` — the Monte-Carlo of 001 §6 / Table 3, vectorised over runs.
"""

from tlop.apps.gridcast.clustering import TABLE4, lowekamp, table4_latency_matrix
from tlop.apps.gridcast.heuristics import HEURISTICS, schedule
from tlop.apps.gridcast.pricing import price
from tlop.apps.gridcast.problem import Problem

__all__ = ["TABLE4", "lowekamp", "table4_latency_matrix", "HEURISTICS", "schedule", "price", "Problem"]
