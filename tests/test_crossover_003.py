"""``tlop best --crossover n`` on the bundled summit and lassen profiles: from how many messages
3-step beats GPUDirect, per message size, checked against what 003 Tables I–II imply under the
thresholds the profiles state (an independent numpy computation), plus the plot's content."""

import re

import numpy as np
import pytest

from _tables_003 import memcpy, postal
from tlop.cli.main import main

SIZES = [8 * 4 ** i for i in range(10)]  # 8 B .. 2 MiB, the grid s=8..4MiB:x4
NMAX = 1000


def expected_crossover(machine, s):
    """The smallest n in 1..NMAX with three_step(n, s) < gpudirect(n, s), or None."""
    n = np.arange(1, NMAX + 1, dtype=float)
    gd = n * postal(machine, "gpu_off_node", s)
    ts = memcpy(machine, "d2h_on_socket", n * s) + n * postal(machine, "cpu_off_node", s) \
        + memcpy(machine, "h2d_on_socket", n * s)
    win = np.nonzero(ts < gd)[0]
    return int(n[win[0]]) if len(win) else None


def run(machine, capsys, *extra):
    assert main(["best", "postal/gpu", "s=8..4MiB:x4", f"n=1..{NMAX}", "--only", "gpudirect", "--only",
                 "three_step", "--crossover", "n", "--profile", machine, *extra]) == 0
    return capsys.readouterr().out


def parse(out):
    """size text -> (first winner, n from which three_step wins or None)."""
    rows = {}
    for line in out.splitlines()[2:]:
        m = re.match(r"\s*(\S+)\s+(gpudirect|three_step)\s+(.*)$", line)
        if not m:
            continue
        then = re.search(r"three_step from n=(\d+)", m.group(3))
        rows[m.group(1)] = (m.group(2), int(then.group(1)) if then else None)
    return rows


@pytest.mark.parametrize("machine", ["summit", "lassen"])
def test_crossover_table_is_what_the_tables_imply(machine, capsys):
    rows = parse(run(machine, capsys))
    assert len(rows) == len(SIZES)
    for s, (first, n_from) in zip(SIZES, rows.values()):
        want = expected_crossover(machine, s)
        if want == 1:
            assert first == "three_step" and n_from is None, s
        else:
            assert first == "gpudirect" and n_from == want, s


def test_what_the_tables_say_against_the_papers_wording():
    """The numbers the docs quote (docs/papers.rst, "Paper 003"): on Summit 3-step wins from
    7 messages for eager-sized messages, never at 32 KiB (rendezvous, where the CPU's α exceeds
    the GPU's), and from one message at 2 MiB; on Lassen from about 40–50 messages for eager
    sizes and never with rendezvous."""
    summit = [expected_crossover("summit", s) for s in SIZES]
    lassen = [expected_crossover("lassen", s) for s in SIZES]
    assert summit == [7, 7, 7, 7, 8, 13, None, 7, 2, 1]
    assert lassen == [47, 47, 47, 46, 44, 38, None, None, None, None]


def test_crossover_plot_draws_the_table(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "x.svg"
    text = run("summit", capsys, "--plot", str(out))
    assert f"wrote {out}" in text
    svg = out.read_text()
    # gpudirect is not cheapest at n = 1 for 2 MiB, so it has a line too (1 with a gap at 2 MiB)
    assert 'id="crossover-three_step"' in svg and 'id="crossover-gpudirect"' in svg
    from tlop.cli import crossover

    rows = [((float(s),), "gpudirect" if expected_crossover("summit", s) != 1 else "three_step",
             [] if expected_crossover("summit", s) in (None, 1) else [(float(expected_crossover("summit", s)),
                                                                       "three_step")])
            for s in SIZES]
    fig = crossover.build_figure(rows, 1.0, "s", "n", "t")
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "crossover-three_step"]
    ys = line.get_ydata()
    assert list(line.get_xdata()) == [float(s) for s in SIZES]
    assert [None if np.isnan(y) else int(y) for y in ys] == [7, 7, 7, 7, 8, 13, None, 7, 2, 1]


def test_crossover_needs_a_range_on_its_axis(capsys):
    assert main(["best", "postal/gpu", "s=8", "n=4", "--only", "gpudirect", "--only", "three_step",
                 "--crossover", "n", "--profile", "summit"]) == 1
    assert "'n' has one value" in capsys.readouterr().err
    assert main(["best", "postal/gpu", "s=8", "--crossover", "n", "--profile", "summit"]) == 1
    assert "give 'n' a range" in capsys.readouterr().err
