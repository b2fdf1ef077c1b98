"""Closed forms of schedules (tlop.analysis.closedform): each derived form equals enumeration (the
interpreter's meaning of the schedule) for every P ≤ 64 and Q ∈ {1, 2, 4, 8} with Q | P, on every
bundled profile and with both network decompositions; the ring gives 002 eq. 7 / eq. 8 shapes;
unrecognised schedules say so; ``tlop show --mapping``."""

import math

import pytest

import tlop
from conftest import taulop_profiles
from tlop import ir
from tlop.analysis.closedform import closed_form, derive, expand_transmissions
from tlop.backends.interp import Interpreter
from tlop.backends.notation import format_text
from tlop.cli.main import main
from tlop.ir.typecheck import algorithm_env
from tlop.ir.verify import verify_expr
from tlop.runtime.profile import load_profile

AG = tlop.load("taulop/allgather")
BC = tlop.load("taulop/bcast")
QS = (1, 2, 4, 8)
SIZES = (0.0, 1000.0, float(1 << 20), float(3 << 22))


def _profiles():
    """Every bundled profile with τ-Lop's shm and net channels (not the postal/max-rate path
    profiles of paper 003, summit and lassen), and again with the network bound to TCP where it
    has one (the other decomposition of T^net)."""
    out = []
    for name in taulop_profiles():
        prof = load_profile(name)
        if prof.resolve_channel("shm") is None or prof.resolve_channel("net") is None:
            continue
        out.append(pytest.param(prof, id=name))
        if "tcp" in prof.channels and prof.resolve_channel("net") != "tcp":
            out.append(pytest.param(prof.with_bindings({"net": "tcp"}), id=f"{name}-tcp"))
    return out


PROFILES = _profiles()


def _close(a, b, rel=1e-12):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-300)


def _points(Pmin=2):
    for P in range(Pmin, 65):
        for Q in QS:
            if P % Q == 0:
                yield P, Q


def _mapping(kind, Q):
    return tlop.sequential(Q) if kind == "sequential" else tlop.round_robin(Q)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("kind", ["sequential", "round_robin"])
def test_ring_closed_form_equals_enumeration(profile, kind):
    d = derive(AG.program, AG["ring"].ir, kind)
    assert d.ok, d.reason
    interp = Interpreter(AG.program, profile)
    for P, Q in _points():
        for m in SIZES:
            want = AG["ring"].evaluate(profile, P=P, m=m, mapping=_mapping(kind, Q))
            got = float(interp.eval(d.expr, {"P": float(P), "m": m, "Q": float(Q)}))
            assert _close(got, want), (kind, P, Q, m, got, want)


@pytest.mark.parametrize("profile", PROFILES)
def test_binomial_closed_form_equals_enumeration(profile):
    d = derive(BC.program, BC["binomial"].ir, "sequential")
    assert d.ok, d.reason
    interp = Interpreter(BC.program, profile)
    for P, Q in _points(Pmin=1):
        for root in sorted({0, Q}):
            env = {"P": float(P), "m": 65536.0, "Q": float(Q), "root": float(root)}
            assert float(interp.eval(d.conditions, env)) == 1.0
            for m in SIZES[1:3] if (P, root) != (Q, 0) else SIZES:
                env["m"] = m
                want = BC["binomial"].evaluate(profile, P=P, m=m, root=root, mapping=tlop.sequential(Q))
                got = float(interp.eval(d.expr, env))
                assert _close(got, want), (P, Q, root, m, got, want)


@pytest.mark.parametrize("profile", PROFILES)
def test_binomial_round_robin_closed_form_equals_enumeration(profile):
    """round_robin(Q): P/Q nodes, rank p on node p mod (P/Q); derived when P/Q is a power of
    two, for any root (P not a power of two included: P = 12, Q = 3 …)."""
    d = derive(BC.program, BC["binomial"].ir, "round_robin")
    assert d.ok, d.reason
    assert d.condition_text[-1] == "P/Q is a power of two"
    interp = Interpreter(BC.program, profile)
    checked = 0
    for P in range(1, 65):
        for Q in (1, 2, 3, 4, 6, 8):
            if P % Q:
                continue
            env = {"P": float(P), "m": 65536.0, "Q": float(Q), "root": 0.0}
            M = P // Q
            assert float(interp.eval(d.conditions, env)) == float(M & (M - 1) == 0)
            if M & (M - 1):
                continue
            for root in sorted({0, P - 1}):
                env["root"] = float(root)
                for m in SIZES[1:3] if P <= 16 else SIZES[2:3]:
                    env["m"] = m
                    want = BC["binomial"].evaluate(profile, P=P, m=m, root=root, mapping=tlop.round_robin(Q))
                    got = float(interp.eval(d.expr, env))
                    assert _close(got, want), (P, Q, root, m, got, want)
                    checked += 1
    assert checked > 80


