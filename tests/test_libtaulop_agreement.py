"""``bench/libtaulop_agreement.py``: the stdlib's schedules against libtaulop's predictions.

* Every row of ``tests/data/taulop-oracle-lusitania.csv`` in the class "same mathematics"
  (SHM+IB, one channel per stage, P a power of two, m ≤ 4 MiB, no note, no library departure, no
  τ clamp) agrees to 1e-6 relative, for every library algorithm the stdlib expresses — one test per
  algorithm, so a regression names its algorithm.  The whole class is evaluated (a few seconds).
* This is the one definition of the class (``la.classify``) and the one agreement test of its
  rows; tests/test_stdlib_collectives_b.py attributes the rows it leaves out.
* :data:`MUST_EXPRESS` lists the algorithms that must be expressible, so that renaming a stdlib
  algorithm cannot make its rows silently disappear.
* The per-class report and the ``--predictions`` file are checked on a small hand-made CSV.
"""

import csv
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import libtaulop_agreement as la  # noqa: E402

DATA = Path(__file__).parent / "data" / "taulop-oracle-lusitania.csv"
ROWS = la.read_rows(DATA)
#: library algorithms the stdlib must express (others may be added by other modules)
MUST_EXPRESS = {"bcast_linear", "bcast_binomial", "bcast_binomial_openmpi", "scatter_binomial",
                "gather_binomial", "gatherv_binomial", "reduce_linear_openmpi",
                "reduce_binomial_openmpi", "allgather_ring"}
EXPRESSED = sorted({r["algorithm"] for r in ROWS if la.stdlib_algorithm(r["algorithm"]) is not None})
SAME = {}
for _r in ROWS:
    if _r["algorithm"] in EXPRESSED and la.classify(_r) == la.SAME:
        SAME.setdefault(_r["algorithm"], []).append(_r)


def test_naming_convention():
    assert la.stdlib_name("bcast_binomial_openmpi") == ("taulop/bcast", "binomial_openmpi")
    assert la.stdlib_name("allgather_ring") == ("taulop/allgather", "ring")
    assert la.stdlib_name("gatherv_binomial") == ("taulop/gather", "gatherv")
    assert la.stdlib_algorithm("bcast_no_such_variant") is None
    assert la.stdlib_algorithm("nosuchcollective_x") is None


def test_every_required_algorithm_is_expressed_and_has_same_mathematics_rows():
    assert MUST_EXPRESS <= set(EXPRESSED)
    for alg in MUST_EXPRESS - {"scatter_binomial"}:
        assert len(SAME.get(alg, ())) >= 40, alg
    # scatter: the library's reversed sizes only coincide with the real tree at P = 2
    assert {r["P"] for r in SAME["scatter_binomial"]} == {2}


@pytest.mark.parametrize("algorithm", EXPRESSED)
def test_same_mathematics_rows_agree(algorithm):
    rows = SAME.get(algorithm, [])
    wrong = []
    for r in rows:
        got = la.evaluate_row(r)
        if not la.agrees(got, r["predicted_seconds"]):
            wrong.append((r["P"], r["Q"], r["mapping"], r["m"], r["root"], got, r["predicted_seconds"]))
    assert not wrong, f"{algorithm}: {len(wrong)} of {len(rows)} rows disagree: {wrong[:5]}"


def test_the_class_covers_both_mappings_and_network_only_rows():
    """The one class reaches beyond one node: round-robin rows, and rows with one rank per node
    (every transfer on the network) — for the ring and the binomial broadcast at least 400 rows
    (what tests/test_oracle_schedules.py checked with its own definition before)."""
    rows = [r for alg in ("allgather_ring", "bcast_binomial") for r in SAME[alg]]
    assert {r["mapping"] for r in rows} == {"Sequential", "RoundRobin"}
    assert any(r["Q"] == 1 and r["P"] > 1 for r in rows)
    assert len(rows) >= 400


