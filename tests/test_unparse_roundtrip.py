"""The formatter round-trips on generated programs: parse(unparse(m)) == m (spans aside).

Hypothesis builds random ASTs — every operator at every precedence, unary minus and ``not``,
``||`` and ``^`` chains in both associations, let/if/sum/max/min binders in every position,
calls with channels and named arguments, literals with units, compound types, schedules (stages
with par/seq/send/compute/reduce items and blocks), every kind of declaration (channels with
placement and contention, algorithms over a mapping) — prints them and parses the text back."""

from hypothesis import HealthCheck, given, settings, strategies as st

from tlop.frontend import ast as A
from tlop.frontend.parse import parse_text
from tlop.frontend.unparse import unparse, unparse_expr

KEYWORDS = {"let", "in", "if", "then", "else", "sum", "max", "min", "or", "and", "not", "model", "import",
            "channel", "table", "param", "transmission", "def", "algorithm", "via", "stages", "stage",
            "par", "seq", "send", "config", "over", "where", "compute", "reduce", "div", "xor"}
BINARY = ["+", "-", "*", "/", "%", "^", "||", "<", "<=", ">", ">=", "==", "!=", "and", "or",
          "div", "xor", "&", "<<", ">>"]
UNITS = ["", "", "", "B", "KiB", "MB", "us", "µs", "ns", "s", "GiB"]
TYPES = ["int", "real", "bytes", "time", "cost", "channel", "bool", "time/bytes", "bytes^2", "real/time",
         "time*bytes^-2", "bytes/time"]

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,4}", fullmatch=True).filter(lambda s: s not in KEYWORDS)
numbers = st.builds(
    A.Number,
    st.one_of(st.integers(0, 10 ** 6).map(float),
              st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_infinity=False)
              .filter(lambda v: v == 0 or v >= 1e-300).map(abs)),
    st.sampled_from(UNITS))
leaves = st.one_of(numbers, st.builds(A.Name, names))


# the expressions inside stage items: operators and binders (which must stop before '->', ':',
# 'where' and 'weight')
item_exprs = st.recursive(leaves, lambda sub: st.one_of(
    st.builds(A.Binary, st.sampled_from(BINARY), sub, sub),
    st.builds(A.Unary, st.sampled_from(["-", "not"]), sub),
    st.builds(A.LetIn, names, sub, sub),
    st.builds(A.IfThen, sub, sub, sub),
    st.builds(A.Reduction, st.sampled_from(["sum", "max", "min"]), names, sub, sub, sub),
), max_leaves=4)
_item_leaf = st.one_of(
    st.builds(A.SendItem, item_exprs, item_exprs, item_exprs, st.one_of(st.none(), item_exprs)),
    st.builds(A.ComputeItem, st.sampled_from(["compute", "reduce"]), item_exprs, item_exprs),
)
_item = st.recursive(_item_leaf, lambda inner: st.one_of(
    st.builds(A.LoopItem, st.sampled_from(["par", "seq"]), names, item_exprs, item_exprs,
              st.one_of(st.none(), item_exprs), inner),
    st.builds(A.BlockItem, st.lists(inner, max_size=3).map(tuple)),
), max_leaves=4)
ITEMS = st.lists(_item, max_size=3).map(tuple)


def _compound(sub):
    args = st.lists(st.builds(A.Arg, st.one_of(st.none(), names), sub), max_size=3).map(tuple)
    return st.one_of(
        st.builds(A.Binary, st.sampled_from(BINARY), sub, sub),
        st.builds(A.Binary, st.sampled_from(BINARY), sub, sub),
        st.builds(A.Unary, st.sampled_from(["-", "not"]), sub),
        st.builds(A.Call, st.one_of(names, st.sampled_from(["max", "min"])), st.one_of(st.none(), sub), args),
        st.builds(A.Indexed, names, sub),
        st.builds(A.LetIn, names, sub, sub),
        st.builds(A.IfThen, sub, sub, sub),
        st.builds(A.Reduction, st.sampled_from(["sum", "max", "min"]), names, sub, sub, sub),
        st.builds(A.Stage, ITEMS),
        st.builds(A.Stages, names, sub, sub, ITEMS),
    )




exprs = st.recursive(leaves, _compound, max_leaves=25)
types = st.builds(A.TypeRef, st.sampled_from(TYPES))
compare_ops = st.sampled_from(["<", "<=", ">", ">=", "==", "!="])


@st.composite
def params(draw):
    constrained = draw(st.booleans())
    return A.Param(draw(names), draw(types), draw(compare_ops) if constrained else None,
                   draw(exprs) if constrained else None, draw(st.one_of(st.none(), exprs)),
                   per_rank=draw(st.one_of(st.none(), st.none(), names)))  # counts: bytes[P]


param_lists = st.lists(params(), max_size=3).map(tuple)
channel_params = st.one_of(st.none(), st.builds(lambda n: A.Param(n, A.TypeRef("channel")), names))
docs = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=20)
                .map(str.strip), max_size=2).map(tuple)
paths = st.text(st.sampled_from(list("abc/._-é\\\"")), max_size=12)

decls = st.one_of(
    st.builds(A.ModelDecl, names, docs),
    st.builds(A.ImportDecl, paths, docs),
    st.builds(A.ChannelDecl, names, docs, st.sampled_from([None, "within", "between"]),
              st.sampled_from([None, "node", "dst_node", "src_node", "either"])),
    st.builds(A.TableDecl, names, channel_params, param_lists, types, docs),
    st.builds(A.ParamDecl, names, channel_params, types, docs),
    st.builds(A.TransmissionDecl, names, names, names, st.one_of(st.none(), names), exprs, docs),
    st.builds(A.DefDecl, names, param_lists, st.one_of(st.none(), types), exprs, docs),
    st.builds(A.AlgorithmDecl, names, param_lists, st.one_of(st.none(), types), exprs, docs,
              st.one_of(st.none(), st.just("mapping"), names), requires=st.one_of(st.none(), exprs)),
)
modules = st.lists(decls, min_size=1, max_size=5).map(lambda ds: A.Module(tuple(ds)))

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(SETTINGS, max_examples=250)
@given(exprs)
def test_expressions_round_trip(e):
    text = unparse_expr(e)
    back = parse_text(f"algorithm a() = {text}").decls[0].body
    assert back == e, text


@SETTINGS
@given(modules)
def test_modules_round_trip(m):
    text = unparse(m)
    back = parse_text(text)
    assert back == m, text
    assert unparse(back) == text


def test_the_issue_example_keeps_its_grouping():
    e = parse_text("algorithm a() = A || T[shm](S) || T[shm](m)").decls[0].body
    assert e == A.Binary("||", A.Binary("||", A.Name("A"), A.Call("T", A.Name("shm"), (A.Arg(None, A.Name("S")),))),
                         A.Call("T", A.Name("shm"), (A.Arg(None, A.Name("m")),)))
    assert unparse_expr(e) == "A || T[shm](S) || T[shm](m)"
    right = A.Binary("||", e.lhs.lhs, A.Binary("||", e.lhs.rhs, e.rhs))
    assert unparse_expr(right) == "A || (T[shm](S) || T[shm](m))"
