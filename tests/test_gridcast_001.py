"""Paper 001: Lowekamp's clustering, the seven inter-cluster heuristics, their pricing (checked
against the reference interpreter), the vectorised Monte-Carlo (checked against the scalar
reference) and Table 3's ordering."""

import numpy as np
import pytest

import tlop
from conftest import synthetic_profile
from tlop.apps.gridcast import HEURISTICS, Problem, lowekamp, price, schedule, table4_latency_matrix
from tlop.apps.gridcast.pricing import to_tlop
from tlop.apps.gridcast.problem import intra_cluster_times
from tlop.apps.gridcast.simulate import makespans, random_problems, simulate
from tlop.cli.main import main


def groups(cluster_of):
    out = {}
    for node, c in enumerate(cluster_of):
        out.setdefault(int(c), []).append(node)
    return sorted(out.values(), key=lambda m: m[0])


@pytest.mark.parametrize("rho", [0.2, 0.25, 0.3])
def test_table4_clusters_back_into_the_papers_six(rho):
    w, cluster_of = table4_latency_matrix()
    assert w.shape == (88, 88)
    subnets = lowekamp(w, rho)
    assert subnets == groups(cluster_of)
    assert [len(s) for s in subnets] == [31, 29, 6, 1, 1, 20]


def test_a_larger_tolerance_merges_the_two_orsay_clusters():
    # 62.10 µs between them, 47.56 and 47.92 inside: they merge once 1 + ρ > 62.10 / 47.56
    w, _ = table4_latency_matrix()
    assert [len(s) for s in lowekamp(w, 0.35)] == [60, 6, 1, 1, 20]


def test_lowekamp_rules_on_a_small_matrix():
    # 0-1 and 2-3 are tight pairs (10); the edge 1-2 (12.5) is 1.25 times the smallest edge of its
    # ends and of their subnets, so it joins the pairs when rho >= 0.25 and not below
    w = np.array([[0, 10, 40, 40], [10, 0, 12.5, 40], [40, 12.5, 0, 10], [40, 40, 10, 0]], dtype=float)
    assert lowekamp(w, 0.2) == [[0, 1], [2, 3]]
    assert lowekamp(w, 0.25) == [[0, 1, 2, 3]]
    assert lowekamp(np.array([[0.0]]), 0.2) == [[0]]


def test_every_heuristic_gives_a_valid_broadcast():
    rng = np.random.default_rng(5)
    g, L, T = random_problems(rng, 20, 9)
    for r in range(20):
        p = Problem(g[r], L[r], T[r])
        for h in HEURISTICS:
            s = schedule(p, h)
            have = {0}
            for i, j in s:
                assert i in have and j not in have
                have.add(j)
            assert have == set(range(9)) and len(s) == 8


def test_hand_computed_three_clusters():
    # root 0; cluster 1 is near (L 1 ms) but slow inside (T 3 s), cluster 2 far (L 15 ms), quick
    g = np.array([[0, .1, .1], [.1, 0, .6], [.1, .6, 0]])
    L = np.array([[0, .001, .015], [.001, 0, .015], [.015, .015, 0]])
    T = np.array([.02, 3.0, .02])
    p = Problem(g, L, T)
    # FEF: smallest latency first: 0->1, then 0->2 (L_02 = L_12: the tie goes to the smaller i)
    assert schedule(p, "FEF") == [(0, 1), (0, 2)]
    done = price(p, [(0, 1), (0, 2)])
    assert done.arrival.tolist() == pytest.approx([0, .101, .215])
    assert done.finish.tolist() == pytest.approx([.2 + .02, .101 + 3.0, .215 + .02])
    # BottomUp: the slowest cluster first (min_i G_i1 + T_1 = 3.101 > 0.135)
    assert schedule(p, "BottomUp")[0] == (0, 1)
    # ECEF: 0->1 completes at 0.101, 0->2 at 0.115: 1 first
    assert schedule(p, "ECEF") == [(0, 1), (0, 2)]


