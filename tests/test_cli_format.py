"""How the command line prints numbers (tlop.cli.format, tlop.runtime.units.format_time):
auto-scaled times with 4 significant digits, --unit, integers as integers, full precision in
--json and --csv; goldens run with the default engine and with the interpreter."""

import csv
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from tlop.cli import format as fmt
from tlop.cli.main import main
from tlop.runtime.units import TIME_UNITS, format_time, split_quantity
from conftest import check_golden

GOLDEN = Path(__file__).parent / "golden" / "cli_format"

CASES = {
    "eval": ["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB"],
    "eval_unit_us": ["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", "--unit", "us"],
    "sweep_matrix": ["sweep", "taulop/bcast", "binomial_bcast", "P=2..64:x4", "m=1KiB..4MiB:x16"],
    "sweep_rows_ms": ["sweep", "taulop/bcast", "linear_bcast", "P=2..4", "m=1MiB", "--unit", "ms"],
    "best_rows": ["best", "taulop/bcast", "P=8", "m=1KiB..1MiB:x32"],
    "demo": ["demo", "-P", "4"],
    "eval_time_param": ["eval", str(Path(__file__).parent / "data" / "cli" / "gamma.tlop"), "overhead", "n=1000",
                        "lat=200ns"],
}


@pytest.mark.parametrize("engine", ["default", "interp"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_numbers(name, engine, capsys, update_golden):
    argv = CASES[name] + ([] if engine == "default" else ["--engine", "interp"])
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out.replace("(jit)", "(ENGINE)").replace("(interp)", "(ENGINE)")
    # both engines print the same numbers; the default engine's output is the one written
    check_golden(GOLDEN / f"{name}.txt", out, update_golden and engine == "default")


@pytest.mark.parametrize("t, text", [
    (0.0006772925999999999, "677.3 µs"), (0.0012170413, "1.217 ms"), (2e-10, "0.2000 ns"), (1.0, "1.000 s"),
    (12345.6, "12346 s"), (0.00099999999, "1.000 ms"), (0.0, "0 s"), (-2.5e-6, "-2.500 µs"),
    (math.inf, "inf s"), (5e-6, "5.000 µs"),
])
def test_format_time(t, text):
    assert format_time(t) == text


def test_forced_unit():
    assert format_time(0.0012170413, "us") == "1217 µs"
    assert format_time(0.0012170413, "µs") == "1217 µs"
    assert format_time(2e-3, "s") == "0.002000 s"
    assert format_time(0.0, "ms") == "0 ms"


@given(st.floats(min_value=1e-15, max_value=1e6, allow_nan=False))
def test_printed_time_reads_back_within_its_digits(t):
    """A printed time parses back (as a .tlop or command-line literal would) to within half a
    unit of its 4th significant digit."""
    value, unit = split_quantity(format_time(t).replace(" ", ""))
    assert value * TIME_UNITS[unit] == pytest.approx(t, rel=5.001e-4, abs=0)


def test_integers_as_integers_and_full_precision_in_json(capsys):
    assert main(["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["arguments"] == {"P": 16, "m": 1048576, "c": "shm"}
    assert isinstance(out["arguments"]["P"], int)
    assert out["seconds"] == 0.0012170413  # not rounded to the 4 digits of the text


def test_csv_keeps_full_precision_and_integers(capsys):
    assert main(["sweep", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", "--csv", "-"]) == 0
    (row,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert row == {"P": "16", "m": "1048576", "seconds": "0.0012170413"}


def test_param_text():
    assert fmt.param_text("int", 8.0) == "8"
    assert fmt.param_text("real", 0.25) == "0.25"
    assert fmt.param_text("bytes", 65536.0) == "64KiB"
    assert fmt.param_text("time", 2e-10) == "0.2 ns" and fmt.param_text("time", 2e-6) == "2 µs"
    assert fmt.param_text("time", 1.5e-3) == "1.5 ms" and fmt.param_text("time", 2.0) == "2 s"
    assert fmt.param_text("channel", 1.0, ("shm", "net")) == "net"
    assert fmt.number_json(8.0) == 8 and fmt.number_json(0.5) == 0.5 and fmt.number_json(math.inf) is None
