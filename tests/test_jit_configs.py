"""The JIT on configuration kernels (paper 000's SUMMA and 2D wave, τ-Lop and HLogGP): native code
that reads ``partition.x[p]`` from the evaluator's data agrees with the interpreter (the oracle,
its sorting reduction) on the bundled configurations and every τ-Lop profile, on random small
configurations, and in its errors; one object serves every configuration of an algorithm."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tlop
from tlop.backends.jit import compile_algorithm
from tlop.runtime.configs import Configuration, load_config
from tlop.runtime.diagnostics import TlopError

from _jit_helpers import agree, interp_point, jit_point
from conftest import taulop_profiles

PROFILES = {n: tlop.load_profile(n) for n in sorted(taulop_profiles())}
SUMMA = tlop.load("kernels/summa")
WAVE = tlop.load("kernels/wave2d")
#: (module, algorithm, the partition's kernel, arguments besides P)
KERNELS = [
    (SUMMA, "summa_banded", "summa", {"b": 8192.0}),
    (SUMMA, "summa_hloggp", "summa", {"b": 8192.0}),
    (WAVE, "wave2d_step", "wave2d", {"e": 256.0}),
    (WAVE, "wave2d_hloggp", "wave2d", {"e": 256.0, "T": 3.0}),
]
#: bundled configurations (name, N of the partition; None: the configuration's only one)
CONFIGS = [("fig8", None), ("fig9", None), ("M1", 128), ("M3", 256), ("M4", 128), ("M6", 128)]


def _compare(module, name, profile, cfg, args):
    alg = module.program.algorithms[name]
    ev = compile_algorithm(module.program, name, PROFILES[profile], mapping=cfg)
    args = {"P": float(cfg.P), **args}
    want = interp_point(module.program, alg, PROFILES[profile], args, cfg)
    got = jit_point(ev, args)
    assert not isinstance(want, TlopError), want
    assert not isinstance(got, TlopError), got
    assert agree(got, want), (name, profile, got, want)
    return got


@pytest.mark.parametrize("config,N", CONFIGS, ids=[c for c, _ in CONFIGS])
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_kernels_agree_with_the_interpreter_on_bundled_configurations(config, N, profile):
    base = load_config(config)
    for module, name, kernel, args in KERNELS:
        _compare(module, name, profile, base.select_partition(kernel, N), args)


def test_the_largest_table1_layout_agrees():
    """M16 (P = 47), N = 256: the case the 1 ms target is about (bench/bench_kernels.py)."""
    base = load_config("M16")
    for module, name, kernel, args in KERNELS:
        _compare(module, name, "metropolis", base.select_partition(kernel, 256), args)


def test_summa_per_iteration_and_its_steps_agree():
    """``summa`` (one stage per k, eq. 11 as written) and single iterations, fig8."""
    cfg = load_config("fig8").select_partition("summa")
    total = _compare(SUMMA, "summa", "metropolis", cfg, {"b": 8192.0})
    assert total == pytest.approx(_compare(SUMMA, "summa_banded", "metropolis", cfg, {"b": 8192.0}), rel=1e-12)
    for k in (0, 80, 123, 124, 221, 255):
        _compare(SUMMA, "summa_step", "lusitania", cfg, {"b": 8192.0, "k": float(k)})


def _random_configuration(speeds, N, M, seed, slab):
    from tlop.runtime.partition import column_partition, slab_partition

    node = tuple(int(v) for v in np.random.default_rng(seed).integers(0, M, len(speeds)))
    part = (slab_partition if slab else column_partition)(speeds, N)
    return Configuration(node=node, source="<random>", partition=part)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(speeds=st.lists(st.floats(0.5, 8.0), min_size=1, max_size=9), N=st.integers(9, 24), M=st.integers(1, 4),
       seed=st.integers(0, 10 ** 6), slab=st.booleans(), profile=st.sampled_from(sorted(PROFILES)),
       b=st.sampled_from([1.0, 8.0, 8192.0, 1 << 20]))
def test_kernels_agree_on_random_configurations(speeds, N, M, seed, slab, profile, b):
    cfg = _random_configuration(speeds, N, M, seed, slab)
    for module, name, _, args in KERNELS:
        args = {k: (b if k in ("b", "e") else v) for k, v in args.items()}
        _compare(module, name, profile, cfg, args)
    _compare(SUMMA, "summa", profile, cfg, {"b": b})


def test_one_object_serves_every_configuration():
    """The code depends on which fields the algorithm reads, not on their values: a second
    configuration reuses the first one's object and still gets its own cost."""
    a = load_config("M2").select_partition("summa", 128)
    c = load_config("M5").select_partition("summa", 256)
    prog = SUMMA.program
    ev_a = compile_algorithm(prog, "summa_hloggp", PROFILES["metropolis"], mapping=a)
    ev_c = compile_algorithm(prog, "summa_hloggp", PROFILES["metropolis"], mapping=c)
    assert ev_c.compile_stats.key == ev_a.compile_stats.key
    assert ev_c.compile_stats.source == "process"
    ra, rc = ev_a(P=a.P, b=8192.0), ev_c(P=c.P, b=8192.0)
    assert ra != rc
    assert agree(ra, float(SUMMA["summa_hloggp"].evaluate("metropolis", P=a.P, b=8192.0, mapping=a)))
    assert agree(rc, float(SUMMA["summa_hloggp"].evaluate("metropolis", P=c.P, b=8192.0, mapping=c)))
    # the batch path: one point per block size
    bs = np.array([1024.0, 8192.0, 65536.0])
    assert [agree(x, ev_c(P=c.P, b=float(v))) for x, v in zip(ev_c.batch(P=c.P, b=bs), bs)] == [True] * 3


