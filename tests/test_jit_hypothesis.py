"""JIT vs interpreter on hypothesis-generated IR programs (every node kind, runtime and
constant channels, reductions, concurrency, parallel composition) over random profiles and
random points, including points outside the table grids; errors must agree too.

:func:`test_four_ways_agree` checks the four evaluations of issue 8 — interpreter scalar,
interpreter array (element by element), JIT scalar, JIT batch — on programs with negative
ints, possibly empty ranges, and parallel compositions mixing transmission names on one
channel over constant and parameter channels."""

import math
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlop import ir
from tlop.backends.binding import bind_arguments
from tlop.backends.interp import Interpreter
from tlop.runtime.diagnostics import TlopError
from tlop.backends.jit import compile_algorithm

from _jit_helpers import agree, interp_point, jit_point, make_profile, taulop_tables

N, V, B = ir.Num, ir.Var, ir.Bin

SHM = N(0.0)
NET = N(1.0)


def _program(body):
    tables = {"o": ir.TableSig("o", True, ("m",), None), "L": ir.TableSig("L", True, ("m", "tau"), 1)}
    scalars = {"alpha": ir.ScalarSig("alpha", True)}

    def o(c, m):
        return ir.Lookup("o", c, (m,))

    def L(c, m, t):
        return ir.Lookup("L", c, (m, N(t)))

    mv = V("m")
    trans = {"U": (  # a second transmission on both channels, defined differently from T
        ir.TransmissionVariant("U", 0, None, "m", B("+", o(SHM, mv), L(SHM, mv, 1.0))),
        ir.TransmissionVariant("U", 1, None, "m", B("+", o(NET, mv), B("*", N(3.0), L(NET, mv, 1.0)))),
    ), "T": (
        ir.TransmissionVariant("T", 0, None, "m", B("+", o(SHM, mv), B("*", N(2.0), L(SHM, mv, 1.0)))),
        ir.TransmissionVariant("T", 1, "tcp", "m", B("+", B("+", o(NET, mv), B("*", N(2.0), L(SHM, mv, 1.0))),
                                                     L(NET, mv, 1.0))),
        ir.TransmissionVariant("T", 1, "rdma", "m", B("+", B("+", o(NET, mv), L(NET, mv, 1.0)),
                                                      ir.Scalar("alpha", NET))),
    )}
    params = (ir.ParamSig("P", "int", None, (">=", N(1.0))), ir.ParamSig("m", "bytes"),
              ir.ParamSig("x", "real", N(0.5)), ir.ParamSig("c", "channel", N(0.0)),
              ir.ParamSig("k", "int", N(0.0)))
    alg = ir.Algorithm("gen", params, body)
    return ir.Program(("shm", "net"), tables, scalars, trans, {"gen": alg})


# ----------------------------------------------------------------------------- expressions

leaf = st.one_of(
    st.sampled_from([N(0.0), N(1.0), N(2.0), N(-3.0), N(0.5), N(1e6), N(4096.0)]),
    st.sampled_from([V("P"), V("m"), V("x")]),
)

channel = st.one_of(
    st.sampled_from([SHM, NET, V("c")]),
    st.builds(lambda t: ir.Cond(B(">", V("P"), N(t)), NET, SHM), st.sampled_from([2.0, 8.0, 100.0])),
)

small_bound = st.one_of(st.sampled_from([N(0.0), N(1.0), N(3.0), N(-1.0)]),
                        st.just(ir.Fn("ceil", (ir.Fn("log2", (V("P"),)),))),
                        st.just(B("%", V("P"), N(5.0))))


