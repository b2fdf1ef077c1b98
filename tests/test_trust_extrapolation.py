"""No silent extrapolation (issue 22 item 4): a lookup outside a table's measured grid warns by
default, once per table and evaluation, in the CLI (``tlop: warning: …``) and the API (a Python
``OutOfGridWarning``); ``--out-of-grid allow`` / ``out_of_grid="allow"`` is the explicit choice
that silences it.  A mapping that needs more nodes, or more ranks per node, than the machine a
profile describes (``metadata.nodes`` × ``metadata.cores_per_node``) warns too.  ``tlop demo``
says which rows extrapolate and what."""

from __future__ import annotations

import warnings

import pytest

import tlop
from tlop.cli.main import main
from tlop.runtime.errors import OutOfGridWarning, ProfileError
from tlop.runtime.machine import OutOfMachineWarning
from tlop.runtime.profile import load_profile, profile_from_dict


WIDE = 'import "taulop/platform.tlop"\nalgorithm wide(n: int >= 1, m: bytes) = n || T[shm](m)\n'


def _wide(tmp_path):
    f = tmp_path / "wide.tlop"
    f.write_text(WIDE, encoding="utf-8")
    return f


def _record(fn):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn()
    return [w for w in got]


def test_api_warns_by_default_once_per_table_and_evaluation():
    h = tlop.loads(WIDE)["wide"]
    prof = load_profile("metropolis")
    for _ in range(2):  # each evaluation warns again
        got = [w for w in _record(lambda: h.evaluate(prof, n=16, m=[1024, 2048]))
               if issubclass(w.category, OutOfGridWarning)]
        assert len(got) == 1, [str(w.message) for w in got]  # one table, one warning
        assert "tau = 16 is outside the measured columns 1 .. 8" in str(got[0].message)


def test_api_allow_is_the_explicit_choice():
    h = tlop.loads(WIDE)["wide"]
    prof = load_profile("metropolis").with_interpolation(out_of_grid="allow")
    assert not [w for w in _record(lambda: h.evaluate(prof, n=16, m=1024))
                if issubclass(w.category, OutOfGridWarning)]


def test_inside_the_grid_nothing_is_said():
    h = tlop.loads(WIDE)["wide"]
    assert not _record(lambda: h.evaluate(load_profile("metropolis"), n=4, m=1024))


def test_cli_warns_by_default_and_allow_silences(tmp_path, capsys):
    f = str(_wide(tmp_path))
    assert main(["eval", f, "wide", "n=16", "m=1KiB"]) == 0
    err = capsys.readouterr().err
    assert "tlop: warning: table 'L' on channel 'shm'" in err and "outside the measured columns 1 .. 8" in err
    assert main(["eval", f, "wide", "n=16", "m=1KiB", "--out-of-grid", "allow"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_mapping_beyond_the_profiles_machine_warns(capsys):
    assert main(["eval", "taulop/bcast", "binomial", "P=64", "m=1KiB", "--mapping", "sequential(8)",
                 "--out-of-grid", "allow"]) == 0
    err = capsys.readouterr().err
    assert "needs 8 nodes (it has 4)" in err and "metropolis" in err
    assert main(["eval", "taulop/bcast", "binomial", "P=32", "m=1KiB", "--mapping", "sequential(8)",
                 "--out-of-grid", "allow"]) == 0
    assert "warning" not in capsys.readouterr().err  # 4 nodes of 8: the machine itself
    assert main(["eval", "taulop/bcast", "binomial", "P=16", "m=1KiB", "--mapping", "sequential(16)",
                 "--out-of-grid", "allow"]) == 0
    assert "16 ranks on one node (it has 8 cores per node)" in capsys.readouterr().err


def test_api_mapping_beyond_the_machine_warns():
    h = tlop.load("taulop/bcast")["binomial"]
    prof = load_profile("metropolis").with_interpolation(out_of_grid="allow")
    got = _record(lambda: h.evaluate(prof, mapping="sequential(8)", P=64, m=1024))
    assert [w for w in got if issubclass(w.category, OutOfMachineWarning)]
    got = _record(lambda: h.evaluate(prof, mapping="sequential(8)", P=32, m=1024))
    assert not [w for w in got if issubclass(w.category, OutOfMachineWarning)]


def test_machine_size_must_be_whole(tmp_path):
    base = {"tlop_profile": 1, "name": "x", "metadata": {"nodes": 2.5}, "channels": {"shm": {"transmission": "shm"}},
            "tables": {}}
    with pytest.raises(ProfileError, match="nodes"):
        profile_from_dict(base)


def test_demo_says_what_it_extrapolates(capsys):
    assert main(["demo", "-P", "4", "32"]) == 0
    out = capsys.readouterr().out
    assert "* extrapolated beyond the tables measured on 'metropolis'" in out
    assert "tau = 16 is outside the measured columns 1 .. 8" in out
    marked = [line for line in out.splitlines() if " 32 * " in line]
    assert marked and not [line for line in out.splitlines() if " 4 * " in line]
    assert main(["demo", "-P", "4", "32", "--out-of-grid", "allow"]) == 0
    assert "extrapolated" not in capsys.readouterr().out


def test_api_named_profile_beyond_the_machine_warns_each_evaluation():
    h = tlop.load("taulop/bcast")["binomial"]
    for _ in range(2):
        got = _record(lambda: h.evaluate("metropolis", mapping="sequential(8)", P=64, m=1024))
        assert len([w for w in got if issubclass(w.category, OutOfMachineWarning)]) == 1
