"""The fast paths of checking and lowering (issue 14, item 8) give the answers of the plain
definitions: memoized tree sizes and schedule flags (recursive while shallow, an explicit stack
when deep), the direct ``__init__`` of IR nodes, ``Type`` equality, and the bound that lets
``check_transmission_expansion`` skip walking an algorithm again with weights."""

import dataclasses
import inspect
import random

import pytest

from tlop import ir
from tlop.frontend import expansion
from tlop.frontend.expansion import TreeSizes, check_transmission_expansion
from tlop.ir import types as T
from tlop.runtime.diagnostics import DiagnosticSink


def _tree_size(e) -> int:
    """The size of ``e`` as a tree, without TreeSizes (memoized on identity, iterative)."""
    memo, stack = {}, [e]
    while stack:
        n = stack[-1]
        kids = [k for k in ir.children(n) if id(k) not in memo]
        if kids:
            stack.extend(kids)
            continue
        stack.pop()
        memo[id(n)] = 1 + sum(memo[id(k)] for k in ir.children(n))
    return memo[id(e)]


def _random_dag(rng: random.Random, n: int):
    nodes = [ir.Num(1.0), ir.Var("x")]
    for _ in range(n):
        a, b = rng.choice(nodes[-40:]), rng.choice(nodes)
        r = rng.random()
        if r < 0.4:
            nodes.append(ir.Bin("+", a, b))
        elif r < 0.6:
            nodes.append(ir.Neg(a))
        elif r < 0.63:
            nodes.append(ir.Stage((ir.Compute(ir.Num(0.0), a),)))
        elif r < 0.65:
            nodes.append(ir.NodeOf(a))
        elif r < 0.75:
            nodes.append(ir.Let((("x", a),), b))
        else:
            nodes.append(ir.Fn("max", (a, b, ir.Num(2.0))))
    return nodes


@pytest.mark.parametrize("seed", range(8))
def test_tree_sizes_and_schedules_match_the_plain_walks(seed):
    rng = random.Random(seed)
    nodes = _random_dag(rng, rng.choice((20, 300, 2000)))
    sizes = TreeSizes()
    for n in [nodes[-1]] + rng.sample(nodes, 15):  # the root first, then parts already in the memo
        assert sizes.size(n) == _tree_size(n)
        assert sizes.has_schedule(n) == ir.has_schedule(n)


def test_a_deep_tree_is_walked_without_recursion():
    e = ir.Var("m")
    for i in range(100_000):  # far deeper than the recursion limit
        e = ir.Neg(e) if i % 2 else ir.Bin("*", e, ir.NodeOf(ir.Num(1.0)) if i == 8 else ir.Num(2.0))
    sizes = TreeSizes()
    assert sizes.size(e) == _tree_size(e) == 150_002
    assert sizes.has_schedule(e) and ir.has_schedule(e)
    assert sizes.size(ir.Num(1.0)) == 1 and not sizes.has_schedule(ir.Var("x"))


def test_a_shared_dag_counts_as_its_tree():
    e = ir.Bin("+", ir.Var("m"), ir.Num(1.0))
    for _ in range(60):
        e = ir.Bin("+", e, e)
    assert TreeSizes().size(e) == 2 ** 62 - 1


def test_weighted_sizes_count_each_transmission_with_its_weight():
    t = ir.Transmit("T", ir.Num(0.0), ir.Var("m"))
    e = ir.Bin("+", t, ir.Bin("+", t, ir.Send(ir.Num(0.0), ir.Num(1.0), ir.Var("m"), ir.Num(1.0))))
    assert TreeSizes({"T": 10}).size(e) == _tree_size(e) + 3 * 10  # two Transmits and the Send's T


def _program(levels: int):
    """U_i = U_{i-1} + U_{i-1} over ``levels`` levels, and algorithms using the top one."""
    variants = {"U0": (ir.TransmissionVariant("U0", 0, None, "m", ir.Var("m")),)}
    for i in range(1, levels + 1):
        call = ir.Transmit(f"U{i - 1}", ir.Num(0.0), ir.Var("m"))
        variants[f"U{i}"] = (ir.TransmissionVariant(f"U{i}", 0, None, "m", ir.Bin("+", call, call)),)
    top = ir.Transmit(f"U{levels}", ir.Num(0.0), ir.Var("m"))
    small = ir.Algorithm("small", (), ir.Num(1.0))
    one = ir.Algorithm("one", (), top)
    three = ir.Algorithm("three", (), ir.Bin("+", top, ir.Bin("+", top, top)))
    return variants, {"small": small, "one": one, "three": three}


