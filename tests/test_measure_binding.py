"""Binding ranks to cores and saying what the ranks saw (issue 22 items 18 and 20), without MPI:
the verdict on recorded CPU affinities, the environment warnings a profile carries from its run
records, and tlop tune repeating them."""

from __future__ import annotations

import json

import pytest

import tlop

from tlop.runtime.measure.assemble import environment_warnings, profile_environment_warnings
from tlop.runtime.measure.binding import launcher_binding, observed, oversubscription


def test_observed_affinity_bound_shared_and_unrecorded():
    assert observed([[0], [1]]) == (True, "each rank on CPUs of its own (rank 0: CPU 0; rank 1: CPU 1)")
    ok, text = observed([[0, 1], [0, 1]])
    assert ok is False and text == "ranks could share CPUs (ranks 0/1: rank 0: CPU 0,1; rank 1: CPU 0,1)"
    ok, text = observed([[0, 1, 2, 3], [4, 5, 6, 7]])         # disjoint sets are not shared
    assert ok is True and "CPU 0-3" in text
    # ranks of different hosts never share a CPU, whatever the numbers
    assert observed([[0], [0]], ["a", "b"])[0] is True
    assert observed([[0], [0]], ["a", "a"])[0] is False
    assert observed(None) == (None, "CPU affinity not recorded")
    assert observed([[0], []])[0] is None


def test_oversubscribed_runs_are_not_bound_and_say_so():
    args, why = launcher_binding("/v/bin/mpiexec", "mpich", 4, 2, True)
    assert args == [] and why == "not bound: P = 4 exceeds the 2 cores (oversubscribed)"
    assert launcher_binding("/v/bin/mpiexec", "openmpi", 2, 2, True)[0] == ["--bind-to", "core"]
    assert oversubscription(2, 2) == ""
    assert oversubscription(4, 2).startswith("4 ranks on 2 cores: oversubscribed")


def _run(role, affinities, load, cpus=2, hosts=("h", "h")):
    per = {}
    for h in hosts:
        per[h] = per.get(h, 0) + 1
    return {"kind": "run", "role": role, "load": load,
            "placement": {"cpu_affinity_by_rank": affinities, "hosts_by_rank": list(hosts), "cpus": cpus,
                          "ranks_per_node": per, "binding": "x"}}


def test_environment_warnings_from_the_run_records():
    quiet = _run("shm", [[0], [1]], [0.4, 0.3, 0.2])
    assert environment_warnings([quiet]) == []
    unbound = _run("net-forced", [[0, 1], [0, 1]], [0.5, 0.5, 0.5])
    loaded = _run("shm", [[0], [1]], [7.3, 6.0, 3.0])
    crowded = _run("shm", [[0], [1], [0], [1]], [], hosts=("h",) * 4)
    w = environment_warnings([quiet, unbound, loaded, crowded])
    assert w[0].startswith("launch net-forced: ranks could share CPUs (ranks 0/1")
    assert w[1] == ("launch shm: the load average was 7.3 on 2 CPUs when it started: other work shared the "
                    "machine")
    assert any(x.startswith("launch shm: 4 ranks on a host with 2 CPUs (oversubscribed)") for x in w)
    assert any(x.startswith("launch shm: ranks could share CPUs (ranks 0/2") for x in w)
    assert len(w) == len(set(w))


def _profile_with_warnings(tmp_path, warnings):
    from tlop.runtime.profile import load_profile

    src = load_profile("metropolis").path
    data = json.loads(open(src, encoding="utf-8").read())
    data["metadata"]["environment_warnings"] = warnings
    data["name"] = "loaded-box"
    path = tmp_path / "loaded.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_tune_repeats_the_load_warnings_its_profile_carries(tmp_path, capsys):
    from tlop.cli.main import main
    from tlop.runtime.profile import load_profile

    path = _profile_with_warnings(tmp_path, ["launch shm: the load average was 7.2 on 2 CPUs when it started"])
    assert profile_environment_warnings(load_profile(path)) == [
        "the profile 'loaded-box' was measured on a doubtful machine: launch shm: the load average was 7.2 on 2 "
        "CPUs when it started"]
    assert main(["tune", "P=4", "m=1KiB", "--collective", "bcast", "--profile", path,
                 "--mapping", "sequential(4)"]) == 0
    err = capsys.readouterr().err
    assert ("tlop: warning: the profile 'loaded-box' was measured on a doubtful machine: launch shm: the "
            "load average was 7.2 on 2 CPUs when it started") in err
    # and from Python, as a warning
    with pytest.warns(UserWarning, match="was measured on a doubtful machine: launch shm"):
        tlop.tune("bcast", path, P=[4], m=["1KiB"], mapping="sequential(4)")
    # a profile without such warnings: nothing said
    clean = _profile_with_warnings(tmp_path, [])
    assert main(["tune", "P=4", "m=1KiB", "--collective", "bcast", "--profile", clean,
                 "--mapping", "sequential(4)"]) == 0
    assert "doubtful machine" not in capsys.readouterr().err


def test_validate_repeats_them_among_its_warnings(tmp_path):
    from tlop.cli.validate import environment_warnings as validate_warnings
    from tlop.runtime.profile import load_profile

    prof = load_profile(_profile_with_warnings(tmp_path, ["launch shm: ranks could share CPUs (ranks 0/1: …)"]))
    w = validate_warnings(prof, 16, 0.5, str(prof.metadata.get("machine") or ""), 2)
    assert w == ["the profile 'loaded-box' was measured on a doubtful machine: launch shm: ranks could share CPUs "
                 "(ranks 0/1: …)"]


@pytest.mark.parametrize("key", ["binding", "timing", "environment_warnings"])
def test_assembled_metadata_says_binding_timing_and_environment(key):
    from tlop.runtime.measure.assemble import _metadata

    md = _metadata([_run("shm", [[0, 1], [0, 1]], [0.1, 0.1, 0.1])], {}, True, [], [], [])
    if key == "binding":
        assert md["binding"] == "x; observed: ranks could share CPUs (ranks 0/1: rank 0: CPU 0,1; rank 1: CPU 0,1)"
    elif key == "timing":
        assert set(md["timing"]) == {"pingpong", "ring", "plogp", "coll"}
    else:
        assert md["environment_warnings"][0].startswith("launch shm: ranks could share CPUs")
        assert md["warnings"] == md["environment_warnings"]
