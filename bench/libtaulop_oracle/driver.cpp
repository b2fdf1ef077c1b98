// Evaluate libtaulop collectives for rows read from stdin (generated-data tool, not part of tlop).
//
// Input, one row per line:  algorithm P Q mapping m root     (mapping: Sequential | RoundRobin)
// Output, one line per row: the library's predicted time in seconds (%.17g), or "nan" for an
// unknown algorithm.  argv[1] is the network channel file name (IB or TCP).  libtaulop reads its
// parameter folder from the macro PARAMS_FOLDER; generate.py defines it as getenv("TAULOP_PARAMS"),
// so one build serves every platform.  M = max(1, ceil(P/Q)), the
// op is OpType::DEFAULT (SUM): the conventions of /work/shared/reference/taulop-oracle-lusitania.csv.
#include "taulop_kernel.hpp"
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
using namespace std;

static Collective *make(const string &a) {
   if (a == "bcast_linear") return new BcastLinear();
   if (a == "bcast_binomial") return new BcastBinomial();
   if (a == "bcast_binomial_openmpi") return new BcastBinomialOpenMPI();
   if (a == "gather_binomial") return new GatherBinomial();
   if (a == "gatherv_binomial") return new GatherVBinomial();
   if (a == "scatter_binomial") return new ScatterBinomial();
   if (a == "allgather_ring") return new AllgatherRing();
   if (a == "allgather_rda") return new AllgatherRDA();
   if (a == "reduce_linear_openmpi") return new ReduceLinearOpenMPI();
   if (a == "reduce_binomial_openmpi") return new ReduceBinomialOpenMPI();
   if (a == "alltoall_basic") return new AlltoallBasic();
   if (a == "alltoall_linear") return new AlltoallLinear();
   if (a == "alltoall_pairwise") return new AlltoallPairwise();
   if (a == "allreduce_linear_openmpi") return new AllreduceLinearOpenMPI();
   if (a == "allreduce_nonoverlap_openmpi") return new AllreduceNonOverlapOpenMPI();
   if (a == "allreduce_rda") return new AllreduceRDA();
   if (a == "allreduce_ring") return new AllreduceRing();
   if (a == "allreduce_ring_segm") return new AllreduceRingSegm();
   if (a == "allreduce_rabenseifner") return new AllreduceRabenseifner();
   return nullptr;
}

int main(int argc, char *argv[]) {
   string net = argc > 1 ? argv[1] : "IB";
   TauLopParam::setInstance({"SHM", net});
   string alg, map;
   long P, Q, m, root;
   while (cin >> alg >> P >> Q >> map >> m >> root) {
      Collective *c = make(alg);
      if (c == nullptr) { printf("nan\n"); continue; }
      long M = std::max(1L, (P + Q - 1) / Q);
      Communicator *world = new Communicator((int)P);
      Mapping *mp = new Mapping((int)P, (int)M, (int)Q, map == "RoundRobin" ? Map::RoundRobin : Map::Sequential);
      world->map(mp);
      bool all = alg.rfind("allreduce", 0) == 0;
      bool reduce = alg.rfind("reduce", 0) == 0;
      CollParams cp = all ? CollParams((int)m, OpType::DEFAULT)
                    : reduce ? CollParams((int)m, (int)root, OpType::DEFAULT)
                    : CollParams((int)m, (int)root);
      if (alg == "gatherv_binomial") cp = CollParams(vector<int>((size_t)P, (int)m), (int)root);
      TauLopCost *tc = c->evaluate(world, cp);
      printf("%.17g\n", tc->getTime());
      fflush(stdout);
      delete tc;
   }
   return 0;
}
