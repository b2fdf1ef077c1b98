"""Speed functions as tables (tlop.runtime.speedfunc): the file format, validated with the wrong
field's file:line:col, and the functional-performance-model partition built on them."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tlop.cli.main import main
from tlop.runtime.configs import ConfigError, _tiling_error, load_config
from tlop.runtime.partition import column_partition, slab_partition
from tlop.runtime.speedfunc import (SpeedFunction, balanced_sizes, constant_speeds, fpm_partition,
                                    read_speeds_file, speeds_from_text, speeds_json)
from conftest import replace_any_value


def _tiles(part):
    return _tiling_error(part.N, list(zip(part.x, part.y, part.w, part.h))) is None


@st.composite
def speed_function(draw):
    """A random speed function whose time size/speed grows: each segment's line a + b·d has a > 0."""
    n = draw(st.integers(1, 6))
    sizes = sorted(set(draw(st.lists(st.floats(1.0, 5e4), min_size=n, max_size=n))))
    speeds = [draw(st.floats(0.2, 30.0))]
    for j in range(1, len(sizes)):
        # speed[j] < speed[j-1] · size[j] / size[j-1] keeps a > 0; any drop is allowed
        top = speeds[-1] * sizes[j] / sizes[j - 1]
        speeds.append(draw(st.floats(0.1, max(0.1, 0.999 * top))) if top > 0.1 else 0.1)
    assert all(s > 0 for s in speeds)
    return SpeedFunction(tuple(sizes), tuple(speeds))


def _valid(fn):
    x, s = np.asarray(fn.size), np.asarray(fn.speed)
    b = np.diff(s) / np.diff(x)
    return bool(np.all(s[:-1] - b * x[:-1] > 0))


def test_size_at_inverts_time():
    fn = SpeedFunction((10.0, 100.0, 1000.0), (1.0, 5.0, 6.0))
    for d in (1.0, 10.0, 37.0, 100.0, 555.0, 1000.0, 5000.0):
        assert fn.size_at(float(fn.time(d))) == pytest.approx(d, rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(st.lists(speed_function(), min_size=1, max_size=12), st.integers(1, 200), st.booleans())
def test_fpm_partition_tiles_and_balances_the_times(fns, N, slab):
    fns = [f for f in fns if _valid(f)] or [SpeedFunction((1.0,), (1.0,))]
    d, t = balanced_sizes(fns, float(N * N))
    assert d.sum() == pytest.approx(N * N, rel=1e-9)
    times = np.array([float(f.time(x)) for f, x in zip(fns, d)])
    # the continuous balance: everybody finishes together (also when a speed function is nearly
    # proportional to the size, so that its time is nearly flat and its size very sensitive to it)
    assert np.allclose(times, t, rtol=1e-9)
    cfg = _layout(len(fns))
    try:
        part = fpm_partition(cfg, fns, N, slab=slab)
    except ConfigError as err:  # only when N is too small for one block per process of a column
        assert "cannot give" in str(err)
        return
    assert part.P == len(fns) and _tiles(part)
    w, h = np.asarray(part.w), np.asarray(part.h)
    exact_h = _exact_heights(part, d)
    if np.all(exact_h >= 1.5) and np.all(_exact_widths(part, d) >= 1.5):  # no part pushed to its minimum
        area = w * h
        slack = w + h + 1  # one block row and one block column (and the corner)
        assert np.all(np.abs(area - d) <= slack)
        # so each process's time is its balanced time within one block row and column of work
        for f, a, s in zip(fns, area, slack):
            assert float(f.time(max(a - s, 0.0))) <= t * (1 + 1e-9) <= float(f.time(a + s)) * (1 + 2e-9)


def _exact_widths(part, d):
    cols = {}
    for p in range(part.P):
        cols.setdefault(part.x[p], []).append(p)
    return np.array([d[m].sum() / part.N for m in cols.values()])


def _exact_heights(part, d):
    cols = {}
    for p in range(part.P):
        cols.setdefault(part.x[p], []).append(p)
    out = np.zeros(part.P)
    for m in cols.values():
        out[m] = part.N * d[m] / d[m].sum()
    return out


def _layout(P, types=("a",)):
    from tlop.runtime.configs import _Doc, _layout as build

    data = {"tlop_layout": 1, "node_types": {t: {"cores": 64} for t in types},
            "nodes": {f"n{i}": {"type": types[i % len(types)]} for i in range(P)},
            "ranks": [{"node": f"n{i}", "cores": 1 + i % 3} for i in range(P)]}
    return build(_Doc(json.dumps(data), "<test>"), data, "<test>")


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0.5, 20.0), min_size=1, max_size=25), st.integers(1, 300), st.booleans())
def test_constant_speed_functions_give_the_constant_speed_partition(speeds, N, slab):
    make = slab_partition if slab else column_partition
    fns = [SpeedFunction((1.0, 50.0, 900.0), (s, s, s)) for s in speeds]
    try:
        expected = make(speeds, N)
    except ConfigError:
        with pytest.raises(ConfigError):
            fpm_partition(_layout(len(speeds)), fns, N, slab=slab)
        return
    got = fpm_partition(_layout(len(speeds)), fns, N, slab=slab)
    assert (got.x, got.y, got.w, got.h) == (expected.x, expected.y, expected.w, expected.h)


