"""One name for the segment size across the stdlib (issue 25): ``seg``.  The retired names ``S``
(taulop) and ``s`` (pLogP closed forms) are still read for an algorithm that has ``seg``, with a
warning naming the new one — never silently ignored; a module that declares ``S`` itself keeps it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tlop
from tlop.backends.renamed import RenamedParameterWarning
from tlop.cli.main import main
from tlop.runtime.diagnostics import TlopError


def _stdlib_modules():
    from tlop.frontend.loader import stdlib_modules

    return [m for m in stdlib_modules() if not m.startswith(("coll/", "postal/"))]


def test_no_stdlib_algorithm_names_its_segment_size_otherwise():
    """Outside postal (whose ``s`` is a message size) no stdlib algorithm declares S or s; the
    segmented ones declare seg."""
    seg = set()
    for mod in _stdlib_modules():
        m = tlop.load(mod)
        for name in m.own_algorithms:
            names = {p.name for p in m[name].params}
            assert not names & {"S", "s"}, (mod, name, names)
            if "seg" in names:
                seg.add(f"{mod}:{name}")
    assert {"taulop/p2p:p2p_segmented", "taulop/allreduce:ring_segm", "taulop/scatter_closed:binomial_scatter",
            "taulop/allgather:rd_allgather", "taulop/collectives:scatter_allgather_bcast",
            "plogp/bcast:flat_segmented", "plogp/bcast:chain_segmented", "plogp/bcast:binomial_segmented",
            "plogp/bcast:pipeline", "loggp/p2p:p2p_segmented", "loggp/allreduce:ring_segm"} <= seg


def test_the_api_reads_an_old_name_with_a_warning():
    prof = tlop.load_profile("metropolis")
    h = tlop.load("taulop/p2p")["p2p_segmented"]
    want = h.evaluate(prof, m=65536.0, seg=8192.0)
    with pytest.warns(RenamedParameterWarning, match=r"'p2p_segmented': 'S' is now 'seg'.*write seg="):
        assert h.evaluate(prof, m=65536.0, S=8192.0) == want
    with pytest.warns(RenamedParameterWarning):     # the native tier's fast path too, after tiering up
        for _ in range(3):
            assert h.evaluate(prof, m=65536.0, S=8192.0) == want
    with pytest.warns(RenamedParameterWarning, match="'s' is now 'seg'"):
        g = h.grid(prof, m=[4096.0, 65536.0], s=8192.0)
    assert g.values[1] == want
    with pytest.warns(RenamedParameterWarning):
        got = h.evaluate(prof, m=np.array([65536.0, -1.0]), S=8192.0, invalid="nan")
    assert got[0] == want and np.isnan(got[1])


def test_both_names_at_once_is_an_error_not_a_choice():
    h = tlop.load("taulop/p2p")["p2p_segmented"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TlopError, match="has no parameter 'S'"):
            h.evaluate(tlop.load_profile("metropolis"), m=1024.0, seg=512.0, S=512.0)


def test_a_module_that_declares_S_keeps_it(tmp_path):
    f = tmp_path / "own.tlop"
    f.write_text('model taulop\nimport "taulop/platform"\n'
                 "algorithm chunks(m: bytes, S: bytes > 0B) = (m / S) * o[shm](S)\n")
    h = tlop.load(str(f))["chunks"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert h.evaluate(tlop.load_profile("metropolis"), m=4096.0, S=1024.0) > 0
        with pytest.raises(TlopError, match="has no parameter 'seg'"):
            h.evaluate(tlop.load_profile("metropolis"), m=4096.0, seg=1024.0)


def test_best_with_the_old_name_compares_the_segmented_schedules(capsys):
    """`tlop best plogp/bcast … s=16KiB` used to leave the seg schedules out silently: now every
    segmented algorithm is compared, and the old name is named on stderr."""
    base = ["best", "plogp/bcast", "P=2,8", "m=1KiB,4MiB", "--profile", "localhost-example", "--engine", "interp"]
    assert main(base + ["seg=16KiB"]) == 0
    new = capsys.readouterr()
    assert main(base + ["s=16KiB"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and "seg=16KiB" in new.out and "needs" not in new.out
    assert ("tlop: warning: 'plogp/bcast': 's' is now 'seg' (the segment size has one name in the stdlib); "
            "read as seg= — write seg= (the old name will be refused in a later version)") in old.err
    assert "is now" not in new.err


@pytest.mark.parametrize("argv", [
    ["eval", "taulop/p2p", "p2p_segmented", "m=64KiB", "S=8KiB"],
    ["sweep", "taulop/scatter", "binomial_scatter", "P=8", "m=1MiB", "S=4KiB,8KiB", "--csv", "-"],
])
def test_eval_and_sweep_read_the_old_name_with_a_warning(argv, capsys):
    assert main(argv) == 0
    old = capsys.readouterr()
    assert main([a.replace("S=", "seg=") for a in argv]) == 0
    new = capsys.readouterr()
    assert old.out == new.out
    assert "'S' is now 'seg'" in old.err and "is now" not in new.err


def test_a_compiled_evaluator_reads_the_old_name_too():
    ev = tlop.load("plogp/bcast")["chain_segmented"].compile("localhost-example")
    want = ev.batch(P=np.array([4.0, 16.0]), m=65536.0, seg=4096.0)
    with pytest.warns(RenamedParameterWarning, match="'s' is now 'seg'"):
        assert np.array_equal(ev.batch(P=np.array([4.0, 16.0]), m=65536.0, s=4096.0), want)
    with pytest.warns(RenamedParameterWarning):
        assert ev(P=4.0, m=65536.0, s=4096.0) == want[0]
