"""The native parser (tlop.frontend.native) against the reference (the Python ANTLR parser): the
same AST, spans and field dicts included, for every stdlib file, every golden input, generated
modules (hypothesis, the formatter's strategies) and mutated declarations; no answer (the
reference parses) for every source the reference rejects, so diagnostics cannot differ.

The library has two paths, compared byte for byte on every input here: the fast path (a
hand-written lexer and recursive-descent parser, grammar/native/fast*.go) either delegates or
answers exactly the bytes of the ANTLR path (the ANTLR Go target of the same grammar); the stdlib
and the golden inputs must not be delegated.  Skipped, with the reason, where Go cannot build the
library."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tlop.frontend import ast as A, native
from tlop.frontend.limits import deep
from tlop.frontend.loader import resolve_path, stdlib_modules
from tlop.frontend.parse import parse_reference, parse_source
from tlop.frontend.unparse import unparse
from tlop.runtime.diagnostics import Source, TlopError

from test_fuzz_frontend import algorithm_like, mutated, token_soup  # the front end's fuzz inputs
from test_unparse_roundtrip import modules  # the formatter's strategies: every construct

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module", autouse=True)
def library():
    try:
        native.build(quiet=True)
    except RuntimeError as e:
        pytest.skip(f"native parser not built: {e}")
    native._state.clear()  # load the library just built
    # built but not used (an AST class changed and grammar/native does not write it yet): a failure
    assert native.available(), native.status()


def _fields(node):
    """Everything of an AST, spans (as tuples) included; a field left unset is missing."""
    if isinstance(node, tuple):
        return tuple(_fields(n) for n in node)
    if isinstance(node, A.Node):
        names = tuple(f.name for f in dataclasses.fields(node) if hasattr(node, f.name))
        return (type(node).__name__, names, tuple(_fields(getattr(node, n)) for n in names))
    if type(node).__name__ == "Span":
        return ("Span", node.source.name, node.line, node.col, node.end_line, node.end_col)
    return (type(node).__name__, node)


def paths(source: Source, auto: bool = True):
    """(fast, antlr): the answers of the library's two paths, after checking the contract: the
    fast path delegates (None) or answers the ANTLR path's bytes; with ``auto``, the answer of
    both (what :func:`native.parse` reads) is the ANTLR path's."""
    fast = native.native_answer(source, "fast")
    antlr = native.native_answer(source, "antlr")
    assert fast is None or fast == antlr, f"the fast path differs from the ANTLR path:\n{source.text[:500]}"
    if auto:
        assert native.native_answer(source) == antlr
    return fast, antlr


def same(text: str, name: str = "t.tlop", fast: bool = False) -> str:
    """Parse ``text`` both ways and check they agree (the native library's two paths too: with
    ``fast``, the fast path must answer); returns 'ok' or 'error' (the reference's)."""
    source = Source(name, text)
    answers = paths(source)
    if fast:
        assert answers[0] is not None, f"the fast path delegated:\n{text[:500]}"
    got = native.parse(source)
    try:
        want = parse_reference(source)
    except TlopError:
        assert got is None, f"native parser accepted what the reference rejects:\n{text[:500]}"
        return "error"
    assert got is not None, f"native parser refused a valid source:\n{text[:500]}"
    with deep():
        assert _fields(got) == _fields(want)
    for span in (n.span for n in A.iter_nodes(got)):
        assert span is None or span.source is source
    return "ok"


@pytest.mark.parametrize("name", stdlib_modules())
def test_stdlib_files(name):
    assert same(resolve_path(name).read_text(), name, fast=True) == "ok"


def test_golden_inputs():
    files = sorted((ROOT / "tests").rglob("*.tlop"))
    assert files
    outcomes = {same(f.read_text(encoding="utf-8", errors="surrogateescape"), f.name) for f in files}
    assert outcomes == {"ok", "error"}
    # the fast path answers every one the ANTLR path answers (and the same bytes, by paths())
    for f in files:
        fast, antlr = paths(Source(f.name, f.read_text(encoding="utf-8", errors="surrogateescape")))
        assert (fast is None) == (antlr is None), f"the fast path delegated {f}"


