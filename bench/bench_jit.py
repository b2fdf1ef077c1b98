#!/usr/bin/env python3
"""Benchmark of the JIT evaluators against the alternatives, all measured in one run.

Workloads (metropolis profile; 10**6 random points, P uniform in 2..256, m log-uniform in
1 B .. 8 MiB, so some sizes lie beyond the measured grid):

* ``binomial``  taulop/bcast ``binomial_bcast``: Σ_{i<⌈log2 P⌉} 2^i ‖ T^shm(m)
* ``ring``      taulop/allgather ``ring_allgather_node``: (P − 1)·(P ‖ T^shm(m))
* ``chain_seg`` plogp/bcast ``chain_segmented`` with seg = 8 KiB, on a pLogP profile derived
  from metropolis's InfiniBand tables (g(m) = o_ib(m) + L_ib(m, 1), L = 8 µs)

The floor row is ``np.add(P, m, out=out)``: one pass that reads the two input arrays and
writes the output, the memory traffic any batch evaluator needs (a cost function doing O(1)
work per point cannot beat it by much).

Implementations: the JIT batch path (1 thread and all cores); the reference interpreter
(vectorised over a subset and per point over a smaller subset, scaled to ns/point); hand-written
numpy-vectorised code; numba ``njit`` (if installed); and plain C compiled with
``gcc -O3 -march=native`` (if gcc is available) — the near-physical-limit baseline.  Every
implementation's output is checked against the JIT's.  Also printed: the scalar call overhead
and compile latency (cold, disk-cache hit).

    python bench/bench_jit.py            # full run (~1 min)
    python bench/bench_jit.py --quick    # 10**5 points, fewer repeats
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np

import tlop
from tlop.backends.jit import compile_algorithm
from tlop.backends.jit import evaluator as jit_evaluator
from tlop.runtime.profile import profile_from_dict

S_SEG = 8192.0


# ----------------------------------------------------------------------------- setup

def plogp_profile(met):
    g, o = met.table("L", "ib"), met.table("o", "ib")
    d = met.to_dict()
    d["name"] = "metropolis-plogp"
    d["tables"] = {"g": {"*": {"m": [float(x) for x in g.m],
                               "values": [float(a + b) for a, b in zip(g.values[:, 0], o.values)]}}}
    d["scalars"] = {"L": {"*": 8e-6}}
    return profile_from_dict(d, "bench")


def workloads(met):
    pl = plogp_profile(met)
    return [
        ("binomial", tlop.load("taulop/bcast"), "binomial_bcast", met, {}),
        ("ring", tlop.load("taulop/allgather"), "ring_allgather_node", met, {}),
        ("chain_seg", tlop.load("plogp/bcast"), "chain_segmented", pl, {"seg": S_SEG}),
    ]


def best(fn, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


# ----------------------------------------------------------------------------- numpy

def np_lookup1(t, m):
    from tlop.runtime.interpolation import lookup_1d
    return lookup_1d(t.m, t.values, m, t.policy)


def np_lookup2(t, m, tau):
    from tlop.runtime.interpolation import lookup_2d
    return lookup_2d(t.m, t.tau, t.values, m, tau, t.policy)


def numpy_impl(name, met, pl):
    o, L = met.table("o", "shm"), met.table("L", "shm")
    if name == "binomial":
        def f(P, m):
            stages = np.ceil(np.log2(P))
            out = np.zeros_like(m)
            om = np_lookup1(o, m)
            for i in range(int(stages.max())):
                live = i < stages
                out += np.where(live, om + 2 * np_lookup2(L, m, 2.0 ** i), 0.0)
            return out
        return f
    if name == "ring":
        return lambda P, m: (P - 1) * (np_lookup1(o, m) + 2 * np_lookup2(L, m, P))
    g = pl.table("g")
    Ls = pl.scalar("L")

    def chain(P, m):
        k = np.ceil(m / S_SEG)
        gs = float(np_lookup1(g, S_SEG))
        return (P - 1) * (gs + Ls) + gs * (k - 1)
    return chain


# ----------------------------------------------------------------------------- C

C_SOURCE = r"""
#include <math.h>
#include <stdint.h>
static inline long seg(const double* g, long n, double x) {
    long lo = 0, len = n;
    while (len > 0) { long h = len >> 1; if (!(g[lo + h] > x)) { lo += h + 1; len -= h + 1; } else len = h; }
    long i = lo - 1; if (i < 0) i = 0; if (i > n - 2) i = n - 2; return i;
}
static inline double lerp(double x, double x0, double x1, double v0, double v1) {
    return x == x1 ? v1 : v0 + (v1 - v0) * (x - x0) / (x1 - x0);
}
static inline double nn(double r) { return (r >= 0.0 || r != r) ? r : 0.0; }
/* block: [n_m, n_tau, m..., tau..., values...]; policy linear/linear/proportional/nonnegative */
static inline double lookup1(const double* b, double x) {
    long n = (long)b[0]; const double* g = b + 2; const double* v = g + n;
    if (n == 1) return nn(v[0]);
    long i = seg(g, n, x);
    return nn(lerp(x, g[i], g[i + 1], v[i], v[i + 1]));
}
static inline double lookup2(const double* b, double x, double t) {
    long n = (long)b[0], nt = (long)b[1]; const double* g = b + 2; const double* tg = g + n;
    const double* v = tg + nt;
    double tt = t > tg[0] ? t : tg[0]; if (tt > tg[nt - 1]) tt = tg[nt - 1];
    long i = seg(g, n, x), j = seg(tg, nt, tt);
    double a = lerp(x, g[i], g[i + 1], v[i * nt + j], v[(i + 1) * nt + j]);
    double c = lerp(x, g[i], g[i + 1], v[i * nt + j + 1], v[(i + 1) * nt + j + 1]);
    double r = lerp(tt, tg[j], tg[j + 1], a, c);
    if (t > tg[nt - 1]) r = r * t / tg[nt - 1];
    return nn(r);
}
void binomial(long n, const double* P, const double* m, const double* o, const double* L, double* out) {
    for (long k = 0; k < n; k++) {
        double acc = 0.0, hi = ceil(log2(P[k])) - 1.0, om = lookup1(o, m[k]);
        for (long i = 0; i <= (long)hi; i++) acc += om + 2.0 * lookup2(L, m[k], exp2((double)i));
        out[k] = acc;
    }
}
void ring(long n, const double* P, const double* m, const double* o, const double* L, double* out) {
    for (long k = 0; k < n; k++)
        out[k] = (P[k] - 1.0) * (lookup1(o, m[k]) + 2.0 * lookup2(L, m[k], P[k]));
}
void chain_seg(long n, const double* P, const double* m, const double* g, double Ls, double s, double* out) {
    for (long k = 0; k < n; k++) {
        double kk = ceil(m[k] / s), gs = lookup1(g, s);
        out[k] = (P[k] - 1.0) * (gs + Ls) + gs * (kk - 1.0);
    }
}
"""


def build_c(tmp):
    cc = shutil.which("gcc")
    if cc is None:
        return None, "gcc not found"
    src = os.path.join(tmp, "bench.c")
    lib = os.path.join(tmp, "bench.so")
    with open(src, "w") as f:
        f.write(C_SOURCE)
    r = subprocess.run([cc, "-O3", "-march=native", "-fPIC", "-shared", src, "-o", lib, "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    return ctypes.CDLL(lib), subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.split("\n")[0]


def c_impl(lib, name, blocks):
    P_ = ctypes.c_void_p
    if name in ("binomial", "ring"):
        fn = getattr(lib, name)
        fn.argtypes = [ctypes.c_long, P_, P_, P_, P_, P_]
        o, L = blocks["o"], blocks["L"]

        def f(P, m, out):
            fn(P.size, P.ctypes.data, m.ctypes.data, o.ctypes.data, L.ctypes.data, out.ctypes.data)
        return f
    fn = lib.chain_seg
    fn.argtypes = [ctypes.c_long, P_, P_, P_, ctypes.c_double, ctypes.c_double, P_]
    g, Ls = blocks["g"], blocks["Ls"]

    def f(P, m, out):
        fn(P.size, P.ctypes.data, m.ctypes.data, g.ctypes.data, Ls, S_SEG, out.ctypes.data)
    return f


def block(t):
    from tlop.backends.jit.tables import TableSlot
    return TableSlot(0, t.name, t.channel, t).block


# ----------------------------------------------------------------------------- numba

def numba_impls(blocks):
    try:
        import numba
    except ImportError:
        return None
    njit = numba.njit(cache=False, fastmath=False, error_model="numpy")

    @njit
    def seg(g, n, x):
        lo, ln = 0, n
        while ln > 0:
            h = ln >> 1
            if not (g[lo + h] > x):
                lo += h + 1
                ln -= h + 1
            else:
                ln = h
        i = lo - 1
        return max(0, min(i, n - 2))

    @njit
    def lerp(x, x0, x1, v0, v1):
        return v1 if x == x1 else v0 + (v1 - v0) * (x - x0) / (x1 - x0)

    @njit
    def nn(r):
        return r if (r >= 0.0 or r != r) else 0.0

    @njit
    def lookup1(b, x):
        n = int(b[0])
        g = b[2:2 + n]
        v = b[2 + n:]
        i = seg(g, n, x)
        return nn(lerp(x, g[i], g[i + 1], v[i], v[i + 1]))

    @njit
    def lookup2(b, x, t):
        n, nt = int(b[0]), int(b[1])
        g = b[2:2 + n]
        tg = b[2 + n:2 + n + nt]
        v = b[2 + n + nt:]
        tt = max(t, tg[0])
        tt = min(tt, tg[nt - 1])
        i, j = seg(g, n, x), seg(tg, nt, tt)
        a = lerp(x, g[i], g[i + 1], v[i * nt + j], v[(i + 1) * nt + j])
        c = lerp(x, g[i], g[i + 1], v[i * nt + j + 1], v[(i + 1) * nt + j + 1])
        r = lerp(tt, tg[j], tg[j + 1], a, c)
        if t > tg[nt - 1]:
            r = r * t / tg[nt - 1]
        return nn(r)

    @njit
    def binomial(P, m, o, L, out):
        for k in range(P.size):
            acc = 0.0
            om = lookup1(o, m[k])
            for i in range(int(np.ceil(np.log2(P[k])))):
                acc += om + 2.0 * lookup2(L, m[k], 2.0 ** i)
            out[k] = acc

    @njit
    def ring(P, m, o, L, out):
        for k in range(P.size):
            out[k] = (P[k] - 1.0) * (lookup1(o, m[k]) + 2.0 * lookup2(L, m[k], P[k]))

    @njit
    def chain(P, m, g, Ls, s, out):
        for k in range(P.size):
            kk = np.ceil(m[k] / s)
            gs = lookup1(g, s)
            out[k] = (P[k] - 1.0) * (gs + Ls) + gs * (kk - 1.0)

    return {
        "binomial": lambda P, m, out: binomial(P, m, blocks["o"], blocks["L"], out),
        "ring": lambda P, m, out: ring(P, m, blocks["o"], blocks["L"], out),
        "chain_seg": lambda P, m, out: chain(P, m, blocks["g"], blocks["Ls"], S_SEG, out),
    }


# ----------------------------------------------------------------------------- main

def machine() -> str:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import llvmlite
    from tlop.backends.jit.engine import engine
    e = engine()
    return (f"{cpu} ({os.cpu_count()} cores, LLVM target {e.cpu}), {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, numpy {np.__version__}, llvmlite {llvmlite.__version__}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10**5 points and fewer repeats")
    ap.add_argument("--points", type=int, default=None)
    args = ap.parse_args(argv)
    n = args.points or (100_000 if args.quick else 1_000_000)
    rep = 3 if args.quick else 5
    rng = np.random.default_rng(2024)
    P = rng.integers(2, 257, n).astype(np.float64)
    m = np.floor(np.exp(rng.uniform(0, np.log(8 * 2**20), n)))
    met = tlop.load_profile("metropolis")
    pl = plogp_profile(met)
    blocks = {"o": block(met.table("o", "shm")), "L": block(met.table("L", "shm")),
              "g": block(pl.table("g")), "Ls": float(pl.scalar("L"))}
    tmp = tempfile.mkdtemp(prefix="tlop-bench-")
    lib, cc_version = build_c(tmp)
    nb = numba_impls(blocks)
    print(f"machine: {machine()}")
    print(f"C compiler: {cc_version if lib is not None else 'unavailable: ' + str(cc_version)}")
    print(f"points: {n}, best of {rep}\n")

    # compile latency: cold (empty cache, nothing loaded) and disk-cache hit
    os.environ["TLOP_CACHE_DIR"] = os.path.join(tmp, "cache")
    from tlop.backends.jit.engine import engine
    from tlop.backends.jit.pywrap import pycall_address
    t = time.perf_counter()
    engine()
    t_engine = time.perf_counter() - t
    t = time.perf_counter()
    pycall_address()  # the scalar-call wrapper shared by all evaluators: compiled once (then cached)
    t_wrapper = time.perf_counter() - t
    evs = {}
    print("compile latency (after imports; once per process: LLVM engine start-up %.1f ms, shared "
          "scalar-call wrapper %.1f ms cold):" % (t_engine * 1e3, t_wrapper * 1e3))
    for name, mod, alg, prof, extra in workloads(met):
        t = time.perf_counter()
        ev = compile_algorithm(mod.program, alg, prof)
        cold = time.perf_counter() - t
        jit_evaluator._LOADED.pop(ev.compile_stats.key, None)
        t = time.perf_counter()
        ev2 = compile_algorithm(mod.program, alg, prof)
        hit = time.perf_counter() - t
        assert ev2.compile_stats.source == "disk"
        t = time.perf_counter()
        compile_algorithm(mod.program, alg, prof)
        proc = time.perf_counter() - t
        print(f"  {name:10s} cold {cold * 1e3:7.1f} ms   disk-cache hit {hit * 1e3:6.2f} ms   "
              f"in-process hit {proc * 1e3:6.3f} ms")
        evs[name] = (ev2, mod, alg, prof, extra)

    # scalar call overhead
    print("\nscalar call from Python (best of 5 x 200k calls):")
    ev = evs["ring"][0]

    def empty(**kw):
        return 0.0
    t_native = min(timeit.repeat(lambda: ev(P=16, m=1024.0), number=200_000, repeat=5)) / 200_000
    t_empty = min(timeit.repeat(lambda: empty(P=16, m=1024.0), number=200_000, repeat=5)) / 200_000
    t_slow = min(timeit.repeat(lambda: ev._call_slow(P=16, m=1024.0), number=20_000, repeat=3)) / 20_000
    h = evs["ring"][1][evs["ring"][2]]
    t_interp = min(timeit.repeat(lambda: h.evaluate(met, P=16, m=1024.0), number=2000, repeat=3)) / 2000
    print(f"  ev(P=16, m=1024.0), native wrapper     {t_native * 1e9:8.0f} ns  "
          f"(a Python function with **kwargs: {t_empty * 1e9:.0f} ns)")
    print(f"  ctypes slow path (binding + ctypes)    {t_slow * 1e9:8.0f} ns")
    print(f"  interpreter, one point                 {t_interp * 1e9:8.0f} ns")

    # throughput
    print("\nbatch throughput, ns per point (ratio to C):")
    rows = []
    for name, (ev, mod, alg, prof, extra) in evs.items():
        t = time.perf_counter()
        ref = ev.batch(P=P, m=m, **extra)
        first = time.perf_counter() - t
        variants = [v.stats for v in ev._primary.variants.values()]
        res = {}
        out = np.empty(n)
        res["jit batch (1 thread)"] = best(lambda: ev.batch(P=P, m=m, **extra), rep) / n
        ev.threads = os.cpu_count() or 1
        res[f"jit batch ({ev.threads} threads)"] = best(lambda: ev.batch(P=P, m=m, **extra), rep) / n
        ev.threads = 1
        checks = {}
        if lib is not None:
            f = c_impl(lib, name, blocks)
            res["C gcc -O3 -march=native"] = best(lambda: f(P, m, out), rep) / n
            checks["C"] = out.copy()
        if nb is not None:
            f = nb[name]
            f(P[:10], m[:10], out[:10])  # compile
            res["numba njit"] = best(lambda: f(P, m, out), rep) / n
            checks["numba"] = out.copy()
        f = numpy_impl(name, met, pl)
        res["numpy hand-vectorised"] = best(lambda: f(P, m), rep) / n
        checks["numpy"] = f(P, m)
        handle = mod[alg]
        res["interpreter, vectorised"] = best(lambda: handle.evaluate(prof, P=P, m=m, **extra), 1) / n
        checks["interp"] = handle.evaluate(prof, P=P, m=m, **extra)  # every point, not a prefix
        k2 = 300
        res["interpreter, per point"] = best(
            lambda: [handle.evaluate(prof, P=P[i], m=m[i], **extra) for i in range(k2)], 1) / k2
        res["floor: np.add(P, m, out)"] = best(lambda: np.add(P, m, out=out), rep) / n
        c = res.get("C gcc -O3 -march=native")
        print(f"  {name}:")
        for label, sec in res.items():
            ratio = f"{sec / c:7.2f}x" if c else "    n/a"
            print(f"    {label:28s} {sec * 1e9:10.1f} ns   {ratio}")
        j = res["jit batch (1 thread)"]
        print(f"    jit batch is {res['numpy hand-vectorised'] / j:.1f}x faster than numpy, "
              f"{res['interpreter, vectorised'] / j:.0f}x than the vectorised interpreter, "
              f"{res['interpreter, per point'] / j:.0f}x than the interpreter per point")
        if variants:
            print(f"    first batch {first * 1e3:.1f} ms, including the loop specialised for scalar "
                  f"arguments ({', '.join(f'{v.source} {v.seconds * 1e3:.1f} ms' for v in variants)})")
        for label, arr in checks.items():
            err = np.max(np.abs(arr - ref) / np.maximum(np.abs(ref), 1e-300))
            print(f"    agreement with jit: {label:7s} max rel diff {err:.1e}")
        rows.append((name, res))
    shutil.rmtree(tmp, ignore_errors=True)
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
