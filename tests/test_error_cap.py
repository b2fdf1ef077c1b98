"""A file with many errors prints the first 20 and how many more there are (issue 14, item 8);
the error keeps every diagnostic for the Python API."""

from tlop.runtime.diagnostics import MAX_SHOWN, Diagnostic, DiagnosticSink, Source, Span, TlopError

import pytest

import tlop


def errors(n: int) -> TlopError:
    src = Source("x.tlop", "\n".join(f"line {i}" for i in range(n)))
    sink = DiagnosticSink()
    for i in range(n):
        sink.error(f"bad {i}", Span(src, i + 1, 1, i + 1, 4))
    with pytest.raises(TlopError) as err:
        sink.raise_if_errors()
    return err.value


@pytest.mark.parametrize("n, last", [(MAX_SHOWN, "    ^^^^"), (MAX_SHOWN + 1, "…and 1 more error"),
                                     (MAX_SHOWN + 2, "…and 2 more errors"), (12345, "…and 12,325 more errors")])
def test_the_first_errors_then_how_many_more(n, last):
    e = errors(n)
    text = str(e)
    assert len(e.diagnostics) == n                      # all kept
    assert text.splitlines()[-1] == last
    assert text.count(": error[E099]: ") == min(n, MAX_SHOWN)
    assert f"x.tlop:{min(n, MAX_SHOWN)}:1: error[E099]: bad {min(n, MAX_SHOWN) - 1}" in text
    assert f"bad {MAX_SHOWN}" not in text


def test_a_single_message_is_unchanged():
    assert str(TlopError("plain")) == Diagnostic("plain", None).render()


def test_a_chain_of_5000_operands_checks_and_5001_is_an_error_at_the_operator(tmp_path):
    ok = tmp_path / "ok.tlop"
    ok.write_text("algorithm f(P: int) =\n    " + " + ".join(["P * 1us"] * 5000) + "\n")
    assert tlop.load(ok)["f"].evaluate(None, P=2) == pytest.approx(0.01)
    bad = tmp_path / "bad.tlop"
    bad.write_text("algorithm f(P: int) =\n    " + " * ".join(["P"] * 7000) + "\n")
    with pytest.raises(TlopError) as err:
        tlop.load(bad)
    span = err.value.span
    assert (span.line, span.col) == (2, 5 + 4 * 5000 - 2)   # the 5,000th '*'
    assert "7,000 terms joined by '*' in one expression; at most 5,000" in str(err.value)