def test_the_class_definition():
    r = dict(ROWS[0])
    base = {**r, "channels": "SHM+IB", "algorithm": "bcast_binomial", "P": 8, "Q": 8, "m": 1024.0, "note": ""}
    assert la.classify(base) == la.SAME
    assert la.classify({**base, "channels": "SHM+TCP"}) == "SHM+TCP"
    assert la.classify({**base, "Q": 2}) == "stage mixes channels"
    assert la.classify({**base, "Q": 1}) == la.SAME
    assert la.classify({**base, "P": 5, "Q": 8}) == "P not a power of two"
    assert la.classify({**base, "m": 6.0 * 2 ** 20}) == "m > 4 MiB"
    assert la.classify({**base, "note": "x"}) == "note"
    assert la.classify({**base, "algorithm": "scatter_binomial", "P": 4}) == "library departure"
    assert la.classify({**base, "algorithm": "scatter_binomial", "P": 2}) == la.SAME
    # 63 transfers into the root's node exceed lusitania's 20 τ columns: the library clamps
    assert la.classify({**base, "algorithm": "gatherv_binomial", "P": 64, "Q": 1}) == "tau > tau_max"
    assert la.classify({**base, "algorithm": "gatherv_binomial", "P": 16, "Q": 1}) == la.SAME


SMALL = [
    # same mathematics, agrees
    "lusitania,SHM+IB,bcast_binomial,8,8,Sequential,1024,0,{bin8},1,",
    # same mathematics, a wrong prediction: must be reported as a disagreement
    "lusitania,SHM+IB,bcast_binomial,8,8,Sequential,4096,0,1.0,1,",
    # m > 4 MiB: disagrees, explained by the library's 4 MiB chunks
    "lusitania,SHM+IB,bcast_linear,2,1,Sequential,16777216,0,{lin16m},2,",
    # an algorithm the stdlib does not have: not expressible
    "lusitania,SHM+IB,bcast_nosuchvariant,8,8,Sequential,1024,0,1.0,1,",
]


def _small_csv(tmp_path):
    def lib(alg, P, Q, m):
        return next(r["predicted_seconds"] for r in ROWS if r["algorithm"] == alg and r["P"] == P
                    and r["Q"] == Q and r["m"] == m and r["mapping"] == "Sequential"
                    and r["channels"] == "SHM+IB" and r["root"] == 0)
    vals = {"bin8": repr(lib("bcast_binomial", 8, 8, 1024.0)), "lin16m": repr(lib("bcast_linear", 2, 1, 16777216.0))}
    path = tmp_path / "small.csv"
    path.write_text(",".join(la.COLUMNS) + "\n" + "\n".join(s.format(**vals) for s in SMALL) + "\n")
    return path


def test_report_on_a_small_csv(tmp_path, capsys):
    path = _small_csv(tmp_path)
    rep = la.agreement(la.read_rows(path))
    assert rep.rows[la.SAME] == 3 and rep.evaluated[la.SAME] == 2 and rep.agree[la.SAME] == 1
    assert rep.causes[la.SAME] == {"unexplained": 1}
    assert rep.rows["m > 4 MiB"] == 1 and rep.agree["m > 4 MiB"] == 0
    assert rep.causes["m > 4 MiB"] == {"4 MiB chunks": 1}
    assert len(rep.same_wrong) == 1 and rep.same_wrong[0][0]["m"] == 4096.0
    # with --compat the chunked row agrees
    compat = la.agreement(la.read_rows(path), compat=True)
    assert compat.agree["m > 4 MiB"] == 1

    out = tmp_path / "pred.csv"
    assert la.main([str(path), "--predictions", str(out)]) == 1      # a same-mathematics row disagrees
    text = capsys.readouterr().out
    assert "same mathematics" in text and "4 MiB chunks" in text
    assert "not expressible (no stdlib algorithm): bcast_nosuchvariant" in text
    assert "DISAGREES: bcast_binomial P=8 Q=8 Sequential m=4096" in text
    got = list(csv.DictReader(out.open()))
    assert [g["algorithm"] for g in got] == ["bcast_binomial", "bcast_binomial", "bcast_linear"]
    assert list(got[0]) == list(la.COLUMNS) + ["tlop_seconds"]
    assert got[0]["m"] == "1024"
    assert la.agrees(float(got[0]["tlop_seconds"]), float(got[0]["predicted_seconds"]))


def test_missing_column_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("platform,algorithm\nlusitania,bcast_linear\n")
    with pytest.raises(SystemExit, match="missing column"):
        la.read_rows(bad)