def test_functions_are_chosen_per_process_type():
    cfg = load_config("M4")
    fns = read_speeds_file("fermi-summa")
    per = fns.for_layout(cfg)
    for r, f in enumerate(per):
        t = cfg.type_names[cfg.node_type[r]]
        assert t in f.label and cfg.kinds[r] in f.label
    # constant functions matching the type only by kind: the most specific entry wins
    c = constant_speeds({(None, "cpu", None): 1.0, (None, "gpu", None): 12.0, ("fermi8", "cpu", None): 0.5})
    got = [float(f(100.0)) for f in c.for_layout(cfg)]
    want = [12.0 if k == "gpu" else 0.5 if cfg.type_names[cfg.node_type[r]] == "fermi8" else 1.0
            for r, k in enumerate(cfg.kinds)]
    assert got == want
    assert speeds_from_text(json.dumps(speeds_json(fns))).entries == fns.entries


def test_bundled_example_changes_the_partition():
    cfg = load_config("M10")
    fns = read_speeds_file("fermi-summa")
    part = fpm_partition(cfg, fns, 256)
    assert _tiles(part)
    per = fns.for_layout(cfg)
    t = [float(f.time(a)) for f, a in zip(per, part.areas())]
    # balanced to a few percent (one block row and column of ~50 blocks is ~4% of ~1900 blocks)
    assert max(t) / min(t) < 1.1
    const = column_partition([float(f(1e9)) for f in per], 256)
    assert part.areas().tolist() != const.areas().tolist()


BASE = {"tlop_speeds": 1, "name": "t", "functions": [
    {"kind": "cpu", "size": [1, 10, 100], "speed": [1, 2, 3]},
    {"kind": "gpu", "size": [1, 100], "speed": [2, 20]}]}


@pytest.mark.parametrize("change, token, message", [
    (lambda d: d["functions"][0]["speed"].__setitem__(1, -2), "-2", "functions[0].speed[1]: expected a speed > 0, got -2"),
    (lambda d: d["functions"][0]["size"].__setitem__(2, 5), "5", "functions[0].size[2]: sizes must be strictly increasing"),
    (lambda d: d["functions"][1]["speed"].__setitem__(1, 300), "300", "functions[1].speed[1]: the speed grows from 2 to 300"),
    (lambda d: d["functions"][0].update(colour=1), "1", "functions[0].colour: unknown field"),
    (lambda d: d["functions"][0]["speed"].pop(), "[", "functions[0].speed: expected 3 speeds (one per size), got 2"),
    (lambda d: d["functions"][1].update(kind="cpu"), "{", "functions[1]: the same process type as functions[0]"),
    (lambda d: d["functions"][0].update(kind="fpga"), '"fpga"', "functions[0].kind: expected \"cpu\" or \"gpu\""),
    (lambda d: d.update(tlop_speeds=2), "2", "tlop_speeds: expected 1"),
    (lambda d: d.pop("functions"), "{", "missing the field 'functions'"),
    (lambda d: d["functions"][0].update(cores=0), "0", "functions[0].cores: expected a number of cores between 1"),
    (lambda d: d["functions"][0]["size"].__setitem__(0, 10 ** 400), "1000", "functions[0].size[0]: expected a problem "
     "size > 0, got an integer of 401 digits"),
    (lambda d: d["functions"][1]["speed"].__setitem__(0, float("nan")), "NaN", "functions[1].speed[0]: expected a speed > 0"),
])
def test_errors_name_the_field_and_its_position(tmp_path, change, token, message):
    data = json.loads(json.dumps(BASE))
    change(data)
    p = tmp_path / "s.json"
    p.write_text(json.dumps(data, indent=1) + "\n")
    with pytest.raises(ConfigError) as err:
        read_speeds_file(p)
    assert message in str(err.value), str(err.value)
    d = err.value.diagnostics[0]
    assert d.span is not None and str(p) in str(err.value)
    line = p.read_text().splitlines()[d.span.line - 1]
    assert line[d.span.col - 1:].startswith(token), (line, d.span.col)


