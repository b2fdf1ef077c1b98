"""Build libtaulop from its source and record its predictions for reductions at off-grid sizes.

    python bench/libtaulop_oracle/generate.py LIBTAULOP_CHECKOUT --out tests/data/taulop-oracle-reductions.csv

This is a data generator, not part of tlop: it made ``tests/data/taulop-oracle-reductions.csv``
(the test suite reads that file; it does not build the library).  LIBTAULOP_CHECKOUT is a
work tree of hpc-unex/libtaulop (commit bbcb7e2 was used: ``git archive bbcb7e2 src include
params``).  For each bundled τ-Lop platform (metropolis, lusitania, ciemat) it compiles the
library's ``src/*.cpp`` unmodified with ``driver.cpp`` (``-DPARAMS_FOLDER=getenv("TAULOP_PARAMS")``: the
run names the platform's ``params/`` folder) and once more with one change, :data:`TIE_PATCH`: in
``TauLopConcurrent::evaluate`` a head whose own group costs exactly the round's minimum Δ finishes
that group's bytes, instead of advancing by the inverse table ``getBytes(Δ)``.  On tables that
are not monotone (and with the misplaced ``ceil`` of ``TauLopParam::getBytes(t, op)``,
``src/taulop_params.cpp:509``) that inverse is smaller than the bytes whose cost is Δ, so two
equal concurrent groups — e.g. the receivers' γ(m) of one reduce stage — leave a residue that
the library charges again (libtaulop-semantics.md §4, §6.1 step 4, §9 items 3-4).  The patched
column is the library with that one cause removed (``--check
/work/shared/reference/taulop-oracle-lusitania.csv`` first re-predicts that oracle's 9,504 SHM+IB
rows with the unmodified build: all reproduced to 1e-12, so the driver calls the library as the
oracle's generator did); ``bench/libtaulop_agreement.py`` attributes a
disagreement to "library tie residues" only where the stdlib agrees with it.

Rows: the reductions (reduce and allreduce variants), P ∈ {2, 4, 8, 16}, Q and mapping
(8, Sequential), (4, Sequential), (4, RoundRobin), (1, Sequential), SHM+IB, root 0, sizes
:data:`SIZES` (between grid points, where γ is interpolated).  Output columns: those of
``taulop-oracle-lusitania.csv`` plus ``predicted_seconds_tie_patch``.  Needs g++ (C++17).
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLATFORMS = ("metropolis", "lusitania", "ciemat")
ALGORITHMS = ("reduce_linear_openmpi", "reduce_binomial_openmpi", "allreduce_linear_openmpi",
              "allreduce_nonoverlap_openmpi", "allreduce_ring", "allreduce_ring_segm",
              "allreduce_rda", "allreduce_rabenseifner")
PS = (2, 4, 8, 16)
PLACEMENTS = ((8, "Sequential"), (4, "Sequential"), (4, "RoundRobin"), (1, "Sequential"))
SIZES = (3, 100, 1000, 1500, 3000, 5000, 10000, 100000, 1000000)

#: (file, old text, new text): the one change of the patched build
TIE_PATCH = (
    ("include/taulop_operator.hpp",
     "   int    getConcurrency  (const CostElement *c);",
     "   const CostElement *getGroup (const CostElement *c);\n"
     "   int    getConcurrency  (const CostElement *c);"),
    ("src/taulop_operator.cpp",
     "int TauLopOperator::getConcurrency (const CostElement *c) {",
     "const CostElement *TauLopOperator::getGroup (const CostElement *c) {\n"
     "   for (CostElement *g : this->l_real_conc) if (this->areConcurrent(g, c)) return g;\n"
     "   return nullptr;\n}\n\n"
     "int TauLopOperator::getConcurrency (const CostElement *c) {"),
    ("src/taulop_concurrent.cpp",
     "               overlap  = curr_m - C->getBytes(min_c->getCost(), tau_real);",
     "               const CostElement *grp = opr.getGroup(C);\n"
     "               if (grp != nullptr && grp->getCost() == min_c->getCost())\n"
     "                  overlap = curr_m - grp->getM();\n"
     "               else\n"
     "                  overlap  = curr_m - C->getBytes(min_c->getCost(), tau_real);"),
)


def build(src: Path, patched: bool, work: Path) -> Path:
    """Compile the library (patched or not) with the driver; the executable reads the parameter
    folder from ``$TAULOP_PARAMS``."""
    tree = work / ("patched" if patched else "plain")
    shutil.copytree(src, tree)
    if patched:
        for rel, old, new in TIE_PATCH:
            f = tree / rel
            text = f.read_text()
            if text.count(old) != 1:
                raise SystemExit(f"{f}: the patch's anchor text is not there exactly once")
            f.write_text(text.replace(old, new))
    (tree / "include" / "config.h").write_text("/* empty: autotools' config.h is not needed */\n")
    exe = tree / "driver"
    cmd = ["g++", "-O1", "-std=c++17", "-w", '-DPARAMS_FOLDER=getenv("TAULOP_PARAMS")', "-include", "cstdlib", "-I", str(tree / "include"),
           str(HERE / "driver.cpp"), *map(str, sorted((tree / "src").glob("*.cpp"))), "-o", str(exe)]
    subprocess.run(cmd, check=True)
    return exe


def rows():
    for alg in ALGORITHMS:
        for P in PS:
            for Q, mapping in PLACEMENTS:
                for m in SIZES:
                    yield {"algorithm": alg, "P": P, "Q": Q, "mapping": mapping, "m": m, "root": 0}


def note(r: dict) -> str:
    """The library's size guards and integer divisions, worded as in taulop-oracle-lusitania.csv."""
    P, m, alg = r["P"], r["m"], r["algorithm"]
    if alg in ("allreduce_rda", "allreduce_rabenseifner") and m // 4 < P:
        return "guard m/4<P: library returns empty cost (0)"
    if alg == "allreduce_ring_segm" and m < 4096 * P:
        return "guard m<4096*P: library returns empty cost (0)"
    if alg == "allreduce_ring" and m // P == 0:
        return "m/P==0 (integer division)"
    return ""


