"""The catalogue's segmented pipelines, written as fill stages + one steady stage repeated + drain
stages (``sum u …: (if u == D then rep + 1 else 1) * (let t = … in stage {…})``), are exactly the
lock-step pipelines with one stage per t that they replace (kept in tests/data/coll_old/): the
same stages, each with the same sends and reductions in the same order, once the repetitions are
unfolded (as ``tlop explain`` and the real-MPI message tests unfold them); the same cost in τ-Lop
(interpreter and JIT) and in LogGP and pLogP (whose dataflow runs a repeated stage again and again).

The grid has P = 1, non-powers of two, m a multiple of seg and not, one segment (seg = 0, seg > m),
fewer segments than the tree is deep, and enough segments for a steady stage."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

OLD = Path(__file__).parent / "data" / "coll_old"

#: (collective, algorithm, the values of its radix/fan-out k; None: it takes none)
CASES = [
    ("bcast", "ompi_chain", (1, 3)),
    ("bcast", "ompi_pipeline", None),
    ("bcast", "ompi_binary_tree", None),
    ("bcast", "ompi_binomial", None),
    ("bcast", "ompi_knomial", (3,)),
    ("bcast", "mpich_tree_kary", (3,)),
    ("bcast", "ompi_split_binary_tree", None),
    ("reduce", "binomial", None),
    ("reduce", "ompi_pipeline", None),
    ("reduce", "ompi_chain", (1, 3)),
    ("reduce", "ompi_binary", None),
    ("reduce", "ompi_in_order_binary", None),
    ("allreduce", "ompi_segmented_ring", None),
    ("allreduce", "mpich_tree_knomial_1", (3,)),
]

#: (m, seg): one segment (seg 0; seg > m), 4 segments, 9 and 16 (m not a multiple of seg), 10 (a
#: multiple), 23 segments of 1 byte
SIZES = [(1000, 0), (1000, 4000), (1000, 300), (100, 12), (1000, 64), (640, 64), (23, 1)]
PS = (1, 2, 5, 13)
#: the sample the default run checks (the whole grid: -m slow)
QUICK_PS, QUICK_SIZES = (2, 13), {(1000, 0), (1000, 300), (100, 12), (1000, 40), (300, 9)}
FULL = [False, pytest.param(True, marks=pytest.mark.slow)]
#: the segmented ring's segments are per rank and phase: sizes that give it 1, 2, 3 and 7 phases
RING_SIZES = [(1000, 0), (1000, 40), (300, 9), (1000, 13), (1000, 9), (4100, 7)]


def _modules(coll: str, model: str):
    import tlop

    return tlop.load(str(OLD / f"{coll}.tlop"), model=model), tlop.load(f"coll/{coll}", model=model)


def _points(name: str, ks, full: bool):
    sizes = RING_SIZES if name == "ompi_segmented_ring" else SIZES
    for P, (m, seg), k in itertools.product(PS, sizes, ks or (None,)):
        if full or (P in QUICK_PS and (m, seg) in QUICK_SIZES):
            yield {"P": P, "m": m, "seg": seg, **({} if k is None else {"k": k})}


def _stages(h, point: dict, profile, mapping, unfold: bool):
    """The interpreter's cost of ``h`` at ``point`` and the stages it prices (every repetition
    unfolded when ``unfold``: each stage as often as it counts), each as a tuple of its sends
    (phase, src, dst, size, weight) and computations (phase, rank, cost) in enumeration order."""
    from tlop.analysis.stages import unfold_repeats
    from tlop.backends.binding import bind_mapping
    from tlop.backends.interp import Interpreter

    env = bind_mapping(h.ir, h.bind({k: str(v) for k, v in point.items()}, strings=True), mapping)
    seen = []
    body = unfold_repeats(h.ir.body) if unfold else h.ir.body
    cost = float(Interpreter(h.module.program, profile, mapping, stage_recorder=seen.append).eval(body, env))
    stages = [(tuple(zip(d.send_phase.tolist(), d.send_src.tolist(), d.send_dst.tolist(), d.send_size.tolist(),
                         d.send_weight.tolist())),
               tuple(zip(d.comp_phase.tolist(), d.comp_rank.tolist(), d.comp_cost.tolist()))) for d in seen]
    return cost, stages


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0) or a == b


@pytest.mark.parametrize("full", FULL, ids=["sample", "grid"])
@pytest.mark.parametrize("coll, name, ks", CASES, ids=[f"{c}:{n}" for c, n, _ in CASES])
def test_the_rewritten_pipeline_has_the_old_stages_and_cost_in_taulop(coll, name, ks, full):
    import tlop
    from tlop.backends.binding import as_mapping

    old, new = _modules(coll, "taulop")
    profile, mapping = tlop.load_profile("metropolis"), as_mapping("sequential(4)")
    repeated = 0
    for point in _points(name, ks, full):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want_cost, want = _stages(old[name], point, profile, mapping, unfold=False)
            _, got = _stages(new[name], point, profile, mapping, unfold=True)
            got_cost, priced = _stages(new[name], point, profile, mapping, unfold=False)
        assert got == want, f"{coll}:{name} at {point}: the stages differ"
        assert _close(got_cost, want_cost), (point, want_cost, got_cost)
        repeated += len(want) - len(priced)
    assert repeated > 0, "no point of the grid repeats a steady stage"


@pytest.mark.parametrize("full", FULL, ids=["sample", "grid"])
@pytest.mark.parametrize("model", ["loggp", "plogp"])
@pytest.mark.parametrize("coll, name, ks", CASES, ids=[f"{c}:{n}" for c, n, _ in CASES])
def test_the_rewritten_pipeline_has_the_old_cost_in_the_dataflow_models(coll, name, ks, model, full):
    import tlop
    from tlop.backends.binding import as_mapping

    old, new = _modules(coll, model)
    profile, mapping = tlop.load_profile("localhost-example"), as_mapping("sequential(4)")
    for point in _points(name, ks, full):
        if not full and point["seg"] in (0, 300):
            continue
        want = float(old[name].evaluate(profile, mapping=mapping, **point))
        got = float(new[name].evaluate(profile, mapping=mapping, **point))
        assert _close(got, want), (point, want, got)


@pytest.mark.parametrize("full", FULL, ids=["sample", "grid"])
@pytest.mark.parametrize("coll, name, ks", CASES, ids=[f"{c}:{n}" for c, n, _ in CASES])
def test_the_compiled_rewritten_pipeline_has_the_old_cost_at_scale(coll, name, ks, full):
    """The JIT (what ``tlop tune`` runs) on larger P and more segments, both formulations compiled."""
    import tlop
    from tlop.backends.binding import as_mapping

    old, new = _modules(coll, "taulop")
    profile, mapping = tlop.load_profile("metropolis"), as_mapping("sequential(nodes=4)")
    names = {p.name for p in new[name].params}
    rows = [(P, m, seg, k) for P, m, seg, k in itertools.product(
        (4, 24, 61, 128) if full else (61,), (1, 4097, 65536), (0, 1000, 8192), ks or (2,)) if not seg or m / seg <= 100]
    A = np.asarray(rows, dtype=float)
    args = {"P": A[:, 0], "m": A[:, 1], "seg": A[:, 2], "k": A[:, 3]}
    args = {k: v for k, v in args.items() if k in names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(old[name].compile(profile, mapping=mapping)(**args), dtype=float)
        got = np.asarray(new[name].compile(profile, mapping=mapping)(**args), dtype=float)
    assert np.all(np.isfinite(want)) and np.all(want > 0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
