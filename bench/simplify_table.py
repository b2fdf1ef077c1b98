"""Term count and interpreter time of every stdlib algorithm before and after simplification
(with translation validation).  Run: ``python bench/simplify_table.py [PROFILE]``.

Each algorithm is timed on PROFILE, or by default on the first bundled profile it applies to
(the τ-Lop clusters, or the measured localhost-example for pLogP and LogGP).  Arguments are
taken from each parameter's default or a small value by type; the interpreter time is the
median of repeated evaluations, and the ratio after/before is printed.  Each stdlib module is
listed once (algorithms imported from other modules are not repeated)."""

import statistics
import sys
import time

import tlop
from tlop import ir
from tlop.backends.interp import Interpreter
from tlop.frontend.loader import stdlib_modules
from tlop.analysis.prove import simplify_validated
from tlop.analysis.rules.catalogue import assumptions_text

VALUES = {"int": 16.0, "bytes": 65536.0, "time": 1e-6, "real": 2.0, "channel": 0.0}


def _time(interp, e, env, reps=20):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        interp.eval(e, env)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main(argv):
    from tlop.runtime.profile import bundled_profiles, load_profile

    fixed = load_profile(argv[0]) if argv else None
    candidates = [load_profile(n) for n in sorted(bundled_profiles(), key=lambda n: n != "metropolis")]
    print(f"{'algorithm':40} {'terms':>6} {'→':>1} {'after':>6} {'t_before':>10} {'t_after':>10} {'ratio':>6} "
          f"{'profile':18} validation")
    for name in stdlib_modules():
        module = tlop.load(name)
        program = module.program
        for alg in (program.algorithms[a] for a in module.own_algorithms):
            profile = fixed or next((p for p in candidates if module[alg.name].applies_to(p)), None)
            v = simplify_validated(program, alg)
            n0, n1 = ir.node_count(alg.body), ir.node_count(v.expr)
            row = f"{name + ':' + alg.name:40} {n0:6} → {n1:6}"
            if profile is not None:
                env = {p.name: (float(p.default.value) if isinstance(p.default, ir.Num) else VALUES.get(p.type, 1.0))
                       for p in alg.params}
                it = Interpreter(program, profile)
                try:
                    t0, t1 = _time(it, alg.body, env), _time(it, v.expr, env)
                    row += f" {t0 * 1e6:9.1f}µs {t1 * 1e6:9.1f}µs {t1 / t0:6.2f} {profile.name:18}"
                except tlop.TlopError as e:  # a table the profile lacks
                    row += f" (not evaluated: {str(e).splitlines()[0][:40]})"
            print(row, v.outcome.status, v.outcome.mode, assumptions_text(v.outcome.assumptions))


if __name__ == "__main__":
    main(sys.argv[1:])
