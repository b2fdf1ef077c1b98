"""The report of ``tlop tune-check``: per (P, m), the library's default against the tuning file.

What it does: :func:`cells` pools each configuration's samples over the rounds (the records of
``samples.jsonl``) and computes, per (P, m): the medians of default and file with their 95 %
confidence intervals (:func:`tlop.runtime.measure.stats.summarize`), the ratio file/default with
a 95 % percentile-bootstrap interval of the ratio of medians (2,000 resamples, fixed seed: the
same samples give the same interval), the spread of the rounds (the lowest and highest ratio of
one round's medians), the timing verdict (``file faster`` when the whole interval and every round's ratio are
below 1, ``file slower`` when above, else ``no clear difference``), and what the library ran
(:func:`ran`, from the witness runs of :mod:`tlop.runtime.measure.witness`).
:func:`print_summary` prints the table, :func:`write_csv` one row per cell,
:func:`write_markdown` ``report.md`` (machine, library and version, load, binding, method, the
table, the verdict per cell, and the messages each run sent).

What it does not do: run anything (:mod:`tlop.cli.tune_check`).
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import math
import platform
import socket
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tlop.runtime.units import format_size, format_time

__all__ = ["Cell", "cells", "ran", "print_summary", "write_csv", "write_markdown", "record_notices", "HEADER"]

BOOTSTRAP = 2000
HEADER = ["P", "m", "file names", "library ran", "default", "file", "file/default", "95% CI", "rounds",
          "verdict"]


@dataclass
class Cell:
    P: int
    m: int
    samples: dict = field(default_factory=dict)         # config -> pooled samples
    rounds: dict = field(default_factory=dict)          # config -> {round: median}
    stats: dict = field(default_factory=dict)           # config -> summarize()
    ratio: float = math.nan
    ratio_ci: tuple = (math.nan, math.nan)
    spread: tuple = (math.nan, math.nan)
    named: str = ""
    ran: str = ""
    confirmed: bool = False
    witness: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        lo, hi = self.ratio_ci
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return "not measured"
        same = self.witness.get("file") is not None and self.witness.get("file") == self.witness.get("default")
        # a clear difference: the pooled interval on one side of 1 *and* every round agreeing
        # (the bootstrap sees the samples, not the launch-to-launch variation the rounds show)
        r_lo, r_hi = self.spread if math.isfinite(self.spread[0]) else (lo, hi)
        if (hi < 1.0 and r_hi < 1.0) or (lo > 1.0 and r_lo > 1.0):
            word = "file faster" if hi < 1.0 else "file slower"
            # the same messages as the default: the difference is between launches, not algorithms
            return word + (" (same messages as the default: launch-to-launch variation)" if same else "")
        return "no clear difference"


def _median_ratio_ci(a, b) -> tuple:
    """95 % percentile-bootstrap interval of median(b) / median(a)."""
    rng = np.random.default_rng(0)
    a, b = np.asarray(a), np.asarray(b)
    ra = np.median(rng.choice(a, (BOOTSTRAP, a.size)), axis=1)
    rb = np.median(rng.choice(b, (BOOTSTRAP, b.size)), axis=1)
    r = rb / ra
    return float(np.percentile(r, 2.5)), float(np.percentile(r, 97.5))


def ran(w: dict) -> tuple:
    """``(text, confirmed)``: what the witness runs say about one cell."""
    if not w:
        return "not checked", False
    if w.get("named") is None:
        return f"the file names no algorithm here: {w.get('why', '')}", False
    if "witness_error" in w:
        return f"not checked: {w['witness_error']}", False
    if "file" not in w:
        return "not checked (--no-witness)", False
    same_default = w.get("file") == w.get("default")
    if "forced_traffic" in w:
        if w["file"] == w["forced_traffic"]:
            return ("confirmed (same messages as the default)" if same_default else "confirmed"), True
        return "NOT confirmed: the run with the file sent other messages than the named algorithm forced", False
    why = w.get("forced_error", "no forced run")
    if same_default:
        return f"not confirmed: same messages as the default, and {why}", False
    return f"changed (the messages differ from the default's); not confirmed: {why}", False


def cells(records: list, witness: dict, Ps: list, ms: list) -> list:
    from tlop.runtime.measure.stats import summarize

    out = []
    points = [r for r in records if r.get("kind") == "point" and r.get("bench") == "tune-check"]
    for P in Ps:
        for m in ms:
            c = Cell(P, m)
            for config in ("default", "file"):
                mine = [r for r in points if r["params"].get("P") == P and r["params"].get("m") == m
                        and r["params"].get("config") == config]
                c.samples[config] = [x for r in mine for x in r.get("samples", [])]
                c.rounds[config] = {r["params"]["round"]: float(np.median(r["samples"])) for r in mine if r.get("samples")}
                c.stats[config] = summarize(c.samples[config])
            a, b = c.samples["default"], c.samples["file"]
            if a and b:
                c.ratio = float(np.median(b) / np.median(a))
                c.ratio_ci = _median_ratio_ci(a, b)
                per = [c.rounds["file"][k] / c.rounds["default"][k] for k in c.rounds["file"] if k in c.rounds["default"]]
                if per:
                    c.spread = (min(per), max(per))
            w = (witness or {}).get(P, {}).get(m, {})
            c.witness = w
            c.named = w.get("named") or "-"
            c.ran, c.confirmed = ran(w)
            out.append(c)
    return out


def _t(x) -> str:
    return format_time(x) if isinstance(x, float) and math.isfinite(x) else "-"


def _row(c: Cell, short: bool = True) -> list:
    lo, hi = c.ratio_ci
    ran_text = c.ran.split(":")[0] if short else c.ran
    return [str(c.P), format_size(c.m), c.named, ran_text, _t(c.stats["default"]["median"]),
            _t(c.stats["file"]["median"]), f"{c.ratio:.3f}" if math.isfinite(c.ratio) else "-",
            f"{lo:.3f}–{hi:.3f}" if math.isfinite(lo) else "-",
            f"{c.spread[0]:.3f}–{c.spread[1]:.3f}" if math.isfinite(c.spread[0]) else "-", c.verdict]


def print_summary(cs: list, notices: list) -> None:
    from tlop.cli.table import print_table

    print_table(HEADER, [_row(c) for c in cs])
    faster = sum(c.verdict.startswith("file faster") for c in cs)
    slower = sum(c.verdict.startswith("file slower") for c in cs)
    conf = sum(c.confirmed for c in cs)
    print(f"{faster} cell(s) faster with the file, {slower} slower, {len(cs) - faster - slower} without a clear "
          f"difference; the library ran the file's algorithm (confirmed) in {conf} of {len(cs)}")
    for n in notices:
        print(f"note: {n}")


def write_csv(path, cs: list) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["P", "m", "file_names", "library_ran", "confirmed", "default_median_s", "default_ci_low_s",
                    "default_ci_high_s", "default_samples", "file_median_s", "file_ci_low_s", "file_ci_high_s",
                    "file_samples", "ratio", "ratio_ci_low", "ratio_ci_high", "rounds_ratio_min",
                    "rounds_ratio_max", "verdict"])
        for c in cs:
            d, fl = c.stats["default"], c.stats["file"]

            def v(x):
                return repr(float(x)) if isinstance(x, (int, float)) and math.isfinite(x) else ""
            w.writerow([c.P, c.m, c.named, c.ran, int(c.confirmed), v(d["median"]), v(d["ci_low"]), v(d["ci_high"]),
                        d["n"], v(fl["median"]), v(fl["ci_low"]), v(fl["ci_high"]), fl["n"], v(c.ratio),
                        v(c.ratio_ci[0]), v(c.ratio_ci[1]), v(c.spread[0]), v(c.spread[1]), c.verdict])


def _affinity(runs: list) -> str:
    seen = []
    for r in runs:
        aff = r.get("cpu_affinity_by_rank") or []
        text = "; ".join(f"rank {i}: CPU {','.join(map(str, a)) if a else '?'}" for i, a in enumerate(aff))
        if text and text not in seen:
            seen.append(text)
    return " | ".join(seen[:4]) + (" | …" if len(seen) > 4 else "") if seen else "not recorded"


def record_notices(runs: list) -> list:
    """What the launches' own records say about sharing the machine: ranks beyond a host's CPUs
    (oversubscribed), and load averages above them."""
    out = []
    over = set()
    busy = []
    for r in runs:
        cpus = r.get("cpus") or 0
        hosts = r.get("hosts_by_rank") or []
        most = max((hosts.count(h) for h in set(hosts)), default=0)
        if cpus and most > cpus:
            over.add((r.get("np"), most, cpus))
        if cpus and r.get("load") and r["load"][0] > cpus:
            busy.append(r["load"][0])
    for P, most, cpus in sorted(over, key=str):
        out.append(f"P = {P}: {most} ranks shared a host with {cpus} CPUs (oversubscribed): not the times of a "
                   f"real {P}-rank run")
    if busy:
        out.append(f"the load average exceeded the host's CPUs as {len(busy)} of {len(runs)} launches started "
                   f"(up to {max(busy):.1f}): other work shared the machine, the times are noisier than on an "
                   f"idle one")
    return out


def write_markdown(path, cs: list, records: list, ctx: dict) -> None:
    from tlop.runtime.measure.witness import describe

    args = ctx["args"]
    runs = [r for r in records if r.get("kind") == "run" and r.get("role") == "tune-check"]
    libs = sorted({" ".join(r.get("mpi", {}).get("library", "").split()) for r in runs} - {""})
    hosts = sorted({h for r in runs for h in (r.get("hosts_by_rank") or [])})
    loads = [r["load"][0] for r in runs if r.get("load")]
    digest = hashlib.sha256(Path(ctx["file"]).read_bytes()).hexdigest()[:16]
    per_host = max((max(list(r.get("hosts_by_rank") or [None]).count(h) for h in set(r.get("hosts_by_rank") or [None]))
                    for r in runs), default=0)
    seen = record_notices(runs)     # what the launches recorded replaces what was seen before them
    notices = [n for n in ctx["notices"] if not any(t in n and any(t in x for x in seen)
                                                    for t in ("oversubscribed", "load average"))] + seen
    dates = sorted(r["date"] for r in runs if r.get("date"))
    lines = [f"# tlop tune-check: {args.collective}, the library's default against a tuning file", ""]
    faster = sum(c.verdict.startswith("file faster") for c in cs)
    slower = sum(c.verdict.startswith("file slower") for c in cs)
    conf = sum(c.confirmed for c in cs)
    lines += [f"**{faster} of {len(cs)} cells faster with the file, {slower} slower, {len(cs) - faster - slower} "
              f"without a clear difference; the library ran the algorithm the file names (confirmed from the "
              f"library's own message log) in {conf} of {len(cs)}.**", ""]
    if notices:
        lines += ["**Notes:**", ""] + [f"- {n}" for n in notices] + [""]
    lines += [
        f"- machine: {socket.gethostname()} ({platform.machine()}, {ctx['cores']} cores available); ranks ran on "
        f"{', '.join(hosts) or 'unknown'} (at most {per_host} per host)",
        f"- measured: {dates[0]} to {dates[-1]} ({len(runs)} launches)" if dates else
        f"- date: {datetime.datetime.fromtimestamp(ctx['started']).astimezone().isoformat(timespec='seconds')}",
        f"- library: {'; '.join(libs) or 'unknown'} (launcher {Path(ctx['mpiexec']).name})",
        f"- load average (1 min) as each launch started: {min(loads):.2f}–{max(loads):.2f} on {ctx['cores']} cores"
        if loads else "- load average: not recorded",
        f"- binding: {'; '.join(f'P={P}: {b}' for P, b in sorted(ctx['bindings'].items())) or 'no launch ran'}; "
        f"observed CPU affinity: {_affinity(runs)}",
        f"- file: `{ctx.get('file_given') or ctx['file']}` (sha256 {digest}…), loaded with "
        + ", ".join(f"`{k}={v}`" if k != "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE" and
                    k != "OMPI_MCA_coll_tuned_dynamic_rules_filename" else f"`{k}=FILE`"
                    for k, v in ctx["envs"]["file"].items()),
        f"- default: " + (", ".join(f"`{k}={v}`" for k, v in ctx["envs"]["default"].items()) or "nothing set")
        + " (both configurations put the selection layer the file replaces in charge)",
        f"- ranges: " + ", ".join(f"{k}={v}" for k, v in ctx["ranges"].items())
        + f"; m is the bytes of each rank's buffer of the MPI call",
        f"- method: {args.rounds} round(s) of one launch with the default and one with the file (A B A B …; a "
        f"library reads its selection at MPI_Init); in each launch every cell is timed adaptively: "
        + (f"each sample is a batch of back-to-back calls over its length, no barrier between the calls (one "
           f"before each batch), the maximum over ranks"
           if getattr(args, "timing", "batch") == "batch" else
           "ReproMPI-style window start on clocks synchronised to rank 0, one call per sample, a sample is the "
           "last rank's end, windows started late dropped")
        + f"; ≥{args.min_reps} samples or {args.time_cap:g} s per cell and launch; samples pooled "
        f"over the rounds; the ratio's 95% interval is a percentile bootstrap of median(file)/median(default); "
        f"'rounds' is the range of the per-round ratios; every sample is in samples.jsonl",
        f"- which algorithm ran: one call per size with the file, with the named algorithm forced by the "
        f"library's own variables, and with the default, the messages seen by the library itself ("
        + ("MPICH's libfabric trace on the network path" if ctx["family"] == "mpich"
           else "Open MPI's pml/monitoring counters") + "); confirmed = the file's run sent the same messages as "
        f"the forced run",
        "",
        "## Every cell", "",
        "| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
    lines += ["| " + " | ".join(_row(c)) + " |" for c in cs]
    lines += ["", "## Verdict per cell", ""]
    for c in cs:
        lo, hi = c.ratio_ci
        d, f = c.stats["default"], c.stats["file"]
        timing = (f"default {_t(d['median'])} ({d['n']} samples), file {_t(f['median'])} ({f['n']} samples): "
                  f"file/default {c.ratio:.3f} [{lo:.3f}, {hi:.3f}] — **{c.verdict}**"
                  if math.isfinite(c.ratio) else "not measured")
        lines.append(f"- P = {c.P}, m = {format_size(c.m)}: the file names **{c.named}**; the library: "
                     f"{c.ran}. {timing}.")
        w = c.witness
        if "file" in w:
            lines.append(f"  - messages the library logged (per pair: count, total bytes) with the file: {describe(w.get('file'))}; forced: "
                         f"{describe(w.get('forced_traffic')) if 'forced_traffic' in w else w.get('forced_error', '-')}"
                         f"; default: {describe(w.get('default'))}")
    note = getattr(args, "note", None)
    if note:
        lines += ["", note]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
