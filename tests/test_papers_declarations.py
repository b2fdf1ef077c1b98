"""Issue 11's rule for the stdlib of papers 002 (LogGPH), 003 (postal) and 004 (all-to-all
bounds): every declaration cites its source in its doc comment, and every algorithm and function
has a formula test against an independent numpy computation — listed here, so that a new
declaration without one fails — plus the direct tests of the functions (``def``) and of LogGPH's
send functions, which the other files only reach through the algorithms that use them."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import tlop
from conftest import synthetic_profile
from tlop.runtime.profile import load_profile

from _tables_003 import MACHINES, SIZES, THR, T1, WHERE

HERE = Path(__file__).parent

#: the stdlib files of the three papers, and which of their declarations belong to them (the
#: schedules basic/linear/pairwise of plogp/alltoall are the schedule layer's, not 004's)
FILES = {"postal/platform": None, "postal/p2p": None, "postal/gpu": None, "postal/alltoall": None,
         "loggph/platform": None, "loggph/allgather": None,
         "plogp/alltoall": {"alltoall_upper", "alltoall_lower", "alltoall", "contention_factor"}}

#: every algorithm and function -> the test (file::name) that checks it against numpy
FORMULA_TESTS = {
    "postal/platform": {"alpha": "test_papers_declarations.py::test_postal_protocol_switching_functions",
                        "beta": "test_papers_declarations.py::test_postal_protocol_switching_functions"},
    "postal/p2p": {"postal": "test_postal_003.py::test_postal_with_protocol_switching",
                   "postal_short": "test_postal_003.py::test_postal_with_a_forced_protocol",
                   "postal_eager": "test_postal_003.py::test_postal_with_a_forced_protocol",
                   "postal_rend": "test_postal_003.py::test_postal_with_a_forced_protocol",
                   "max_rate": "test_postal_003.py::test_max_rate_and_eq3",
                   "max_rate_n": "test_postal_003.py::test_max_rate_and_eq3",
                   "memcpy": "test_postal_003.py::test_memcpy"},
    "postal/gpu": {a: "test_postal_003.py::test_gpudirect_and_three_step"
                   for a in ("gpudirect", "three_step", "three_step_all_cores")},
    "postal/alltoall": {**{a: "test_postal_003.py::test_alltoall_strategies"
                           for a in ("cuda_aware_alltoall", "three_step_alltoall", "extra_msg_alltoall",
                                     "dup_devptr_alltoall", "extra_msg_alltoallv", "dup_devptr_alltoallv")},
                        **{f: "test_papers_declarations.py::test_postal_alltoall_functions"
                           for f in ("total", "split_exchange", "spread_messages")}},
    "loggph/platform": {f: "test_papers_declarations.py::test_loggph_send_functions"
                        for f in ("p2p", "send_overhead", "send_gap", "delivery", "recv_overhead")},
    "loggph/allgather": {"ring": "test_loggph_002.py::test_ring_schedule_under_both_mappings",
                         "ring_sequential": "test_loggph_002.py::test_002_closed_forms",
                         "ring_round_robin": "test_loggph_002.py::test_002_closed_forms"},
    "plogp/alltoall": {"alltoall_upper": "test_plogp_alltoall_004.py::test_bounds_and_prediction_equal_table_3",
                       "alltoall_lower": "test_plogp_alltoall_004.py::test_bounds_and_prediction_equal_table_3",
                       "alltoall": "test_plogp_alltoall_004.py::test_bounds_and_prediction_equal_table_3",
                       "contention_factor": "test_plogp_alltoall_004.py::test_contention_factor"},
}

#: a citation: one of the project's papers (001 … 004), with a section, equation or table
CITATION = re.compile(r"\b00[1-4]\b")


def declarations(module):
    """``[(kind, name, doc)]`` of the declarations written in the stdlib file ``module``."""
    root = Path(tlop.__file__).resolve().parent.parent / "stdlib" / f"{module}.tlop"
    for lm in tlop.load(module).elaborated.modules:
        if Path(lm.path).resolve() == root.resolve():
            wanted = FILES[module]
            return [(type(d).__name__, d.name, " ".join(d.docs)) for d in lm.module.decls
                    if type(d).__name__ not in ("ModelDecl", "ImportDecl") and (wanted is None or d.name in wanted)]
    raise AssertionError(f"{module} not found")


@pytest.mark.parametrize("module", FILES)
def test_every_declaration_cites_its_source(module):
    decls = declarations(module)
    assert decls
    missing = [name for _, name, doc in decls if not CITATION.search(doc)]
    assert not missing, f"{module}: no citation of a paper in the doc comment of {missing}"


@pytest.mark.parametrize("module", FILES)
def test_every_algorithm_and_function_has_a_formula_test(module):
    computed = {name for kind, name, _ in declarations(module) if kind in ("AlgorithmDecl", "DefDecl")}
    assert computed == set(FORMULA_TESTS[module]), f"{module}: list the formula test of each declaration"
    for name, where in FORMULA_TESTS[module].items():
        path, test = where.split("::")
        tree = ast.parse((HERE / path).read_text())
        assert test in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, (name, where)
        assert re.search(rf"\b{name}\b", (HERE / path).read_text()), (name, where)


# ------------------------------------------------------------------ the functions, directly

def wrapper(imports, body, params):
    return tlop.loads(f'import "{imports}"\nalgorithm w({params}) = {body}\n')["w"]


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("path", ["cpu_on_socket", "cpu_on_node", "cpu_off_node", "gpu_on_socket",
                                  "gpu_on_node", "gpu_off_node"])
def test_postal_protocol_switching_functions(machine, path):
    """alpha(c, s) and beta(c, s): short up to short_max, eager up to eager_max, rendezvous beyond
    (003 Table I values typed again in _tables_003, thresholds as the profiles state)."""
    prof = load_profile(machine)
    dev, where = path.split("_", 1)
    short_max, eager_max = THR[machine]
    proto = np.where(SIZES <= short_max, "short", np.where(SIZES <= eager_max, "eager", "rend"))
    want_a = np.array([T1[machine][dev][p][0][WHERE[where]] for p in proto])
    want_b = np.array([T1[machine][dev][p][1][WHERE[where]] for p in proto])
    a = wrapper("postal/platform.tlop", "alpha(c, s)", "s: bytes, c: channel").evaluate(prof, s=SIZES, c=path)
    b = wrapper("postal/platform.tlop", "beta(c, s) * 1B", "s: bytes, c: channel").evaluate(prof, s=SIZES, c=path)
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_allclose(b, want_b, rtol=1e-15)


@pytest.mark.parametrize("N,G,C", [(2, 1, 1), (32, 6, 6), (5, 3, 4)])
def test_postal_alltoall_functions(N, G, C):
    """total, split_exchange and spread_messages of postal/alltoall (003 §VI), from the postal and
    max-rate formulas in numpy (_tables_003)."""
    from _tables_003 import max_rate_n, postal

    prof = load_profile("summit")
    s = SIZES[1:]
    kw = dict(N=N, G=G, C=C, s=s)
    params = "N: int, G: int, C: int, s: bytes"
    total = wrapper("postal/alltoall.tlop", "total(N, G, s) * (1s / 1B)", params).evaluate(prof, **kw)
    np.testing.assert_array_equal(total, (N * G - 1) * s)
    split = wrapper("postal/alltoall.tlop", "split_exchange(N, G, C, s)", params).evaluate(prof, **kw)
    np.testing.assert_allclose(split, (G - 1) * postal("summit", "cpu_on_node", s / C)
                               + max_rate_n("summit", "cpu_off_node", (N - 1) * G, s / C, G * C), rtol=1e-13)
    spread = wrapper("postal/alltoall.tlop", "spread_messages(N, G, C, s)", params).evaluate(prof, **kw)
    np.testing.assert_allclose(spread, np.ceil((G - 1) / C) * postal("summit", "cpu_on_node", s)
                               + max_rate_n("summit", "cpu_off_node", np.ceil((N - 1) * G / C), s, G * C),
                               rtol=1e-13)


def test_loggph_send_functions():
    """p2p and the four send functions of loggph/platform, per channel, from LogGP's formulas."""
    par = {"shm": dict(L=1e-6, o=0.5e-6, g=0.2e-6, G=1e-10), "net": dict(L=5e-6, o=2e-6, g=7e-6, G=1e-9)}
    prof = synthetic_profile("loggph", channels={"shm": {"transmission": "shm"}, "net": {"transmission": "rdma"}},
                             scalars={f"loggph.{k}": {c: par[c][k] for c in par} for k in "LogG"})
    m = np.array([1.0, 2.0, 1024.0, 65536.0, 1 << 20])
    mod = tlop.load("loggph/platform")
    p2p = wrapper("loggph/platform.tlop", "p2p(m, c)", "m: bytes, c: channel")
    for c, q in par.items():
        np.testing.assert_allclose(p2p.evaluate(prof, m=m, c=c), q["L"] + 2 * q["o"] + (m - 1) * q["G"], rtol=1e-14)
        np.testing.assert_allclose(mod["send_overhead"].evaluate(prof, m=m, c=c), np.full_like(m, q["o"]), rtol=0)
        np.testing.assert_allclose(mod["recv_overhead"].evaluate(prof, m=m, c=c), np.full_like(m, q["o"]), rtol=0)
        np.testing.assert_allclose(mod["send_gap"].evaluate(prof, m=m, c=c),
                                   np.maximum(q["o"], q["g"] + (m - 1) * q["G"]), rtol=1e-14)
        np.testing.assert_allclose(mod["delivery"].evaluate(prof, m=m, c=c),
                                   2 * q["o"] + q["L"] + (m - 1) * q["G"], rtol=1e-14)