def _extend(children):
    un = st.builds(lambda k, a: ir.Fn(k, (a,)), st.sampled_from(["ceil", "floor", "log2", "abs", "sqrt", "exp", "ln"]),
                   children)
    return st.one_of(
        st.builds(B, st.sampled_from(list(ir.ARITH_OPS) + list(ir.COMPARE_OPS) + list(ir.LOGIC_OPS)),
                  children, children),
        st.builds(ir.Neg, children), st.builds(ir.Not, children), un,
        st.builds(lambda k, a, b, c: ir.Fn(k, (a, b, c)), st.sampled_from(["min", "max"]), children, children,
                  children),
        st.builds(ir.Cond, children, children, children),
        st.builds(lambda a, b: ir.Let((("y", a),), b), children, children),
        st.builds(lambda k, lo, hi, body: ir.Reduce(k, "i", lo, hi, body), st.sampled_from(["sum", "max", "min"]),
                  small_bound, small_bound, children),
        st.builds(lambda c, m: ir.Lookup("o", c, (m,)), channel, children),
        st.builds(lambda c, m, t: ir.Lookup("L", c, (m, t)), channel, children, children),
        st.builds(lambda c: ir.Scalar("alpha", c), channel),
        st.builds(ir.Conc, children, children),
        st.builds(lambda c, m: ir.Transmit("T", c, m), channel, children),
        st.builds(lambda ops: ir.ParComp(tuple(tuple(ops_i) for ops_i in ops)),
                  st.lists(st.lists(st.builds(lambda w, c, s: ir.Xmit(w, "T", c, s), children, channel, children),
                                    min_size=1, max_size=2), min_size=1, max_size=3)),
    )


expr = st.recursive(leaf | st.just(V("y")) | st.just(V("i")), _extend, max_leaves=12)

policy = st.fixed_dictionaries({
    "m_below": st.sampled_from(["linear", "clamp"]), "m_beyond": st.sampled_from(["linear", "clamp", "chunks"]),
    "tau_beyond": st.sampled_from(["proportional", "clamp", "linear"]), "nonnegative": st.booleans(),
    "out_of_grid": st.sampled_from(["allow", "allow", "error"]),
})


def _points(rng, n=24):
    pts = [dict(P=1, m=0.0, x=0.0, c=0), dict(P=2 ** 40, m=3e9, x=-1.0, c=1)]
    for _ in range(n):
        pts.append(dict(P=int(rng.choice([1, 2, 3, 4, 7, 8, 9, 33, 1000])),
                        m=float(rng.choice([0.0, 1.0, 3.0, 100.0, 1024.0, 5000.0, 1e6, -5.0, 2.5])),
                        x=float(rng.normal(0, 3)), c=int(rng.integers(0, 2))))
    return pts


