"""``tlop profiles``: which model families a profile can price, and one profile in detail.

What it does: finds the model families a profile can price by comparing its tables and scalars
with the parameters each family's stdlib platform module declares (``taulop/platform``,
``plogp/platform``, ``loggp/platform``, ``postal/platform``; τ-Lop's ``gamma`` only prices
reductions and postal's ``memcpy_*`` only GPU copies, so they are reported on their own); prints one profile — channels, tables with their grids (m range and count,
τ range), scalars, model families, interpolation, provenance — as text or JSON.
What it does not do: validate a profile (:mod:`tlop.runtime.profile_schema` did when it was loaded).
"""

from __future__ import annotations

import math

from tlop.runtime.units import format_size

__all__ = ["families", "families_text", "profile_json", "show_profile"]

#: family name -> its stdlib platform module
FAMILIES = {"τ-Lop": "taulop/platform", "pLogP": "plogp/platform", "LogGP": "loggp/platform",
            "postal": "postal/platform"}
#: parameters of a family a profile may lack and still price most of it: name -> what they price
OPTIONAL = {"gamma": "reductions", "memcpy_alpha": "GPU copies", "memcpy_beta": "GPU copies"}


def _needs(module_name):
    from tlop.api import load

    prog = load(module_name).program
    return ([(t, prog.tables[t].model) for t in prog.tables], [(s, prog.scalars[s].model) for s in prog.scalars])


def families(profile) -> dict:
    """family -> ``(ok, missing, extras)``: whether the profile has every table and scalar the
    family's platform declares (under its plain or model-qualified name), what it lacks, and which
    optional parts (``reductions``) it has."""
    tables, scalars = set(profile.table_names()), set(profile.scalar_names())
    out = {}
    for fam, module in FAMILIES.items():
        need_t, need_s = _needs(module)
        missing, extras = [], []
        for names, have in ((need_t, tables), (need_s, scalars)):
            for name, model in names:
                present = name in have or f"{model}.{name}" in have
                if name in OPTIONAL:
                    if present and OPTIONAL[name] not in extras:
                        extras.append(OPTIONAL[name])
                elif not present:
                    missing.append(name)
        out[fam] = (not missing, missing, extras)
    return out


def families_text(profile) -> str:
    parts = [f"{fam}" + (f" (+ {', '.join(extras)})" if extras else "")
             for fam, (ok, _, extras) in families(profile).items() if ok]
    return ", ".join(parts) or "no stdlib model family (its tables are for models of your own)"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _table_entries(profile):
    for name in profile.table_names():
        for key, t in profile._tables[name].items():  # noqa: SLF001  (read-only view of the grids)
            yield t


def _table_json(t) -> dict:
    return {"name": t.name, "channel": t.channel, "m": {"min": float(t.m[0]), "max": float(t.m[-1]), "points": len(t.m)},
            "tau": None if t.tau is None else {"min": float(t.tau[0]), "max": float(t.tau[-1]), "points": len(t.tau)}}


def profile_json(profile, summary: bool = False) -> dict:
    fam = families(profile)
    out = {"name": profile.name, "path": str(profile.path) if profile.path else None,
           "channels": {c: info.transmission for c, info in profile.channels.items()},
           "bindings": dict(profile.bindings),
           "families": [f for f, (ok, _, _) in fam.items() if ok],
           "metadata": dict(profile.metadata)}
    if summary:
        out["tables"] = profile.table_names()
        return out
    out["families_missing"] = {f: missing for f, (ok, missing, _) in fam.items() if not ok}
    out["tables"] = [_table_json(t) for t in _table_entries(profile)]
    out["scalars"] = {s: _scalar_values(profile, s) for s in profile.scalar_names()}
    out["interpolation"] = {k: getattr(profile.interpolation, k) for k in profile.interpolation.__dataclass_fields__}
    if getattr(profile, "hloggp", None) is not None:
        out["hloggp"] = profile.hloggp.to_dict()
    return out


def _scalar_values(profile, name):
    per = profile._scalars[name]  # noqa: SLF001
    return {("*" if k == "*" else k): float(v) for k, v in per.items()} if isinstance(per, dict) else float(per)


def show_profile(profile, args) -> int:
    from tlop.cli.jsonout import emit
    from tlop.cli.format import seconds

    if getattr(args, "json", False):
        emit(profile_json(profile))
        return 0
    md = profile.metadata
    print(f"{profile.name}" + (f"  ({profile.path})" if profile.path else ""))
    if md.get("machine"):
        print(f"  machine:   {md['machine']}")
    print("  channels:  " + ", ".join(f"{c} ({i.transmission})" for c, i in profile.channels.items()))
    if profile.bindings:
        print("  bind:      " + ", ".join(f"{k}={v}" for k, v in profile.bindings.items()))
    fam = families(profile)
    print(f"  prices:    {families_text(profile)}")
    for f, (ok, missing, _) in fam.items():
        if not ok:
            print(f"             not {f}: no {', '.join(missing)}")
    print("  tables:")
    rows = []
    for t in _table_entries(profile):
        grid = f"m {format_size(t.m[0])} .. {format_size(t.m[-1])} ({len(t.m)} sizes)"
        if t.tau is not None:
            grid += f", τ {_num(t.tau[0])} .. {_num(t.tau[-1])}"
        lo, hi = float(t.values.min()), float(t.values.max())
        rows.append((t.label, grid, f"{seconds(lo)} .. {seconds(hi)}" if math.isfinite(lo + hi) else ""))
    w0 = max((len(r[0]) for r in rows), default=0)
    w1 = max((len(r[1]) for r in rows), default=0)
    for r in rows:
        print(f"    {r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]}")
    if profile.scalar_names():
        print("  scalars:")
        for s in profile.scalar_names():
            v = _scalar_values(profile, s)
            if isinstance(v, dict):
                shown = ", ".join(f"{x:g}" if k == "*" else f"{k}: {x:g}" for k, x in v.items())
            else:
                shown = f"{v:g}"
            print(f"    {s} = {shown}")
    if getattr(profile, "hloggp", None) is not None:  # HLogGP per pair of node types (kernels/hloggp)
        h = profile.hloggp
        print(f"  hloggp:    {len(h.pairs)} pairs of node types ({', '.join(h.node_types())}) for kernels/hloggp"
              + (f"; {h.provenance}" if h.provenance else ""))
        for (a, b, c), v in h.pairs.items():
            print(f"    {a} -> {b} ({c}): L {seconds(v['L'])}, o_s {seconds(v['o_s'])}, o_r {seconds(v['o_r'])}, "
                  f"G {v['G']:.3g} s/B")
    interp = profile.interpolation
    print(f"  interpolation: m below the grid {interp.m_below}, beyond {interp.m_beyond}; τ beyond {interp.tau_beyond}")
    for key in ("source", "method", "date", "notes"):
        if md.get(key):
            print(f"  {key + ':':10} {md[key]}")
    return 0
