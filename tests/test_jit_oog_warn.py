"""Out-of-grid warnings from compiled code are the interpreter's, issued from the native status
words without evaluating the point again (``tlop.backends.jit.oogwarn``; issue 24)."""

import math
import warnings

import numpy as np
import pytest

import tlop
import tlop.backends.jit.evaluator as evaluator_module
from tlop.backends.binding import as_mapping, bind_mapping
from tlop.backends.interp import Interpreter
from tlop.runtime.errors import OutOfGridWarning

P = 1024
M = float(1 << 20)


@pytest.fixture(scope="module")
def binomial():
    return tlop.load("taulop/bcast")["binomial"]


def _texts(w) -> list:
    return [str(x.message) for x in w if issubclass(x.category, OutOfGridWarning)]


def _record(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        value = fn()
    return value, _texts(w)


def _reference(h, prof, mapping, **args):
    """The interpreter's value and warnings for one fresh evaluation."""
    mp = as_mapping(mapping)
    env = bind_mapping(h.ir, h.bind(args), mp)
    prof.new_evaluation()
    return _record(lambda: Interpreter(h.module.program, prof, mp).eval(h.ir.body, env))


@pytest.fixture
def no_interpreter(monkeypatch):
    """The compiled evaluator may not run the interpreter (it did, to issue the warning)."""
    def refuse(*args, **kwargs):
        raise AssertionError("the compiled evaluator ran the interpreter")
    monkeypatch.setattr(evaluator_module, "Interpreter", refuse)


@pytest.mark.parametrize("closed_forms", [True, False])
def test_scalar_call_warns_the_interpreters_text_natively(binomial, closed_forms, no_interpreter):
    prof = tlop.load_profile("lusitania")  # τ of the last stages (one node) is past its columns
    mapping = f"sequential({P})"
    ref, ref_texts = _reference(binomial, prof, mapping, P=P, m=M)
    assert len(ref_texts) == 1 and "tau = 32 is outside the measured columns" in ref_texts[0]
    ev = binomial.compile(prof, mapping=mapping, closed_forms=closed_forms)
    prof.new_evaluation()
    value, texts = _record(lambda: ev(P=P, m=M))
    assert texts == ref_texts
    assert math.isclose(value, ref, rel_tol=1e-12)
    assert _record(lambda: ev(P=P, m=M))[1] == []  # once per table and evaluation
    prof.new_evaluation()
    assert _record(lambda: ev(P=P, m=M))[1] == ref_texts  # a new evaluation warns again


def test_one_axis_table_and_batch(no_interpreter):
    bcast = tlop.load("taulop/bcast")["binomial_bcast"]
    prof = tlop.load_profile("metropolis")
    ref, ref_texts = _reference(bcast, prof, None, P=4, m=2.0 ** 30)
    assert any("m = 1073741824 B is outside the measured grid" in t for t in ref_texts)
    ev = bcast.compile(prof)
    prof.new_evaluation()
    value, texts = _record(lambda: ev(P=4, m=2.0 ** 30))
    assert texts == ref_texts and math.isclose(value, ref, rel_tol=1e-12)
    # a batch: the first point outside the grid names the value, as the interpreter at that point
    prof.new_evaluation()
    out, texts = _record(lambda: ev.batch(P=4, m=np.array([1024.0, 2.0 ** 30, 2.0 ** 31])))
    assert texts == ref_texts and math.isclose(out[1], ref, rel_tol=1e-12)


def test_api_warns_at_every_call_like_the_interpreter(binomial):
    prof = tlop.load_profile("lusitania")
    mapping = tlop.sequential(P)
    _, ref_texts = _reference(binomial, prof, mapping, P=P, m=M)
    native = 0
    for _ in range(200):  # interpreted until the tier compiles (engine policy), then native
        _, texts = _record(lambda: binomial.evaluate(prof, mapping=mapping, P=P, m=M))
        assert texts == ref_texts  # every API call is an evaluation: it warns
        entry = binomial._last_entry
        native += entry is not None and entry.ev is not None
        if native >= 3:
            break
    assert native >= 3  # the later calls were answered by native code


def test_warning_as_error_propagates_from_native_code(binomial):
    prof = tlop.load_profile("lusitania")
    ev = binomial.compile(prof, mapping=f"sequential({P})")
    prof.new_evaluation()
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutOfGridWarning)
        with pytest.raises(OutOfGridWarning, match="tau = 32"):
            ev(P=P, m=M)
    allow = prof.with_interpolation(out_of_grid="allow")
    ev2 = binomial.compile(allow, mapping=f"sequential({P})")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ev2(P=P, m=M) == ev(P=P, m=M)  # the second call: already warned, no error