@pytest.mark.parametrize("C", [2, 3, 7, 12])
def test_vectorised_simulation_makes_the_scalar_choices(C):
    rng = np.random.default_rng(C)
    g, L, T = random_problems(rng, 60, C)
    for h in HEURISTICS:
        want = [price(Problem(g[r], L[r], T[r]), schedule(Problem(g[r], L[r], T[r]), h)).makespan for r in range(60)]
        np.testing.assert_array_equal(makespans(h, g, L, T), want, err_msg=h)


def test_pricing_is_tlops_plogp_dataflow():
    """A schedule priced here on homogeneous parameters (g, L, no T) costs what the reference
    interpreter gives its .tlop program on a pLogP profile with the same g and L."""
    M = [1.0, 1e7]
    prof = synthetic_profile("homog", tables={"g": {"*": {"m": M, "values": [0.25, 0.25]}},
                                              "os": {"*": {"m": M, "values": [0.0, 0.0]}},
                                              "or_": {"*": {"m": M, "values": [0.0, 0.0]}}},
                             scalars={"L": {"*": 0.01}})
    rng = np.random.default_rng(2)
    g, L, T = random_problems(rng, 3, 8)
    C = 8
    homog = Problem(np.full((C, C), 0.25), np.full((C, C), 0.01), np.zeros(C))
    for r in range(3):
        for h in HEURISTICS:
            s = schedule(Problem(g[r], L[r], T[r]), h)
            alg = tlop.loads(to_tlop(s))["grid_schedule"]
            got = alg.evaluate(prof, P=C, m=1000, mapping=tlop.sequential(1))
            assert got == pytest.approx(price(homog, s).makespan, rel=1e-14), (r, h)


def test_monte_carlo_reproduces_table_3s_ordering():
    means = simulate([10, 20], runs=400, seed=3)
    for k in range(2):
        m = {h: means[h][k] for h in HEURISTICS}
        ecef = [m[h] for h in ("ECEF", "ECEF-LA", "ECEF-LAt", "ECEF-LAT")]
        assert m["Flat tree"] > m["FEF"] > m["BottomUp"] > max(ecef)
        assert max(ecef) / min(ecef) < 1.05  # the ECEF family: best and alike


def test_intra_cluster_time_is_the_cheapest_plogp_broadcast():
    M = [1.0, 1024.0, 65536.0, 1048576.0, 16777216.0]
    prof = synthetic_profile("p", tables={"g": {"*": {"m": M, "values": [2e-6 + 1e-9 * m for m in M]}}},
                             scalars={"L": {"*": 5e-6}})
    T, chosen = intra_cluster_times([1, 2, 16], 65536.0, prof)
    assert T[0] == 0 and chosen[0] == "-"
    g = lambda m: 2e-6 + 1e-9 * m  # noqa: E731
    for P, t in ((2, T[1]), (16, T[2])):
        flat = (P - 1) * g(65536) + 5e-6
        binomial = np.floor(np.log2(P)) * g(65536) + np.ceil(np.log2(P)) * 5e-6
        chain_seg = min((P - 1) * (g(s) + 5e-6) + g(s) * (65536 / s - 1) for s in [65536 / 2 ** i for i in range(17)])
        assert t <= min(flat, binomial, chain_seg) * (1 + 1e-12)