def test_guarded_closed_form_falls_back_to_the_schedule_outside_its_conditions():
    """``closed_form`` is ``if conditions then closed form else schedule``: right everywhere,
    e.g. a root that is not a multiple of Q, or Q = 3."""
    prof = load_profile("metropolis")
    e = closed_form(BC.program, BC["binomial"].ir, "sequential")
    from tlop.backends.binding import bind_mapping

    h = BC["binomial"]
    for P, Q, root in ((16, 4, 1), (12, 3, 0), (24, 8, 5), (16, 4, 4)):
        mp = tlop.sequential(Q)
        env = bind_mapping(h.ir, h.bind({"P": P, "m": 4096.0, "root": root}), mp)
        env["Q"] = float(Q)
        got = float(Interpreter(BC.program, prof, mp).eval(e, env))
        want = h.evaluate(prof, P=P, m=4096.0, root=root, mapping=mp)
        assert _close(got, want), (P, Q, root)
    d = derive(BC.program, BC["binomial"].ir, "sequential")
    env = {"P": 16.0, "Q": 4.0, "m": 1.0, "root": 1.0}
    assert float(Interpreter(BC.program, prof).eval(d.conditions, env)) == 0.0


def test_closed_forms_are_typed_and_verified_and_hold_no_schedule():
    for mod, alg, kind in ((AG, "ring", "sequential"), (AG, "ring", "round_robin"), (BC, "binomial", "sequential"),
                           (BC, "binomial", "round_robin")):
        d = derive(mod.program, mod[alg].ir, kind)
        env = {**algorithm_env(mod[alg].ir), d.q: tlop.ir.types.INT}
        verify_expr(d.expr, mod.program, env, tlop.ir.types.TIME)
        verify_expr(d.conditions, mod.program, env, tlop.ir.types.BOOL)
        assert not ir.has_schedule(d.expr)
        assert all(n.ty is not None for n in ir.walk(d.expr))


def test_ring_shapes_are_002_eq_7_and_eq_8():
    seq = format_text(derive(AG.program, AG["ring"].ir, "sequential").expr, AG.program)
    rr = format_text(derive(AG.program, AG["ring"].ir, "round_robin").expr, AG.program)
    assert "(P − 1)·(if Q = 1 then T^net(m) else if Q = P then P‖T^shm(m) else " \
           "max{(Q − 1) ‖ T^shm(m), T^net(m)})" in seq
    assert "(P − 1)·(if Q = P then P‖T^shm(m) else Q‖T^net(m))" in rr
    # the transfer level on a TCP network: eq. 8's L^0(m,Q) + L^1(m,Q) + L^0(m,Q), plus o^net
    prof = load_profile("metropolis").with_bindings({"net": "tcp"})
    d = derive(AG.program, AG["ring"].ir, "round_robin")
    low = format_text(expand_transmissions(AG.program, d.expr, prof), AG.program)
    assert "o^net(m) + 2·L^shm(m, Q) + L^net(m, Q)" in low, low
    # on RDMA the NIC copies are not there
    low = format_text(expand_transmissions(AG.program, d.expr, load_profile("metropolis")), AG.program)
    assert "o^net(m) + L^net(m, Q)" in low and "L^shm(m, Q)" not in low, low