@pytest.mark.parametrize("text", [
    'import "a\\\\b\\"c\\d é"\n',                                   # escapes and non-ASCII in a path
    "/// caf\u00e9 \u2028x\x1c\n///\t\n/// \u3000\ndef f() = 1\n",        # doc comments, Python's whitespace
    "def f() = 1e400 + 1e-400 + 2.5e+3us + 1µs + 3ee + 1E3KiB + 0007\n",  # numbers and units
    "def f(x: time/bytes^-2 * real, y: int >= (1 + 2) = -(3)) -> time = ((x))\n",
    "algorithm a(P: int, counts: bytes[P] >= 0 = 1B, w: real[ P ]) = counts[0] + w[1]\n",  # per-rank
    "# \U0001F600 comment\r\ndef f() = 1\r\n\tdef g() = f() # tab\n",
    "channel a within node contention all\nchannel b between nodes\nchannel c contention src_node\n",
    "config c { N: int, x: int[P], }\nalgorithm a(P: int) over map: mapping where P > 1 and not P == 3 "
    "= c.x[0] + c.N\nalgorithm b() over mapping = 1\n",
    "algorithm a(P: int) over map: mapping = stages k in 0 .. P { par p in 0 .. P where p > 0: "
    "seq q in 1 .. 2: { send p -> q : 1B weight 2 compute p : 1us reduce q : 4B } }\n"
    "def s(P: int) = stage { send 0 -> 1 : 1B }\n",
    "def f(a: int) = let x = a in if x < 1 then sum i in 1 .. a: max j in 0 .. i: i ^ -j ^ 2 else min(x, 3)\n",
    "def f(c: channel) = T[c](1B) + L[c](2, tau = 3) + g[c] || 2 || 3 - 4 * 5 / 6 % 7 div 8\n"
    "def g(a: int) = a xor 1 & 2 << 3 >> 4 or a != 0 and a <= 1\n",
    "transmission T[net](m) via tcp = o[net](m)\ntable L[c: channel](m: bytes, tau: int,) -> time\n"
    "param alpha[c: channel]: time\nmodel taulop\n",
    "",
    "\n\n   # only a comment",
    # the decisions that look far ahead: a call with a channel or an indexed name, inside ranges,
    # conditions, bounds and items; reductions and calls of max/min; named arguments
    "def f(c: channel, x: int >= c2.n[a[1]] + 1 = g[c](h[1]) + 1,) = sum i in a[1] .. b[c](3): d[i] ^ -e[2](1)\n",
    "def g() = stages k in 0 .. f[c](1) { send a[1] -> b[2](x = 1, y) : c.x[1] weight d[e] "
    "par p in m[0] .. n[1](2) where q[p](p): compute r[p] : s[t](u) }\n",
    "def h() = if a[1] then b[2](3) else let x = a[b[c[1]]] in x[2](1) || max(x, min[c](1, 2,),) "
    "+ (max i in 0 .. 1: min j in max(0, 1) .. min[c](2): i)\n",
    "def k() = not a[1] < b[2](3) and (c.d) >= -(e[f]) or g.h xor i[j] & k[l](m) << 2 >> 1\n",
])
def test_edge_cases(text):
    assert same(text, fast=True) == "ok"


@pytest.mark.parametrize("text", [
    "def f( = 1", "def f() = 1 +", 'import "a', "def f() = $", "channel a within nodes",
    "channel a contention nope", "channel a sideways", "algorithm a() over x: mapper = 1",
    "config c { x: int[Q] }", "def s() = stage { send 0 -> 1 : 1B weigh 2 }", "def stage() = 1",
    "def f() = 1 " + "+ 1 " * 5000,                     # the chain limit: the reference's error
    "def a() = 1\n) def b() = 2\n", "def a() = 1\ndef b( = 2\n", "/// doc only\n",
])
def test_errors_go_to_the_reference(text):
    assert native.native_answer(Source("t.tlop", text), "fast") is None  # the builder's cases too
    assert same(text) == "error"


def test_deep_nesting_goes_to_the_reference():
    text = "def f() = " + "(" * 400 + "1" + ")" * 400 + "\n"
    assert native.parse(Source("d.tlop", text)) is None       # deeper than MAX_DEPTH rule levels
    assert native.native_answer(Source("d.tlop", text), "fast") is None
    assert parse_source(Source("d.tlop", text)) == parse_reference(Source("d.tlop", text))
    assert native.parse(Source("d.tlop", "def f() = " + "-" * 30000 + "1\n")) is None  # pre-scan


def test_a_long_flat_chain_within_the_limit():
    assert same("def f() = 1" + " + x" * 4998 + "\n", fast=True) == "ok"


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_generated_modules(data):
    assert same(unparse(data.draw(modules))) == "ok"


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(mutated(), token_soup, algorithm_like))
def test_fuzz_inputs(text):
    same(text)


