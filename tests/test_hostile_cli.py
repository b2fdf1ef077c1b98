"""Issue 14, CLI and API side: bad ranges, bad ``-P`` values, non-broadcastable arrays and an
interrupted ``--csv`` end in the project's own error, never a traceback or a damaged file."""

import os

import numpy as np
import pytest

import tlop
from tlop.cli.main import main
from tlop.runtime.diagnostics import TlopError

def sweep(*args):
    return ["sweep", "taulop/bcast", "binomial_bcast", "c=shm", *args, "--engine", "interp"]


@pytest.mark.parametrize("args, words", [
    (["P=2..16:xabc", "m=1"], "the factor of a geometric step must be a number, not 'abc'"),
    (["P=2..16:x", "m=1"], "the factor of a geometric step must be a number, not ''"),
    (["P=2", "m=1..10:x1e400"], "a geometric step needs a finite factor > 1"),
    (["P=2", "m=1..10:xnan"], "a geometric step needs a finite factor > 1"),
    (["P=2", "m=0..1e400:+1"], "range bounds must be finite"),
    (["P=2", "m=1..1e400:x2"], "range bounds must be finite"),
    (["P=2", "m=0..1e300:+1e-300"], "over 1e308 points; at most 10,000,000"),
    (["P=2", "m=1..1e300:x1.0000001"], "points; at most 10,000,000"),
    (["P=2", "m=1e-300..1e300:x1.0000001"], "points; at most 10,000,000"),
])
def test_bad_ranges_are_clean_errors(args, words, capsys):
    assert main(sweep(*args)) == 1
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["abc", "1e400", "nan", "2.5", "-3", "1"])
def test_demo_process_counts_are_checked(value, capsys):
    assert main(["demo", "-P", value]) == 1
    err = capsys.readouterr().err
    assert f"-P {value}: a process count must be a whole number" in err


def test_non_broadcastable_arrays_give_the_same_error_in_both_engines():
    h = tlop.load("taulop/bcast")["binomial_bcast"]
    prof = tlop.default_profile()
    P, m = np.array([2.0, 4.0, 8.0]), np.array([1.0, 2.0])
    with pytest.raises(TlopError) as interp:
        h.evaluate(prof, P=P, m=m, c="shm")
    with pytest.raises(TlopError) as jit:
        h.compile(prof).batch(P=P, m=m, c=0)
    want = "'binomial_bcast': arguments do not broadcast together: P (3,), m (2,), c ()"
    assert str(interp.value).endswith(want) and str(jit.value).endswith(want)


def test_csv_is_written_whole_or_not_at_all(tmp_path, monkeypatch, capsys):
    out = tmp_path / "grid.csv"
    args = sweep("P=2..16:x2", "m=1KiB", "--csv", str(out))
    assert main(args) == 0
    good = out.read_bytes()
    assert good.count(b"\n") == 5
    os.chmod(out, 0o640)

    def full_disk(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full_disk)
    assert main(sweep("P=2..1024:x2", "m=1KiB", "--csv", str(out))) == 1
    assert "cannot write the CSV: No space left on device" in capsys.readouterr().err
    assert out.read_bytes() == good  # the previous file, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.csv"]  # no temporary debris
    monkeypatch.undo()
    assert main(sweep("P=2..4:x2", "m=1KiB", "--csv", str(out))) == 0
    assert out.read_bytes().count(b"\n") == 3 and out.stat().st_mode & 0o777 == 0o640  # permissions kept
