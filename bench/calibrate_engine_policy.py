"""Calibration data for the engine policy's constants (``tlop.backends.engine_policy``).

For every schedule of the stdlib's τ-Lop, LogGP and pLogP modules (``stdlib/<model>/*.tlop``,
algorithms ``over`` a mapping without per-rank arguments) at the given P (``sequential(8)``,
m = 1 MiB, seg = 64 KiB): the work units the policy predicts (:func:`predicted_work`), the
interpreter's CPU seconds for one evaluation (the engine the command line's ``auto`` uses:
counting reduction for τ-Lop, the dataflow interpreter for LogGP/pLogP) and the compiled
evaluator's (best of a few calls, after compiling), and each engine's seconds per work unit.
Cases whose interpreter time the current constants predict above ``--limit`` seconds are not
interpreted.  The τ-Lop profile is metropolis; the LogGP/pLogP profiles are the synthetic ones of
``bench/bench_dataflow_jit.py``.

Run: ``python bench/calibrate_engine_policy.py [--P 64 1024] [--model loggp] [--limit 20]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def cases(models):
    import tlop

    root = Path(tlop.__file__).resolve().parent.parent / "stdlib"
    out = []
    for model in models:
        for f in sorted((root / model).glob("*.tlop")):
            if f.name == "platform.tlop":
                continue
            mod = tlop.load(f"{model}/{f.stem}")
            for name in mod.own_algorithms:
                h = mod[name]
                if h.ir.over is None or any(p.per_rank is not None for p in h.params):
                    continue
                out.append((model, f.stem, h))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--P", type=int, nargs="+", default=[64, 1024])
    ap.add_argument("--model", nargs="+", default=["taulop", "loggp", "plogp"])
    ap.add_argument("--limit", type=float, default=20.0)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    import tlop
    from bench_dataflow_jit import profiles
    from tlop.backends import engine_policy as pol
    from tlop.backends.binding import bind_mapping
    from tlop.backends.interp import Interpreter

    profs = {"taulop": tlop.load_profile("metropolis"), **profiles()}
    mp = tlop.sequential(8)
    print(f"{'case':36} {'P':>5} {'work':>12} {'interp s':>9} {'jit s':>9} {'int ns/u':>9} {'jit ns/u':>9}")
    for model, coll, h in cases(a.model):
        prof = profs[model]
        try:
            ev = h.compile(prof, mapping=mp)
        except Exception as err:  # noqa: BLE001
            ev = None
            print(f"{model}/{coll} {h.name}: not compiled: {str(err).splitlines()[0][:60]}")
        for P in a.P:
            args = {"P": P, "m": float(1 << 20)}
            if any(p.name == "seg" for p in h.params):
                args["seg"] = float(64 << 10)
            try:
                env = bind_mapping(h.ir, h.bind(args), mp)
            except Exception:  # noqa: BLE001
                continue
            work = pol.predicted_work(h.module.program, h.ir, env, prof, mp)
            t_jit = math.nan
            if ev is not None:
                best = math.inf
                t_all = time.process_time()
                for _ in range(20):
                    t0 = time.process_time()
                    try:
                        ev(**args)
                    except Exception:  # noqa: BLE001
                        break
                    best = min(best, time.process_time() - t0)
                    if time.process_time() - t_all > 0.3:
                        break
                t_jit = best
            t_int = math.nan
            if pol.interp_seconds(work, 1) < a.limit or (t_jit < 0.05 and work < 1e6):
                t0 = time.process_time()
                try:
                    Interpreter(h.module.program, prof, mp, "count").eval(h.ir.body, env)
                    t_int = time.process_time() - t0
                except Exception:  # noqa: BLE001
                    pass
            print(f"{model + '/' + coll + ' ' + h.name:36} {P:5} {work:12.0f} {t_int:9.4f} {t_jit:9.5f} "
                  f"{t_int / work * 1e9 if work else math.nan:9.1f} {t_jit / work * 1e9 if work else math.nan:9.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
