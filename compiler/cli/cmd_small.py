"""The small subcommands: ``tlop profiles``, ``tlop completion``, ``tlop new`` and ``tlop demo``.

What it does not do: evaluate beyond the demo's fixed list.
"""

from __future__ import annotations

import math
import sys

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable
from tlop.runtime.units import format_size
from tlop.cli import format as fmt
from tlop.cli.jsonout import emit as _emit_json
from tlop.cli.common import _engine, _print_table, _profile


def cmd_profiles(args) -> int:
    from tlop.cli import profiles as profiles_cli
    from tlop.runtime.profile import bundled_profiles, default_profile, load_profile

    if args.name:
        return profiles_cli.show_profile(load_profile(args.name), args)
    default = default_profile().name
    if args.json:
        _emit_json({"default": default, "profiles": [profiles_cli.profile_json(load_profile(name), summary=True)
                                                     for name in sorted(bundled_profiles())]})
        return 0
    for name, path in sorted(bundled_profiles().items()):
        p = load_profile(name)
        md = p.metadata
        chans = ", ".join(f"{c} ({info.transmission})" for c, info in p.channels.items())
        mark = " (default)" if name == default else ""
        print(f"{name}{mark}")
        if md.get("machine"):
            print(f"  machine:  {md['machine']}")
        print(f"  channels: {chans}; bind: {', '.join(f'{k}={v}' for k, v in p.bindings.items()) or '-'}")
        print(f"  prices:   {profiles_cli.families_text(p)}")
        ops = p.reduce_ops()
        tables = [t for t in p.table_names() if t[len("gamma_"):] not in ops or not t.startswith("gamma_")]
        print(f"  tables:   {', '.join(tables)}")
        if ops:
            print(f"  reduce:   gamma_OP for OP in {', '.join(ops)} (--reduce-op OP)")
        if md.get("source"):
            print(f"  source:   {md['source']}")
        if md.get("date"):
            print(f"  date:     {md['date']}")
    return 0


def cmd_completion(args) -> int:
    from tlop.cli.completion import completion_script

    sys.stdout.write(completion_script(args.shell))
    return 0


def cmd_new(args) -> int:
    """``tlop new NAME``: a starter module with the commands to try on it."""
    from tlop.cli.starter import write_starter

    path = write_starter(args.name)
    print(f"wrote {printable(str(path))}; try: tlop check {printable(str(path))}")
    return 0


DEMO = [
    ("taulop/bcast", "binomial_bcast", {"c": "shm"}),
    ("taulop/bcast", "linear_bcast", {"c": "shm"}),
    ("taulop/bcast", "binomial_bcast", {"c": "net"}),
    ("taulop/allgather", "ring_allgather_node", {}),
    ("taulop/allgather", "ring_allgather_seq", {"Q": "8"}),
    ("taulop/allgather", "ring_allgather_rr", {"Q": "8"}),
    ("taulop/scatter", "binomial_scatter", {"seg": "8KiB"}),
    ("taulop/allgather", "rd_allgather", {"seg": "8KiB"}),
]


def _demo_processes(text: str) -> float:
    """One ``-P`` value of ``tlop demo``: a whole number of processes."""
    try:
        p = float(text)
    except ValueError:
        p = math.nan
    if not (math.isfinite(p) and p.is_integer() and 2 <= p <= 1 << 20):
        raise TlopError(f"-P {printable(text)}: a process count must be a whole number from 2 to {1 << 20}")
    return p


def cmd_demo(args) -> int:
    """Price a handful of stdlib algorithms on the default profile, side by side; rows that read
    a table outside its measured grid are marked ``*`` and a note after the table says what was
    extrapolated."""
    import warnings

    from tlop.api import load
    from tlop.runtime.errors import OutOfGridWarning

    for opt in ("mapping", "config", "layout", "partition"):
        if getattr(args, opt, None):
            raise TlopError(f"--{opt}: tlop demo prices closed forms that take no mapping (their nodes of 8 "
                            f"ranks are the Q=8 shown); price schedules over a mapping with tlop eval, sweep or "
                            f"best, e.g. tlop sweep taulop/allgather ring P=8..64:x2 m=1MiB --{opt} …")
    prof = _profile(args)
    sizes = [1024.0, 65536.0, 1048576.0]
    procs = [_demo_processes(p) for p in args.P]
    extrapolated: list = []  # what the rows marked * read outside the measured tables
    print(f"tlop demo: stdlib algorithms on profile '{prof.name}' "
          f"({prof.metadata.get('machine', 'no machine description')})")
    print("P = processes, m = message size\n")
    header = ["algorithm", "P"] + [format_size(m) for m in sizes]
    rows = []
    for file, name, fixed in DEMO:
        h = load(file)[name]
        _, run = _engine(args, h, prof)
        for P in procs:
            if any(p.name == "Q" for p in h.params) and P % 8:
                continue  # the mapping algorithms need whole nodes of 8 cores
            if name == "ring_allgather_node" and P > 8:
                continue  # one node of metropolis has 8 cores
            row = [f"{file}:{name}" + (f" ({', '.join(f'{k}={v}' for k, v in fixed.items())})" if fixed else ""),
                   fmt.number_text(P)]
            if hasattr(prof, "new_evaluation"):
                prof.new_evaluation()  # each row says for itself whether it extrapolates
            with warnings.catch_warnings(record=True) as got:
                warnings.simplefilter("always", OutOfGridWarning)
                for m in sizes:
                    given = {"P": f"{P:g}", "m": f"{m:g}", **fixed}
                    env = h.bind({k: v for k, v in given.items() if any(p.name == k for p in h.params)},
                                 strings=True)
                    row.append(fmt.seconds(float(run(env)), args))
            for w in got:
                if issubclass(w.category, OutOfGridWarning):
                    row[1] += " *"
                    text = str(w.message).split(" (extrapolated", 1)[0]
                    if text not in extrapolated:
                        extrapolated.append(text)
                else:  # anything else is shown as usual
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
                row[1] = row[1].replace(" * *", " *")
            rows.append(row)
    _print_table(header, rows)
    if extrapolated:
        print(f"\n* extrapolated beyond the tables measured on '{prof.name}' (the profile's interpolation rules "
              f"price it; --out-of-grid allow hides this note):")
        for text in extrapolated:
            print(f"  {text}")
    return 0