def test_unrecognised_schedules_say_so():
    m = tlop.loads("""
        import "taulop/platform.tlop"
        algorithm two(P: int >= 2, m: bytes) over map: mapping =
            stage { par p in 0 .. P - 1: { send p -> (p + 1) % P : m  send p -> (p + 2) % P : m } }
        algorithm sized(P: int >= 2, m: bytes) over map: mapping =
            stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m * p }
        algorithm plain(P: int >= 2, m: bytes) = P * T[shm](m)
    """)
    for name, why in (("two", "not one 'par' over one 'send'"), ("sized", "size of a send depends on the rank"),
                      ("plain", "no schedule")):
        d = derive(m.program, m[name].ir, "sequential")
        assert not d.ok and why in d.reason, (name, d.reason)
        assert closed_form(m.program, m[name].ir, "sequential") is None
    # Open MPI's binomial order (t -> t + 2^s) is neither a shift nor MPICH's pairs
    d = derive(BC.program, BC["binomial_openmpi"].ir, "round_robin")
    assert not d.ok and "neither a shift" in d.reason, d.reason


def test_shift_by_a_stage_variable(tmp_path):
    """A shift ``p -> (p + d) % P`` whose distance depends on the stage (pairwise-like): the
    general count ``[q = 0]·(Q − r) + [q = P/Q − 1]·r`` against enumeration."""
    m = tlop.loads("""
        import "taulop/platform.tlop"
        algorithm shifts(P: int >= 2, m: bytes) over map: mapping =
            stages k in 1 .. P - 1 { par p in 0 .. P - 1: send p -> (p + k) % P : m weight 2 }
    """)
    prof = load_profile("lusitania")
    for kind in ("sequential", "round_robin"):
        d = derive(m.program, m["shifts"].ir, kind)
        assert d.ok, d.reason
        interp = Interpreter(m.program, prof)
        for P, Q in _points():
            if P > 40:
                continue
            want = m["shifts"].evaluate(prof, P=P, m=5000.0, mapping=_mapping(kind, Q))
            got = float(interp.eval(d.expr, {"P": float(P), "m": 5000.0, "Q": float(Q)}))
            assert _close(got, want), (kind, P, Q, got, want)


@pytest.mark.parametrize("profile", PROFILES)
def test_stdlib_ring_formulas_are_the_schedule(profile):
    """``ring_allgather_seq`` equals the schedule over sequential(Q), ``ring_allgather_rr`` over
    round_robin(Q), for Q | P, m > 0."""
    seq, rr, ring = AG["ring_allgather_seq"], AG["ring_allgather_rr"], AG["ring"]
    for P in range(2, 41):
        for Q in range(1, 10):
            if P % Q:
                continue
            for m in (1000.0, float(1 << 20)):
                want = ring.evaluate(profile, P=P, m=m, mapping=tlop.sequential(Q))
                assert _close(seq.evaluate(profile, P=P, m=m, Q=Q), want), ("seq", P, Q, m)
                want = ring.evaluate(profile, P=P, m=m, mapping=tlop.round_robin(Q))
                assert _close(rr.evaluate(profile, P=P, m=m, Q=Q), want), ("rr", P, Q, m)


XOR = tlop.loads("""
    import "taulop/platform.tlop"
    /// Every rank exchanges with p xor 2^s: both directions are sends.
    algorithm both(P: int >= 2, m: bytes) over map: mapping =
        stages s in 0 .. ceil(log2(P)) - 1 { par p in 0 .. P - 1: send p -> p xor (1 << s) : m }
    /// One send per pair, from the lower rank, counting twice.
    algorithm pairs(P: int >= 2, m: bytes) over map: mapping =
        stages s in 0 .. ceil(log2(P)) - 1 {
            par p in 0 .. P - 1 where p < (p xor (1 << s)): send p -> p xor (1 << s) : 2^s * m weight 2
        }
""")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("kind", ["sequential", "round_robin"])
def test_xor_closed_forms_equal_enumeration(profile, kind):
    """Recursive doubling: the stdlib's allgather rda (whose fold vanishes for P a power of two)
    and plain xor exchanges, with and without the 'where' that keeps one send per pair; P a power
    of two (the condition), Q | P."""
    cases = [(AG, "rda"), (XOR, "both"), (XOR, "pairs")]
    derived = {}
    for mod, name in cases:
        d = derive(mod.program, mod[name].ir, kind)
        assert d.ok, (name, d.reason)
        assert "P is a power of two" in d.condition_text
        derived[name] = (mod, d, Interpreter(mod.program, profile))
    for P in (2, 4, 8, 16, 32, 64):
        for Q in QS:
            if P % Q:
                continue
            for name, (mod, d, interp) in derived.items():
                for m in SIZES[1:3]:
                    env = {"P": float(P), "m": m, "Q": float(Q)}
                    assert float(interp.eval(d.conditions, env)) == 1.0
                    want = mod[name].evaluate(profile, P=P, m=m, mapping=_mapping(kind, Q))
                    got = float(interp.eval(d.expr, env))
                    assert _close(got, want), (name, kind, P, Q, m, got, want)
    # P not a power of two: outside the conditions, so closed_form falls back to the schedule
    mod, d, interp = derived["rda"]
    assert float(interp.eval(d.conditions, {"P": 12.0, "m": 1.0, "Q": 4.0})) == 0.0


