"""Native dataflow programs (tlop.backends.jit.dataflowgen) agree with the interpreter's meaning.

The JIT's cost of a LogGP, pLogP or LogGPH schedule equals the reference interpreter's
(:mod:`tlop.backends.dataflow`) to 1e-12 relative, and the JIT fails exactly where the
interpreter fails, with the same message (the evaluator re-runs the interpreter on a failing
point):

* every schedule of ``stdlib/loggp``, ``stdlib/plogp`` and ``stdlib/loggph``, and of
  ``stdlib/coll/*`` loaded for LogGP and pLogP, over process counts that are and are not powers of
  two (every 4th ``coll`` case by default, the rest under ``-m slow``);
* generated programs (hypothesis): ``par``/``seq`` nests whose lanes run ``seq`` loops of
  different lengths (the interpreter's order of elements is the order its lane-vectorised
  enumerator placed them, not a nested loop's: ties in arrival and a rank's several sends of one
  phase are broken by it), fan-outs and fan-ins, computations that wait for receives, several
  sizes in one stage, stages joined by ``+``, ``sum``, ``n * …``, ``let`` and ``if``; in the three
  models, under sequential and round-robin mappings;
* errors: ranks outside 0 … P−1, negative sizes, repetition counts that are not whole numbers,
  platform functions that are negative, the term budget;
* Ctrl-C stops a long native dataflow evaluation (a subprocess, bounded).
"""

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tlop
from tlop.backends.binding import bind_arguments, bind_mapping
from tlop.backends.jit import compile_algorithm
from tlop.backends.jit.codegen import param_infos
from tlop.runtime.diagnostics import TlopError

from _jit_helpers import agree, compare_point, interp_point, interrupt_until_it_stops
from conftest import synthetic_profile

_GRID = [0.0, 1024.0, 65536.0, 1e9]
_GAMMA = {"gamma": {"*": {"m": _GRID, "values": [1e-6 + 2e-10 * x for x in _GRID]}}}
PROFILES = {
    "loggp": synthetic_profile("loggp-jit", tables=_GAMMA,
                               scalars={"L": {"*": 5e-6}, "o": {"*": 1e-6}, "g": {"*": 2e-6}, "G": {"*": 1e-9}}),
    # g is not linear in m, and os + or > g: receives queue behind sends
    "plogp": synthetic_profile("plogp-jit", tables={
        **_GAMMA, "g": {"*": {"m": _GRID, "values": [3e-6, 4e-6, 90e-6, 1.0]}},
        "os": {"*": {"m": _GRID, "values": [2e-6, 2.5e-6, 30e-6, 0.4]}},
        "or_": {"*": {"m": _GRID, "values": [2.2e-6, 2.7e-6, 35e-6, 0.7]}}}, scalars={"L": {"*": 4e-6}}),
    "loggph": synthetic_profile("loggph-jit", channels={"shm": {"transmission": "shm"}, "net": {"transmission": "rdma"}},
                                scalars={"loggph.L": {"shm": 1e-6, "net": 5e-6}, "loggph.o": {"shm": 5e-7, "net": 1.5e-6},
                                         "loggph.g": {"shm": 4e-7, "net": 3e-6},
                                         "loggph.G": {"shm": 1e-10, "net": 8e-10}}),
}
PS = (1, 2, 3, 5, 8, 12, 17, 33)  # powers of two and not


def _args(alg, P, m):
    a = {}
    for i in param_infos(alg):
        if i.name == "P":
            a["P"] = float(P)
        elif i.name in ("seg", "S", "s"):
            a[i.name] = 3000.0
        elif i.name == "k":
            a["k"] = 3.0
        elif i.default is not None:
            continue
        elif i.type == "bytes":
            a[i.name] = m
        else:
            a[i.name] = 2.0
    return a


def _check_module(program, names, model):
    prof = PROFILES[model]
    mappings = [tlop.sequential(4), tlop.round_robin(3)] if model == "loggph" else [tlop.sequential(4)]
    for name in names:
        alg = program.algorithms[name]
        for mapping in mappings:
            ev = compile_algorithm(program, name, prof, mapping=mapping)
            for P in PS:
                for m in (1.0, 70000.0):
                    compare_point(program, alg, ev, prof, mapping, _args(alg, P, m))


