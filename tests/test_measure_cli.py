"""Option handling of tlop measure that needs no MPI ranks."""

import argparse

import pytest

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.measure import cli
from tlop.runtime.measure.launch import forced_network_env, under_mpi
from tlop.runtime.measure.plan import Point, plan_channel, quick_settings


def _args(*argv):
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    return p.parse_args(list(argv))


@pytest.mark.parametrize("argv, message", [
    (["--np", "1"], "at least 2"),
    (["--channels", "ib"], "choose from shm, net"),
    (["--bench", "taulop,foo"], "unknown benchmark foo"),
    (["--out", "x.txt"], "ends in .json"),
    (["--cl", "1.5"], "between 0 and 1"),
    (["--sizes", "1,abc"], "not a size"),
    (["--resume", "--overwrite"], "contradict"),
])
def test_bad_options_are_clear_errors(tmp_path, argv, message):
    if "--out" not in argv:
        argv = argv + ["--out", str(tmp_path / "p.json")]
    with pytest.raises(TlopError, match=message):
        cli.run(_args(*argv))


def test_existing_samples_need_resume_or_overwrite(tmp_path):
    (tmp_path / "p.samples.jsonl").write_text('{"kind": "run"}\n')
    with pytest.raises(TlopError, match="--resume"):
        cli.run(_args("--out", str(tmp_path / "p.json")))


def test_settings_overrides_and_sizes():
    st = cli.settings_from_args(_args("--quick", "--sizes", "1,1KiB,1MiB", "--eps", "0.1", "--max-reps", "50"))
    assert st.sizes == (1, 1024, 1 << 20) and st.rule.eps == 0.1 and st.rule.max_n == 50
    assert st.preset == "quick"


def test_plan_keys_are_stable_and_unique():
    pts = plan_channel("shm", quick_settings(), 2, 1)
    keys = [p.key for p in pts]
    assert len(keys) == len(set(keys))
    assert Point("ring", "shm", (("m", 4), ("tau", 2))).key == "shm/ring/m=4/tau=2"
    assert "τ=2" in Point("ring", "shm", (("m", 4), ("tau", 2))).label


def test_forced_network_and_mpi_detection():
    env = forced_network_env({"family": "mpich", "devices": ["ucx", "ofi"]})
    assert env["MPIR_CVAR_NOLOCAL"] == "1" and env["UCX_TLS"] == "tcp,self"
    assert forced_network_env({"family": "openmpi"})["OMPI_MCA_btl"] == "self,tcp"
    assert under_mpi({"PMI_RANK": "0"}) and not under_mpi({})
