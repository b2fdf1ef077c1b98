"""Native schedule stages (tlop.backends.jit.schedgen) agree with the interpreter's oracle.

Property tests: the JIT's cost of a schedule equals the reference interpreter's (the oracle's
sort, ``Interpreter(…, schedules="sort")``) to 1e-12 relative, and the JIT fails exactly where
the interpreter fails, with the same message.

* every τ-Lop schedule of the standard library, under sequential and round-robin mappings, for
  process counts 1 … 70 (powers of two and not), sizes from 0 to 64 MiB, roots, segment sizes —
  enumerated natively, and, for those with a closed form, compiled as ``if conditions then
  closed form else schedule`` (the JIT's default);
* generated stages (the patterns of tests/test_schedule_count.py: shift, xor and tree sends in
  blocks and ``seq`` loops, equal, unequal and zero sizes, weights, computations) under every
  mapping kind and every contention key — with the pattern chosen at run time, so that one
  compiled evaluator serves many examples;
* errors: ranks outside 0 … P−1, negative sizes, bad weights, P the mapping cannot place.

Plus the cache key (programs that differ only in their channels' contention or model get
different code) and ``node(…)`` outside stages."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tlop
from tlop import ir
from tlop.backends.binding import bind_mapping
from tlop.backends.jit import compile_algorithm
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.mapping import layout_from_dict

from _jit_helpers import agree, compare_point, interp_point

N, V = ir.Num, ir.Var
PROFILES = {n: tlop.load_profile(n) for n in ("metropolis", "lusitania")}


def _b(op, a, b):
    return ir.Bin(op, a, b)


def _if(t, a, b):
    return ir.Cond(t, a, b)


# ----------------------------------------------------------------------------- the stdlib

def _taulop_schedules():
    out = []
    for name in ("allgather", "allreduce", "alltoall", "bcast", "gather", "reduce", "scatter"):
        mod = tlop.load(f"taulop/{name}")
        out += [(f"taulop/{name}", a) for a in mod.own_algorithms if ir.has_schedule(mod.program.algorithms[a].body)
                and not any(p.per_rank for p in mod.program.algorithms[a].params)]  # gatherv: the JIT refuses it
    return out


STDLIB = _taulop_schedules()


def _evaluator(module, name, profile, mapping_kind, Q, closed):
    mapping = tlop.sequential(Q) if mapping_kind == "sequential" else tlop.round_robin(Q)
    return compile_algorithm(tlop.load(module).program, name, PROFILES[profile], mapping=mapping,
                             closed_forms=closed), mapping


def _has_closed_form(module, name):
    from tlop.backends.jit.evaluator import closed_variant

    program = tlop.load(module).program
    alg = program.algorithms[name]
    return any(closed_variant(program, alg, kind)[1] is not None for kind in ("sequential", "round_robin"))


# native enumeration for every schedule; the closed form (with the schedule where its
# conditions fail) for those that have one
STDLIB_CASES = [(m, n, False) for m, n in STDLIB] + [(m, n, True) for m, n in STDLIB if _has_closed_form(m, n)]


def _args(alg, P, m, root, S):
    out = {}
    for p in alg.params:
        if p.name == "P":
            out["P"] = float(P)
        elif p.name == "root":
            out["root"] = float(root % P)
        elif p.type == "bytes" and p.name != "m":
            out[p.name] = float(S)
        elif p.type == "bytes":
            out["m"] = float(m)
    return out


@pytest.mark.parametrize("module,name,closed", STDLIB_CASES,
                         ids=[f"{m}:{n}{':closed' if c else ''}" for m, n, c in STDLIB_CASES])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(P=st.one_of(st.integers(1, 70), st.sampled_from([2, 4, 8, 16, 32, 64])),
       Q=st.sampled_from([1, 2, 4, 8]), kind=st.sampled_from(["sequential", "round_robin"]),
       m=st.sampled_from([0.0, 1.0, 1000.0, 65536.0, 1048576.0, 67108864.0]),
       root=st.integers(0, 100), S=st.sampled_from([1024.0, 65536.0]))
def test_stdlib_schedules_agree_with_the_interpreter(module, name, closed, P, Q, kind, m, root, S):
    mod = tlop.load(module)
    alg = mod.program.algorithms[name]
    ev, mapping = _evaluator(module, name, "lusitania", kind, Q, closed)
    compare_point(mod.program, alg, ev, PROFILES["lusitania"], mapping, _args(alg, P, m, root, S))


# ----------------------------------------------------------------------------- generated stages

PLATFORM = (tlop.load("taulop/platform").path).read_text()
PLATFORM_IMPORT = 'import "taulop/platform.tlop"\n'
PROGRAMS = {rule: tlop.loads(PLATFORM.replace("contention dst_node", f"contention {rule}")).program
            for rule in ("dst_node", "src_node", "either", "node", "all")}

# one item: par p in 0 .. P − 1 where W: body, with the pattern (0 shift, 1 xor, 2 tree), the
# distance d, the size kind (0 equal, 1 by rank, 2 zero for even ranks), m, the weight w, the
# shape (0 one send, 1 a block of two, 2 a seq of three) and whether a computation follows
# chosen by parameters k{i}, d{i}, s{i}, m{i}, w{i}, h{i}, c{i}
ITEM_PARAMS = ("k", "d", "s", "m", "w", "h", "c")


def _generated_item(i):
    p = V("p")
    k, d, s, m, w, h, c = (V(f"{x}{i}") for x in ITEM_PARAMS)
    P = V("P")
    shift = _b("%", _b("+", p, d), P)
    xor = _b("xor", p, d)
    tree = _b("+", p, d)
    dst = _if(_b("==", k, N(0.0)), shift, _if(_b("==", k, N(1.0)), xor, tree))
    where = _if(_b("==", k, N(0.0)), N(1.0),
                _if(_b("==", k, N(1.0)), _b("<", xor, P),
                    _b("and", _b("==", _b("%", p, _b("*", N(2.0), d)), N(0.0)), _b("<", tree, P))))
    size = _if(_b("==", s, N(0.0)), m, _if(_b("==", s, N(1.0)), _b("*", m, _b("+", N(1.0), _b("%", p, N(3.0)))),
                                           _b("*", m, _b("%", p, N(2.0)))))
    send = ir.Send(p, dst, size, w)
    one = ir.Loop("seq", "j", N(0.0), N(0.0), _b("==", h, N(0.0)), send)
    block = ir.Loop("seq", "j", N(0.0), N(0.0), _b("==", h, N(1.0)), ir.Block((send, ir.Send(p, dst, m, N(1.0)))))
    seq = ir.Loop("seq", "j", N(0.0), N(2.0), _b("==", h, N(2.0)), send)
    comp = ir.Loop("seq", "j", N(1.0), c, N(1.0), ir.Compute(p, _b("*", N(1e-6), _b("+", N(1.0), _b("%", d, N(3.0))))))
    return ir.Loop("par", "p", N(0.0), _b("-", P, N(1.0)), where, ir.Block((one, block, seq, comp)))


def _generated(program, items):
    params = [ir.ParamSig("P", "int")]
    for i in range(items):
        params += [ir.ParamSig(f"{x}{i}", "real") for x in ITEM_PARAMS]
    alg = ir.Algorithm("generated", tuple(params), ir.Stage(tuple(_generated_item(i) for i in range(items))),
                       model="taulop", over="map")
    return dataclasses.replace(program, algorithms={**program.algorithms, "generated": alg}), alg


def _layout(P, Q, seed):
    rng = np.random.default_rng(seed)
    nodes = rng.integers(0, max(1, P // Q), size=P)
    return layout_from_dict({"tlop_layout": 1, "ranks": [{"node": int(n)} for n in nodes]})


ITEM = st.tuples(st.sampled_from([0.0, 1.0, 2.0]), st.integers(1, 9).map(float),
                 st.sampled_from([0.0, 0.0, 1.0, 2.0]),
                 st.sampled_from([0.0, 1.0, 1000.0, 65536.0, 1048576.0]),
                 st.sampled_from([1.0, 1.0, 2.0, 0.5]), st.sampled_from([0.0, 1.0, 2.0]),
                 st.sampled_from([0.0, 1.0]))
_GENERATED: dict = {}


def _generated_evaluator(rule, kind, profile, P, Q, seed):
    program, alg = _generated(PROGRAMS[rule], 2)
    mapping = {"sequential": tlop.sequential(Q), "round_robin": tlop.round_robin(Q)}.get(kind) or _layout(P, Q, seed)
    key = (rule, kind, profile)
    if key not in _GENERATED:
        _GENERATED[key] = (program, alg)
    program, alg = _GENERATED[key]
    # compiled once per (rule, kind, profile); Q and a layout's table are the evaluator's data
    ev = compile_algorithm(program, "generated", PROFILES[profile], mapping=mapping)
    assert ev.compile_stats.source in ("process", "disk", "compiled")
    return program, alg, ev, mapping


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.tuples(ITEM, ITEM), P=st.integers(2, 40), Q=st.sampled_from([1, 2, 3, 4, 8]),
       kind=st.sampled_from(["sequential", "round_robin", "layout"]),
       rule=st.sampled_from(sorted(PROGRAMS)), seed=st.integers(0, 1000))
def test_generated_stages_agree_with_the_interpreter(items, P, Q, kind, rule, seed):
    profile = "metropolis" if rule != "dst_node" else "lusitania"
    program, alg, ev, mapping = _generated_evaluator(rule, kind, profile, P, Q, seed)
    args = {"P": float(P)}
    for i, values in enumerate(items):
        args.update({f"{x}{i}": v for x, v in zip(ITEM_PARAMS, values)})
    compare_point(program, alg, ev, PROFILES[profile], mapping, args)


# ----------------------------------------------------------------------------- errors

ERRORS = tlop.loads('''
import "taulop/platform.tlop"
algorithm bad_rank(P: int >= 1, m: bytes, d: int) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> p + d : m }
algorithm bad_size(P: int >= 1, m: real) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m * 1B }
algorithm bad_weight(P: int >= 1, m: bytes, w: real) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m weight w }
algorithm nodes(P: int >= 1, r: int) over map: mapping = node(r) * 1s
algorithm repeated(P: int >= 2, m: bytes, k: int) over map: mapping =
    sum i in 1 .. k: stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
''', "errors.tlop")


@pytest.mark.parametrize("name,args", [
    ("bad_rank", dict(P=8, m=100.0, d=1)), ("bad_rank", dict(P=8, m=100.0, d=0)),
    ("bad_rank", dict(P=8, m=100.0, d=-9)),
    ("bad_size", dict(P=8, m=-1.0)), ("bad_size", dict(P=8, m=float("nan"))), ("bad_size", dict(P=8, m=3.0)),
    ("bad_weight", dict(P=8, m=1.0, w=0.0)), ("bad_weight", dict(P=8, m=1.0, w=float("inf"))),
    ("bad_weight", dict(P=8, m=1.0, w=2.5)),
    ("nodes", dict(P=8, r=5)), ("nodes", dict(P=8, r=8)), ("nodes", dict(P=8, r=-1)),
    ("repeated", dict(P=8, m=1000.0, k=0)), ("repeated", dict(P=8, m=1000.0, k=5)),
    ("repeated", dict(P=(1 << 24) + 1, m=1000.0, k=5)),
])
@pytest.mark.parametrize("mapping", ["sequential(4)", "round_robin(4)", "layout"])
def test_errors_and_small_cases_agree(name, args, mapping):
    if mapping == "layout":
        mapping = layout_from_dict({"tlop_layout": 1, "ranks": [{"node": k // 3} for k in range(8)]})
    from tlop.backends.binding import as_mapping

    mapping = as_mapping(mapping)
    alg = ERRORS.program.algorithms[name]
    ev = compile_algorithm(ERRORS.program, name, PROFILES["metropolis"], mapping=mapping)
    compare_point(ERRORS.program, alg, ev, PROFILES["metropolis"], mapping, args)
    # the batch path gives the same answers point by point
    if "P" in args and args["P"] == 8 and all(math.isfinite(v) for v in args.values()):
        try:
            want = ev(**args)
        except TlopError:
            with pytest.raises(TlopError):
                ev.batch(**{k: np.array([v, v]) for k, v in args.items()})
        else:
            assert list(ev.batch(**{k: np.array([v, v]) for k, v in args.items()})) == [want, want]


# ----------------------------------------------------------------------------- the cache key

def test_programs_differing_only_in_contention_or_model_get_their_own_code(tmp_path, monkeypatch):
    """The JIT's cache key once left out the program's channel declarations and model: two
    programs differing only there shared native code (found when schedules were compiled)."""
    monkeypatch.setenv("TLOP_CACHE_DIR", str(tmp_path))
    from tlop.backends.jit.evaluator import _LOADED

    mp = tlop.sequential(2)
    ring = tlop.load("taulop/allgather").program.algorithms["ring"]
    costs, keys = {}, {}
    for rule in ("dst_node", "src_node", "either"):
        program = dataclasses.replace(PROGRAMS[rule], algorithms={"ring": ring})
        ev = compile_algorithm(program, "ring", PROFILES["lusitania"], mapping=mp)
        costs[rule] = ev(P=8, m=65536.0)
        keys[rule] = ev.compile_stats.key
        env = bind_mapping(ring, {"P": 8.0, "m": 65536.0}, mp)
        assert agree(costs[rule], interp_point(program, ring, PROFILES["lusitania"], env, mp))
    assert len(set(keys.values())) == 3
    # with 'either' a transfer between nodes counts at both ends: the ring's groups hold two
    assert costs["either"] != costs["dst_node"]
    assert any(k in _LOADED for k in keys.values())
    from tlop.backends.jit.evaluator import _program_repr

    p = PROGRAMS["dst_node"]
    assert _program_repr(p, ring) != _program_repr(dataclasses.replace(p, model="loggp"), ring)
    assert _program_repr(p, ring) != _program_repr(PROGRAMS["either"], ring)


# ----------------------------------------------------------------------------- the API's tiering

_TIER_SOURCE = PLATFORM_IMPORT + '''
algorithm ring(P: int >= 2, m: bytes) over map: mapping =
    stages k in 0 .. P - 2 { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
algorithm closed(P: int >= 2, m: bytes) = (P - 1) * T[shm](m)
algorithm shift(P: int >= 2, m: bytes) over map: mapping =
    stages k in 0 .. P - 2 { par p in 0 .. P - 1: send p -> (p + k + 1) % P : m }
'''


def test_the_api_tiers_up_once_interpreting_has_cost_what_compiling_would(monkeypatch):
    from tlop.backends import engine_policy

    # a compile "costs" 5 ms here: a few interpreted calls pay for it (the rule, not the constants)
    monkeypatch.setattr(engine_policy, "COMPILE_HIT_S", 0.005)
    monkeypatch.setattr(engine_policy, "COMPILE_COLD_S", 0.005)
    mod = tlop.loads(_TIER_SOURCE, "tier.tlop")
    prof = PROFILES["lusitania"]
    tier = mod.native_tier
    got = [mod["ring"].evaluate(prof, mapping=tlop.sequential(4), P=4 + k, m=1000.0) for k in range(40)]
    entry = next(e for k, e in tier._entries.items() if k[0] == "ring")
    assert entry.tally.spent >= engine_policy.RENT_SHARE * 0.005
    assert entry.ev and entry.ev.mapping == tlop.sequential(4)  # compiled, for this mapping
    # one entry for every fresh tlop.sequential(4): keyed by the mapping's value, not its id()
    assert sum(1 for k in tier._entries if k[0] == "ring") == 1
    for k, v in enumerate(got):  # interpreted first, native later: the same costs
        env = bind_mapping(mod["ring"].ir, {"P": 4.0 + k, "m": 1000.0}, tlop.sequential(4))
        assert agree(v, interp_point(mod.program, mod["ring"].ir, prof, env, tlop.sequential(4)))
    # errors through the native path are the interpreter's
    with pytest.raises(TlopError, match="P >= 2|P=1"):
        mod["ring"].evaluate(prof, mapping=tlop.sequential(4), P=1, m=1000.0)
    # arrays stay with the interpreter; closed forms are never tiered
    assert list(mod["ring"].evaluate(prof, mapping=tlop.sequential(4), P=np.array([4, 5]), m=1000.0)) == got[:2]
    for _ in range(40):
        mod["closed"].evaluate(prof, P=8, m=1000.0)
    closed = next(e for k, e in tier._entries.items() if k[0] == "closed")
    assert closed.ev is None and not closed.tierable


def test_an_expensive_first_api_call_compiles_at_once_and_a_cheap_one_interprets(monkeypatch):
    from tlop.backends import engine_policy

    mod = tlop.loads(_TIER_SOURCE, "tier2.tlop")
    prof = PROFILES["lusitania"]
    cheap = mod["ring"].evaluate(prof, mapping="sequential(4)", P=4, m=1000.0)
    entry = mod.native_tier._last
    assert entry.ev is None and not entry.fresh  # a cheap first call: the interpreter
    # the same point, but the interpreter predicted 10^6 times slower: the first call compiles
    monkeypatch.setattr(engine_policy, "INTERP_S_PER_UNIT", 1.0)
    other = tlop.load_profile("lusitania")  # another object, the same content: the same entry
    assert mod.native_tier.entry(mod["ring"].ir, other, "sequential(4)") is entry
    mod2 = tlop.loads(_TIER_SOURCE, "tier3.tlop")
    v = mod2["ring"].evaluate(other, mapping="sequential(4)", P=4, m=1000.0)
    assert mod2.native_tier._last.ev is not None and agree(v, cheap)


def test_the_engine_policy_predicts_stage_work_and_obeys_an_override():
    from tlop.backends import engine_policy

    mod = tlop.loads(_TIER_SOURCE, "tier4.tlop")
    prof, seq4 = PROFILES["lusitania"], tlop.sequential(4)

    def work(name, P):
        alg = mod.program.algorithms[name]
        return engine_policy.predicted_work(mod.program, alg, bind_mapping(alg, {"P": float(P), "m": 1.0}, seq4),
                                            prof, seq4)
    # P - 1 stages of P sends each, a fixed charge per stage; the ring's identical stages are priced once
    assert work("shift", 8) == 7 * (1 + engine_policy.STAGE_UNITS + 8)
    assert work("ring", 8) == engine_policy.STAGE_UNITS + 8
    alg = mod.program.algorithms["shift"]
    env = bind_mapping(alg, {"P": 4096.0, "m": 1.0}, seq4)
    assert engine_policy.choose(mod.program, alg, env, 1, mapping=seq4).engine == "jit"
    assert engine_policy.choose(mod.program, alg, env, 1, override="interp").engine == "interp"
    small = bind_mapping(alg, {"P": 4.0, "m": 1.0}, tlop.sequential(4))
    assert engine_policy.choose(mod.program, alg, small, 1, mapping=tlop.sequential(4)).engine == "interp"


def test_a_stage_with_more_members_than_are_recorded_agrees():
    """Groups of several sizes and more than the 65,536 members the first enumeration records:
    the first evaluation enumerates twice (nothing recorded yet), the next ones record, overflow
    and enumerate twice too; a smaller stage of the same site then reduces what it recorded."""
    from tlop.backends.jit import schedgen

    mod = tlop.loads('''
import "taulop/platform.tlop"
algorithm mixed(P: int >= 1, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : (p % 3 + 1) * m }
''', "mixed.tlop")
    alg = mod.program.algorithms["mixed"]
    mapping = tlop.sequential(8)
    ev = compile_algorithm(mod.program, "mixed", PROFILES["metropolis"], mapping=mapping)
    big = schedgen._REC_CAP + 100
    for P in (big, big, 64, big, 64):
        args = {"P": float(P), "m": 1000.0}
        compare_point(mod.program, alg, ev, PROFILES["metropolis"], mapping, args)