def _schedules(mod):
    return [a for a in mod.own_algorithms if mod.program.algorithms[a].over is not None
            and not any(p.per_rank for p in mod.program.algorithms[a].params)]


STDLIB = [(model, coll) for model in ("loggp", "plogp") for coll in
          ("bcast", "scatter", "gather", "reduce", "allgather", "allreduce", "alltoall")] + \
         [("loggp", "p2p"), ("loggph", "allgather")]


@pytest.mark.parametrize("model,coll", STDLIB, ids=[f"{m}/{c}" for m, c in STDLIB])
def test_every_stdlib_dataflow_schedule_agrees_with_the_interpreter(model, coll):
    mod = tlop.load(f"{model}/{coll}")
    names = _schedules(mod)
    if coll != "p2p":
        assert names, (model, coll)
    _check_module(mod.program, names, model)


COLL = ("allgather", "allreduce", "alltoall", "barrier", "bcast", "gather", "reduce", "reduce_scatter",
        "reduce_scatter_block", "scatter")
COLL_CASES = [pytest.param(model, coll, marks=() if k % 4 == 0 else pytest.mark.slow, id=f"{model}:coll/{coll}")
              for k, (model, coll) in enumerate((m, c) for c in COLL for m in ("loggp", "plogp"))]


@pytest.mark.parametrize("model,coll", COLL_CASES)
def test_every_library_schedule_agrees_in_loggp_and_plogp(model, coll):
    mod = tlop.load(f"coll/{coll}", model=model)
    assert mod.program.model == model
    _check_module(mod.program, _schedules(mod), model)


def test_a_per_rank_dataflow_schedule_is_refused_for_its_argument_not_its_model():
    from tlop.backends.jit import NotCompilable

    with pytest.raises(NotCompilable, match="per-rank argument"):
        compile_algorithm(tlop.load("loggp/gather").program, "gatherv", PROFILES["loggp"], mapping="sequential(4)")


# ----------------------------------------------------------------------------- generated programs

GENERATED = '''
import "{model}/platform.tlop"
/// a: lanes run seq loops of different lengths; b: 0 own sends, 1 a fan-out from rank 0, 2 plus a
/// computation on the receiver; d: the shift; s: sizes that differ within a stage; n: repetitions
algorithm gen(P: int >= 1, a: int >= 0, b: int >= 0, d: int >= 1, s: int >= 0, m: bytes, n: real, r: int >= 0,
              x: real) over map: mapping =
    let w = 1us * (1 + r) in
    stage {{
        par p in 0 .. P - 1:
            {{ seq j in 0 .. p % (a + 1):
                   send (if b == 1 then 0 else p) -> (p + d + j) % P : (if s == 0 then m else m * ((p + j) % 3))
               send p -> (p * d + 1) % P : m
               seq j in 0 .. 0 where b == 2: compute (p + d) % P : w
            }}
        par q in 0 .. r:
            send (q * d) % P -> (q + 1) % P : m * (1 + q % 2)
    }}
    + n * stage {{ par p in 1 .. P - 1 where p % (a + 2) == 0: {{ send 0 -> p : m  compute p : w }} }}
    + (sum k in 0 .. r: stage {{ seq i in 1 .. P - 1 where b != 1: {{ send i -> 0 : m * k  compute 0 : w }} }})
    + (if x > 0.5 then stage {{ par p in 0 .. P - 1: send p -> (p xor d) % P : m }} + x * 1us else 2us)
'''
_GEN: dict = {}


