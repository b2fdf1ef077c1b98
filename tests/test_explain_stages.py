"""``tlop explain ALG NAME=VALUE… --mapping M``: a schedule stage by stage (text goldens, JSON,
the evaluator's record), and ``--plot``: the figure's content and the files written."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import tlop
from tlop.cli.main import main
from tlop.runtime.units import format_time

GOLDEN = Path(__file__).parent / "golden" / "cli"
PLATFORM = Path(tlop.__file__).parent.parent / "stdlib" / "taulop" / "platform.tlop"

CASES = {
    "explain_binomial_seq4": ["explain", "taulop/bcast", "binomial", "P=16", "m=1KiB", "--mapping", "sequential(4)"],
    "explain_ring_seq4": ["explain", "taulop/allgather", "ring", "P=16", "m=1KiB", "--mapping", "sequential(4)"],
    "explain_ring_rr": ["explain", "taulop/allgather", "ring", "P=8", "m=64KiB", "--mapping", "round_robin(4)",
                        "--profile", "lusitania"],
}

SRC = """import "taulop/platform.tlop"
algorithm sizes(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : (p + 1) * m }
algorithm block(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: { send p -> (p + 1) % P : m  send p -> (p + 1) % P : 2 * m } }
algorithm weighted(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m weight 2 }
algorithm reduction(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: { send p -> (p + 1) % P : m  compute p : 1us } }
algorithm mixed(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m } + 2 * T[shm](m)
algorithm closed(P: int >= 2, m: bytes) = P * T[shm](m)
"""


def T(profile, channel, m, tau=1.0):
    """T^c(m) under concurrency τ, from the profile's tables as 000 eq. 1–3 write it."""
    pch = profile.resolve_channel(channel)
    kind = profile.transmission_kind(pch)
    o = profile.table("o", pch).lookup(m)
    L = profile.table("L", pch).lookup(m, tau)
    if kind == "shm":
        return o + 2 * L
    if kind == "rdma":
        return o + L
    return o + 2 * profile.table("L", profile.resolve_channel("shm")).lookup(m, tau) + L