def test_xor_closed_form_follows_the_contention_key(tmp_path):
    """Without the 'where', a node both sends and receives Q transfers across: contention
    'either' counts 2Q, 'dst_node' Q — each equal to enumeration."""
    prof = load_profile("metropolis")
    for key in ("dst_node", "src_node", "either", "node"):
        src = tmp_path / f"x_{key}.tlop"
        src.write_text(f"""model taulop
channel shm within node contention node
channel net between nodes contention {key}
table o[c: channel](m: bytes) -> time
table L[c: channel](m: bytes, tau: int) -> time
transmission T[shm](m) = o[shm](m) + 2 * L[shm](m, 1)
transmission T[net](m) = o[net](m) + L[net](m, 1)
algorithm both(P: int >= 2, m: bytes) over map: mapping =
    stages s in 0 .. ceil(log2(P)) - 1 {{ par p in 0 .. P - 1: send p -> p xor (1 << s) : m }}
""")
        mod = tlop.load(str(src))
        for kind in ("sequential", "round_robin"):
            d = derive(mod.program, mod["both"].ir, kind)
            assert d.ok, d.reason
            interp = Interpreter(mod.program, prof)
            for P, Q in ((16, 4), (32, 2), (8, 8), (8, 1)):
                want = mod["both"].evaluate(prof, P=P, m=4096.0, mapping=_mapping(kind, Q))
                got = float(interp.eval(d.expr, {"P": float(P), "m": 4096.0, "Q": float(Q)}))
                assert _close(got, want), (key, kind, P, Q, got, want)


NEG_SIZES = tlop.loads('''
import "taulop/platform.tlop"
algorithm shadow(P: int >= 2, m: bytes >= 0) over map: mapping =
    let m = m - 1KiB in stage { par r in 0 .. P - 1: send r -> (r + 1) % P : m }
algorithm shadow_pos(P: int >= 2, m: bytes > 0) over map: mapping =
    let m = m - 1KiB in stage { par r in 0 .. P - 1: send r -> (r + 1) % P : m }
algorithm real_size(P: int >= 2, x: real) over map: mapping =
    stage { par r in 0 .. P - 1: send r -> (r + 1) % P : x * 1B }
''', "sizes.tlop")


@pytest.mark.parametrize("name,args", [("shadow", dict(m=100.0)), ("shadow_pos", dict(m=100.0)),
                                       ("real_size", dict(x=-3.0))])
def test_a_negative_size_is_the_schedules_error_in_the_closed_form_too(name, args):
    """A send size that may be negative (a real parameter, or a ``let`` shadowing a declared
    non-negative parameter) is guarded by ``size ≥ 0`` or has no closed form: the JIT's
    ``if conditions then closed form else schedule`` reports the interpreter's E022, never 0 s."""
    h = NEG_SIZES[name]
    d = derive(NEG_SIZES.program, h.ir, "sequential")
    assert not d.ok or any("≥ 0" in t for t in d.condition_text), (d.reason, d.condition_text)
    with pytest.raises(tlop.TlopError, match="is negative"):
        h.evaluate("lusitania", P=4, mapping=tlop.sequential(2), **args)  # the interpreter (first call)
    native = h.compile(tlop.load_profile("lusitania"), mapping=tlop.sequential(2))
    with pytest.raises(tlop.TlopError, match="is negative"):
        native(P=4, **args)