def _generated(model, kind, Q):
    key = (model, kind)
    if key not in _GEN:
        mod = tlop.loads(GENERATED.format(model=model), f"gen_{model}.tlop")
        _GEN[key] = mod.program
    program = _GEN[key]
    mapping = tlop.sequential(Q) if kind == "sequential" else tlop.round_robin(Q)
    # compiled once per (model, kind): Q is the evaluator's data
    return program, program.algorithms["gen"], compile_algorithm(program, "gen", PROFILES[model], mapping=mapping), \
        mapping


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(sorted(PROFILES)), kind=st.sampled_from(["sequential", "round_robin"]),
       Q=st.sampled_from([1, 2, 3, 4]), P=st.integers(1, 24), a=st.integers(0, 3), b=st.integers(0, 2),
       d=st.integers(1, 5), s=st.integers(0, 1), m=st.sampled_from([0.0, 1.0, 1000.0, 65536.0]),
       n=st.sampled_from([0.0, 1.0, 2.0, -1.0, 1.5]), r=st.integers(0, 2), x=st.sampled_from([0.0, 0.7, 3.0]))
def test_generated_programs_agree_with_the_interpreter(model, kind, Q, P, a, b, d, s, m, n, r, x):
    program, alg, ev, mapping = _generated(model, kind, Q)
    compare_point(program, alg, ev, PROFILES[model], mapping,
             {"P": float(P), "a": float(a), "b": float(b), "d": float(d), "s": float(s), "m": m, "n": n,
              "r": float(r), "x": x})


def test_the_interpreters_order_of_elements_is_not_a_nested_loops():
    """Two sends of rank 0 in one phase (the second item of lane 0, the second binding of lane 1's
    seq): the interpreter places lane 1's first, so rank 0 sends the larger message first."""
    mod = tlop.loads('''
import "loggp/platform.tlop"
algorithm order(P: int >= 2, m: bytes) over map: mapping =
    stage { par i in 0 .. 1: { seq j in 0 .. i: send 0 -> 1 : m * (1 + i)  send 0 -> 1 : m } }
''', "order.tlop")
    program, alg = mod.program, mod.program.algorithms["order"]
    ev = compile_algorithm(program, "order", PROFILES["loggp"], mapping="sequential(4)")
    for m in (1.0, 1000.0, 100000.0):
        compare_point(program, alg, ev, PROFILES["loggp"], tlop.sequential(4), {"P": 2.0, "m": m})


# ----------------------------------------------------------------------------- errors

ERRORS = tlop.loads('''
import "loggp/platform.tlop"
algorithm bad_rank(P: int >= 1, m: bytes, d: int) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> p + d : m }
algorithm bad_size(P: int >= 1, m: real) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m * 1B }
algorithm bad_cost(P: int >= 1, c: real) over map: mapping =
    stage { par p in 0 .. P - 1: compute p : c * 1s }
algorithm repeated(P: int >= 1, m: bytes, k: real) over map: mapping =
    k * stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
algorithm ranged(P: int >= 1, m: bytes, k: int) over map: mapping =
    sum i in 1 .. k: stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
algorithm over_budget(P: int >= 1, m: bytes, k: int) over map: mapping =
    sum i in 1 .. k: sum j in 1 .. k: stage { send 0 -> 0 : m }
''', "dataflow_errors.tlop")


@pytest.mark.parametrize("name,args", [
    ("bad_rank", dict(P=8, m=100.0, d=1)), ("bad_rank", dict(P=8, m=100.0, d=0)),
    ("bad_rank", dict(P=8, m=100.0, d=-9)),
    ("bad_size", dict(P=8, m=-1.0)), ("bad_size", dict(P=8, m=float("nan"))), ("bad_size", dict(P=8, m=3.0)),
    ("bad_cost", dict(P=4, c=-1.0)), ("bad_cost", dict(P=4, c=2.0)),
    ("repeated", dict(P=4, m=10.0, k=1.5)), ("repeated", dict(P=4, m=10.0, k=-1.0)),
    ("repeated", dict(P=4, m=10.0, k=0.0)), ("repeated", dict(P=4, m=10.0, k=3.0)),
    ("repeated", dict(P=4, m=10.0, k=1e12)),
    ("ranged", dict(P=4, m=10.0, k=2 ** 60)), ("ranged", dict(P=4, m=10.0, k=3)),
    ("over_budget", dict(P=2, m=10.0, k=5)), ("over_budget", dict(P=2, m=10.0, k=4000)),
])
def test_errors_agree(name, args):
    program, alg = ERRORS.program, ERRORS.program.algorithms[name]
    prof = PROFILES["loggp"]
    ev = compile_algorithm(program, name, prof, mapping="sequential(4)")
    compare_point(program, alg, ev, prof, tlop.sequential(4), args)


