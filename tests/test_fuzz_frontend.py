"""Fuzzing the front end: any input either compiles or raises TlopError with a span.

Inputs are generated from the grammar's vocabulary and mutated from whole stdlib sources
(characters deleted, inserted, replaced; tokens inserted): 1,700 cases per run, the costly
whole-module mutations fewer.  ``test_fuzz_declarations.py`` adds 8,300 cheaper cases (a few
declarations each) for over 10,000 a run.
"""

from hypothesis import HealthCheck, given, settings, strategies as st

import tlop
from tlop.runtime.diagnostics import TlopError
from tlop.frontend.loader import resolve_path, stdlib_modules

SOURCES = [resolve_path(n).read_text() for n in stdlib_modules()]
TOKENS = ["model", "import", "channel", "table", "param", "transmission", "def", "algorithm", "via",
          "let", "in", "if", "then", "else", "sum", "max", "min", "and", "or", "not", "stages",
          "(", ")", "[", "]", ",", ":", "=", "->", "..", "+", "-", "*", "/", "%", "^", "||",
          "<", "<=", ">", ">=", "==", "!=", "P", "m", "c", "shm", "net", "T", "L", "o", "g", "x",
          "int", "bytes", "time", "channel", "real", "bool", "0", "1", "2", "64KiB", "2us", "1e6B",
          "3zz", "ceil", "log2", "floor", '"taulop/platform.tlop"', '"nope.tlop"', "///doc\n", "\n",
          "#c\n", "$", "1e400", "'"]


def check(text):
    try:
        tlop.loads(text, "fuzz.tlop")
    except TlopError as e:
        assert e.diagnostics, "an error without diagnostics"
        for d in e.diagnostics:
            assert d.span is not None, f"diagnostic without a span: {d.message}"
            assert d.span.line >= 1 and d.span.col >= 1


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        pos = draw(st.integers(0, len(text) - 1))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "token"]))
        n = draw(st.integers(1, 8))
        if kind == "delete":
            text = text[:pos] + text[pos + n:]
        elif kind == "insert":
            text = text[:pos] + draw(st.text(min_size=1, max_size=n)) + text[pos:]
        elif kind == "replace":
            text = text[:pos] + draw(st.text(min_size=1, max_size=n)) + text[pos + n:]
        else:
            text = text[:pos] + " " + draw(st.sampled_from(TOKENS)) + " " + text[pos:]
    return text


token_soup = st.lists(st.sampled_from(TOKENS), min_size=0, max_size=40).map(" ".join)

algorithm_like = st.builds(
    lambda params, body: f'import "taulop/platform.tlop"\nalgorithm a({params}) = {body}\n',
    st.lists(st.sampled_from(TOKENS), max_size=8).map(" ".join),
    st.lists(st.sampled_from(TOKENS), max_size=20).map(" ".join),
)

FUZZ = settings(max_examples=700, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(FUZZ, max_examples=300)   # whole modules: 35 ms a case
@given(mutated())
def test_mutated_stdlib(text):
    check(text)


@FUZZ
@given(token_soup)
def test_token_soup(text):
    check(text)


@FUZZ
@given(algorithm_like)
def test_algorithm_bodies(text):
    check(text)


def test_deep_nesting_is_an_error_not_a_crash():
    ok = tlop.loads("algorithm a() = " + "(" * 300 + "1us" + ")" * 300)
    assert ok["a"].evaluate(None) == 1e-6
    long_sum = tlop.loads("algorithm a() = " + " + ".join(["1us"] * 2000))
    assert abs(long_sum["a"].evaluate(None) - 2e-3) < 1e-12
    for text, words in (("algorithm a() = " + "(" * 5000 + "1us" + ")" * 5000, "nested too deeply"),
                        ("algorithm a() = " + " + ".join(["1us"] * 20000),
                         "20,000 terms joined by '+' in one expression; at most 5,000")):
        try:
            tlop.loads(text).__getitem__("a").evaluate(None)
        except TlopError as e:
            assert words in str(e)
            assert e.span is not None and e.span.line == 1
        else:
            raise AssertionError("no error")
