"""The engine policy (``tlop.backends.engine_policy``) against both engines, in one run.

Part 1, the command line: for every schedule of the stdlib (every algorithm declared ``over`` a
mapping in ``stdlib/taulop``, and with ``--models taulop loggp plogp`` in ``stdlib/loggp`` and
``stdlib/plogp`` too, on the synthetic LogGP/pLogP profiles of ``bench/bench_dataflow_jit.py``
written to a temporary file; except those with per-rank arguments, which only the
interpreter evaluates) at P ∈ {64, 1024, 4096}, ``m=1MiB``, ``--mapping sequential(8)``:
``tlop eval`` with the default engine, with ``--engine jit`` and with ``--engine interp``, each a
whole process timed by the operating system's accounting of the finished child (CPU = user +
system), the minimum of 2 interleaved rounds.  The on-disk cache is warm (one untimed ``--engine jit`` run first): what a user who
has evaluated the algorithm before pays.  Printed per case: the engine the default chose, the
three times, and default / min(jit, interp) (goal: <= 1.5).  ``--interp-limit S``: the
interpreter is not run where the policy predicts it above S seconds (its time is then shown as
``>S``, and the ratio is against the JIT alone).

Part 2, the Python API: a loop of 1,000 ``h.evaluate(prof, mapping=tlop.sequential(8), P=…,
m=…)`` with a fresh mapping object each call, against obtaining the compiled evaluator
(``h.compile``, from the warm on-disk cache) and calling it 1,000 times, each in a fresh
process (CPU time of the measured part only, loading the module excluded).  Printed: both
totals and their ratio (goal: <= 2), and the steady per-call cost of the API once native
against the evaluator's (the API's own overhead).

Run: ``python bench/bench_engine_policy.py [--quick]`` (``--quick``: P ∈ {64, 1024} and a few
algorithms; the full run takes minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PS = (64, 1024, 4096)
ROUNDS = 2


def tlop_command() -> list:
    exe = Path(sys.executable).with_name("tlop")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from tlop.cli import main; sys.exit(main())"]


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list) -> tuple:
    """(CPU seconds, stdout, return code) of one whole process."""
    t0 = _child_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return _child_cpu() - t0, p.stdout or p.stderr, p.returncode


def schedules(quick: bool, models=("taulop",)) -> list:
    import tlop

    out = []
    for model in models:
        for f in sorted((ROOT / "stdlib" / model).glob("*.tlop")):
            if f.name == "platform.tlop":
                continue
            m = tlop.load(str(f))
            for name in m.own_algorithms:
                h = m[name]
                if h.ir.over is None or any(p.per_rank is not None for p in h.params):
                    continue
                args = {"m": "1MiB"}
                if any(p.name == "seg" for p in h.params):
                    args["seg"] = "64KiB"
                out.append((f"{model}/{f.stem}", name, args))
    if quick:
        out = [c for c in out if c[1] in ("pairwise", "binomial", "rda", "ring")][:4 * len(models)]
    return out


def profile_files(tmp: Path) -> dict:
    """``{model: --profile argument}``: metropolis for τ-Lop, the synthetic dataflow profiles
    (bench_dataflow_jit.py) saved as JSON files under ``tmp``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_dataflow_jit import profiles
    from tlop.runtime.profile import save_profile

    out = {"taulop": "metropolis"}
    for model, prof in profiles().items():
        path = tmp / f"{model}.json"
        save_profile(prof, path)
        out[model] = str(path)
    return out


def predicted_interp_s(mod: str, alg: str, P: int, extra: dict, profile: str) -> float:
    """What the policy predicts the interpreter costs at this point (seconds)."""
    import tlop
    from tlop.backends import engine_policy
    from tlop.backends.binding import bind_mapping

    h = tlop.load(mod)[alg]
    env = bind_mapping(h.ir, h.bind({"P": P, **extra}, strings=True), tlop.sequential(8))
    prof = tlop.load_profile(profile)
    work = engine_policy.predicted_work(h.module.program, h.ir, env, prof, tlop.sequential(8))
    return engine_policy.interp_seconds(work, 1, engine_policy.is_dataflow(h.module.program))