def test_cli_cluster_and_schedule(capsys):
    assert main(["grid-bcast", "cluster", "--rho", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "6 subnets of 001 Table 4" in out and "subnet 5:  20 nodes  68-87" in out
    assert main(["grid-bcast", "schedule"]) == 0
    out = capsys.readouterr().out
    assert all(f"\n{h:10s} " in out for h in HEURISTICS)


def test_cli_simulate_table_csv_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    svg = tmp_path / "g.svg"
    assert main(["grid-bcast", "simulate", "--runs", "50", "--clusters", "2,6", "--csv", "-",
                 "--plot", str(svg)]) == 0
    cap = capsys.readouterr()
    assert "700/700 runs" in cap.err  # progress: 2 counts x 50 runs x 7 heuristics
    rows = [ln for ln in cap.out.splitlines() if ln.startswith(("2,", "6,"))]
    assert len(rows) == 2
    want = simulate([2, 6], runs=50, seed=0)
    for row, k in zip(rows, range(2)):
        assert [float(x) for x in row.split(",")[1:]] == [want[h][k] for h in HEURISTICS]
    from tlop.cli.gridbcast import build_figure

    fig = build_figure([2, 6], want, 50)
    lines = {ln.get_gid(): ln for ln in fig.axes[0].get_lines()}
    assert set(lines) == {f"heuristic-{h}" for h in HEURISTICS}
    assert list(lines["heuristic-FEF"].get_ydata()) == want["FEF"]
    assert 'id="heuristic-BottomUp"' in svg.read_text()


def test_cli_bad_input_is_a_clear_error(capsys, tmp_path):
    assert main(["grid-bcast", "simulate", "--clusters", "1..4"]) == 1
    assert "every cluster count must be at least 2" in capsys.readouterr().err
    assert main(["grid-bcast", "simulate", "--clusters", "100000"]) == 1
    assert "--clusters 100000: at most 1000 clusters" in capsys.readouterr().err
    bad = tmp_path / "m.txt"
    bad.write_text("0 1\n1 x\n")
    assert main(["grid-bcast", "cluster", "--matrix", str(bad)]) == 1
    assert f"{bad}:2: expected numbers" in capsys.readouterr().err


# ------------------------------------------------------------------ each link its own g_ij(m), L_ij

@pytest.mark.parametrize("C", [2, 5, 11])
def test_heterogeneous_schedule_is_priced_by_the_schedule_layer(C):
    """Every link's own g_ij and L_ij and every cluster's T_j: the schedule written as a pLogP
    program (schedule_program) costs in tlop's schedule layer what price() computes."""
    from tlop.apps.gridcast.pricing import schedule_program
    from tlop.runtime.profile import profile_from_dict

    rng = np.random.default_rng(100 + C)
    g, L, T = random_problems(rng, 2, C)
    g[1] = g[1] * rng.uniform(0.5, 2.0, size=(C, C))  # asymmetric links too
    for r in range(2):
        p = Problem(g[r], L[r], T[r], root=r % C)
        for h in HEURISTICS:
            s = schedule(p, h)
            src, prof = schedule_program(p, s)
            got = tlop.loads(src)["grid_schedule"].evaluate(profile_from_dict(prof), P=C, mapping=tlop.sequential(1))
            assert got == pytest.approx(price(p, s).makespan, rel=1e-13), (r, h)


LINK_M = [1.0, 1024.0, 65536.0, 1048576.0, 16777216.0]


def linear_plogp(name, g0, g1, L):
    """A pLogP profile with g(m) = g0 + g1·m on its grid and latency L."""
    return synthetic_profile(name, tables={"g": {"*": {"m": LINK_M, "values": [g0 + g1 * m for m in LINK_M]}}},
                             scalars={"L": {"*": L}})


#: three subnets; link 0-1: low latency, low bandwidth; 0-2: high latency, high bandwidth
LINKS = {(0, 1): (1e-4, 1e-7, 1e-3), (0, 2): (1e-4, 1e-9, 40e-3), (1, 2): (1e-4, 5e-9, 10e-3)}
INTRA = [(2e-6, 1e-9, 5e-6), (2e-6, 2e-9, 5e-6), (3e-6, 1e-9, 8e-6)]
SIZES3 = [16, 4, 8]


def test_measured_problem_gives_each_link_its_own_size_dependent_gap():
    from tlop.apps.gridcast.problem import measured_problem

    intra = [linear_plogp(f"in{k}", *v) for k, v in enumerate(INTRA)]
    links = {ij: linear_plogp(f"l{ij}", *v) for ij, v in LINKS.items()}
    for m in (1024.0, 4194304.0):
        p, chosen = measured_problem(m, SIZES3, intra, links)
        for (i, j), (g0, g1, lat) in LINKS.items():
            for a, b in ((i, j), (j, i)):  # one measurement serves both ways
                assert p.g[a, b] == pytest.approx(g0 + g1 * m, rel=1e-12)
                assert p.L[a, b] == lat
        want_T, _ = intra_cluster_times([SIZES3[0]], m, intra[0])
        assert p.T[0] == want_T[0] and len(chosen) == 3
    # the size decides which link is fast: a single g(m) on every link cannot show this
    small, _ = measured_problem(1024.0, SIZES3, intra, links)
    large, _ = measured_problem(4194304.0, SIZES3, intra, links)
    assert schedule(small, "ECEF")[0] == (0, 1) and schedule(large, "ECEF")[0] == (0, 2)
    with pytest.raises(ValueError, match="no pLogP profile for the link between subnets 1 and 2"):
        measured_problem(1024.0, SIZES3, intra, {(0, 1): links[(0, 1)], (0, 2): links[(0, 2)]})


def write_grid(tmp_path, **over):
    import json

    for k, v in enumerate(INTRA):
        (tmp_path / f"in{k}.json").write_text(linear_plogp(f"in{k}", *v).to_json())
    for (i, j), v in LINKS.items():
        (tmp_path / f"l{i}{j}.json").write_text(linear_plogp(f"l{i}{j}", *v).to_json())
    grid = {"tlop_grid": 1,
            "subnets": [{"name": n, "machines": SIZES3[k], "profile": f"in{k}.json"}
                        for k, n in enumerate(("orsay", "idpot", "toulouse"))],
            "links": [{"between": [("orsay", "idpot", "toulouse")[i], ("orsay", "idpot", "toulouse")[j]],
                       "profile": f"l{i}{j}.json"} for i, j in LINKS],
            **over}
    f = tmp_path / "grid.json"
    f.write_text(json.dumps(grid, indent=1))
    return f


def test_cli_schedule_with_a_grid_description(tmp_path, capsys):
    from tlop.apps.gridcast.description import grid_problem, read_grid

    f = write_grid(tmp_path)
    assert main(["grid-bcast", "schedule", "--grid", str(f), "--m", "4MiB"]) == 0
    out = capsys.readouterr().out
    assert "3 subnets of the grid description" in out and "root 'orsay'" in out
    p, _ = grid_problem(read_grid(f), 4 << 20)
    from tlop.runtime.units import format_time

    for h in HEURISTICS:
        s = schedule(p, h)
        line = [ln for ln in out.splitlines() if ln.startswith(f"{h:10s} ")][0]
        assert line.split()[-len(s):] == [f"{i}->{j}" for i, j in s]
        assert format_time(price(p, s).makespan) in line
    assert "0->2" in [ln for ln in out.splitlines() if ln.startswith("ECEF ")][0].split()[-2]


@pytest.mark.parametrize("over,message", [
    ({"links": [{"between": ["orsay", "idpot"], "profile": "l01.json"}]},
     "grid.json: links: no link between 'orsay' and 'toulouse' (and 1 more pair(s))"),
    ({"links": [{"between": ["orsay", "nowhere"], "profile": "l01.json"}]},
     "grid.json: links[0].between: unknown subnet 'nowhere'"),
    ({"root": "x"}, "grid.json: root: unknown subnet 'x'"),
    ({"tlop_grid": 2}, "grid.json: tlop_grid: expected 1"),
    ({"subnets": [{"name": "a", "machines": 0, "profile": "in0.json"},
                  {"name": "b", "machines": 1, "profile": "in0.json"}], "links": []},
     "grid.json: subnets[0].machines: expected a whole number of machines >= 1, got 0"),
])
def test_cli_grid_description_errors_name_the_field(tmp_path, capsys, over, message):
    f = write_grid(tmp_path, **over)
    assert main(["grid-bcast", "schedule", "--grid", str(f)]) == 1
    err = capsys.readouterr().err
    assert message in err and "E020" in err and "Traceback" not in err


def test_cli_grid_description_bad_json_and_bad_profile(tmp_path, capsys):
    f = write_grid(tmp_path)
    f.write_text('{"tlop_grid": 1,\n  "subnets": [}\n')
    assert main(["grid-bcast", "schedule", "--grid", str(f)]) == 1
    err = capsys.readouterr().err
    assert f"{f}:2:15" in err and "invalid JSON in the grid description" in err and "^" in err
    f = write_grid(tmp_path, links=[{"between": ["orsay", "idpot"], "profile": "summit"},
                                    {"between": ["orsay", "toulouse"], "profile": "l02.json"},
                                    {"between": ["idpot", "toulouse"], "profile": "gone.json"}])
    assert main(["grid-bcast", "schedule", "--grid", str(f)]) == 1
    err = capsys.readouterr().err
    assert "grid.json: links[0].profile: profile 'summit' has no pLogP g(m) and L" in err
    (tmp_path / "l01.json").write_text("{}")
    f = write_grid(tmp_path, links=[{"between": ["orsay", "idpot"], "profile": "l12.json"},
                                    {"between": ["orsay", "toulouse"], "profile": "l02.json"},
                                    {"between": ["idpot", "toulouse"], "profile": "gone.json"}])
    assert main(["grid-bcast", "schedule", "--grid", str(f)]) == 1
    assert "grid.json: links[2].profile:" in capsys.readouterr().err
    assert main(["grid-bcast", "schedule", "--grid", str(f), "--profile", "summit"]) == 1
    assert "the grid description replaces --profile" in capsys.readouterr().err


def test_cli_grid_description_with_a_negative_latency(tmp_path, capsys):
    f = write_grid(tmp_path)
    (tmp_path / "l12.json").write_text(linear_plogp("neg", 1e-4, 1e-7, -1e-3).to_json())
    assert main(["grid-bcast", "schedule", "--grid", str(f)]) == 1
    err = capsys.readouterr().err
    assert "grid.json: links[2].profile: pLogP L of profile 'neg' is -0.001" in err and "Traceback" not in err


def test_cli_matrix_with_a_negative_or_missing_latency(tmp_path, capsys):
    bad = tmp_path / "m.txt"
    bad.write_text("0 -5\n-5 0\n")
    assert main(["grid-bcast", "schedule", "--matrix", str(bad)]) == 1
    assert f"{bad}:1: a latency is >= 0 (or '-' for a missing edge); got -5" in capsys.readouterr().err
    bad.write_text("0 -\n- 0\n")
    assert main(["grid-bcast", "schedule", "--matrix", str(bad)]) == 1
    assert "no latency between subnet 0 and subnet 1" in capsys.readouterr().err


def test_many_clusters_are_simulated_in_smaller_chunks():
    """300 clusters: chunks of 27 runs (the memory bound), the same means as one run at a time
    would give for the same problems (chunking only changes how the draws are grouped)."""
    from tlop.apps.gridcast import simulate as sim

    done = []
    means = sim.simulate([300], runs=30, seed=1, heuristics=("ECEF",), progress=done.append)
    assert done == [27, 30]
    rng = np.random.default_rng(1)
    g, L, T = random_problems(rng, 27, 300)
    first = makespans("ECEF", g, L, T)
    g, L, T = random_problems(rng, 3, 300)
    assert means["ECEF"][0] == pytest.approx((first.sum() + makespans("ECEF", g, L, T).sum()) / 30, rel=1e-12)