def _json(capsys, *argv):
    assert main(["explain", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "sched.tlop"
    path.write_text(SRC)
    return str(path)


# ----------------------------------------------------------------------------- text

@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_output(name, capsys, golden):
    assert main(CASES[name]) == 0
    golden(GOLDEN / f"{name}.txt", capsys.readouterr().out)


def test_without_arguments_explain_still_prints_the_derivation(capsys):
    assert main(["explain", "taulop/bcast", "binomial_bcast"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("binomial_bcast:\n") and "model assumptions used" in out


# ----------------------------------------------------------------------------- the record, by hand

def test_binomial_stages_by_hand(capsys):
    """P = 16, Q = 4: the first two stages cross nodes (one transfer into each receiving node),
    the last two stay inside the nodes (τ = 1, then τ = 2 per node)."""
    prof = tlop.load_profile("metropolis")
    m = 1024.0
    d = _json(capsys, "taulop/bcast", "binomial", "P=16", "m=1KiB", "--mapping", "sequential(4)")
    assert d["node_of"] == [r // 4 for r in range(16)]
    assert [s["variables"] for s in d["stages"]] == [{"s": s} for s in range(4)]
    want = [T(prof, "net", m), T(prof, "net", m), T(prof, "shm", m), T(prof, "shm", m, 2)]
    assert [s["seconds"] for s in d["stages"]] == pytest.approx(want, rel=1e-12)
    assert [s["notation"] for s in d["stages"]] == ["T^net(1KiB)", "T^net(1KiB)", "T^shm(1KiB)", "2‖T^shm(1KiB)"]
    assert [len(s["sends"]) for s in d["stages"]] == [1, 2, 4, 8]
    last = d["stages"][3]["phases"][0]["groups"]
    assert [(g["label"], g["tau"], [(x["src"], x["dst"]) for x in g["members"]]) for g in last] == [
        (f"shm node {n}", 2.0, [(4 * n, 4 * n + 1), (4 * n + 2, 4 * n + 3)]) for n in range(4)]
    assert [g["label"] for g in d["stages"][1]["phases"][0]["groups"]] == ["net → node 1", "net → node 3"]
    assert d["seconds"] == tlop.load("taulop/bcast")["binomial"].evaluate(prof, P=16, m=m, mapping="sequential(4)")
    assert d["stages_seconds"] == pytest.approx(d["seconds"], rel=1e-15)


def test_ring_stage_is_eq_8_9_max_of_groups(capsys):
    """Every ring stage: Q − 1 shared-memory transfers per node (τ = 3) and one network transfer
    into each node; the stage costs max{3‖T^shm(m), T^net(m)} (000 eq. 8–9)."""
    prof = tlop.load_profile("metropolis")
    d = _json(capsys, "taulop/allgather", "ring", "P=16", "m=1KiB", "--mapping", "sequential(4)")
    assert len(d["stages"]) == 15
    for s in d["stages"]:
        (ph,) = s["phases"]
        assert ph["notation"] == "max{3‖T^shm(1KiB), T^net(1KiB)}"
        shm = [g for g in ph["groups"] if g["channel"] == "shm"]
        net = [g for g in ph["groups"] if g["channel"] == "net"]
        assert [g["key"] for g in shm] == [0, 1, 2, 3] and [g["key"] for g in net] == [0, 1, 2, 3]
        assert all(g["tau"] == 3 and len(g["members"]) == 3 for g in shm)
        assert all(g["tau"] == 1 and len(g["members"]) == 1 for g in net)
        assert s["seconds"] == pytest.approx(max(T(prof, "shm", 1024.0, 3), T(prof, "net", 1024.0)), rel=1e-12)
    ring = tlop.load("taulop/allgather")["ring"]
    # the interpreter evaluates the 15 identical stages once; the explanation enumerates each
    assert d["seconds"] == pytest.approx(ring.evaluate(prof, P=16, m=1024.0, mapping="sequential(4)"), rel=1e-14)


def test_groups_terms_phases_and_computations(src, capsys):
    prof = tlop.load_profile("metropolis")
    m = 1024.0
    # A2 with different sizes: Σ_j (n − j + 1)‖T(m_j − m_{j−1})
    (s,) = _json(capsys, src, "sizes", "P=4", "m=1KiB", "--mapping", "sequential(8)")["stages"]
    (g,) = s["phases"][0]["groups"]
    assert g["notation"] == "4‖T^shm(1KiB) + 3‖T^shm(1KiB) + 2‖T^shm(1KiB) + T^shm(1KiB)"
    assert [t["tau"] for t in g["terms"]] == [4, 3, 2, 1]
    assert g["seconds"] == pytest.approx(sum(T(prof, "shm", m, k) for k in (4, 3, 2, 1)), rel=1e-12)
    assert sum(t["seconds"] for t in g["terms"]) == pytest.approx(g["seconds"], rel=1e-15)
    # a block: two phases, added
    (s,) = _json(capsys, src, "block", "P=4", "m=1KiB", "--mapping", "sequential(8)")["stages"]
    assert [p["notation"] for p in s["phases"]] == ["4‖T^shm(1KiB)", "4‖T^shm(2KiB)"]
    assert s["notation"] == "4‖T^shm(1KiB) + 4‖T^shm(2KiB)"
    assert s["seconds"] == pytest.approx(T(prof, "shm", m, 4) + T(prof, "shm", 2 * m, 4), rel=1e-12)
    # weights raise τ
    (s,) = _json(capsys, src, "weighted", "P=4", "m=1KiB", "--mapping", "sequential(8)")["stages"]
    assert s["notation"] == "8‖T^shm(1KiB)" and s["phases"][0]["groups"][0]["tau"] == 8
    # a computation is a group of its own (per rank), in the phase after the send
    (s,) = _json(capsys, src, "reduction", "P=2", "m=1KiB", "--mapping", "sequential(8)")["stages"]
    assert [[g["label"] for g in p["groups"]] for p in s["phases"]] == [["shm node 0"],
                                                                       ["compute on rank 0", "compute on rank 1"]]
    assert s["computations"] == [{"rank": 0, "seconds": 1e-6, "phase": 1}, {"rank": 1, "seconds": 1e-6, "phase": 1}]
    assert s["seconds"] == pytest.approx(T(prof, "shm", m, 2) + 1e-6, rel=1e-12)


def test_the_rest_of_a_mixed_algorithm_is_reported(src, capsys):
    prof = tlop.load_profile("metropolis")
    assert main(["explain", src, "mixed", "P=4", "m=1KiB", "--mapping", "sequential(8)"]) == 0
    out = capsys.readouterr().out
    rest = format_time(2 * T(prof, "shm", 1024.0))
    assert f"the rest of the algorithm's cost: {rest}" in out


def test_contention_keys_name_their_groups(tmp_path, capsys):
    """A platform whose network is shared per source node (src_node) or per node in either
    direction (either): the groups are named after the key, and under `either` a transfer between
    nodes is a member of the group of each of its nodes."""
    for key, labels in (("src_node", ["net node 0 →", "net node 1 →"]),
                        ("either", ["net node 0 ↔", "net node 1 ↔"])):
        d = tmp_path / key
        d.mkdir()
        (d / "platform.tlop").write_text(PLATFORM.read_text().replace("contention dst_node", f"contention {key}"))
        (d / "alg.tlop").write_text('import "platform.tlop"\nalgorithm swap(P: int >= 2, m: bytes) over map: mapping =\n'
                                    '    stage { send 0 -> 2 : m  send 1 -> 3 : m }\n')
        (s,) = _json(capsys, str(d / "alg.tlop"), "swap", "P=4", "m=1KiB", "--mapping", "sequential(2)")["stages"]
        groups = s["phases"][0]["groups"]
        if key == "src_node":
            assert [g["label"] for g in groups] == labels[:1] and groups[0]["tau"] == 2
        else:
            assert [g["label"] for g in groups] == labels and all(g["tau"] == 2 for g in groups)


# ----------------------------------------------------------------------------- errors

@pytest.mark.parametrize("argv, message", [
    (["taulop/bcast", "binomial_bcast", "P=16", "m=1KiB"], "'binomial_bcast' has no schedule stages"),
    (["taulop/bcast", "binomial", "P=16", "m=1KiB"], "needs one: --mapping sequential(Q)"),
    (["taulop/bcast", "binomial", "P=16", "m=1KiB", "--mapping", "sequential(4)", "--latex"],
     "--latex explain the derivation"),
    (["taulop/bcast", "binomial", "P=16", "m=1KiB", "--mapping", "sequential(4)", "--plot", "x.jpg"],
     "use one of .svg, .png, .pdf"),
    (["taulop/allgather", "ring", "P=80", "m=1KiB", "--mapping", "sequential(4)", "--plot", "x.svg",
      "--view", "stages"], "--plot draws at most 64 stages; this schedule has 79"),
    (["taulop/bcast", "binomial", "P=16", "--mapping", "sequential(4)"], "missing argument 'm' (bytes)"),
    (["loggp/bcast", "binomial", "P=8", "m=1KiB", "--mapping", "sequential(4)"], "means a dataflow program"),
])
def test_errors_are_one_clear_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["explain", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


# ----------------------------------------------------------------------------- the picture

def _explanation(alg_file, alg, mapping, **args):
    from tlop.analysis.stages import explain_stages
    from tlop.backends.binding import as_mapping, bind_mapping

    h = tlop.load(alg_file)[alg]
    env = h.bind({k: str(v) for k, v in args.items()}, strings=True)
    mp = as_mapping(mapping)
    return explain_stages(h.module.program, h.ir, tlop.load_profile("metropolis"), mp,
                          bind_mapping(h.ir, env, mp), dict(args), {k: float(env[k]) for k in args}), mp


@pytest.mark.parametrize("alg_file, alg, mapping, P", [
    ("taulop/bcast", "binomial", "sequential(4)", 16),
    ("taulop/bcast", "binomial", "round_robin(3)", 12),
    ("taulop/allgather", "ring", "sequential(3)", 6),
])
def test_the_figure_has_a_panel_per_stage_a_dot_per_rank_an_arrow_per_send(alg_file, alg, mapping, P):
    pytest.importorskip("matplotlib")
    from matplotlib.patches import FancyArrowPatch, Rectangle

    from tlop.cli.plot_stages import CHANNEL_COLOURS, build_figure
    from matplotlib.colors import to_rgba

    e, mp = _explanation(alg_file, alg, mapping, P=P, m="1KiB")
    fig = build_figure(e)
    panels = [ax for ax in fig.axes if (ax.get_gid() or "").startswith("stage-")]
    assert len(panels) == len(e.stages) > 0
    ref = tlop.load(alg_file)[alg].evaluate("metropolis", P=P, m=1024.0, mapping=mapping)
    assert sum(s.cost for s in e.stages) == pytest.approx(ref, rel=1e-12)
    for ax, s in zip(panels, e.stages):
        assert ax.get_gid() == f"stage-{s.index}"
        (dots,) = [c for c in ax.collections if c.get_gid() == f"ranks-{s.index}"]
        assert len(dots.get_offsets()) == P
        boxes = [p for p in ax.patches if isinstance(p, Rectangle) and (p.get_gid() or "").startswith("node-")]
        assert len(boxes) == mp.nodes(P)
        arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
        assert len(arrows) == len(s.sends)
        for arrow, send in zip(arrows, s.sends):
            colour = CHANNEL_COLOURS[e.channels.index(send[4])]
            assert arrow.get_edgecolor() == to_rgba(colour)
        (cost,) = [t for t in ax.texts if t.get_gid() == f"cost-{s.index}"]
        assert cost.get_text().replace("\n", " ") == f"{s.notation} = {format_time(s.cost)}"  # wrapped, not cut


def test_plot_writes_svg_and_png_with_the_content(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    svg = tmp_path / "b.svg"
    argv = ["explain", "taulop/bcast", "binomial", "P=16", "m=1KiB", "--mapping", "sequential(4)"]
    assert main([*argv, "--plot", str(svg)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(f"wrote {svg}")
    ids = [el.get("id") or "" for el in ET.parse(svg).getroot().iter()]
    assert sum(i.startswith("send-") for i in ids) == 1 + 2 + 4 + 8
    assert sum(i.startswith("stage-") for i in ids) == 4
    assert sum(i.startswith("node-") for i in ids) == 4 * 4
    assert sum(i.startswith("cost-") for i in ids) == 4
    png = tmp_path / "r.png"
    assert main(["explain", "taulop/allgather", "ring", "P=6", "m=1KiB", "--mapping", "sequential(3)",
                 "--plot", str(png), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["P"] == 6  # --json still prints, the picture goes to the file
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000


def test_pyproject_has_the_plot_extra_and_tests_install_it():
    import tomllib

    extras = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert any(d.startswith("matplotlib") for d in extras["plot"])
    assert any(d.startswith("matplotlib") for d in extras["test"])


BLOCKED = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
           "        if name == 'matplotlib' or name.startswith('matplotlib.'):\n"
           "            raise ImportError('matplotlib is blocked for this test')\n"
           "sys.meta_path.insert(0, Block())\nfrom tlop.cli import main\nrc = main(sys.argv[1:])\n"
           "print('LOADED', sorted(m for m in sys.modules if m.startswith('matplotlib') or m == 'tlop.cli.plot_stages'))\n"
           "sys.exit(rc)\n")


def test_without_matplotlib_explain_works_and_plot_says_how_to_install(tmp_path):
    env = dict(os.environ, TLOP_CACHE_DIR=str(tmp_path / "cache"))
    argv = ["explain", "taulop/bcast", "binomial", "P=8", "m=1KiB", "--mapping", "sequential(4)"]
    r = subprocess.run([sys.executable, "-c", BLOCKED, *argv], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "LOADED []" in r.stdout  # the drawing module is not imported unless --plot asks for it
    target = tmp_path / "x.svg"
    r = subprocess.run([sys.executable, "-c", BLOCKED, *argv, "--plot", str(target)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 2
    assert r.stderr.strip() == ("tlop: error[E050]: tlop explain --plot needs matplotlib, which is not installed; "
                                "install it with pip install 'tlop[plot]'")
    assert not target.exists()
