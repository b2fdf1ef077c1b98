"""Point records → a version-1 platform profile.

What it does: :func:`assemble` reads the records of a samples file (:mod:`.store`) and builds
the profile dictionary (the format of :mod:`tlop.runtime.profile_schema`):

* ``channels``: ``shm`` (transmission shm) and the network channel (``tcp`` or ``rdma``), with
  ``bind: {"net": <network channel>}``;
* ``tables``: τ-Lop ``o`` and ``L`` per channel (L over the τ grid 1 .. the largest complete
  ring), pLogP ``plogp.g``, ``plogp.os``, ``plogp.or_`` under ``"*"`` (from the network channel
  when there is one, else shared memory; every channel's values are in ``fits.plogp``);
* ``scalars``: ``plogp.L``, ``loggp.L``, ``loggp.o``, ``loggp.g``, ``loggp.G`` under ``"*"``;
* ``loggph.L``, ``loggph.o``, ``loggph.g``, ``loggph.G`` per channel (LogGPH, ``stdlib/loggph``);
* path channels ``cpu_on_node``/``cpu_off_node`` (and the CUDA copy paths when a GPU was
  measured) with the ``postal.*`` scalars of ``stdlib/postal`` (:mod:`.postal_paths`);
* ``fits``: postal segments and breakpoints per channel, raw (unclamped) τ-Lop values, pLogP and
  LogGP per channel, max-rate, collective timings (the library's ``mpi`` choice, ``mpi:<alg>``
  with the algorithm forced — and the variable that forced it — and the project's ``p2p``
  versions), and every point's summary statistics;
* ``metadata``: MPI library and version, launcher, np, placement, environment, timer resolution
  and empty-call cost, date, host, method parameters, and every note and warning (clamped or
  non-monotone values, points skipped or missing).

Only complete rows and columns enter a table, so a partial run (interrupted, to be resumed)
still gives a valid profile of what it has, flagged ``metadata.complete = false``.

What it does not do: measure, or write files (:func:`build_and_save` validates with
:func:`tlop.runtime.profile.profile_from_dict` and writes with ``save_profile``).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Optional

import numpy as np

from tlop.runtime.diagnostics import TlopError

from tlop.runtime.measure import fit
from tlop.runtime.measure.store import read_records

__all__ = ["assemble", "build_and_save", "INTERPOLATION"]

INTERPOLATION = {"m_below": "linear", "m_beyond": "linear", "tau_beyond": "proportional",
                 "nonnegative": True, "out_of_grid": "warn"}

_DESCRIPTIONS = {
    "shm": "shared memory between ranks of one node (MPI intra-node path)",
    "tcp": "network through TCP (transfers: copy to the NIC, the wire, copy from the NIC)",
    "rdma": "network with RDMA (one network transfer)",
}


def _latest(records: list, kind: str) -> dict:
    out = {}
    for r in records:
        if r.get("kind") == kind:
            out[r["key"]] = r
    return out


def _median(points: dict, channel: str, bench: str, **params) -> Optional[float]:
    key = "/".join([channel, bench] + [f"{k}={v}" for k, v in sorted(params.items())])
    r = points.get(key)
    return None if r is None else r["stats"].get("median")


def _channel_kinds(runs: list, points: dict) -> dict:
    kinds = {}
    for run in runs:
        for ch in run.get("channels", []):
            kinds[ch["channel"]] = ch["transmission"]
    for r in points.values():
        kinds.setdefault(r["channel"], "shm" if r["channel"] == "shm" else r["channel"])
    return kinds


def assemble(records: list, name: str, planned: Optional[set] = None) -> dict:
    """The profile dictionary from ``records``; ``planned`` (point keys) decides completeness."""
    runs = [r for r in records if r.get("kind") == "run"]
    points = _latest(records, "point")
    skips = _latest(records, "skip")
    if not points:
        raise TlopError("no measurement to build a profile from (the samples file has no point)")
    kinds = _channel_kinds(runs, points)
    notes: list = []
    warnings: list = []
    fits: dict = {"postal": {}, "taulop": {}, "plogp": {}, "loggp": {}, "max_rate": {},
                  "collectives": [], "points": {}}
    tables: dict = {}
    scalars: dict = {}
    channels: dict = {}
    bind: dict = {}

    for key, r in sorted(points.items()):
        s = r["stats"]
        fits["points"][key] = {k: s.get(k) for k in ("median", "min", "mean", "p95", "ci_low",
                                                      "ci_high", "ci_rel", "n", "outliers")}
        fits["points"][key]["stop"] = r.get("stop")
        if s.get("outliers"):
            pass
    n_outlier_points = sum(1 for r in points.values() if r["stats"].get("outliers"))
    unconverged = sorted(k for k, r in points.items() if r.get("stop") != "converged")

    # channel order: shared memory first, so the network derivation can use L_shm
    order = sorted(kinds, key=lambda c: (kinds[c] != "shm", c))
    L_shm_table = None
    for ch in order:
        kind = kinds[ch]
        ch_points = {k: r for k, r in points.items() if r["channel"] == ch}
        if not ch_points:
            continue
        channels[ch] = {"transmission": kind, "description": _DESCRIPTIONS.get(kind, kind)}
        if kind != "shm":
            bind["net"] = ch
        sizes = sorted({int(r["params"]["m"]) for r in ch_points.values() if r["bench"] == "pingpong"})
        pp = [(m, _median(points, ch, "pingpong", m=m)) for m in sizes]
        pp = [(m, t) for m, t in pp if t is not None]
        postal = None
        if len(pp) >= 2:
            postal = fit.postal_fit([m for m, _ in pp], [t for _, t in pp])
            fits["postal"][ch] = postal
        o_eager = _median(points, ch, "o_eager")
        o_rdv = _median(points, ch, "o_rdv")
        # τ-Lop: rows with a ping-pong, columns τ whose ring is complete over those rows
        if pp and o_eager is not None:
            ms = [m for m, _ in pp]
            taus = [1]
            tau = 2
            while all(_median(points, ch, "ring", m=m, tau=tau) is not None for m in ms):
                taus.append(tau)
                tau += 1
            T = np.array([[t if j == 1 else _median(points, ch, "ring", m=m, tau=j) for j in taus]
                          for m, t in pp])
            switch = postal["protocol_switch"] if postal else None
            L_shm = None
            if kind == "tcp" and L_shm_table is not None:
                L_shm = L_shm_table
            res = fit.taulop_channel(kind, ms, taus, T, o_eager, o_rdv, switch, L_shm)
            tables.setdefault("o", {})[ch] = {"m": ms, "values": res["o"]}
            tables.setdefault("L", {})[ch] = {"m": ms, "tau": taus, "values": res["L"]}
            fits["taulop"][ch] = {
                "transmission": kind, "o_eager": o_eager, "o_rendezvous": o_rdv,
                "protocol_switch": switch, "T": T.tolist(), "raw_L": res["raw_L"],
                "clamped": [{"m": m, "tau": t, "raw": v} for m, t, v in res["clamped"]],
                "floor": fit.L_FLOOR, "derivation": {
                    "shm": "L = (T - o)/2", "tcp": "L = T - o - 2*L_shm(m, tau)",
                    "rdma": "L = T - o"}[kind]}
            notes += [f"{ch}: {n}" for n in res["notes"]]
            if res["clamped"]:
                warnings.append(f"{ch}: {len(res['clamped'])} L value(s) clamped to {fit.L_FLOOR:g} s")
            for j, t in enumerate(taus):
                col = [row[j] for row in res["L"]]
                bad = fit.monotone_violations(ms, col)
                if bad:
                    warnings.append(f"{ch}: L(m, {t}) decreases with m at m = "
                                    f"{', '.join(str(int(x)) for x in bad)} (measurement noise; kept as measured)")
            # the model's axiom L(m, τ) ≤ L(m, A·τ): τ = 1 comes from the ping-pong and τ ≥ 2 from
            # Ring_τ, two kernels, so on a busy or small machine the columns can cross
            for j in range(1, len(taus)):
                bad = [m for m, row in zip(ms, res["L"]) if row[j] < row[j - 1]]
                if bad:
                    warnings.append(f"{ch}: L(m, {taus[j]}) < L(m, {taus[j - 1]}): L decreases with tau at "
                                    f"{len(bad)} of {len(ms)} sizes (m = {', '.join(str(int(x)) for x in bad[:6])}"
                                    f"{', …' if len(bad) > 6 else ''}); the model assumes it does not; kept as measured")
            if kind == "shm":
                L_vals = np.array(res["L"])
                tau_arr = np.array(taus, dtype=np.float64)
                m_arr = np.array(ms, dtype=np.float64)

                def L_shm_table(m, tau, _L=L_vals, _t=tau_arr, _m=m_arr):
                    col = [np.interp(m, _m, _L[:, j]) for j in range(len(_t))]
                    if tau > _t[-1]:
                        return float(col[-1] * tau / _t[-1])
                    return float(np.interp(tau, _t, col))
        elif pp:
            warnings.append(f"{ch}: no o_eager measurement; τ-Lop tables not built")

        # pLogP per channel
        g_rows = [(m, _median(points, ch, "plogp_g", m=m), _median(points, ch, "plogp_os", m=m),
                   _median(points, ch, "plogp_or", m=m)) for m in
                  sorted({int(r["params"]["m"]) for r in ch_points.values() if r["bench"] == "plogp_g"})]
        g_rows = [row for row in g_rows if None not in row]
        if g_rows and o_eager is not None:
            gms = [row[0] for row in g_rows]
            g_vals = [max(row[1], fit.L_FLOOR) for row in g_rows]
            pl = fit.plogp_params(2 * o_eager, g_rows[0][1])
            fits["plogp"][ch] = {"m": gms, "g": g_vals, "g_raw": [row[1] for row in g_rows],
                                 "os": [row[2] for row in g_rows], "or": [row[3] for row in g_rows],
                                 "L": pl["L"], "L_raw": pl["L_raw"], "rtt0": 2 * o_eager}
            notes += [f"{ch}: {n}" for n in pl["notes"]]
            # a non-positive fitted L is clamped: a warning, printed by tlop measure, never silent
            warnings += [f"{ch}: {n}" for n in pl["notes"] if "not positive" in n]
            # or(m) is the receive of a message that has already arrived: it cannot take longer
            # than a whole m-byte round trip; where it does, the Recv waited for the message
            rtt = {m: 2 * t for m, t in pp}
            slow = [(m, o) for m, _, _, o in g_rows if m in rtt and o > rtt[m]]
            fits["plogp"][ch]["or_exceeds_rtt"] = [{"m": m, "or": o, "rtt": rtt[m]} for m, o in slow]
            if slow:
                warnings.append(f"{ch}: pLogP or(m) exceeds the m-byte round trip at m = "
                                f"{', '.join(str(int(m)) for m, _ in slow)} (the timed receive waited "
                                f"for the message: the machine was loaded); kept as measured")
            if any(row[1] <= fit.L_FLOOR for row in g_rows):
                notes.append(f"{ch}: pLogP g(m) values at or below {fit.L_FLOOR:g} s clamped")

        # LogGP per channel
        prtt = {}
        for r in ch_points.values():
            if r["bench"] != "prtt":
                continue
            s = int(r["params"]["s"])
            slot = prtt.setdefault(s, {})
            n, d = int(r["params"]["n"]), int(r["params"]["d"])
            if n == 1:
                slot["p1"] = r["stats"]["median"]
            elif d == 0:
                slot["pn"] = r["stats"]["median"]
                slot["n"] = n
            else:
                slot["pd"] = r["stats"]["median"]
                slot["d"] = r.get("delay_s", 0.0)
        prtt = {s: v for s, v in prtt.items() if {"p1", "pn", "pd", "d"} <= set(v)}
        if prtt:
            n = next(iter(prtt.values()))["n"]
            lg = fit.loggp_params(prtt, n)
            fits["loggp"][ch] = lg
            notes += [f"{ch}: {x}" for x in lg["notes"]]
            warnings += [f"{ch}: {x}" for x in lg["notes"] if "not positive" in x]

        # max-rate
        mr = sorted((int(r["params"]["pairs"]), r["stats"]["median"], r.get("bytes_per_pair"))
                    for r in ch_points.values() if r["bench"] == "maxrate")
        if mr:
            res = fit.max_rate([k for k, _, _ in mr], [t for _, t, _ in mr], mr[0][2])
            if postal and postal["segments"] and postal["segments"][-1]["beta"] > 0:
                res["R_b_Bps"] = 1.0 / postal["segments"][-1]["beta"]
            fits["max_rate"][ch] = res

        # collectives
        for r in sorted(ch_points.values(), key=lambda r: r["key"]):
            if r["bench"] == "coll":
                p = r["params"]
                entry = {"channel": ch, "algorithm": p["alg"], "impl": p["impl"],
                         "P": p["P"], "m": p["m"], "median": r["stats"]["median"],
                         "min": r["stats"]["min"], "p95": r["stats"]["p95"],
                         "n": r["stats"]["n"]}
                if r.get("forced"):
                    # impl "mpi:<name>": the library's collective with its algorithm forced by
                    # this variable (and the settings that make the forcing stick)
                    entry["forced"] = r["forced"]
                fits["collectives"].append(entry)

    # γ(m) per reduction operation (bench_gamma): one table gamma_<op> each, and gamma = SUM, the
    # default operation of libtaulop's gamma.txt; every model's `table gamma` reads it
    gamma_rows: dict = {}
    for r in points.values():
        if r["bench"] == "gamma":
            gamma_rows.setdefault(r["params"]["op"], []).append((int(r["params"]["m"]), r["stats"]["median"]))
    for op, rows in sorted(gamma_rows.items()):
        rows.sort()
        tables[f"gamma_{op}"] = {"*": {"m": [m for m, _ in rows], "values": [max(v, 0.0) for _, v in rows]}}
    if "gamma_sum" in tables:
        tables["gamma"] = {"*": dict(tables["gamma_sum"]["*"])}
        fits["gamma"] = {"source": "MPI_Reduce_local on MPI_INT, rank 0 of the shared-memory launch",
                         "ops": sorted(gamma_rows), "default": "sum"}

    # model-wide pLogP / LogGP entries: the network channel if measured, else shared memory
    src_order = [bind["net"]] if "net" in bind else []
    src_order += [c for c in order if c not in src_order]
    for c in src_order:
        if c in fits["plogp"]:
            pl = fits["plogp"][c]
            tables["plogp.g"] = {"*": {"m": pl["m"], "values": pl["g"]}}
            tables["plogp.os"] = {"*": {"m": pl["m"], "values": [max(v, fit.L_FLOOR) for v in pl["os"]]}}
            tables["plogp.or_"] = {"*": {"m": pl["m"], "values": [max(v, fit.L_FLOOR) for v in pl["or"]]}}
            scalars["plogp.L"] = {"*": pl["L"]}
            fits["plogp"]["source_channel"] = c
            break
    for c in src_order:
        if c in fits["loggp"]:
            lg = fits["loggp"][c]
            for k in ("L", "o", "g", "G"):
                scalars[f"loggp.{k}"] = {"*": lg[k]}
            fits["loggp"]["source_channel"] = c
            break

    # LogGPH (stdlib/loggph): every channel's own LogGP set, read through the model's channels
    for c in order:
        lg = fits["loggp"].get(c)
        if isinstance(lg, dict) and all(k in lg for k in ("L", "o", "g", "G")):
            for k in ("L", "o", "g", "G"):
                scalars.setdefault(f"loggph.{k}", {})[c] = lg[k]

    cuda = [r for r in records if r.get("kind") == "cuda"]
    if cuda:
        from tlop.runtime.measure.bench_cuda import fit_copies
        fits["cuda"] = fit_copies(cuda)

    # the postal/max-rate paths stdlib/postal reads (path channels, postal.* scalars)
    from tlop.runtime.measure.postal_paths import add_postal_paths
    add_postal_paths({c: kinds[c] for c in channels}, fits, channels, scalars, notes, warnings)

    done = set(points) | set(skips) | {r["key"] for r in cuda}
    missing = sorted(planned - done) if planned is not None else []
    complete = planned is not None and not missing
    if missing:
        warnings.append(f"{len(missing)} planned point(s) not measured yet (resume with --resume)")
    for k, r in sorted(skips.items()):
        notes.append(f"skipped {k}: {r.get('reason')}")
    if n_outlier_points:
        notes.append(f"{n_outlier_points} point(s) have outliers (beyond Q1 − 3·IQR / Q3 + 3·IQR); "
                     f"flagged in fits.points, kept in the medians and the raw samples")
    if unconverged:
        notes.append(f"{len(unconverged)} point(s) stopped before their CI reached eps "
                     f"(max_n or time_cap); see fits.points[...].stop")

    metadata = _metadata(runs, points, complete, missing, notes, warnings)
    return {"tlop_profile": 1, "name": name, "metadata": metadata,
            "interpolation": dict(INTERPOLATION), "channels": channels, "bind": bind,
            "tables": tables, "scalars": scalars, "fits": fits}


def _metadata(runs, points, complete, missing, notes, warnings) -> dict:
    last = runs[-1] if runs else {}
    mpi = last.get("mpi", {})
    dates = [r.get("date", "") for r in runs if r.get("date")]
    day = (dates[-1][:10] if dates else datetime.date.today().isoformat())
    settings = last.get("settings", {})
    rule = settings.get("rule", {})
    method = (f"tlop measure ({settings.get('preset', '?')}): adaptive repetitions until the "
              f"{rule.get('cl', '?')} CI of the median is within ±{rule.get('eps', '?')} of it "
              f"(at least {rule.get('min_n', '?')}, at most {rule.get('max_n', '?')} samples or "
              f"{rule.get('time_cap_s', '?')} s per point, {rule.get('warmup', '?')} warm-up "
              f"iterations discarded); the median is the model input")
    environment = environment_warnings(runs)
    warnings.extend(w for w in environment if w not in warnings)
    placement = last.get("placement") or {}
    return {
        "machine": last.get("host", "unknown"),
        "binding": _binding_text(placement),
        "timing": dict(TIMING),
        "environment_warnings": environment,
        "description": "measured with tlop measure on " + last.get("host", "unknown"),
        "date": day,
        "source": "tlop measure",
        "method": method,
        "notes": "; ".join(notes) if notes else "",
        "mpi": {"library": str(mpi.get("library", "unknown")), "version": str(mpi.get("version", "unknown"))},
        "mpi_library_version": mpi.get("library_version_full"),
        "mpi_standard": mpi.get("standard"),
        "launcher": last.get("launcher"),
        "np": last.get("np"),
        "placement": last.get("placement"),
        "timer": last.get("timer"),
        "software": last.get("software"),
        "settings": settings,
        "runs": [{**{k: r.get(k) for k in ("role", "date", "launcher", "np", "channels", "env",
                                           "forced_collectives", "load")},
                  "binding": (r.get("placement") or {}).get("binding")} for r in runs],
        "complete": bool(complete),
        "missing_points": missing[:50],
        "warnings": warnings,
        "points_measured": len(points),
        "statistics": "per point: n, min, median, mean, p95, CI of the median (order statistics), "
                      "outliers (Tukey far-out fences, flagged not dropped) in fits.points; every raw "
                      "sample in the .samples.jsonl file beside the profile",
    }


#: how each benchmark's sample is timed (issue 22 item 19: a method that favours one direction
#: of a message biases small messages); recorded as ``metadata.timing``
TIMING = {
    "pingpong": "half a round trip timed at rank 0: each sample holds both directions (0→1 and 1→0)",
    "ring": "barrier before each repetition, maximum over ranks; every rank sends and receives once "
            "(the same work on every rank)",
    "plogp": "sender side (os, g) or receiver side (or) timed at one rank, pLogP's own method",
    "coll": "barrier before each repetition, maximum over ranks",
}


def _binding_text(placement: dict) -> str:
    """What binding was asked of the launcher and what the ranks' CPU affinity showed."""
    from tlop.runtime.measure.binding import observed

    asked = placement.get("binding") or "not recorded (a profile measured before tlop bound ranks)"
    ok, seen = observed(placement.get("cpu_affinity_by_rank"), placement.get("hosts_by_rank"))
    return f"{asked}; observed: {seen}"