# --- reductions at off-grid sizes on every bundled τ-Lop table (issue 22 item 5) -------------------
# tests/data/taulop-oracle-reductions.csv: libtaulop (bbcb7e2) built and run by
# bench/libtaulop_oracle/generate.py, which first reproduced every SHM+IB row of the lusitania
# oracle exactly; the column predicted_seconds_tie_patch is the library with one change (equal
# concurrent groups end together instead of leaving a residue m − B(Δ)).

REDUCTIONS = la.read_rows(Path(__file__).parent / "data" / "taulop-oracle-reductions.csv")


def _red(platform, algorithm, P, Q, mapping, m):
    [row] = [r for r in REDUCTIONS if (r["platform"], r["algorithm"], r["P"], r["Q"], r["mapping"], r["m"])
             == (platform, algorithm, P, Q, mapping, m)]
    return row


def test_reductions_cover_every_platform_off_grid():
    assert {r["platform"] for r in REDUCTIONS} == {"metropolis", "lusitania", "ciemat"}
    assert all(la.TIE_COLUMN in r for r in REDUCTIONS)
    assert {100.0, 1000.0, 3000.0, 5000.0, 10000.0} <= {r["m"] for r in REDUCTIONS}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("platform", ["metropolis", "lusitania", "ciemat"])
def test_single_node_reductions_agree_or_are_demonstrated_tie_residues(platform):
    """One node (Q = 8 ≥ P): every reduce/allreduce row of the stdlib agrees with the library, or
    the library without its tie residues agrees with the stdlib (never an undemonstrated cause)."""
    rows = [r for r in REDUCTIONS if r["platform"] == platform and r["Q"] == 8 and r["P"] in (4, 8)
            and r["algorithm"] in ("reduce_binomial_openmpi", "allreduce_ring", "allreduce_nonoverlap_openmpi")]
    assert len(rows) == 3 * 2 * 9
    counts = {"agree": 0, "tie": 0}
    for r in rows:
        got = la.evaluate_row(r)
        if la.agrees(got, r["predicted_seconds"]):
            counts["agree"] += 1
            continue
        cause = la.attribute(r, got)
        assert not cause.startswith(la.UNEXPLAINED) or r["note"] or la.departure(r), (r, got, cause)
        if cause.startswith("library tie residues"):
            counts["tie"] += 1
            assert la.classify(r) == "library tie residues"
    assert counts["agree"] > 0
    if platform == "metropolis":
        assert counts["tie"] > 0        # γ is not monotone between its 4 B and 64 B rows


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_issue_example_is_a_tie_residue_not_an_interpolation_difference():
    """reduce_binomial_openmpi, P = Q = 4, m = 100 B on metropolis: the library's 3.2666e-6 s
    exceeds the stdlib's 3.0294e-6 s by γ of the residue (the two receivers' γ(100) tie; the
    library advances the other by its inverse γ table, 1 B); without the tie residue it agrees."""
    r = _red("metropolis", "reduce_binomial_openmpi", 4, 4, "Sequential", 100.0)
    got = la.evaluate_row(r)
    assert r["predicted_seconds"] == pytest.approx(3.2666e-6, rel=1e-4)
    assert got == pytest.approx(3.0294e-6, rel=1e-4)
    assert la.agrees(got, r[la.TIE_COLUMN])
    assert la.classify(r) == "library tie residues"
    assert la.attribute(r, got) == "library tie residues (the library without them agrees)"
    # γ itself is interpolated the library's way: the gap is γ(99 B) of the residue
    gamma = la.profile_for("metropolis", "SHM+IB").table("gamma")
    assert r["predicted_seconds"] - got == pytest.approx(float(gamma.lookup(99.0)), rel=1e-5)


def test_an_attribution_is_never_a_suspicion():
    """A row that nothing re-evaluated explains is "unexplained", whatever P > Q suggests."""
    row = la.parse_row({"platform": "metropolis", "channels": "SHM+IB", "algorithm": "bcast_linear",
                        "P": "4", "Q": "1", "mapping": "Sequential", "m": "1000", "root": "0",
                        "predicted_seconds": "1.0", "M": "4", "note": ""})
    got = la.evaluate_row(row)
    assert la.attribute(row, got) == "unexplained (suspected: A3 pieces, groups on several nodes)"
    row[la.TIE_COLUMN] = got            # the library without its tie residues agrees: demonstrated
    assert la.attribute(row, got) == "library tie residues (the library without them agrees)"
