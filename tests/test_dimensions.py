"""Dimensions (issue 8, item 1), closed defaults (item 2) and unambiguous printing (item 7):
each wrong result of the issue is a regression test here."""

import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import tlop
from tlop.backends.binding import parse_cli_value
from tlop.backends.notation import format_latex, format_text
from tlop.cli.main import main
from tlop.ir import types as T
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.units import unit_dimension

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = 'import "taulop/platform.tlop"\n'


def errors_of(src: str) -> str:
    with pytest.raises(TlopError) as err:
        tlop.loads(src)
    return str(err.value)


# ----------------------------------------------------------------------------- item 1

@pytest.mark.parametrize("body, params, dims", [
    ("m * m", "m: bytes", "bytes² (B²)"),
    ("T[shm](m) * T[shm](m)", "m: bytes", "time² (s²)"),
    ("t / 1us", "t: time", "real"),
    ("m / 1s * 1s", "m: bytes", "size (B)"),
    ("P", "P: int", "int"),
])
def test_a_cost_that_is_not_a_time_is_rejected(body, params, dims):
    msg = errors_of(PLATFORM + f"algorithm h({params}) = {body}\n")
    assert f"an algorithm's cost must be a time (s), but this expression is {dims}" in msg


@pytest.mark.parametrize("body, message", [
    ("t / m + t", "cannot add time/bytes (s/B) and time (s)"),
    ("t + m", "cannot add time (s) and size (B)"),
    ("T[shm](m) + 1", "cannot add time (s) and int"),
    ("if t > m then t else t", "cannot compare time (s) with size (B)"),
    ("max(t, m)", "cannot take the max of time (s) and size (B)"),
    ("log2(m) * t", "'log2' needs a plain number (no unit), found size (B)"),
    ("exp(t) * t", "'exp' needs a plain number (no unit), found time (s)"),
    ("t ^ P", "'^' of time (s) needs a constant integer exponent"),
    ("2 ^ t * t", "the exponent of '^' must be a plain number, found time (s)"),
    ("m || T[shm](m)", "the left side of '||' must be a plain number (a count) or a cost, found size (B)"),
    ("if P > 1 then t else m", "the branches of 'if' have different types: time (s) and size (B)"),
    ("T[shm](P)", "the size of a transmission must be a size (B), found int"),
    ("L[shm](1024, 1)", "argument 'm' of table 'L' must be size (B), found int"),
    ("sum i in 1 .. m: t", "the bounds of 'sum' must be integers (int), found size (B)"),
    ("t % m", "cannot take the remainder of time (s) by size (B)"),
])
def test_dimension_errors(body, message):
    msg = errors_of(PLATFORM + f"algorithm a(P: int, m: bytes, t: time) = {body}\n")
    assert message in msg, msg
    assert re.search(r"<string>\.tlop:2:\d+: error\[E005\]: ", msg), msg


def test_tlop_check_rejects_m_times_m(tmp_path, capsys):
    f = tmp_path / "h.tlop"
    f.write_text("algorithm h(m: bytes) = m * m\n")
    assert main(["check", str(f)]) == 1
    err = capsys.readouterr().err
    # the path is printed relative to the working directory when that is shorter
    assert "h.tlop:1:25: error[E005]: an algorithm's cost must be a time (s), but this expression is bytes² (B²)" in err
    assert Path(err.split(":1:25:")[0].strip()).resolve() == f.resolve()
    assert "^^^^^" in err


@pytest.mark.parametrize("body, params, value", [
    ("m * gamma", "m: bytes, gamma: time/bytes", 2048 * 0.25e-9),
    ("t * (m / m)", "m: bytes, t: time", 3e-6),
    ("sqrt(t * t)", "t: time", 3e-6),
    ("(m ^ 2 / m ^ -1) ^ -1 * m ^ 3 * 1s", "m: bytes", 1.0),
    ("max(t, 0)", "t: time", 3e-6),
    ("if m > 0 then t else 0", "m: bytes, t: time", 3e-6),
    ("ceil(m / 1000B) * 1us + abs(-t)", "m: bytes, t: time", 3e-6 + 3e-6),
    ("m / (1B / 1ns)", "m: bytes", 2048e-9),
    ("2 ^ P * t", "P: int, t: time", 8 * 3e-6),
    ("sum i in 1 .. P: t / P", "P: int, t: time", 3e-6),
])
def test_well_dimensioned_costs_evaluate(body, params, value):
    mod = tlop.loads(PLATFORM + f"algorithm a({params}) = {body}\n")
    args = {"m": 2048.0, "gamma": 0.25e-9, "t": 3e-6, "P": 3}
    a = mod["a"]
    names = [p.name for p in a.ir.params]
    assert a.evaluate(tlop.default_profile(), **{k: v for k, v in args.items() if k in names}) == \
        pytest.approx(value, rel=1e-12)