#: more examples for a local deep run: TLOP_JIT_EXAMPLES=1000 pytest tests/test_jit_hypothesis.py
EXAMPLES = int(os.environ.get("TLOP_JIT_EXAMPLES", "60"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(body=expr, pol=policy, seed=st.integers(0, 2 ** 32 - 1), kind=st.sampled_from(["tcp", "rdma"]),
       specialize=st.booleans())
def test_generated_programs_agree(body, pol, seed, kind, specialize):
    rng = np.random.default_rng(seed)
    prof = make_profile(tables=taulop_tables(rng, n_m=int(rng.integers(1, 6)), n_tau=int(rng.integers(1, 5))),
                        scalars={"alpha": {"*": 3e-6}},
                        channels={"shm": {"transmission": "shm", "description": "t"},
                                  "net": {"transmission": kind, "description": "t"}}, **pol)
    program = _program(body)
    alg = program.algorithms["gen"]
    ev = compile_algorithm(program, "gen", prof, specialize=specialize)
    ok_pts, ok_want = [], []
    for p in _points(rng):
        env = bind_arguments(program, alg, p)
        want = interp_point(program, alg, prof, env)
        got = jit_point(ev, p)
        if isinstance(want, TlopError):
            assert isinstance(got, TlopError), (p, got, str(want))
            continue
        assert not isinstance(got, TlopError), (p, str(got), want)
        assert agree(got, want), (p, got, want)
        if p["c"] == 0:
            ok_pts.append(p)
            ok_want.append(want)
    if ok_pts:
        arrays = {k: np.array([p[k] for p in ok_pts], dtype=float) for k in ("P", "m", "x")}
        out = ev.batch(**arrays)
        for r, w in zip(out, ok_want):
            assert agree(float(r), w), (r, w)
        if seed % 3 == 0:  # the loop specialised for a scalar x agrees with the general one
            _compare_scalar_variant(ev, arrays["P"], arrays["m"], float(arrays["x"][0]))


def _batch_or_error(ev, **args):
    try:
        return ev.batch(**args)
    except TlopError as err:
        return str(err)


def _compare_scalar_variant(ev, P, m, x):
    ev.scalar_variant_min = None
    general = _batch_or_error(ev, P=P, m=m, x=x)
    ev.scalar_variant_min = 1
    special = _batch_or_error(ev, P=P, m=m, x=x)
    if isinstance(general, str):
        assert general == special
    else:
        assert np.array_equal(general, special, equal_nan=True), (general, special)


def test_generated_error_in_batch_names_the_point():
    """An evaluation error in the middle of a batch is reported with the interpreter's
    message and the point."""
    body = ir.Reduce("max", "i", N(1.0), B("-", V("P"), N(2.0)), V("i"))
    program = _program(body)
    prof = make_profile(tables=taulop_tables(np.random.default_rng(0)), scalars={"alpha": {"*": 1e-6}})
    ev = compile_algorithm(program, "gen", prof)
    assert ev(P=5, m=1.0) == 3.0
    try:
        ev.batch(P=np.array([5, 9, 1, 7]), m=1.0)
    except TlopError as err:
        msg = str(err)
        assert "empty range" in msg and "P=1" in msg and "(2,)" in msg
    else:
        raise AssertionError("no error")
    assert math.isclose(ev.batch(P=np.array([5, 9]), m=1.0)[1], 7.0)


# ----------------------------------------------------------------------------- four ways (issue 8)

int_leaf = st.sampled_from([N(0.0), N(1.0), N(-1.0), N(-2.0), N(3.0), V("k"), V("P")])


#: integer-valued expressions (reduction bounds): negative, zero, positive, symbolic
int_expr = st.recursive(int_leaf, lambda ch: st.one_of(
    st.builds(B, st.sampled_from(["+", "-", "*"]), ch, ch),
    st.builds(ir.Neg, ch),
    st.builds(lambda a, b: B("%", a, b), ch, st.sampled_from([N(2.0), N(3.0), N(-2.0)])),
    st.builds(lambda a, b: ir.Fn("max", (a, b)), ch, ch),
), max_leaves=4)


def _extend4(children):
    xmit = st.builds(lambda w, name, c, s: ir.Xmit(w, name, c, s),
                     st.sampled_from([N(1.0), N(2.0), V("P")]) | children,
                     st.sampled_from(["T", "T", "U"]), channel, children)
    return st.one_of(
        st.builds(B, st.sampled_from(list(ir.ARITH_OPS) + list(ir.COMPARE_OPS) + list(ir.LOGIC_OPS)),
                  children, children),
        st.builds(ir.Neg, children), st.builds(ir.Not, children),
        st.builds(lambda k, a: ir.Fn(k, (a,)), st.sampled_from(["ceil", "floor", "abs", "log2", "sqrt"]), children),
        st.builds(lambda k, a, b: ir.Fn(k, (a, b)), st.sampled_from(["min", "max"]), children, children),
        st.builds(ir.Cond, children, children, children),
        st.builds(lambda a, b: ir.Let((("y", a),), b), children, children),
        st.builds(lambda k, lo, hi, body: ir.Reduce(k, "i", lo, hi, body), st.sampled_from(["sum", "max", "min"]),
                  int_expr, int_expr, children),
        st.builds(lambda c, m: ir.Lookup("o", c, (m,)), channel, children),
        st.builds(ir.Conc, children, children),
        st.builds(lambda name, c, m: ir.Transmit(name, c, m), st.sampled_from(["T", "U"]), channel, children),
        st.builds(lambda ops: ir.ParComp(tuple(tuple(o) for o in ops)),
                  st.lists(st.lists(xmit, min_size=1, max_size=2), min_size=1, max_size=4)),
    )


expr4 = st.recursive(leaf | int_leaf | st.just(V("y")) | st.just(V("i")), _extend4, max_leaves=14)


def _points4(rng, n=20):
    pts = [dict(P=1, m=0.0, x=0.0, k=0), dict(P=3, m=100.0, x=-1.0, k=-2), dict(P=2, m=5000.0, x=2.5, k=2)]
    for _ in range(n):
        pts.append(dict(P=int(rng.choice([1, 2, 3, 4, 7, 8, 33])),
                        m=float(rng.choice([0.0, 1.0, 3.0, 100.0, 1024.0, 5000.0, 1e6, -5.0, 2.5])),
                        x=float(rng.normal(0, 3)), k=int(rng.integers(-4, 5))))
    return pts


def _is_nan_result(r) -> bool:
    """A non-finite result (NaN or ±inf; see interp_point), not an error the interpreter raised."""
    return isinstance(r, TlopError) and r.diagnostics[0].message.startswith("not finite")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(body=expr4, pol=policy, seed=st.integers(0, 2 ** 32 - 1), kind=st.sampled_from(["tcp", "rdma"]))
def test_four_ways_agree(body, pol, seed, kind):
    """interpreter scalar = interpreter array (element by element) = JIT scalar = JIT batch, to
    1e-12 relative, and the same points fail in every way."""
    rng = np.random.default_rng(seed)
    prof = make_profile(tables=taulop_tables(rng, n_m=int(rng.integers(1, 6)), n_tau=int(rng.integers(1, 5))),
                        scalars={"alpha": {"*": 3e-6}},
                        channels={"shm": {"transmission": "shm", "description": "t"},
                                  "net": {"transmission": kind, "description": "t"}}, **pol)
    program = _program(body)
    alg = program.algorithms["gen"]
    ev = compile_algorithm(program, "gen", prof)
    pts = _points4(rng)
    for c in (0, 1):
        group = [dict(p, c=c) for p in pts]
        scalar = [interp_point(program, alg, prof, bind_arguments(program, alg, p)) for p in group]
        # JIT scalar = interpreter scalar
        for p, want in zip(group, scalar):
            got = jit_point(ev, p)
            if isinstance(want, TlopError):
                assert isinstance(got, TlopError), (p, got, str(want))
            else:
                assert not isinstance(got, TlopError), (p, str(got), want)
                assert agree(got, want), (p, got, want)
        arrays = {k: np.array([p[k] for p in group], dtype=float) for k in ("P", "m", "x", "k")}
        failing = [i for i, w in enumerate(scalar) if isinstance(w, TlopError)]
        raising = [i for i, w in enumerate(scalar) if isinstance(w, TlopError) and not _is_nan_result(w)]
        # interpreter array = interpreter scalar, element by element
        try:
            with np.errstate(all="ignore"):
                arr = Interpreter(program, prof).eval(alg.body, bind_arguments(program, alg, dict(arrays, c=c)))
        except TlopError as err:
            assert raising, ("the array evaluation failed but no element does", str(err))
        else:
            assert not raising, ("elements fail alone but not in the array", [str(scalar[i]) for i in raising])
            arr = np.broadcast_to(arr, (len(group),))
            for i, want in enumerate(scalar):
                if _is_nan_result(want):
                    assert not math.isfinite(arr[i]), (group[i], arr[i])
                else:
                    assert agree(float(arr[i]), want), (group[i], arr[i], want)
        # JIT batch = interpreter scalar; a failure names the first failing point
        try:
            out = ev.batch(**arrays, c=c)
        except TlopError as err:
            assert failing, ("the batch failed but no point does", str(err))
            assert f"(batch point ({failing[0]},))" in str(err), (str(err), failing)
        else:
            assert not failing, ("points fail alone but not in the batch", [str(scalar[i]) for i in failing])
            for r, w in zip(out, scalar):
                assert agree(float(r), w), (r, w)
