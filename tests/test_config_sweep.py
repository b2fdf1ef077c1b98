"""``tlop sweep … --config M1..M16``: one row per (configuration, point), the same numbers as
evaluating each configuration on its own (tlop.cli.config_sweep)."""

from pathlib import Path

import pytest

import tlop
from tlop.cli.config_sweep import config_names
from tlop.cli.main import main
from tlop.runtime.configs import load_config
from tlop.runtime.diagnostics import TlopError

GOLDEN = Path(__file__).parent / "golden" / "cli"

CASES = {
    "sweep_configs_summa": ["sweep", "kernels/summa", "summa_banded", "N=128,256", "b=8KiB", "--config", "M1..M3"],
    "sweep_configs_hloggp_csv": ["sweep", "kernels/summa", "summa_hloggp", "N=128", "b=8KiB,16KiB",
                                 "--config", "M1,M2", "--csv", "-"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name, capsys, golden):
    assert main(CASES[name]) == 0
    golden(GOLDEN / f"{name}.txt", capsys.readouterr().out)


def test_rows_are_each_configuration_evaluated_alone(capsys):
    assert main(["sweep", "kernels/wave2d", "wave2d_hloggp", "N=128,256", "T=1,3", "e=256B",
                 "--config", "M2..M3", "--csv", "-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "config,P,N,T,e,seconds" and len(lines) == 1 + 2 * 2 * 2
    wave = tlop.load("kernels/wave2d")["wave2d_hloggp"]
    for line in lines[1:]:
        name, P, N, T, e, seconds = line.split(",")
        cfg = load_config(name).select_partition("wave2d", int(N))
        assert cfg.partition.N == int(N) and cfg.P == int(P)
        want = wave.evaluate("metropolis", P=cfg.P, T=int(T), e=float(e), mapping=cfg)
        assert float(seconds) == pytest.approx(want, rel=1e-12)


def test_config_names():
    assert config_names("M1..M4") == ["M1", "M2", "M3", "M4"]
    assert config_names("M14..M16,fig8") == ["M14", "M15", "M16", "fig8"]
    assert config_names("fig9") == ["fig9"]
    for bad, message in (("M3..M1", "empty"), ("M1..X3", "one name"), ("M1,,M2", "empty name")):
        with pytest.raises(TlopError, match=message):
            config_names(bad)


def test_errors(capsys):
    # fig8 has one partition, of N = 256: asking for N = 128 is an error, not a silent N = 256
    assert main(["sweep", "kernels/summa", "summa_hloggp", "N=128", "b=8KiB", "--config", "fig8"]) == 1
    assert "fig8: no partition of N=128 for summa_hloggp (partitions: summa (N=256))" in capsys.readouterr().err
    assert main(["sweep", "kernels/summa", "summa_banded", "N=128", "b=8KiB", "--config", "M1,M99"]) == 1
    assert "M99" in capsys.readouterr().err
    assert main(["sweep", "kernels/summa", "summa_banded", "b=8KiB", "--config", "M1,M2", "--plot", "x.svg"]) == 1
    assert "--plot" in capsys.readouterr().err


def test_the_docs_show_what_the_commands_print(capsys):
    """The sweep table and the speed-function example of docs/configurations.rst are current."""
    import json

    from tlop.runtime.speedfunc import read_speeds_file, speeds_from_text

    doc = (Path(__file__).resolve().parents[1] / "docs" / "configurations.rst").read_text()
    assert main(["sweep", "kernels/summa", "summa_banded", "N=128,256", "b=8KiB", "--config", "M14..M16"]) == 0
    out = capsys.readouterr().out
    assert "\n".join("    " + line for line in out.splitlines()) in doc
    block = doc.split(".. code-block:: json", 2)[2].split("\n\n", 2)[1]
    shown = speeds_from_text(block)
    shipped = {tuple(sorted(m.items())): f for m, f in read_speeds_file("fermi-summa").entries}
    for match, fn in shown.entries:
        assert shipped[tuple(sorted(match.items()))].speed == fn.speed
    assert json.loads(block)["tlop_speeds"] == 1


def test_auto_compiles_a_configuration_sweep_of_16_evaluations_and_agrees_with_the_oracle(capsys):
    """``auto`` compiles a schedule natively for a configuration sweep of at least 16
    evaluations (every configuration shares the compiled code; no single point to predict the
    work from: the engine policy's count rule) and keeps the interpreter below that; the native
    rows equal the oracle's (``--engine interp``) to 1e-12."""
    import argparse

    from tlop.cli import common as cli

    h = tlop.load("kernels/summa")["summa_banded"]
    prof = tlop.load_profile("lusitania")
    cfg = load_config("M2").select_partition("summa_banded", 128)
    args = argparse.Namespace(engine="auto", mapping=None)
    assert cli._engine(args, h, prof, points=16, mapping=cfg, config=True)[0] == "jit"
    assert cli._engine(args, h, prof, points=15, mapping=cfg, config=True)[0] == "interp"
    assert "15 points" in args._engine_choice.reason  # the choice and its reason (--verbose shows it)
    argv = ["sweep", "kernels/summa", "summa_banded", "N=128,256", "b=8KiB,64KiB,1MiB,4MiB", "--config", "M1,M2",
            "--profile", "lusitania", "--csv", "-"]
    assert main(argv) == 0
    auto = capsys.readouterr().out.splitlines()
    assert main(argv + ["--engine", "interp"]) == 0
    oracle = capsys.readouterr().out.splitlines()
    assert len(auto) == len(oracle) == 1 + 2 * 2 * 4
    for a, o in zip(auto[1:], oracle[1:]):
        (*ka, va), (*ko, vo) = a.split(","), o.split(",")
        assert ka == ko and float(va) == pytest.approx(float(vo), rel=1e-12)
