"""What ``tlop COMMAND --help`` says before and after the options: a one-line description and
examples for each subcommand.

What it does: holds the texts, and :func:`decorate` puts them on a subcommand's parser.
What it does not do: define options (each subcommand's parser does).
"""

from __future__ import annotations

import argparse

__all__ = ["HELP", "decorate"]

#: command -> (one-line description, example command lines)
HELP = {
    "check": ("Parse and check .tlop files (every .tlop file under a directory); exit status 1 when any "
              "has an error.",
              ["tlop check mycollectives.tlop", "tlop check models/ --json"]),
    "show": ("Print algorithms' costs in the papers' notation, simplified (or --raw), optionally proved "
             "equal to the original (--verify) or checked on a profile's tables.",
             ["tlop show taulop/bcast binomial_bcast", "tlop show taulop/allgather ring --mapping sequential",
              "tlop show plogp/bcast --latex", "tlop show taulop/bcast --source"]),
    "eval": ("Evaluate an algorithm at one point on a platform profile.",
             ["tlop eval taulop/bcast binomial_bcast P=16 m=1MiB",
              "tlop eval taulop/allgather ring P=32 m=64KiB --mapping 'sequential(8)' --json"]),
    "sweep": ("Evaluate an algorithm over a grid of points (a matrix for two swept parameters, rows "
              "otherwise, or CSV/JSON).",
              ["tlop sweep taulop/bcast binomial_bcast P=2..64:x2 m=1KiB..4MiB:x4",
               "tlop sweep taulop/scatter binomial_scatter P=8 m=1MiB seg=1KiB..64KiB:x2 --csv out.csv",
               "tlop sweep taulop/bcast binomial_bcast P=2..64:x2 m=1KiB..4MiB:x2 --plot bcast.svg"]),
    "best": ("Which algorithm is cheapest at each point of a grid, across one or more files; says why "
             "each algorithm left out is left out.",
             ["tlop best taulop/bcast P=2..64:x2 m=1KiB..4MiB:x4",
              "tlop best taulop/bcast P=2..64:x2 m=1KiB..4MiB:x2 --mapping 'sequential(8)' --plot selection.png",
              "tlop best taulop/bcast plogp/bcast P=8 m=1KiB,1MiB seg=8KiB --profile localhost-example",
              "tlop best postal/gpu s=8..4MiB:x4 n=1..1000 --only gpudirect --only three_step --crossover n "
              "--profile summit --plot summit.svg"]),
    "profiles": ("List the bundled platform profiles and the model families each can price; with NAME, "
                 "one profile in detail (channels, table grids, scalars, provenance).",
                 ["tlop profiles", "tlop profiles lusitania", "tlop profiles my-cluster.json --json"]),
    "configs": ("List the bundled process configurations (layout and data partitions) that --config NAME "
                "takes; with NAME, its nodes, ranks and partitions.",
                ["tlop configs", "tlop configs fig8", "tlop configs M10 --json"]),
    "explain-code": ("Explain a diagnostic code: what raises it, what to do, an example (as rustc --explain "
                     "and ruff rule do).",
                     ["tlop explain-code E021", "tlop explain-code 30"]),
    "help": ("Explain a diagnostic code (tlop help E021), or show a command's help (tlop help sweep).",
             ["tlop help E021", "tlop help sweep"]),
    "new": ("Write a starter .tlop file (a closed-form algorithm, the same as a schedule, a where "
            "condition) with the commands to try on it.",
            ["tlop new mybcast"]),
    "completion": ("Print a shell completion script (bash, zsh, fish): subcommands, options and their choices, stdlib "
                   "modules and their algorithms, profiles, configurations and files.",
                   ["tlop completion bash", "tlop completion zsh",
                    "tlop completion fish"]),
    "demo": ("Price several stdlib algorithms side by side on the default profile.",
             ["tlop demo", "tlop demo -P 4 16 --unit us"]),
    "convert-taulop": ("Convert libtaulop parameter files (SHM.txt, TCP.txt, IB.txt, gamma.txt) into a "
                       "profile.",
                       ["tlop convert-taulop params/metropolis --name metropolis --out metropolis.json"]),
    "partition": ("Show a configuration's data partition (each rank's rectangle of blocks), generate one "
                  "from a layout's speeds (Beaumont et al.'s column-based partition, or 1D slabs), or draw it "
                  "coloured by node.",
                  ["tlop partition --config M10 --partition summa-256 --plot m10.svg",
                   "tlop partition --config fig8",
                   "tlop partition --layout mine.json --generate 256 --gpu-speed 12 --out mine-summa.json"]),
    "rules": ("List the rewrite rules of the simplifier; --verify proves each with Z3.",
              ["tlop rules", "tlop rules --verify --family A1"]),
    "explain": ("Print the derivation of an algorithm's simplified cost, or (with NAME=VALUE arguments "
                "and --mapping) a schedule stage by stage at one point.",
                ["tlop explain taulop/bcast binomial_bcast",
                 "tlop explain taulop/allgather ring P=16 m=1KiB --mapping 'sequential(4)'"]),
    "prove": ("Prove or refute an inequality between costs under the model's axioms (Z3), per instance "
              "with --for.",
              ["tlop prove taulop/allgather 'rd_allgather(P, m, S) >= 2 * binomial_scatter(P, m, S)' "
               "--for P=4..64:x2",
               "tlop prove taulop/bcast 'binomial_bcast(P, m, shm) <= linear_bcast(P, m, shm)' --assume 'P >= 4'"]),
    "tune": ("Decide, per MPI library, which of its own algorithms to run for a collective at each (P, m): "
             "its catalogue priced over a mapping in one model (segment sizes and fan-outs searched), one table "
             "per library with cost, runner-up, margin and the library's default, and the files the libraries "
             "load (Open MPI classic and 6.0 JSON rules, MPICH JSON selection) naming exactly the table's choices.",
             ["tlop tune P=2..64:x2 m=1KiB..4MiB:x4 --collective allreduce --mapping 'sequential(8)' "
              "--openmpi ar.rules --mpich ar.json",
              "tlop tune P=4,8 m=1B..1MiB:x4 --collective all --profile lusitania --mapping 4x8 --json tables.json"]),
    "catalogue": ("List the MPI libraries' algorithms tlop knows (Open MPI 5.0 coll/tuned, MPICH 4.x), each with "
                  "its id, the stdlib schedule that follows its source, the parameters tune searches and its status.",
                  ["tlop catalogue --counts", "tlop catalogue --collective allreduce --why"]),
    "audit": ("Price each MPI library's built-in decision (Open MPI's fixed decision functions, MPICH's selection "
              "tree) against the library's best algorithm per (P, m): the cells where the default costs >= 1.1x "
              "the best, the gain of a tuned file, JSON and a heat map.",
              ["tlop audit P=2..32:x2 m=1B..4MiB:x4 --collective allreduce --mapping 'sequential(8)' --plot audit.svg",
               "tlop audit P=4..64:x2 m=1KiB..1MiB:x4 --collective all --mapping 4x8 --json audit.json"]),
    "validate": ("Run τ-Lop schedules for real with MPI on this machine, time them as tlop measure does, and "
                 "compare with their predictions on a profile measured here: µ = max(r, e)/min(r, e) per cell, "
                 "µ̄, a CSV, figures and one self-contained report.",
                 ["tlop validate taulop/bcast:binomial taulop/allgather:ring P=2,4 m=1KiB..4MiB:x4 "
                  "--profile here.json --out val",
                  "tlop validate taulop/alltoall:pairwise --profile here.json --out val --resume --format md"]),
    "tune-check": ("Run the MPI library's own collective with its default selection and with a tuning file "
                   "(alternating launches), and report per (P, m) the medians, file/default with its 95% interval, "
                   "the verdict, and whether the library ran the algorithm the file names.",
                   ["tlop tune-check bcast bcast.json P=2 m=1KiB..1MiB:x4 --out tc",
                    "tlop tune-check allreduce allreduce.rules P=2,4 m=8KiB..4MiB:x8 --mpi openmpi --rounds 5",
                    "tlop tune-check bcast bcast.json P=64 m=1KiB..4MiB:x4 --mpiexec srun --out tc-cluster"]),
    "measure": ("Measure a platform profile of this machine with MPI benchmarks (needs mpi4py).",
                ["tlop measure --np 4 --quick --out here.json"]),
    "grid-bcast": ("Grid-aware broadcast of paper 001: cluster a latency matrix (Lowekamp, rho), print "
                   "each heuristic's inter-cluster schedule, or compare the heuristics by Monte-Carlo.",
                   ["tlop grid-bcast cluster --rho 0.3",
                    "tlop grid-bcast schedule --m 4MiB --profile localhost-example",
                    "tlop grid-bcast schedule --m 4MiB --grid my-grid.json",
                    "tlop grid-bcast simulate --runs 10000 --clusters 2..50:+4 --plot grid.svg"]),
}


def decorate(name: str, kwargs: dict) -> dict:
    """The keyword arguments of ``add_parser`` with the description and the examples added."""
    entry = HELP.get(name)
    if entry is None:
        return kwargs
    description, examples = entry
    out = dict(kwargs)
    out.setdefault("description", description)
    out.setdefault("epilog", "examples:\n" + "\n".join(f"  {e}" for e in examples))
    out.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
    return out