def test_skipping_small_algorithms_reports_the_same_errors():
    """Given the elaborator's unweighted sizes, an algorithm is skipped only when it cannot pass
    the limit: the reports are those of walking every algorithm with weights."""
    variants, algorithms = _program(4)
    weights = {}
    for i in range(5):
        weights[f"U{i}"] = TreeSizes(dict(weights)).size(variants[f"U{i}"][0].body)
    assert weights["U4"] == 121
    weighted = {name: TreeSizes(weights).size(a.body) for name, a in algorithms.items()}
    assert weighted == {"small": 1, "one": 124, "three": 374}
    for limit in (10, 100, 121, 123, 124, 130, 373, 374, 400, 1000):
        reports = []
        for unweighted in (None, TreeSizes()):
            sink = DiagnosticSink()
            if unweighted is not None:
                for alg in algorithms.values():
                    unweighted.size(alg.body)
            check_transmission_expansion(variants, algorithms, sink, limit=limit, unweighted=unweighted)
            reports.append([(d.message, d.span) for d in sink.items])
        assert reports[0] == reports[1], limit
        if limit >= weights["U4"]:
            named = {m.split("'")[1] for m, _ in reports[1]}
            assert named == {name for name, s in weighted.items() if s > limit}, limit


def test_direct_init_keeps_the_dataclass_signature():
    from tlop.ir import program  # the declaration classes (ir.nodes imports them last)

    classes = [c for mod in (ir.nodes, program) for c in vars(mod).values()
               if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == mod.__name__]
    assert len(classes) > 25
    for cls in classes:
        fields = dataclasses.fields(cls)
        params = list(inspect.signature(cls).parameters.values())
        want = [f for f in fields if not f.kw_only] + [f for f in fields if f.kw_only]
        assert [p.name for p in params] == [f.name for f in want], cls
        for p, f in zip(params, want):
            assert (p.kind == p.KEYWORD_ONLY) == f.kw_only, (cls, f.name)
            if f.default is not dataclasses.MISSING:
                assert p.default == f.default, (cls, f.name)
            elif f.default_factory is dataclasses.MISSING:
                assert p.default is p.empty, (cls, f.name)
    n = ir.ConfigRef("partition", "x", ir.Var("p"), span="here", ty=T.INT)
    assert (n.config, n.field, n.index, n.span, n.ty) == ("partition", "x", ir.Var("p"), "here", T.INT)
    assert list(vars(n)) == [f.name for f in dataclasses.fields(n)]  # the generated order
    assert ir.ConfigRef("a", "b") == ir.ConfigRef("a", "b", span=1) and ir.ConfigRef("a", "b").index is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        n.field = "y"
    with pytest.raises(TypeError):
        ir.Bin("+", ir.Num(1.0))


def test_types_compare_and_hash_by_value():
    built = T.Type("num", 1, 0)
    assert built is not T.TIME and built == T.TIME and hash(built) == hash(T.TIME)
    assert T.parse_type("time/bytes") == T.arith("/", T.TIME, T.BYTES) != T.TIME
    assert T.INT != T.REAL and T.REAL.same_dimension(T.INT) and not T.BOOL.same_dimension(T.BOOL)
    assert T.TIME.same_dimension(built) and T.TIME != "time" and T.Type("bool") == T.BOOL
    assert T.arith("*", T.TIME, T.INT) is T.TIME and str(built) == str(T.TIME) == "time"
    assert T.function("log2", (T.INT,)) is T.REAL and T.function("max", iter([T.TIME, built])) == T.TIME
    assert T.accepts(T.REAL, T.INT) and not T.accepts(T.INT, T.REAL) and T.accepts(T.TIME, built)


def test_recursion_depth_of_the_fast_walk_is_bounded():
    assert 8 <= expansion._RECURSION <= 100
