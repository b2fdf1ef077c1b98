"""Dataflow schedules (LogGP, pLogP) compiled against the interpreter, in one run (issue 24, item 4).

For every schedule of ``stdlib/loggp`` and ``stdlib/plogp`` (every algorithm declared ``over`` a
mapping, except those with a per-rank argument, which only the interpreter evaluates) at
P ∈ {32, 512, 4096}, ``m = 64 KiB``, ``sequential(8)``: the compiled evaluator's time per call
(the best of a few calls, after compiling: compile time is printed apart) and the interpreter's
(one call, :class:`tlop.backends.interp.Interpreter` as the API's interpreted path runs it), CPU
seconds of this process, and their ratio (goal: >= 100).  The two values are compared too
(relative difference, goal <= 1e-12).

An interpreter point predicted to take more than ``--limit`` seconds (60 by default) is skipped and
said so: the prediction scales the same schedule's measured time at the previous P by the ratio of
elements enumerated (P² for a ring, P log P for a tree: measured, not assumed — the JIT's own time
ratio between the two P is used as the element ratio).

Run: ``python bench/bench_dataflow_jit.py [--quick] [--limit S]`` (``--quick``: P ∈ {32, 512}).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np


def _cpu() -> float:
    return time.process_time()


def profiles():
    from tlop.runtime.profile import profile_from_dict

    def prof(name, tables, scalars):
        return profile_from_dict({
            "tlop_profile": 1, "name": name, "metadata": {"machine": "synthetic", "source": "bench/bench_dataflow_jit.py"},
            "interpolation": {"m_below": "linear", "m_beyond": "linear", "tau_beyond": "proportional",
                              "nonnegative": True, "out_of_grid": "allow"},
            "channels": {"shm": {"transmission": "shm", "description": "b"}, "net": {"transmission": "tcp", "description": "b"}},
            "bind": {}, "tables": tables, "scalars": scalars, "fits": {}})

    grid = [0.0, 1024.0, 65536.0, 1e9]
    gamma = {"gamma": {"*": {"m": grid, "values": [1e-6 + 2e-10 * x for x in grid]}}}
    loggp = prof("bench-loggp", gamma, {"L": {"*": 5e-6}, "o": {"*": 1e-6}, "g": {"*": 2e-6}, "G": {"*": 1e-9}})
    plogp = prof("bench-plogp", {**gamma, "g": {"*": {"m": grid, "values": [3e-6 + 1e-9 * x for x in grid]}},
                                 "os": {"*": {"m": grid, "values": [1e-6 + 2e-10 * x for x in grid]}},
                                 "or_": {"*": {"m": grid, "values": [1.2e-6 + 2e-10 * x for x in grid]}}},
                 {"L": {"*": 4e-6}})
    return {"loggp": loggp, "plogp": plogp}


def cases():
    import tlop

    out = []
    for model in ("loggp", "plogp"):
        for coll in ("bcast", "scatter", "gather", "reduce", "allgather", "allreduce", "alltoall", "p2p"):
            try:
                mod = tlop.load(f"{model}/{coll}")
            except Exception:  # noqa: BLE001 - plogp has no p2p module
                continue
            for name in mod.own_algorithms:
                alg = mod.program.algorithms[name]
                if alg.over is None or any(p.per_rank for p in alg.params):
                    continue
                out.append((model, coll, name, mod.program, alg))
    return out


def args_for(alg, P):
    from tlop.backends.jit.codegen import param_infos

    a = {}
    for i in param_infos(alg):
        if i.name == "P":
            a["P"] = float(P)
        elif i.name == "m":
            a["m"] = 65536.0
        elif i.name == "seg":
            a["seg"] = 8192.0
        elif i.name == "k":
            a["k"] = 2.0
        elif i.default is not None:
            a[i.name] = i.default
        elif i.type == "bytes":
            a[i.name] = 65536.0
        else:
            a[i.name] = 2.0
    return a


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--limit", type=float, default=60.0)
    opt = ap.parse_args(argv)
    import tlop
    from tlop.backends.binding import bind_arguments, bind_mapping
    from tlop.backends.interp import Interpreter
    from tlop.backends.jit import compile_algorithm

    Ps = (32, 512) if opt.quick else (32, 512, 4096)
    profs = profiles()
    mapping = tlop.sequential(8)
    print(f"{'schedule':34s} {'P':>5s} {'compile s':>9s} {'jit s':>10s} {'interp s':>10s} {'ratio':>8s} {'rel diff':>9s}")
    ratios, worst = [], 0.0
    for model, coll, name, program, alg in cases():
        prof = profs[model]
        t0 = _cpu()
        try:
            ev = compile_algorithm(program, name, prof, mapping=mapping)
        except Exception as err:  # noqa: BLE001 - say so and go on
            print(f"{model}/{coll} {name}: not compiled: {err}".splitlines()[0])
            continue
        tcomp = _cpu() - t0
        prev = None  # (P, jit s, interp s) at the previous P
        for P in Ps:
            a = args_for(alg, P)
            label = f"{model}/{coll} {name}"
            try:
                bind_arguments(program, alg, dict(a))
            except Exception:  # noqa: BLE001 - a P the algorithm does not take
                print(f"{label:34s} {P:5d}  (arguments refused)")
                continue
            best, v_jit = math.inf, None
            reps = 0
            t_all = _cpu()
            while reps < 3 or (_cpu() - t_all < 0.2 and reps < 50):
                t0 = _cpu()
                try:
                    v_jit = float(ev(**a))
                except Exception as err:  # noqa: BLE001
                    v_jit = f"error: {str(err).splitlines()[0]}"
                best = min(best, _cpu() - t0)
                reps += 1
                if isinstance(v_jit, str) or best > 5:
                    break
            predicted = None
            if prev is not None and prev[2] is not None:
                predicted = prev[2] * max(best / max(prev[1], 1e-9), (P / prev[0]))
            if predicted is not None and predicted > opt.limit:
                print(f"{label:34s} {P:5d} {tcomp:9.2f} {best:10.3g} {'skipped':>10s} {'':8s} {'':9s}"
                      f"  (interpreter predicted ≈ {predicted:.0f} s > {opt.limit:g} s)")
                prev = (P, best, None)
                continue
            env = bind_mapping(alg, dict(a), mapping)
            t0 = _cpu()
            try:
                with np.errstate(all="ignore"):
                    v_int = float(Interpreter(program, prof, mapping).eval(alg.body, env))
            except Exception as err:  # noqa: BLE001
                v_int = f"error: {str(err).splitlines()[0]}"
            ti = _cpu() - t0
            if isinstance(v_jit, float) and isinstance(v_int, float):
                rel = abs(v_jit - v_int) / max(abs(v_int), 1e-300) if v_jit != v_int else 0.0
                worst = max(worst, rel)
                ratio = ti / max(best, 1e-9)
                ratios.append(ratio)
                print(f"{label:34s} {P:5d} {tcomp:9.2f} {best:10.3g} {ti:10.3g} {ratio:8.0f} {rel:9.1e}")
            else:
                print(f"{label:34s} {P:5d}  jit: {v_jit}  interp: {v_int}")
            prev = (P, best, ti)
            tcomp = 0.0
        sys.stdout.flush()
    if ratios:
        r = np.array(ratios)
        print(f"\n{len(r)} points: interpreter / JIT ratio min {r.min():.0f}, median {np.median(r):.0f}, "
              f"max {r.max():.0f}; points below 100x: {int((r < 100).sum())}; worst relative difference {worst:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
