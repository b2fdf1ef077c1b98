"""Partitioners (tlop.runtime.partition) and the Table 1 configurations (tlop.runtime.fermi)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tlop.runtime import fermi
from tlop.runtime.configs import ConfigError, _tiling_error, load_config
from tlop.runtime.partition import best_columns, column_partition, slab_partition

SPEEDS = st.lists(st.floats(0.5, 20.0), min_size=1, max_size=30)


def _tiles(part):
    return _tiling_error(part.N, list(zip(part.x, part.y, part.w, part.h))) is None


@settings(max_examples=150, deadline=None)
@given(SPEEDS, st.integers(1, 400), st.booleans())
def test_rectangles_tile_the_matrix_with_areas_proportional_to_the_speeds(speeds, N, slab):
    make = slab_partition if slab else column_partition
    try:
        part = make(speeds, N)
    except ConfigError as err:  # only when N is too small for one block per process of a column
        assert "cannot give" in str(err)
        return
    assert part.P == len(speeds) and _tiles(part)
    s = np.asarray(speeds) / sum(speeds)
    cols = {}
    for p in range(part.P):
        cols.setdefault(part.x[p], []).append(p)
    for members in cols.values():
        S = s[members].sum()
        exact_w = N * S
        exact_h = N * s[members] / S
        if exact_w >= 1.5 and np.all(exact_h >= 1.5):  # no part pushed up to its one-block minimum
            assert abs(part.w[members[0]] - exact_w) <= 1
            assert np.all(np.abs(np.asarray(part.h)[members] - exact_h) <= 1)


def test_columns_minimise_the_half_perimeters():
    # four equal speeds: two columns of two (Σ half-perimeters 2 + 4·½ = 4) beat one column (1 + 4 = 5)
    assert sorted(map(sorted, best_columns([1, 1, 1, 1]))) == [[0, 1], [2, 3]]
    # one very fast process gets a column of its own
    cols = best_columns([1, 1, 1, 30])
    assert [3] in cols
    with pytest.raises(ConfigError, match="positive"):
        column_partition([1, -1], 8)


def test_table1_configurations_are_as_generated():
    assert fermi.main(["--check"]) == 0


@pytest.mark.parametrize("name", sorted(fermi.TABLE1))
def test_table1_layouts_match_the_published_counts(name):
    big, small, c6, c5, c4, c3, c2, gpus, P = fermi.TABLE1[name]
    cfg = load_config(name)
    assert cfg.P == P
    kinds = np.asarray(cfg.kinds)
    cores = np.asarray(cfg.cores)
    assert int((kinds == "gpu").sum()) == gpus
    for k, count in zip((6, 5, 4, 3, 2), (c6, c5, c4, c3, c2)):
        assert int(((kinds == "cpu") & (cores == k)).sum()) == count
    types = [cfg.type_names[t] for t in cfg.node_type]
    per_node = {}
    for r, n in enumerate(cfg.node):
        per_node[n] = types[r]
    assert sorted(per_node.values()).count("fermi12") == big and sorted(per_node.values()).count("fermi8") == small
    assert {n for n, _ in cfg.partitions} == {"summa-128", "summa-256", "wave2d-128", "wave2d-256"}


def test_partition_command_prints_generates_and_draws(tmp_path, capsys):
    from tlop.cli.main import main

    assert main(["partition", "--config", "fig8"]) == 0
    out = capsys.readouterr().out
    assert "fig8: summa N = 256 blocks, P = 6" in out and "13640" in out  # p4: 124 x 110 blocks
    target = tmp_path / "p.json"
    assert main(["partition", "--config", "M4", "--generate", "64", "--gpu-speed", "12", "--out", str(target)]) == 0
    from tlop.runtime.configs import read_partition_file

    assert read_partition_file(target).P == 11
    assert main(["partition", "--config", "M4"]) == 1
    assert "which partition?" in capsys.readouterr().err


def test_partition_figure_shows_every_rank_coloured_by_node():
    pytest.importorskip("matplotlib")
    from matplotlib.patches import Rectangle

    from tlop.cli.plot_partition import build_figure

    cfg = load_config("M10").select_partition("summa", 256)
    ax = build_figure(cfg).axes[0]
    rects = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(rects) == cfg.P
    by_label = {p.get_label(): p for p in rects}
    part = cfg.partition
    for r in range(cfg.P):
        p = by_label[f"p{r}"]
        assert (p.get_x(), p.get_y(), p.get_width(), p.get_height()) == (part.x[r], part.y[r], part.w[r], part.h[r])
        assert bool(p.get_hatch()) == (cfg.kinds[r] == "gpu")
    colours = {}
    for r in range(cfg.P):  # one colour per node, different nodes different colours (10 nodes < 20)
        colours.setdefault(cfg.node[r], set()).add(by_label[f"p{r}"].get_facecolor())
    assert all(len(c) == 1 for c in colours.values())
    assert len({next(iter(c)) for c in colours.values()}) == len(colours)
    assert sorted(t.get_text() for t in ax.texts) == sorted(str(r) for r in range(cfg.P))