def environment_warnings(runs: list) -> list:
    """What made the launches' times doubtful, from their run records: ranks that could share a
    CPU (not bound, or oversubscribed), more ranks on a host than it has CPUs, a load average above
    the CPUs at a launch's start.  Kept as ``metadata.environment_warnings`` (and among the
    warnings): ``tlop tune`` and ``tlop validate`` repeat them when they use the profile."""
    from tlop.runtime.measure.binding import observed

    out: list = []
    for r in runs:
        pl = r.get("placement") or {}
        role = r.get("role", "?")
        cpus = pl.get("cpus")
        ok, seen = observed(pl.get("cpu_affinity_by_rank"), pl.get("hosts_by_rank"))
        if ok is False:
            out.append(f"launch {role}: {seen}: exchanges between ranks on one CPU take several times longer")
        most = max((pl.get("ranks_per_node") or {}).values(), default=0)
        if isinstance(cpus, int) and cpus and most > cpus:
            out.append(f"launch {role}: {most} ranks on a host with {cpus} CPUs (oversubscribed)")
        load = r.get("load") or []
        if isinstance(cpus, int) and cpus and load and load[0] > cpus:
            out.append(f"launch {role}: the load average was {load[0]:.1f} on {cpus} CPUs when it started: "
                       f"other work shared the machine")
    return list(dict.fromkeys(out))


def profile_environment_warnings(profile) -> list:
    """The warnings a measured profile carries about the machine it was measured on (unbound or
    oversubscribed ranks, load: ``metadata.environment_warnings``), each naming the profile: what
    is predicted from it inherits them (``tlop tune`` and ``tlop validate`` repeat them)."""
    from tlop.runtime.text import printable

    got = profile.metadata.get("environment_warnings") or []
    return [f"the profile '{printable(profile.name)}' was measured on a doubtful machine: {printable(w)}"
            for w in got if isinstance(w, str)]


def build_and_save(samples_file, out_path, name: str, planned: Optional[set] = None):
    """Assemble from ``samples_file``, validate, and write ``out_path`` atomically; returns the
    loaded :class:`~tlop.runtime.profile.Profile`."""
    from tlop.runtime.profile import profile_from_dict, save_profile

    records = read_records(samples_file)
    data = assemble(records, name, planned)
    data["metadata"]["samples_file"] = Path(samples_file).name
    prof = profile_from_dict(data, source=str(out_path), path=Path(out_path))
    save_profile(prof, out_path)
    return prof
