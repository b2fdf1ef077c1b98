"""The typed IR: lowering annotates every node, passes keep it well typed, and the verifier
rejects what is not (so it is not vacuous)."""

import dataclasses

import pytest

import tlop
from tlop import ir
from tlop.analysis.simplify import DEFAULT_FAMILIES, PassManager, context_for
from tlop.frontend.loader import stdlib_modules
from tlop.ir import types as T
from tlop.ir.typecheck import IRTypeError, algorithm_env, annotate, annotate_program
from tlop.ir.verify import problems_of, verify_algorithm, verify_expr, verify_program

MODULES = stdlib_modules()


@pytest.mark.parametrize("name", MODULES)
def test_lowering_annotates_every_node(name):
    program = tlop.load(name).program
    verify_program(program)
    for alg in program.algorithms.values():
        assert all(n.ty is not None for n in ir.walk(alg.body))
    # annotating an already annotated program changes nothing
    again = annotate_program(program)
    for alg in program.algorithms.values():
        assert [n.ty for n in ir.walk(again.algorithms[alg.name].body)] == [n.ty for n in ir.walk(alg.body)]


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("families", [DEFAULT_FAMILIES, frozenset()], ids=["all-rules", "no-rules"])
def test_every_simplifier_pass_keeps_the_ir_well_typed(name, families):
    program = tlop.load(name).program
    for alg in program.algorithms.values():
        env = algorithm_env(alg)
        checked = []

        def after_pass(pass_name, expr):
            typed = annotate(expr, program, env, T.TIME)  # new nodes typed after the fact
            verify_expr(typed, program, env, want=T.TIME, what=f"{alg.name} after {pass_name}")
            checked.append(pass_name)

        ctx = context_for(program, alg, families=families)
        PassManager(ctx, dump=after_pass, dump_after=("all",)).run(alg.body)
        assert checked == [p for p, _, _ in PassManager.PASSES]


def _p2p():
    program = tlop.load("loggp/p2p").program
    return program, program.algorithms["p2p"]


def test_ill_typed_ir_is_rejected():
    program, alg = _p2p()
    env = algorithm_env(alg)
    m = ir.Var("m", ty=T.BYTES)
    L = ir.Scalar("L", None, ty=T.TIME)
    # a node whose annotation lies: bytes + time claimed to be a time
    bad = ir.Bin("+", m, L, ty=T.TIME)
    with pytest.raises(IRTypeError, match="cannot add size"):
        verify_expr(bad, program, env)
    # an annotation that disagrees with its operands
    wrong = ir.Bin("*", m, ir.Scalar("G", None, ty=T.TIME / T.BYTES), ty=T.BYTES)
    assert any("annotated size (B), but its operands give time (s)" in p for p in problems_of(wrong, program, env))
    # a missing annotation
    with pytest.raises(IRTypeError, match="no type annotation"):
        verify_expr(ir.Bin("+", L, ir.Num(1e-6), ty=T.TIME), program, env)
    # a variable typed differently from its parameter
    with pytest.raises(IRTypeError, match="operands give size"):
        verify_expr(ir.Var("m", ty=T.TIME), program, env)
    # an int constant that is not whole, a channel constant out of range
    assert problems_of(ir.Num(0.5, ty=T.INT), program, {})
    assert problems_of(ir.Num(7.0, ty=T.CHANNEL), program, {})
    # a cost that is not a time
    squared = dataclasses.replace(alg, body=ir.Bin("*", m, m, ty=T.BYTES * T.BYTES))
    with pytest.raises(IRTypeError, match="the cost must be a time"):
        verify_algorithm(squared, program)
    # the whole program with one broken algorithm
    broken = dataclasses.replace(program, algorithms={**program.algorithms, "p2p": squared})
    with pytest.raises(IRTypeError, match="p2p"):
        verify_program(broken)


def test_a_rewrite_that_keeps_a_stale_annotation_is_caught():
    # rebuild keeps the parent's type: replacing a size by a time under a "+" of sizes is caught
    program, alg = _p2p()
    env = algorithm_env(alg)
    body = alg.body
    diff = next(n for n in ir.walk(body) if isinstance(n, ir.Bin) and n.op == "-")  # m - 1B
    swapped = ir.rebuild(diff, (ir.Scalar("L", None, ty=T.TIME), diff.rhs))
    assert swapped.ty == T.BYTES  # kept by rebuild
    with pytest.raises(IRTypeError):
        verify_expr(swapped, program, env)


def test_annotate_types_bare_constants_from_their_place():
    program, alg = _p2p()
    env = algorithm_env(alg)
    L = ir.Scalar("L", None)
    e = annotate(ir.Bin("+", L, ir.Num(1e-6)), program, env, T.TIME)
    assert e.rhs.ty == T.TIME and e.ty == T.TIME
    e = annotate(ir.Bin("*", ir.Num(2e-6), ir.Var("m")), program, env, T.TIME)
    assert e.lhs.ty == T.TIME / T.BYTES and e.ty == T.TIME
    e = annotate(ir.Bin("/", ir.Var("m"), ir.Num(4.0)), program, env, T.BYTES)
    assert e.rhs.ty == T.INT and e.ty == T.BYTES
    e = annotate(ir.Fn("max", (ir.Var("m"), ir.Num(0.0))), program, env)
    assert e.args[1].ty == T.BYTES
    e = annotate(ir.Reduce("sum", "i", ir.Num(1.0), ir.Num(3.0), ir.Bin("*", ir.Var("i"), L)), program, env)
    assert e.lo.ty == T.INT and e.body.lhs.ty == T.INT and e.ty == T.TIME
    verify_expr(e, program, env, want=T.TIME)
    with pytest.raises(IRTypeError, match="cannot add"):
        annotate(ir.Bin("+", ir.Var("m"), L), program, env)
    with pytest.raises(IRTypeError, match="not in scope"):
        annotate(ir.Var("nope"), program, env)


def test_types_are_not_part_of_equality_and_survive_rebuild():
    a = ir.Bin("+", ir.Num(1.0, ty=T.INT), ir.Var("x", ty=T.INT), ty=T.INT)
    b = ir.Bin("+", ir.Num(1.0), ir.Var("x"))
    assert a == b and hash(a) == hash(b)
    c = ir.rebuild(a, (ir.Num(2.0, ty=T.INT), a.rhs))
    assert c.ty == T.INT and c != a
    assert ir.rebuild(a, ir.children(a)) is a


def test_folding_a_unit_numeral_keeps_its_dimension():
    """``n · 1B`` (an int times one byte) is bytes: folding the chain's numerals must not drop
    the ``1B`` as a neutral 1 (the result would be a plain int where bytes are wanted), and
    ``2 · 3B`` folds to ``6B``, typed bytes."""
    module = tlop.loads('import "taulop/platform.tlop"\n'
                        "algorithm a(n: int >= 0) = T[shm](n * 1B) + T[net](2 * (3B * n))\n")
    program, alg = module.program, module.program.algorithms["a"]
    env = algorithm_env(alg)
    r = PassManager(context_for(program, alg)).run(alg.body)
    verify_expr(annotate(r.expr, program, env, T.TIME), program, env, want=T.TIME)
    nums = [n for n in ir.walk(r.expr) if isinstance(n, ir.Num)]
    assert any(n.value == 1 and n.ty == T.BYTES for n in nums), r.expr
    assert any(n.value == 6 and n.ty == T.BYTES for n in nums), r.expr
