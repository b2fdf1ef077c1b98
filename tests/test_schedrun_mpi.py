"""Schedules executed for real (tlop.runtime.measure.schedrun) under mpiexec with 2 and 3 ranks:
every message checked against the plan, every sample kept, resume skips what is done."""

from __future__ import annotations

import json

import pytest

import tlop
from tlop.apps.plan import execution_plan
from tlop.backends.binding import as_mapping
from tlop.runtime.measure.launch import find_mpiexec, run_ranks
from tlop.runtime.measure.store import read_records
from tlop.runtime.profile import load_profile

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py")

RULE = {"eps": 0.5, "min_n": 5, "max_n": 40, "time_cap": 0.2, "warmup": 1}
CASES = [("taulop/bcast", "binomial"), ("taulop/allgather", "ring"), ("taulop/alltoall", "basic"),
         ("taulop/reduce", "binomial_openmpi")]


def _job(tmp_path, P, sizes):
    cells = []
    for f, a in CASES:
        for m in sizes:
            plan = execution_plan(tlop.load(f)[a], load_profile("metropolis"), as_mapping(f"sequential({P})"),
                                  {"P": P, "m": m})
            cells.append({"key": f"{f}:{a}:P={P}:m={m}", "label": f"{a} P={P} m={m}", "params": {"P": P, "m": m},
                          "plan": plan.as_json()})
    job = tmp_path / f"job{P}.json"
    job.write_text(json.dumps({"version": 1, "rule": RULE, "samples": str(tmp_path / "s.jsonl"), "cells": cells,
                               "timeout": 120}))
    return job, cells


def _run(job, P, events):
    return run_ranks(P, "schedule", [str(job)], {}, find_mpiexec(), 120.0, events.append,
                     module="tlop.runtime.measure.schedrun")


@pytest.mark.parametrize("P", [2, 3])
def test_schedules_run_checked_and_every_sample_is_kept_and_resume_skips(tmp_path, P):
    job, cells = _job(tmp_path, P, ["0", "3", "4KiB"])
    events = []
    assert _run(job, P, events) == len(cells)
    recs = {r["key"]: r for r in read_records(tmp_path / "s.jsonl") if r["kind"] == "point"}
    assert set(recs) == {c["key"] for c in cells}
    for c in cells:
        r = recs[c["key"]]
        assert r["bench"] == "schedule" and r["mpi_size"] == P
        assert len(r["samples"]) == r["stats"]["n"] >= RULE["min_n"]
        assert all(s > 0 for s in r["samples"])
        assert r["predicted"] == c["plan"]["predicted"]
    assert [e["event"] for e in events].count("done") == len(cells)
    again = []
    assert _run(job, P, again) == 0  # resume: nothing left to run
    assert again[0] == {"event": "plan", "todo": 0, "total": len(cells)}