def test_rate_parameters_are_declarable_and_bind_from_the_command_line(tmp_path, capsys):
    mod = tlop.loads("param beta: time/bytes\n"
                     "table g(m: bytes) -> time/bytes\n"
                     "algorithm post(m: bytes, alpha: time = 1us, gamma: time/bytes = 0.5ns / 1B) ="
                     " alpha + m * gamma\n")
    assert mod.program.scalars["beta"].ty == T.TIME / T.BYTES
    assert mod.program.tables["g"].ty == T.TIME / T.BYTES
    (gamma,) = [p for p in mod.program.algorithms["post"].params if p.name == "gamma"]
    assert gamma.type == "time/bytes" and gamma.constraint[0] == ">="  # rates are never negative
    assert parse_cli_value("0.2ns/B", "time/bytes", "gamma", mod.program) == pytest.approx(0.2e-9)
    assert parse_cli_value("2e-10", "time/bytes", "gamma", mod.program) == pytest.approx(0.2e-9)
    assert parse_cli_value("5GB/s", "bytes/time", "bw", mod.program) == pytest.approx(5e9)
    for bad, why in (("2us", "'us' is a unit of time"), ("5GB/s", "unit of bytes/time"), ("1ns/zz", "unknown unit")):
        with pytest.raises(TlopError, match=re.escape(why)):
            parse_cli_value(bad, "time/bytes", "gamma", mod.program)
    f = tmp_path / "post.tlop"
    f.write_text("algorithm post(m: bytes, gamma: time/bytes) = m * gamma\n")
    assert main(["eval", str(f), "post", "m=1KiB", "gamma=0.5ns/B"]) == 0
    assert capsys.readouterr().out == "post(m=1KiB, gamma=0.5 ns/B) on metropolis: 512.0 ns\n"  # the rate in its unit


def test_stdlib_declares_loggp_gap_per_byte_as_a_rate():
    program = tlop.load("loggp/p2p").program
    assert program.scalars["G"].ty == T.TIME / T.BYTES


# ----------------------------------------------------------------------------- the algebra

exponents = st.fractions(min_value=-4, max_value=4, max_denominator=2)


@given(exponents, exponents)
def test_type_spelling_round_trips(a, b):
    t = T.Type("num", a, b)
    assert T.parse_type(str(t)) == t
    assert "(" in t.describe() or t.dimensionless


def test_type_names():
    assert str(T.TIME / T.BYTES) == "time/bytes" and (T.TIME / T.BYTES).describe() == "time/bytes (s/B)"
    assert (T.BYTES * T.BYTES).describe() == "bytes² (B²)"
    assert str(T.REAL / T.TIME) == "real/time"
    assert T.parse_type("cost / bytes ^ 2") == T.TIME / T.BYTES.power(Fraction(2))
    assert T.parse_type("bool/time") is None and T.parse_type("fish") is None
    assert T.function("sqrt", [T.BYTES]).bytes == Fraction(1, 2)
    assert unit_dimension("us/KiB") == (1e-6 / 1024, 1, -1)


# ----------------------------------------------------------------------------- item 2

def test_a_def_default_cannot_capture_the_callers_variable():
    src = ("def f(x: int, y: int = x) = x + y\n"
           "algorithm a(x: int, z: int) = f(z) * 1s\n")
    msg = errors_of(src)
    assert "<string>.tlop:1:24: error[E011]: a default value must be a constant; it uses the parameter x" in msg


def test_a_def_default_is_evaluated_where_it_is_declared():
    mod = tlop.loads("def f(x: int, y: int = 1) = x + y\n"
                     "algorithm a(y: int, z: int) = f(z) * 1s + y * 0s\n")
    assert mod["a"].evaluate(tlop.default_profile(), y=100, z=1) == 2.0
    assert errors_of("def f(m: bytes = 1us) = m\nalgorithm a() = f() * 1s / 1B\n").count(
        "the default of 'm' must be size (B), found time (s)") == 1


# ----------------------------------------------------------------------------- item 7

def test_concurrency_inside_a_parallel_composition_prints_unambiguously():
    mod = tlop.loads(PLATFORM + "algorithm a(A: int >= 1, S: bytes, m: bytes) = A || T[shm](S) || T[shm](m)\n"
                                "algorithm b(A: int >= 1, S: bytes, m: bytes) = A || (T[shm](S) || T[shm](m))\n")
    prog = mod.program
    assert format_text(prog.algorithms["a"].body, prog) == "(A‖T^shm(S)) ‖ T^shm(m)"
    assert format_text(prog.algorithms["b"].body, prog) == "A‖[T^shm(S) ‖ T^shm(m)]"
    assert format_latex(prog.algorithms["a"].body, prog).startswith("\\left(A \\parallel T^{\\mathrm{shm}}(S)\\right)")


def test_language_reference_lists_parallel_as_one_operator_between_plus_and_times():
    text = (ROOT / "docs" / "language.rst").read_text()
    rows = [line.split("  ")[0] for line in text.splitlines() if line.startswith("``")]
    table = rows[rows.index("``let x = e in body``"):]
    par = [r for r in table if "||" in r]
    assert par == ["``a || b``"], par  # one row: concurrency and composition are one operator
    assert table.index("``a + b``, ``a - b``") < table.index("``a || b``") < \
        table.index("``a * b``, ``a / b``, ``a % b``")


def test_rules_do_not_drop_a_literal_with_a_dimension(tmp_path, capsys):
    """``m / 1B`` is a number; ``x / 1 = x`` applied to it would leave bytes and make the sum
    ``bytes·time + time`` ill-typed (this crashed ``tlop show`` with an IRTypeError)."""
    from tlop.analysis.simplify import simplify

    src = tmp_path / "r.tlop"
    src.write_text("algorithm r(m: bytes, gamma: time = 0.2ns, lat: time = 2us) = (m / 1B) * gamma + lat\n")
    h = tlop.load(str(src))["r"]
    out = simplify(h.ir.body, h.module.program).expr
    assert "m" in {n.name for n in tlop.ir.walk(out) if isinstance(n, tlop.ir.Var)}
    assert any(isinstance(n, tlop.ir.Bin) and n.op == "/" for n in tlop.ir.walk(out))
    assert main(["show", str(src)]) == 0
    assert "gamma + lat" in capsys.readouterr().out
    assert h.evaluate(m=1000) == pytest.approx(1000 * 0.2e-9 + 2e-6)
