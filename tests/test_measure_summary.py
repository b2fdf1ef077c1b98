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
