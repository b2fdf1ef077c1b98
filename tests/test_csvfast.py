"""The CSV of `tlop sweep --csv` and `tlop best --csv`, written in blocks without per-point Python
(:mod:`tlop.cli.csvfast`), is byte for byte what ``csv.writer`` wrote from per-point rows."""

import csv
import io
import itertools

from hypothesis import given, strategies as st

import tlop
import tlop.cli.csvfast as csvfast
from tlop.cli.format import csv_number
from tlop.cli.main import main


def _csv(rows) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


@given(st.text(max_size=12))
def test_a_cell_is_quoted_as_the_csv_module_quotes_it(text):
    assert csvfast.quote(text) + "\n" == _csv([[text]]) or text == ""


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20))
def test_numbers_are_python_reprs(values):
    assert csvfast.numbers(values) == [repr(float(v)) for v in values]


def _sweep_reference(P, m, channels):
    h = tlop.load("taulop/bcast")["binomial_bcast"]
    rows = [["P", "m", "c", "seconds"]]
    for p, s, c in itertools.product(P, m, channels):
        rows.append([csv_number(p), csv_number(s), c, repr(float(h.evaluate(None, P=p, m=s, c=c)))])
    return _csv(rows)


def test_sweep_csv_is_what_csv_writer_wrote(capsys, monkeypatch):
    argv = ["sweep", "taulop/bcast", "binomial_bcast", "P=2..40:+3", "m=1..1MiB:x16", "c=shm,net", "--csv", "-"]
    want = _sweep_reference(range(2, 41, 3), [16.0 ** k for k in range(6)], ["shm", "net"])
    assert main(argv) == 0
    assert capsys.readouterr().out == want
    monkeypatch.setattr(csvfast, "TABLE_MAX", 3)  # the long-axis path: distinct values per chunk
    assert main(argv) == 0
    assert capsys.readouterr().out == want


def test_best_csv_is_what_csv_writer_wrote(capsys):
    argv = ["best", "taulop/bcast", "P=2..20:+6", "m=1..1MiB:x64", "c=shm,net"]
    assert main(argv + ["--csv", "-"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    header, body = rows[0], rows[1:]
    assert header[:5] == ["P", "m", "c", "best", "seconds"] and len(body) == 4 * 4 * 2
    mod = tlop.load("taulop/bcast")
    for row in body:
        point = dict(P=float(row[0]), m=float(row[1]), c=row[2])
        costs = dict(zip(header[5:], map(float, row[5:])))
        assert row[4] == repr(costs[row[3]]) and costs[row[3]] == min(costs.values())
        for name, cost in costs.items():
            if cost != float("inf"):
                assert cost == mod[name].evaluate(None, **point)


def test_native_chunks_write_the_same_csv(capsys, monkeypatch):
    """Chunks written whole by native code (tlop.backends.jit.floatrepr.csv_lines) give the same
    bytes as the per-column Python path, for sweep (NaN an empty cell) and best (labels, "nan")."""
    runs = [["sweep", "taulop/bcast", "binomial_bcast", "P=2..40:+3", "m=1..1MiB:x16", "c=shm,net", "--csv", "-"],
            ["best", "taulop/bcast", "P=2..20:+6", "m=1..1MiB:x64", "c=shm,net", "--csv", "-"]]
    for argv in runs:
        monkeypatch.setattr(csvfast, "NATIVE_MIN", 1 << 60)  # Python
        assert main(argv) == 0
        want = capsys.readouterr().out
        monkeypatch.setattr(csvfast, "NATIVE_MIN", 1)  # native, every chunk
        assert main(argv) == 0
        assert capsys.readouterr().out == want
        monkeypatch.setattr(csvfast, "TABLE_MAX", 3)  # long axes: distinct values per chunk
        assert main(argv) == 0
        assert capsys.readouterr().out == want
        monkeypatch.undo()


@given(st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True), st.integers(0, 2)), min_size=1, max_size=30))
def test_a_native_chunk_is_the_joined_cells(points):
    from tlop.backends.jit.floatrepr import csv_lines

    values = [v for v, _ in points]
    index = [i for _, i in points]
    texts = ["a", 'q"uote', "µs,x"]
    want = csvfast.block([csvfast.labels(texts, index), csvfast.numbers(values, ""), csvfast.numbers(values),
                          csvfast.numbers(values, "")])
    same = [i == 1 for i in index]  # the value is the line's first number there: its text is reused
    got = csv_lines([("text", index, [csvfast.quote(t) for t in texts]), ("float", values, ""),
                     ("float", values, "nan"), ("float", values, "", same)], len(points))
    assert got == want
