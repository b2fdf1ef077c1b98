"""Issue 14 item 7: inlining cannot explode.  A chain of definitions (or transmissions) each using
the previous one twice is a small DAG but an exponential tree; it is an error at the place where
the expansion crosses the limit, reported once, in ``check`` already — every command runs in a
subprocess with a bound on its CPU time, so a regression cannot hang the suite."""

import sys

import pytest
from _bounded import cpu_killed, run_bounded

import tlop
from tlop.frontend.expansion import MAX_EXPANDED_NODES
from tlop.runtime.diagnostics import TlopError

HEADER = 'import "taulop/platform.tlop"\n'


def _defs(levels: int, shape: str = "{p}(m) + {p}(m)") -> str:
    lines = [HEADER.rstrip(), "def f0(m: bytes) -> time = T[shm](m)"]
    for i in range(1, levels + 1):
        lines.append(f"def f{i}(m: bytes) -> time = " + shape.format(p=f"f{i - 1}"))
    lines.append(f"algorithm a(m: bytes) = f{levels}(m)")
    return "\n".join(lines) + "\n"


def _transmissions(levels: int) -> str:
    lines = [HEADER.rstrip(), "transmission U0[shm](m) = T[shm](m)"]
    for i in range(1, levels + 1):
        lines.append(f"transmission U{i}[shm](m) = U{i - 1}[shm](m) + U{i - 1}[shm](m)")
    lines.append(f"algorithm a(m: bytes) = U{levels}[shm](m)")
    return "\n".join(lines) + "\n"


def _crossing(levels_size):
    """The first level whose doubling tree passes the limit."""
    return next(i for i, s in enumerate(levels_size) if s > MAX_EXPANDED_NODES)


def _errors(text):
    with pytest.raises(TlopError) as info:
        tlop.loads(text, name="boom.tlop")
    return [d for d in info.value.diagnostics if d.severity == "error"]


def test_doubling_definitions_are_one_error_where_the_limit_is_crossed():
    errors = _errors(_defs(60))
    assert len(errors) == 1
    (err,) = errors
    # f_i has 2^(i+1) - 1 nodes as a tree (T[shm](m) is 3 nodes: 2^i * 4 - 1)
    level = _crossing([4 * 2 ** i - 1 for i in range(61)])
    assert err.span.line == level + 2 and err.span.col == 29
    assert f"'f{level}' expands to" in err.message and "limit 1,000,000" in err.message


def test_nested_calls_are_bounded_too():
    lines = [HEADER.rstrip(), "def g0(m: bytes) -> bytes = m + 1B"]
    lines += [f"def g{i}(m: bytes) -> bytes = g{i - 1}(g{i - 1}(m))" for i in range(1, 61)]
    lines.append("algorithm a(m: bytes) = T[shm](g60(m))")
    errors = _errors("\n".join(lines) + "\n")
    assert len(errors) == 1
    assert "expands to" in errors[0].message


def test_doubling_transmissions_are_one_error():
    errors = _errors(_transmissions(40))
    assert len(errors) == 1
    assert "transmission 'U" in errors[0].message and "expands to" in errors[0].message


def test_a_chain_below_the_limit_still_evaluates_in_both_engines():
    m = tlop.loads(_defs(4), name="ok.tlop")
    a = m["a"]
    one = tlop.loads(_defs(0), name="one.tlop")["a"]
    assert a.evaluate(None, m=1024) == pytest.approx(16 * one.evaluate(None, m=1024))
    assert a.compile()(m=1024) == pytest.approx(a.evaluate(None, m=1024))


@pytest.mark.parametrize("argv", [
    ["check", "{f}"],
    ["eval", "{f}", "a", "m=1"],
    ["show", "{f}", "a"],
    ["explain", "{f}", "a"],
    ["prove", "{f}", "a(m) >= 0"],
    ["prove", "{f}", "f60(m) >= 0", "--var", "m:bytes"],
])
def test_every_command_fails_fast_and_cleanly(tmp_path, argv):
    path = tmp_path / "boom.tlop"
    path.write_text(_defs(60))
    argv = [a.format(f=path) for a in argv]
    # bounded in CPU time, not wall-clock time: the exponential expansion this guards against
    # would use minutes of CPU; a clean refusal uses a few seconds, however busy the machine
    proc = run_bounded([sys.executable, "-m", "tlop.cli.main", *argv], cpu_seconds=60)
    assert not cpu_killed(proc), "the command kept computing instead of refusing the expansion"
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "boom.tlop:20:29: error[E042]: 'f18' expands to 1,048,575 nodes" in proc.stderr
