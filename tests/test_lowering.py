"""The lowering layer (tlop.lower): the JIT compiles the lowered algorithm it asks for itself — no
global hook set by importing tlop.api, no analysis on the evaluation path — and a schedule without
a closed form says why (once, in debug output, and on the evaluator) instead of an exception
being swallowed."""

import logging
import subprocess
import sys
import textwrap

import pytest

import tlop
from tlop.lower import schedules
from tlop.lower.schedules import lower_schedule

RING = tlop.loads('''import "taulop/platform.tlop"
algorithm ring(P: int >= 2, m: bytes) over map: mapping =
    stages k in 0 .. P - 2 { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
algorithm odd(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p * p) % P : m }
''', "lowering.tlop")


def test_the_jit_gets_closed_forms_without_the_api_or_the_analyses():
    """In a fresh process that never imports tlop.api nor tlop.analysis, the JIT compiles the
    ring's closed form (it asked the lowering layer, not a registered provider)."""
    code = textwrap.dedent('''
        import sys
        from pathlib import Path
        from tlop.frontend.loader import load_tree
        from tlop.frontend.elaborate import elaborate
        from tlop.backends.jit import compile_algorithm
        from tlop.runtime.mapping import sequential
        from tlop.runtime.profile import load_profile
        text = """import "taulop/platform.tlop"
        algorithm ring(P: int >= 2, m: bytes) over map: mapping =
            stages k in 0 .. P - 2 { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
        """
        program = elaborate(load_tree(Path("lowering.tlop").resolve(), text)).program
        ev = compile_algorithm(program, "ring", load_profile("metropolis"), mapping=sequential(4))
        print(ev.lowering.closed, float(ev(P=16, m=4096.0)) > 0)
        print(sorted(m for m in sys.modules if m in ("tlop.api", "tlop.analysis") or m.startswith("tlop.analysis.")))
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["True True", "[]"]


def test_a_schedule_without_a_closed_form_says_why_once(caplog):
    program = RING.program
    odd = program.algorithms["odd"]
    schedules._CACHE.clear()
    with caplog.at_level(logging.DEBUG, logger="tlop.lower"):
        a = lower_schedule(program, odd, "sequential")
        b = lower_schedule(program, odd, "sequential")
    assert a is b and not a.closed and a.algorithm is odd
    assert a.reason  # the derivation's own reason
    said = [r.getMessage() for r in caplog.records if r.name == "tlop.lower"]
    assert len(said) == 1 and "odd" in said[0] and a.reason in said[0]
    ev = RING["odd"].compile("metropolis", mapping=tlop.sequential(2))
    assert ev.lowering.reason == a.reason
    assert float(ev(P=8, m=1024.0)) == pytest.approx(RING["odd"].evaluate("metropolis", mapping=tlop.sequential(2),
                                                                         P=8, m=1024.0), rel=1e-12)


def test_the_ring_is_lowered_to_its_closed_form():
    low = lower_schedule(RING.program, RING.program.algorithms["ring"], "round_robin")
    assert low.closed and low.reason == "" and low.q == "Q"
    # no schedule, or a mapping kind closed forms are not derived for: nothing is asked
    assert lower_schedule(RING.program, RING.program.algorithms["ring"], "layout").algorithm is \
        RING.program.algorithms["ring"]


def test_a_failing_derivation_is_not_swallowed(monkeypatch):
    """Only a designed outcome (no pattern) falls back; a bug in the derivation propagates."""
    def broken(*args, **kw):
        raise RuntimeError("a bug in the derivation")

    schedules._CACHE.clear()
    monkeypatch.setattr(schedules, "derive", broken)
    with pytest.raises(RuntimeError, match="a bug in the derivation"):
        lower_schedule(RING.program, RING.program.algorithms["ring"], "sequential")
    schedules._CACHE.clear()
