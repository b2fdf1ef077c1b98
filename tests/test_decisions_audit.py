"""The audit of the libraries' defaults (tlop.decisions.audit) with a synthetic price function, and
its heat map (tlop.cli.plot_audit): the figure's cells and marks are the audit's ratios."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tlop.decisions import audit as audit_mod
from tlop.decisions.catalogue import LibraryAlgorithm
from tlop.decisions.openmpi_defaults import decide


def _bcast():
    mk = lambda name, id, **kw: LibraryAlgorithm("openmpi", "bcast", name, id, f"coll/bcast:{name}", "test", **kw)  # noqa: E731
    return {1: mk("basic_linear", 1), 2: mk("chain", 2, fixed={"k": 1}, searched={"seg": (0, 8192, 65536)}),
            5: mk("binary_tree", 5), 6: mk("binomial", 6), 7: mk("knomial", 7, fixed={"k": 4}),
            8: mk("scatter_allgather", 8, pow2_only=True)}


def _price(a, params, P, m):
    """A synthetic cost: linear grows with P, trees with log P, the chain pipelines when segmented,
    scatter-allgather is cheapest for large m; basic_linear cannot run above 32 ranks."""
    lg = math.log2(P)
    if a.name == "basic_linear":
        return math.inf if P > 32 else (P - 1) * (1e-6 + m * 1e-9)
    if a.name == "chain":
        s = params["seg"] or m
        return (P - 2 + m / s) * (1e-6 + s * 1e-9)
    if a.name in ("binomial", "binary_tree", "knomial"):
        return lg * (1e-6 + m * 1e-9) * {"binomial": 1.0, "binary_tree": 1.3, "knomial": 0.9}[a.name]
    if a.name == "scatter_allgather":
        return 2 * lg * 1e-6 + m * 1e-9
    raise AssertionError(a.name)


def _default(table):
    def pick(P, m):
        d = decide("bcast", P, m)
        return d, table.get(d.id)
    return pick


def test_audit_prices_the_default_and_the_best_of_the_same_library():
    table = _bcast()
    cells = audit_mod.audit("openmpi", "bcast", [4, 6, 64], [1024, 1 << 22], _price,
                            candidates=list(table.values()), default=_default(table))
    assert [(c.P, c.m) for c in cells] == [(4, 1024), (4, 1 << 22), (6, 1024), (6, 1 << 22), (64, 1024), (64, 1 << 22)]
    by = {(c.P, c.m): c for c in cells}
    # P = 4, 4 MiB: Open MPI's fixed decision is the unsegmented chain (id 2, k 1, seg 0) ...
    c = by[(4, 1 << 22)]
    assert (c.default.id, c.default.params) == (2, {"k": 1, "seg": 0})
    assert c.default_cost == pytest.approx(_price(table[2], {"k": 1, "seg": 0}, 4, 1 << 22))
    # ... and the best is whatever is cheapest among every candidate and searched segment
    want = min((_price(a, p, 4, 1 << 22), a.name) for a in table.values() for p in audit_mod._variants(a))
    assert (c.best_cost, c.best.name) == (pytest.approx(want[0]), want[1])
    assert c.ratio == pytest.approx(c.default_cost / c.best_cost) and c.ratio > 1.1 and c.flagged()
    # scatter_allgather runs only on a power of two: cheapest by price at P = 6, yet not chosen
    assert _price(table[8], {}, 6, 1 << 22) < by[(6, 1 << 22)].best_cost
    assert by[(6, 1 << 22)].best.name != "scatter_allgather"
    assert by[(64, 1 << 22)].best.name == "scatter_allgather"
    # the ratio is never below 1: the default is one of the library's algorithms
    assert all(x.ratio >= 1.0 - 1e-12 for x in cells if x.ratio is not None)


def test_audit_reports_a_default_it_cannot_price_instead_of_guessing():
    table = _bcast()
    del table[6]                       # the catalogue lacks binomial: P = 4, 4 KiB's default
    cells = audit_mod.audit("openmpi", "bcast", [4], [4096], _price, candidates=list(table.values()),
                            default=_default(table))
    (c,) = cells
    assert c.default.name == "binomial" and c.default_cost is None and c.ratio is None and not c.flagged()
    assert "not in tlop's catalogue" in c.note and c.best is not None
    row = audit_mod.as_json(cells)[0]
    json.dumps(row)
    assert row["ratio"] is None and row["default"]["name"] == "binomial" and row["best"]["name"] == c.best.name
    inf = audit_mod.audit("openmpi", "bcast", [64], [1024], lambda *a: math.inf, candidates=list(table.values()),
                          default=_default(_bcast()))
    assert inf[0].default_cost is None and inf[0].best is None and "cannot be priced" in inf[0].note


def test_audit_heat_map_shows_the_ratios_with_the_flagged_cells_marked():
    pytest.importorskip("matplotlib")
    from tlop.cli.plot_audit import ratio_figure

    table = _bcast()
    Ps, ms = [4, 8, 16, 64], [1024, 65536, 1 << 22]
    cells = audit_mod.audit("openmpi", "bcast", Ps, ms, _price, candidates=list(table.values()),
                            default=_default(table))
    fig = ratio_figure(cells, threshold=1.1)
    ax = [a for a in fig.axes if a.get_gid() == "audit-map"][0]
    (mesh,) = [c for c in ax.collections if c.get_gid() == "audit-ratio"]
    drawn = np.ma.filled(np.asarray(mesh.get_array()).reshape(len(Ps), len(ms)).astype(float), np.nan)
    want = np.array([[next(c.ratio for c in cells if (c.P, c.m) == (P, m)) or np.nan for m in ms] for P in Ps])
    assert np.allclose(drawn, want, equal_nan=True)
    assert mesh.norm.vmin == 1.0 and type(mesh.norm).__name__ == "LogNorm"
    marks = [t for t in ax.texts if t.get_gid() == "audit-mark"]
    flagged = [(Ps.index(c.P), ms.index(c.m), c.ratio) for c in cells if c.flagged(1.1)]
    assert flagged and sorted((round(t.get_position()[1]), round(t.get_position()[0])) for t in marks) == \
        sorted((i, j) for i, j, _ in flagged)
    assert all(t.get_text() == f"{r:.2f}×" for t in marks for i, j, r in flagged
               if (round(t.get_position()[1]), round(t.get_position()[0])) == (i, j))
    ylo, yhi = ax.get_ylim()
    assert ylo > yhi                                    # P down: the first P at the top
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(P) for P in Ps]


@pytest.mark.parametrize("library, collective", [("openmpi", "bcast"), ("openmpi", "allreduce"),
                                                 ("mpich", "allreduce"), ("mpich", "alltoall")])
def test_audit_finds_every_default_in_the_catalogue(library, collective):
    """With the built-in decisions and tlop's catalogue (no injection): every default of the grid
    is a catalogue algorithm, priced, and the best is at most the default."""
    if library == "mpich" and pytest.importorskip("tlop.runtime.tuning_files").mpich_default_selection() is None:
        pytest.skip("no mpich wheel beside this Python")
    seen = []

    def price(a, params, P, m):
        seen.append((a.library, a.collective))
        return (1.0 + (hash(a.name) % 7) / 10) * (1e-6 * P + 1e-9 * m) * (1 + params.get("k", 0) / 100)

    cells = audit_mod.audit(library, collective, [2, 6, 64], [16, 65536, 1 << 22], price)
    assert len(cells) == 9 and set(seen) == {(library, collective)}
    for c in cells:
        assert c.default.library == library and c.note == "" and c.default_cost is not None
        assert c.best_cost <= c.default_cost and c.ratio >= 1.0