READS = tlop.loads('''import "kernels/platform.tlop"
config partition { N: int, x: int[P], y: int[P], w: int[P], h: int[P] }
config layout { node: int[P], cores: int[P], gpu: int[P], type: int[P] }
algorithm read_x(P: int >= 1, i: int) over mapping = partition.x[i] * 1s + partition.N * 1ms
algorithm read_all(P: int >= 1, i: int) over mapping =
    (layout.cores[i] + layout.gpu[i] + layout.type[i] + layout.node[i]) * 1s
    + (sum p in 0 .. P - 1: partition.w[p] * partition.h[p] + partition.y[p]) * 1us
''', "reads.tlop")


@pytest.mark.parametrize("mapping", ["fig8 with a partition", "fig8 without one", "sequential(2)"])
@pytest.mark.parametrize("name,i", [("read_x", 0), ("read_x", 5), ("read_x", 6), ("read_x", -1),
                                    ("read_x", 1 << 40), ("read_all", 3)])
def test_reads_and_their_errors_agree(mapping, name, i):
    """Values, a missing configuration or partition, an index outside 0 … P−1: the JIT says what
    the interpreter says (the evaluator re-runs it on a failing point)."""
    from tlop.backends.binding import as_mapping

    cfg = {"fig8 with a partition": load_config("fig8").select_partition("summa"),
           "fig8 without one": load_config("fig8")}.get(mapping) or as_mapping(mapping)
    alg = READS.program.algorithms[name]
    ev = compile_algorithm(READS.program, name, PROFILES["metropolis"], mapping=cfg)
    args = {"P": 6.0, "i": float(i)}
    want = interp_point(READS.program, alg, PROFILES["metropolis"], args, cfg)
    got = jit_point(ev, args)
    if isinstance(want, TlopError):
        assert isinstance(got, TlopError), (got, want)
        assert str(got) == str(want)
        with pytest.raises(TlopError) as err:
            ev.batch(P=6.0, i=np.array([0.0, float(i)]))
        assert str(want).splitlines()[0].split(": error")[1] in str(err.value)
    else:
        assert not isinstance(got, TlopError), got
        assert agree(got, want)
        assert mapping == "fig8 with a partition"
        assert math.isfinite(got)
