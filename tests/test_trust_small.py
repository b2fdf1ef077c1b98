"""Smaller items of issue 22 (item 8): ``tlop best --crossover`` honours ``--json`` and ``--csv``."""

from __future__ import annotations

import csv
import io
import json

from tlop.cli.main import main

ARGV = ["best", "taulop/bcast", "P=2..16:x2", "m=1KiB..1MiB:x4", "--crossover", "m", "--only", "binomial_bcast",
        "--only", "linear_bcast", "--out-of-grid", "allow"]


def test_crossover_json_agrees_with_the_table(capsys):
    assert main(ARGV + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["crossover"] == "m" and data["algorithms"] == ["binomial_bcast", "linear_bcast"]
    assert [r["at"]["P"] for r in data["rows"]] == [2.0, 4.0, 8.0, 16.0]
    assert all(r["segments"][0]["from"] == 1024.0 for r in data["rows"])
    assert main(ARGV) == 0
    text = capsys.readouterr().out
    for r in data["rows"]:  # the text table names the same cheapest algorithm first
        assert r["segments"][0]["best"] in text


def test_crossover_csv_to_stdout_and_to_a_file(tmp_path, capsys):
    assert main(ARGV + ["--csv", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and set(rows[0]) == {"P", "m_from", "best"}
    out = tmp_path / "x.csv"
    assert main(ARGV + ["--csv", str(out)]) == 0
    assert list(csv.DictReader(open(out))) == rows


def test_explain_says_when_a1_costs_more_on_a_measured_table(capsys):
    assert main(["explain", "taulop/bcast", "linear", "P=3", "m=4MiB", "--mapping", "sequential(3)",
                 "--profile", "metropolis", "--derive"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("A1 (terms"))
    assert "costs more, not less" in out and "drops the overheads" not in out, line
