"""``tlop eval``: one algorithm at one point on a profile.

What it does not do: sweep ranges (``tlop sweep``) or compare algorithms (``tlop best``).
"""

from __future__ import annotations

import math

from tlop.runtime.diagnostics import TlopError
from tlop.cli import format as fmt
from tlop.cli.jsonout import emit as _emit_json
from tlop.cli.common import _engine, _load, _mapping, _point, _profile


def cmd_eval(args) -> int:
    m = _load(args.file, args)
    h = m[args.algorithm]
    env = h.bind(_point(args, h, args.assignments), strings=True)
    prof = _profile(args)
    engine, run = _engine(args, h, prof, points=1, point=env)
    value = float(run(env))
    if math.isnan(value):
        raise TlopError(f"'{h.name}' evaluated to NaN for these arguments")
    shown = {p.name: env[p.name] for p in h.params}
    mapping = _mapping(args, h) if h.ir.over is not None else None
    if args.json:
        out = {
            "algorithm": h.name, "file": str(m.path), "profile": prof.name, "engine": engine,
            "arguments": {p.name: fmt.param_json(p.type, shown[p.name], m.program.channels) for p in h.params},
            "seconds": value,
        }
        choice = getattr(args, "_engine_choice", None)
        if choice is not None:
            out["engine_reason"] = choice.reason
        if mapping is not None:
            out["mapping"] = str(mapping)
        _emit_json(out)
        return 0
    argtxt = ", ".join(f"{p.name}={fmt.param_text(p.type, shown[p.name], m.program.channels)}" for p in h.params)
    over = f" over {mapping}" if mapping is not None else ""
    print(f"{h.name}({argtxt}){over} on {prof.name}: {fmt.seconds(value, args)}")
    return 0