def part_cli(quick: bool, models=("taulop",), Ps=None, interp_limit: float = math.inf, only=None) -> list:
    import tempfile

    tl = tlop_command()
    ratios = []
    tmp = Path(tempfile.mkdtemp(prefix="tlop-bench-policy-"))
    profs = profile_files(tmp)
    print(f"{'case':40} {'default':>7} {'auto s':>8} {'jit s':>8} {'interp s':>9} {'ratio':>6}")
    for mod, alg, extra in schedules(quick, models):
        if only and alg not in only:
            continue
        for P in Ps or (PS[:2] if quick else PS):
            profile = profs[mod.split("/")[0]]
            base = tl + ["eval", mod, alg, f"P={P}"] + [f"{k}={v}" for k, v in extra.items()] + \
                ["--mapping", "sequential(8)", "--json", "--profile", profile]
            skip_interp = predicted_interp_s(mod, alg, P, extra, profile) > interp_limit
            _, _, rc = timed(base + ["--engine", "jit"])  # warm the on-disk cache (untimed)
            t_auto = t_jit = t_int = float("inf")
            for _ in range(ROUNDS):  # interleaved rounds, the minimum of each (the machine is shared)
                t, out, rc_auto = timed(base)
                t_auto = min(t_auto, t)
                t, _, rc_jit = timed(base + ["--engine", "jit"])
                t_jit = min(t_jit, t)
                if skip_interp:
                    rc_int = 0
                else:
                    t, err, rc_int = timed(base + ["--engine", "interp"])
                    t_int = min(t_int, t)
                if rc_auto or rc_int:
                    break
            if rc_auto or rc_int:
                print(f"{mod + ' ' + alg + ' P=' + str(P):40} refused by both engines (rc {rc_auto}, {rc_int}): "
                      f"{out.strip().splitlines()[-1][:60] if out.strip() else ''}")
                continue
            chosen = json.loads(out)["engine"]
            best = min(t_int, t_jit) if rc_jit == 0 else t_int
            ratio = t_auto / best
            ratios.append(ratio)
            shown = f"{'>' + format(interp_limit, 'g'):>9}" if skip_interp else f"{t_int:9.3f}"
            print(f"{mod + ' ' + alg + ' P=' + str(P):40} {chosen:>7} {t_auto:8.3f} "
                  f"{t_jit if rc_jit == 0 else float('nan'):8.3f} {shown} {ratio:6.2f}", flush=True)
    if ratios:
        print(f"CLI default / better engine: worst {max(ratios):.2f}, cases over 1.5: "
              f"{sum(r > 1.5 for r in ratios)} of {len(ratios)} (goal: none)")
    return ratios


_API_CHILD = r"""
import resource, sys, time, tlop
mod, alg, P, how = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
prof = tlop.load_profile("metropolis")
h = tlop.load(mod)[alg]
m = float(1 << 20)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
t0 = cpu()
if how == "api":
    for _ in range(1000):
        v = h.evaluate(prof, mapping=tlop.sequential(8), P=P, m=m)
else:
    ev = h.compile(prof, mapping=tlop.sequential(8))
    for _ in range(1000):
        v = ev(P=P, m=m)
total = cpu() - t0
# steady per-call cost (native by now on both paths when the policy compiled)
n = 20000 if P <= 1024 else 200
t1 = time.perf_counter()
if how == "api":
    for _ in range(n):
        h.evaluate(prof, mapping=tlop.sequential(8), P=P, m=m)
else:
    for _ in range(n):
        ev(P=P, m=m)
per = (time.perf_counter() - t1) / n
print(total, per, v)
"""


def part_api(quick: bool) -> list:
    cases = [("taulop/alltoall", "pairwise"), ("taulop/allgather", "ring"), ("taulop/bcast", "binomial")]
    ratios = []
    print(f"\n{'1,000 API calls, fresh sequential(8) each':44} {'api s':>8} {'compiled s':>10} {'ratio':>6} "
          f"{'api us/call':>11} {'ev us/call':>10}")
    for mod, alg in cases[:2] if quick else cases:
        for P in PS[:2] if quick else PS:
            subprocess.run([sys.executable, "-c", _API_CHILD, mod, alg, str(P), "ev"], capture_output=True)  # warm
            res = {}
            for how in ("api", "ev"):
                p = subprocess.run([sys.executable, "-c", _API_CHILD, mod, alg, str(P), how],
                                   capture_output=True, text=True)
                if p.returncode:
                    print(p.stderr[-2000:])
                    raise SystemExit(1)
                total, per, v = p.stdout.split()
                res[how] = (float(total), float(per), float(v))
            assert abs(res["api"][2] - res["ev"][2]) <= 1e-12 * abs(res["ev"][2]), (mod, alg, P, res)
            ratio = res["api"][0] / res["ev"][0]
            ratios.append(ratio)
            print(f"{mod + ' ' + alg + ' P=' + str(P):44} {res['api'][0]:8.3f} {res['ev'][0]:10.3f} {ratio:6.2f} "
                  f"{res['api'][1] * 1e6:11.2f} {res['ev'][1] * 1e6:10.2f}", flush=True)
    print(f"API loop / compiled evaluator: worst {max(ratios):.2f} (goal: <= 2)")
    return ratios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--part", choices=("cli", "api", "both"), default="both")
    ap.add_argument("--models", nargs="+", default=["taulop"], choices=("taulop", "loggp", "plogp"))
    ap.add_argument("--P", type=int, nargs="+", help="process counts (default: 64 1024 4096)")
    ap.add_argument("--interp-limit", type=float, default=math.inf)
    ap.add_argument("--only", nargs="+", help="only these algorithm names")
    a = ap.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if a.part in ("cli", "both"):
        part_cli(a.quick, tuple(a.models), a.P, a.interp_limit, a.only)
    if a.part in ("api", "both"):
        part_api(a.quick)


if __name__ == "__main__":
    main()