def test_no_function_for_a_rank_names_it():
    fns = speeds_from_text(json.dumps({"tlop_speeds": 1, "functions": [{"kind": "cpu", "size": [1], "speed": [1]}]}))
    with pytest.raises(ConfigError, match=r"rank \d+: <speeds>: no speed function for a process with .*kind 'gpu'"):
        fpm_partition(load_config("M2"), fns, 64)


def test_cli_generates_from_speed_functions(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["partition", "--config", "M4", "--generate", "64", "--speeds", "fermi-summa", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "P = 11" in text and "speed functions" in json.loads(out.read_text())["description"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"tlop_speeds": 1,\n "functions": [{"size": [1, 2], "speed": [1, "x"]}]}\n')
    assert main(["partition", "--config", "M4", "--generate", "64", "--speeds", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and "functions[0].speed[1]: expected a speed" in err and "^" in err
    assert main(["partition", "--config", "M4", "--generate", "64", "--speeds", "fermi-summa",
                 "--gpu-speed", "3"]) == 1
    assert "leave out --core-speed" in capsys.readouterr().err


def test_figure_shows_the_functions_and_the_balanced_times(tmp_path):
    pytest.importorskip("matplotlib")
    from tlop.cli.plot_speeds import build_figure

    cfg = load_config("M4")
    fns = read_speeds_file("fermi-summa")
    part = fpm_partition(cfg, fns, 64)
    fig = build_figure(cfg.with_partition(part), fns)
    left, right = fig.axes
    per = fns.for_layout(cfg)
    distinct = {id(f): f for f in per}
    lines = [ln for ln in left.get_lines() if ln.get_linestyle() != "None"]
    assert len(lines) == len(distinct)
    assert {tuple(ln.get_xdata()) for ln in lines} == {f.size for f in distinct.values()}
    heights = [b.get_height() for b in right.patches]
    want = [a / float(f(a)) for f, a in zip(per, part.areas())]
    assert heights == pytest.approx(want, rel=1e-12)
    _, t = balanced_sizes(per, 64.0 * 64.0)
    assert right.get_lines()[0].get_ydata()[0] == pytest.approx(t)
    out = tmp_path / "s.svg"
    assert main(["partition", "--config", "M4", "--partition", "summa-128", "--speeds", "fermi-summa",
                 "--plot-speeds", str(out)]) == 0
    assert out.read_text().startswith("<?xml")


JSON = st.recursive(st.none() | st.booleans() | st.integers(-10, 10 ** 30) | st.floats(allow_nan=True)
                    | st.text(max_size=5), lambda kids: st.lists(kids, max_size=3)
                    | st.dictionaries(st.text(max_size=5), kids, max_size=3), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 40), JSON)
def test_any_mangled_file_is_a_config_error(which, value):
    """Replacing any value of a valid file by any JSON value gives a speed-function set or a
    ConfigError (a message with the field), never another exception."""
    data = json.loads(json.dumps(BASE))
    replace_any_value(data, which, value)
    try:
        speeds_from_text(json.dumps(data))
    except ConfigError as err:
        assert err.diagnostics[0].message


def test_speeds_near_the_largest_double_are_balanced_not_a_hang():
    """Speeds of 1e308 (each finite, their sum not) once made the bracket's start 0 and its
    doubling endless: the start is now the fastest speed's, and the doubling is bounded."""
    sizes, t = balanced_sizes([SpeedFunction((1.0,), (1e308,))] * 2, 100.0)
    assert list(sizes) == [50.0, 50.0] and t > 0
    sizes, t = balanced_sizes([SpeedFunction((1.0,), (5.0,)), SpeedFunction((1.0,), (1e308,))], 100.0)
    assert sizes.sum() == pytest.approx(100.0) and sizes[0] / 5.0 == pytest.approx(sizes[1] / 1e308, rel=1e-6)