def check(exe: Path, params_root: Path, oracle: Path) -> int:
    """Re-predict the SHM+IB rows of an existing oracle file; print how many agree exactly."""
    with open(oracle, newline="") as f:
        old = [r for r in csv.DictReader(f) if r["channels"] == "SHM+IB"]
    todo = [{"algorithm": r["algorithm"], "P": r["P"], "Q": r["Q"], "mapping": r["mapping"],
             "m": r["m"], "root": max(0, int(r["root"]))} for r in old]
    bad = 0
    for platform in sorted({r["platform"] for r in old}):
        idx = [i for i, r in enumerate(old) if r["platform"] == platform]
        got = run(exe, params_root / platform, [todo[i] for i in idx])
        for i, g in zip(idx, got):
            if abs(g - float(old[i]["predicted_seconds"])) > 1e-12 * abs(g):
                bad += 1
    print(f"{oracle}: {len(old) - bad} of {len(old)} SHM+IB rows reproduced to 1e-12", file=sys.stderr)
    return bad


def run(exe: Path, params: Path, todo: list) -> list:
    text = "".join(f"{r['algorithm']} {r['P']} {r['Q']} {r['mapping']} {r['m']} {r['root']}\n" for r in todo)
    out = subprocess.run([str(exe), "IB"], input=text, capture_output=True, text=True, check=True,
                         cwd=exe.parent, env={"TAULOP_PARAMS": str(params.resolve())})
    vals = [line for line in out.stdout.splitlines() if line.strip() and not line.startswith(("ERROR", "WARNING"))]
    if len(vals) != len(todo):
        raise SystemExit(f"{exe}: {len(vals)} results for {len(todo)} rows:\n{out.stdout[-2000:]}")
    return [float(v) for v in vals]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("libtaulop", type=Path, help="a libtaulop work tree (src/, include/, params/)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--check", type=Path, metavar="ORACLE_CSV",
                    help="first re-predict this oracle file's SHM+IB rows with the unpatched build "
                         "(a check of the driver: taulop-oracle-lusitania.csv is reproduced exactly)")
    a = ap.parse_args(argv)
    todo = list(rows())
    out_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        exe_plain, exe_tied = build(a.libtaulop, False, Path(tmp)), build(a.libtaulop, True, Path(tmp))
        if a.check is not None and check(exe_plain, a.libtaulop / "params", a.check):
            return 1
        for platform in PLATFORMS:
            params = a.libtaulop / "params" / platform
            plain, tied = run(exe_plain, params, todo), run(exe_tied, params, todo)
            for r, p, t in zip(todo, plain, tied):
                M = max(1, -(-r["P"] // r["Q"]))
                out_rows.append({"platform": platform, "channels": "SHM+IB", **r, "predicted_seconds": repr(p),
                                 "M": M, "note": note(r), "predicted_seconds_tie_patch": repr(t)})
            print(f"{platform}: {len(todo)} rows", file=sys.stderr)
    cols = ["platform", "channels", "algorithm", "P", "Q", "mapping", "m", "root", "predicted_seconds",
            "M", "note", "predicted_seconds_tie_patch"]
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(out_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