def test_mutated_declarations():
    from test_fuzz_declarations import make_case

    rng = random.Random(20261125)
    outcomes = [same(make_case(rng)[1]) for _ in range(400)]
    assert {"ok", "error"} <= set(outcomes)


def test_not_used_after_fork():
    pid = os.fork()
    if pid == 0:  # the child: the Go runtime's threads did not survive the fork
        os._exit(0 if not native.available() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert native.available()


def test_version_names_the_parser():
    tlop = [sys.executable, "-c", "import sys; from tlop.cli import main; sys.exit(main())", "--version"]
    out = subprocess.run(tlop, capture_output=True, text=True, check=True).stdout
    assert "parser: native" in out
    env = dict(os.environ, TLOP_PARSER="python")
    out = subprocess.run(tlop, capture_output=True, text=True, check=True, env=env).stdout
    assert "parser: Python ANTLR runtime (the native parser is turned off (TLOP_PARSER=python))" in out


def test_a_schema_mismatch_turns_it_off(monkeypatch):
    monkeypatch.setattr(native, "_expected_schema", lambda: "Module:decls")
    native._state.clear()
    try:
        assert not native.available()
        assert "out of date" in native.status()
        assert native.parse(Source("t.tlop", "def f() = 1")) is None
    finally:
        monkeypatch.undo()
        native._state.clear()
    assert native.available()


def test_the_unpickler_refuses_other_classes():
    import pickle

    with pytest.raises(pickle.UnpicklingError):
        native._Unpickler(b"\0" + pickle.dumps(os.system), Source("t", "")).load()


# ------------------------------------------------------------------ the fast path against the ANTLR path


@pytest.mark.parametrize("text", [
    'import "a', 'import "a\nb"', "def f() = 1 ! 2", "def f() = a | b", "def f() = a\x0cb", "def f() = a·b",
    "def f() = 1 < 2 < 3", "def f() = a == b == c", "def f() = max i", "def f() = (1", "def f() = 1)",
    "def f(a: int,,) = 1", "config c { , }", "def f() = f(a = )", "def f() = x[1](", "def f() = c.",
    "def f() = stage { send 0 -> 1 }", "def f() = stages k in 0 .. 1 { }}", "algorithm a() over = 1",
    "def f() = let x = 1 x", "def f() = if a then b", "def f() = 2 ^", "def f() = - ", "model", "import x",
    "channel", "channel c within", "table t(m: bytes)", "param p: ", "transmission T[c](m) = ",
    "def f() -> = 1", "def f() = 1 def", "/// doc\n/// doc", "def f() = a.b.c", "def f() = 1.e5",
    "def f() = 'x'", "def f() = 1\n\x00", "def f(x: int ^ a) = 1", "def f() = sum i in 1 .. 2 3",
])
def test_the_fast_path_delegates_what_it_must(text):
    assert native.native_answer(Source("t.tlop", text), "fast") is None
    assert same(text) == "error"


def _shapes(n):
    """Sources nested n deep in each way the limits count (parentheses, prefix operators, right
    associative powers, nested lets, calls, blocks) and chains n long."""
    return {
        "parens": "def f() = " + "(" * n + "1" + ")" * n,
        "negations": "def f() = " + "- " * n + "x",
        "nots": "def f() = " + "not " * n + "x",
        "powers": "def f() = " + " ^ ".join(["2"] * n),
        "lets": "def f() = " + "".join(f"let x{i} = {i} in " for i in range(n)) + "x0",
        "calls": "def f() = " + "g(a = " * n + "1" + ")" * n,
        "indexed": "def f() = " + "c.x[" * n + "0" + "]" * n,
        "blocks": "def f() = stage { " + "par p in 0 .. 2: " * (n // 2) + "{ " * n + "compute 0 : 1" + " }" * n + " }",
        "sums": "def f() = " + "".join(f"max i{i} in 0 .. 1: " for i in range(n)) + "1",
        "chain": "def f() = 1" + " * x" * n,
        "concurrent": "def f() = 1" + " || x" * n,
        "bound": "def f(a: int >= 1" + " + 1" * n + ") = a",
    }


@pytest.mark.parametrize("depth, estimate, chain", [(60, 10 ** 6, 10 ** 6), (10 ** 6, 300, 10 ** 6),
                                                    (10 ** 6, 10 ** 6, 7), (90, 400, 12)])
def test_the_limits_are_the_antlr_paths(monkeypatch, depth, estimate, chain):
    """With small limits (rule depth, the token pre-scan, chain length), the fast path delegates
    exactly where the ANTLR path stops: both answer the same bytes, or the fast path delegates
    and the ANTLR path stops too — at every size around the limits, and for the stdlib."""
    monkeypatch.setattr(native, "MAX_DEPTH", depth)
    monkeypatch.setattr(native, "MAX_ESTIMATE", estimate)
    monkeypatch.setattr(native, "MAX_CHAIN_TERMS", chain)
    outcomes = set()
    for n in range(1, 40):
        for kind, text in _shapes(n).items():
            fast, antlr = paths(Source("t.tlop", text))
            assert (fast is None) == (antlr is None), (kind, n)
            outcomes.add(antlr is None)
    for name in stdlib_modules():
        fast, antlr = paths(Source(name, resolve_path(name).read_text()))
        assert (fast is None) == (antlr is None), name
        outcomes.add(antlr is None)
    assert outcomes == {True, False}


def test_chain_and_depth_limits_at_their_real_values():
    from tlop.frontend.limits import MAX_CHAIN_TERMS

    for ops in (MAX_CHAIN_TERMS - 1, MAX_CHAIN_TERMS):
        fast, antlr = paths(Source("t.tlop", "def f() = 1" + " + x" * ops))
        assert (fast is None) == (antlr is None)
    assert antlr is None                               # MAX_CHAIN_TERMS operators: the reference decides
    answered = set()
    for n in range(90, 110):                           # about 15 rule levels a parenthesis
        fast, antlr = paths(Source("t.tlop", "def f() = " + "(" * n + "1" + ")" * n))
        assert (fast is None) == (antlr is None), n
        answered.add(fast is not None)
    assert answered == {True, False}


MUTATION_ALPHABET = list("()[]{},:;=<>-+*/^%&|!.#\"\\ \n\t\r_0123456789aeExPµé") + [
    "max", "min", "sum", "let", "in", "if", "then", "else", "not", "and", "or", "xor", "div", "stage", "stages",
    "par", "seq", "send", "compute", "reduce", "over", "where", "mapping", "weight", "channel", "->", "..", "///",
    "||", "<<", ">>", "<=", "==", "!=", "1e400", "2.5e-3us", "\u2028", "\x0c", "\U0001F600"]


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(len(text) + 1)
        kind = rng.random()
        if kind < 0.3 and text:                      # delete 1..4 characters
            text = text[:pos] + text[pos + rng.randint(1, 4):]
        elif kind < 0.65:                            # insert
            text = text[:pos] + rng.choice(MUTATION_ALPHABET) + text[pos:]
        else:                                        # replace
            text = text[:pos] + rng.choice(MUTATION_ALPHABET) + text[pos + 1:]
    return text


def test_mutated_sources():
    """2,000 stdlib files with characters inserted, deleted or replaced at random, 600 mutated
    declarations (token level) and 600 token soups: the fast path delegates or answers the ANTLR
    path's bytes; it answers every valid one."""
    from test_fuzz_declarations import make_case
    from test_fuzz_frontend import TOKENS

    rng = random.Random(14_8)
    texts = [resolve_path(n).read_text() for n in stdlib_modules()]
    cases = [_mutate(rng, rng.choice(texts)) for _ in range(2000)]
    cases += [make_case(rng)[1] for _ in range(600)]
    cases += [" ".join(rng.choice(TOKENS + MUTATION_ALPHABET) for _ in range(rng.randint(0, 30)))
              for _ in range(600)]
    counts = {"answered": 0, "delegated": 0, "refused": 0}
    for text in cases:
        fast, antlr = paths(Source("m.tlop", text), auto=False)
        if antlr is None:
            counts["refused"] += 1
        else:
            counts["answered" if fast is not None else "delegated"] += 1
    assert counts["answered"] > 300 and counts["refused"] > 300, counts
    assert counts["delegated"] == 0, counts


def test_the_path_can_be_chosen_by_the_environment(monkeypatch):
    ok, bad = Source("t.tlop", "def f() = 1\n"), Source("t.tlop", "def f() = a[1](\n")
    for path in ("fast", "antlr", "auto"):
        monkeypatch.setenv("TLOP_NATIVE_PATH", path)
        assert native.native_answer(ok) == native.native_answer(ok, "antlr") is not None
        assert native.native_answer(bad) is None
    monkeypatch.setenv("TLOP_NATIVE_PATH", "nope")     # not a path: both, as without it
    assert native.native_answer(ok) == native.native_answer(ok, "antlr")