def test_a_platform_function_below_zero_is_the_interpreters_error():
    """LogGP's (m − 1)·G with m = 0 and a large G: the delivery is negative for an empty message."""
    prof = synthetic_profile("loggp-negative", scalars={"L": {"*": 1e-6}, "o": {"*": 1e-7}, "g": {"*": 1e-6},
                                                         "G": {"*": 1e-3}})
    program = tlop.load("loggp/bcast").program
    alg = program.algorithms["binomial_openmpi"]
    ev = compile_algorithm(program, "binomial_openmpi", prof, mapping="sequential(4)")
    for m in (0.0, 100.0):
        compare_point(program, alg, ev, prof, tlop.sequential(4), {"P": 8.0, "m": m})
    with pytest.raises(TlopError, match="must be a time >= 0"):
        ev(P=8, m=0.0)


def test_batches_agree_point_by_point():
    program = tlop.load("plogp/bcast").program
    ev = compile_algorithm(program, "pipeline", PROFILES["plogp"], mapping="sequential(4)")
    P = np.array([2.0, 3.0, 8.0, 33.0])
    got = ev.batch(P=P, m=100000.0, seg=7000.0)
    for k, p in enumerate(P):
        env = bind_mapping(program.algorithms["pipeline"],
                           bind_arguments(program, program.algorithms["pipeline"], {"P": p, "m": 100000.0, "seg": 7000.0}),
                           tlop.sequential(4))
        assert agree(float(got[k]), interp_point(program, program.algorithms["pipeline"], PROFILES["plogp"], env,
                                                 tlop.sequential(4)))


# ----------------------------------------------------------------------------- the API and Ctrl-C

def test_the_api_compiles_a_dataflow_schedule():
    mod = tlop.load("loggp/bcast")
    ev = mod["binomial"].compile(PROFILES["loggp"], mapping="sequential(4)")
    compare_point(mod.program, mod.program.algorithms["binomial"], ev, PROFILES["loggp"], tlop.sequential(4),
             {"P": 37.0, "m": 1000.0})


LONG = textwrap.dedent('''
    import os, sys, time
    sys.path.insert(0, %r)
    import numpy as np
    import tlop
    from conftest import synthetic_profile
    prof = synthetic_profile("loggp-spin", scalars={"L": {"*": 5e-6}, "o": {"*": 1e-6}, "g": {"*": 2e-6},
                                                    "G": {"*": 1e-9}})
    mod = tlop.loads("""
    import "loggp/platform.tlop"
    algorithm spin(P: int >= 2, K: int >= 1, m: bytes) over map: mapping =
        sum k in 1 .. K: stage { par p in 0 .. P - 1: send p -> (p + 1) %% P : m }
    """, "spin_dataflow.tlop")
    ev = mod["spin"].compile(prof, mapping="sequential(4)")
    ev(P=4, K=2, m=10.0)
    t = time.monotonic()
    try:  # 10^4 points of 1,000 stages of 4,096 sends each (within the term budget): minutes
        # "ready" inside the try: every SIGINT the parent sends after reading it is caught here
        print("ready", flush=True)
        ev.batch(P=np.full(10000, 4096.0), K=np.full(10000, 1000.0), m=np.full(10000, 10.0))
    except KeyboardInterrupt:
        print(f"interrupted after {time.monotonic() - t:.2f}s", flush=True)
        os._exit(3)
    print("finished", flush=True)
''')


def test_ctrl_c_stops_a_long_native_dataflow_evaluation():
    import os

    out, err, returncode = interrupt_until_it_stops(LONG % os.path.dirname(os.path.abspath(__file__)))
    assert "finished" not in out, "the evaluation ended before the signal: make it longer"
    assert returncode == 3, (out, err)
    assert "interrupted after" in out
