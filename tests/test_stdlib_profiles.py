"""Every stdlib algorithm evaluates on every bundled profile it applies to."""

import math

import pytest

import tlop
from tlop.frontend.loader import stdlib_modules
from tlop.runtime.profile import bundled_profiles

PROFILES = sorted(bundled_profiles())
SAMPLE = {"P": 8, "Q": 4, "m": 65536, "counts": [1024, 65536, 0, 4096, 7, 65536, 1, 2], "S": 8192, "s": 8192, "seg": 8192, "n": 10, "N": 4, "G": 4, "C": 6, "ppn": 6, "c": "shm", "b": 1024, "gamma": 8, "l": 5e-5, "W": 1.25e7, "k": 3, "cap": 1}
#: helper schedules of stdlib/coll that are parts of library algorithms, not algorithms themselves
#: (a fold that moves nothing when P is a power of two costs 0 s)
PARTS = {("coll/reduce_scatter_block", "rs_fold_in"), ("coll/reduce_scatter", "rs_fold_in")}
CASES = [(mod, alg) for mod in stdlib_modules() for alg in tlop.load(mod).own_algorithms]


def test_the_three_clusters_are_bundled():
    assert {"metropolis", "lusitania", "ciemat"} <= set(PROFILES)
    assert tlop.default_profile().name == "metropolis"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("mod,alg", CASES, ids=[f"{m}:{a}" for m, a in CASES])
def test_evaluates(mod, alg, profile):
    handle = tlop.load(mod)[alg]
    prof = tlop.load_profile(profile)
    if not handle.applies_to(prof):
        missing = handle.requirements()
        assert not (missing["tables"] <= set(prof.table_names())
                    and missing["scalars"] <= set(prof.scalar_names())), "applies_to is wrong"
        return
    from tlop import ir
    if any(isinstance(n, ir.ConfigRef) for n in ir.walk_unique(handle.ir.body)):
        return  # reads a configuration (--config): tests/test_configs.py
    args = {p.name: SAMPLE[p.name] for p in handle.params if p.default is None}
    mapping = tlop.sequential(4) if handle.over else None
    value = handle.evaluate(prof, mapping=mapping, invalid="nan", **args)
    if math.isnan(value) and "P" in args:  # refused by its where clause at P = 8 (two_proc: P = 2 only)
        value = handle.evaluate(prof, mapping=mapping, **{**args, "P": 2})
    assert math.isfinite(value) and (value >= 0 if (mod, alg) in PARTS else value > 0)


def test_every_algorithm_applies_to_some_bundled_profile():
    """τ-Lop algorithms apply to every τ-Lop profile (one with an L table: not the postal summit
    and lassen); pLogP and LogGP to the measured localhost-example; postal ones to summit and lassen."""
    taulop_profiles = [p for p in PROFILES if tlop.load_profile(p).has_table("L", "shm")]
    assert set(PROFILES) - set(taulop_profiles) == {"summit", "lassen"}
    for mod, alg in CASES:
        h = tlop.load(mod)[alg]
        if mod.startswith("taulop/"):
            # reductions read the γ table, which the measured localhost-example does not have
            needs_gamma = "gamma" in h.requirements()["tables"]
            assert all(h.applies_to(p) for p in taulop_profiles
                       if not needs_gamma or tlop.load_profile(p).has_table("gamma")), (mod, alg)
        if mod == "kernels/hloggp":
            # HLogGP per pair of node types: a profile's hloggp section (the shipped example)
            assert h.applies_to(tlop.load_profile("examples/fermi-hloggp")), (mod, alg)
            assert not any(h.applies_to(p) for p in PROFILES), (mod, alg)
            continue
        if mod.startswith(("loggp/", "plogp/")) and "gamma" in h.requirements()["tables"]:
            # a LogGP/pLogP reduction: the measured localhost-example has the model's parameters
            # and its own machine's γ (tlop measure --bench gamma)
            assert h.applies_to("localhost-example"), (mod, alg)
            continue
        assert any(h.applies_to(p) for p in PROFILES), (mod, alg)
