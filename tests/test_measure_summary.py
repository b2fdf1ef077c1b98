"""tlop measure's closing table (OSU/IMB layout per channel) and the sanity checks of fitted
parameters against the raw samples, on the bundled example run's samples (no MPI)."""

import json
from pathlib import Path

import pytest

from tlop.runtime.measure.store import read_records
from tlop.runtime.measure.summary import SANE_FACTOR, fit_warnings, osu_tables

PROFILES = Path(__file__).resolve().parent.parent / "stdlib" / "profiles"
SAMPLES = Path(__file__).parent / "data" / "localhost-example.samples.jsonl"  # test data, not shipped


@pytest.fixture(scope="module")
def records():
    return list(read_records(SAMPLES))


def test_osu_table_per_channel_from_the_raw_samples(records, golden):
    text = osu_tables(records)
    golden(Path(__file__).parent / "golden" / "cli_ux" / "measure_osu_tables.txt", text + "\n")
    blocks = text.split("\n\n")
    assert [b.splitlines()[0].split(":")[0] for b in blocks] == ["# shm", "# tcp"]
    # each row is the point's own statistics: latency = median, t_max = the largest sample
    pp = {(r["channel"], r["params"]["m"]): r for r in records if r.get("bench") == "pingpong"}
    for block, ch in zip(blocks, ("shm", "tcp")):
        rows = [ln.split() for ln in block.splitlines()[2:]]
        assert len(rows) == sum(1 for c, _ in pp if c == ch)
        for row, (m, r) in zip(rows, sorted((m, r) for (c, m), r in pp.items() if c == ch)):
            assert float(row[1]) == pytest.approx(r["stats"]["median"] * 1e6, abs=0.006)
            assert float(row[4]) == pytest.approx(max(r["samples"]) * 1e6, abs=0.006)
            assert int(row[5]) == r["stats"]["n"]
            assert float(row[6]) == pytest.approx(m / r["stats"]["median"] / 1e6, rel=1e-3, abs=0.006)


def test_fitted_parameters_are_checked_against_the_samples(records):
    scalars = json.loads((PROFILES / "localhost-example.json").read_text())["scalars"]
    assert fit_warnings(scalars, records) == []  # the example's fits are plausible
    # the absurd fits of the issue: loggph.o on shm 6.0 ms, postal.alpha_rend 5.8 ms
    scalars["loggph.o"]["shm"] = 6.0e-3
    scalars["postal.alpha_rend"]["cpu_on_node"] = 5.8e-3
    warns = fit_warnings(scalars, records)
    assert len(warns) == 2
    assert warns[0].startswith("loggph.o[shm] = 6.000 ms is ") and "on shm" in warns[0]
    assert warns[1].startswith("postal.alpha_rend[cpu_on_node] = 5.800 ms")
    # just under the bound: no warning
    small = max(r["stats"]["median"] for r in records if r.get("bench") == "pingpong" and r["channel"] == "shm"
                and r["params"]["m"] <= 1024)
    scalars["loggph.o"]["shm"] = SANE_FACTOR * small * 0.99
    assert [w for w in fit_warnings(scalars, records) if w.startswith("loggph.o")] == []


def test_measure_prints_the_table_and_the_warnings_at_the_end(tmp_path, capsys):
    import shutil

    from tlop.runtime.measure.cli import print_summary

    out = tmp_path / "p.json"
    data = json.loads((PROFILES / "localhost-example.json").read_text())
    data["scalars"]["loggph.o"]["shm"] = 6.0e-3
    out.write_text(json.dumps(data))
    samples = tmp_path / "p.samples.jsonl"
    shutil.copy(SAMPLES, samples)
    print_summary(samples, out, quiet=False)
    got = capsys.readouterr()
    assert got.out.startswith("\n# shm: ping-pong") and "Bandwidth (MB/s)" in got.out
    assert got.err.startswith("tlop measure: warning: loggph.o[shm] = 6.000 ms")
    print_summary(samples, out, quiet=True)
    got = capsys.readouterr()
    assert got.out == "" and "loggph.o[shm]" in got.err  # a warning is never silenced


def test_latency_figure_draws_medians_with_their_ci_and_the_samples_spread(records):
    """tlop measure --plot (issue 25: spread where samples exist): per channel the medians, the
    median's CI as error bars and the samples' interquartile band, read back from the figure."""
    pytest.importorskip("matplotlib")
    import numpy as np

    from tlop.runtime.measure.plot import latency_figure

    fig = latency_figure(records)
    pp = [r for r in records if r.get("kind") == "point" and r.get("bench") == "pingpong"]
    channels = sorted({r["channel"] for r in pp})
    panels = {a.get_gid(): a for a in fig.axes if (a.get_gid() or "").startswith("panel-")}
    assert sorted(panels) == [f"panel-{ch}" for ch in channels]
    for ch in channels:
        mine = sorted((r for r in pp if r["channel"] == ch), key=lambda r: r["params"]["m"])
        ax = panels[f"panel-{ch}"]
        (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == f"median-{ch}"]
        assert list(line.get_xdata()) == [float(r["params"]["m"]) for r in mine]
        assert np.allclose(line.get_ydata(), [r["stats"]["median"] * 1e6 for r in mine])
        coll = {c.get_gid(): c for c in ax.collections}
        segs = coll[f"ci-{ch}"].get_segments()
        assert np.allclose([s[0][1] for s in segs], [r["stats"]["ci_low"] * 1e6 for r in mine])
        assert np.allclose([s[1][1] for s in segs], [r["stats"]["ci_high"] * 1e6 for r in mine])
        band = coll[f"spread-{ch}"].get_paths()[0].vertices[:, 1]
        q = [np.percentile(r["samples"], [25, 75]) * 1e6 for r in mine]
        assert band.min() == pytest.approx(min(a for a, _ in q)) and band.max() == pytest.approx(max(b for _, b in q))
    assert latency_figure([r for r in records if r.get("bench") != "pingpong"]) is None


def test_plot_option_is_checked_before_anything_is_measured(tmp_path, capsys):
    from tlop.runtime.measure.cli import main

    assert main(["--out", str(tmp_path / "p.json"), "--plot", str(tmp_path / "x.jpg")]) == 1
    assert "the picture's name ends in .svg, .png, .pdf" in capsys.readouterr().err
    assert not (tmp_path / "p.samples.jsonl").exists()
