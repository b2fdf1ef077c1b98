"""``tlop grid-bcast``: paper 001's grid-aware broadcast from the command line.

What it does: three actions over :mod:`tlop.analysis.gridcast`:

* ``cluster`` — Lowekamp's clustering (001 Alg. 1) of a latency matrix (a text file of numbers,
  one row per line, whitespace or commas; default: 001 Table 4 expanded to its 88 machines) with
  tolerance ``--rho``; prints each subnet's size and members;
* ``schedule`` — builds the inter-cluster problem of an m-byte broadcast and prints every
  heuristic's schedule and its completion time, priced by tlop's pLogP schedule layer
  (:func:`tlop.analysis.gridcast.pricing.schedule_program`).  With ``--grid FILE`` (a grid
  description, :mod:`tlop.analysis.gridcast.description`) each link has the g_ij(m) and L_ij of
  its own measured pLogP profile, as 001 §4.1.3 acquires them, and each subnet's T_j comes from
  its own profile.  Without it, the latency matrix (default 001 Table 4) is clustered and L_ij is
  the mean latency between two subnets, but g(m) is one profile's on every link and every T_j is
  priced on that profile: 001 publishes only latencies for its GRID5000 run;
* ``simulate`` — the Monte-Carlo of 001 §6 (Table 3's ranges), a progress bar on stderr, the mean
  completion time per heuristic and cluster count as a table (``--csv`` too), ``--plot FILE``
  its figure (mean completion time against cluster count, one line per heuristic).

What it does not do: measure (latency matrices come from a file), or run a broadcast.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tlop.runtime.diagnostics import TlopError

__all__ = ["add_arguments", "run", "parse_counts", "build_figure", "read_matrix"]


def parse_counts(text: str) -> list:
    """``"2..10"``, ``"2..50:+4"`` or ``"2,5,10"`` → a list of cluster counts (each ≥ 2)."""
    try:
        if ".." in text:
            lo, rest = text.split("..", 1)
            hi, _, step = rest.partition(":")
            step = int(step.lstrip("+")) if step else 1
            out = list(range(int(lo), int(hi) + 1, step))
            if step < 1:
                raise ValueError
        else:
            out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise TlopError(f"--clusters {text}: expected A..B, A..B:+STEP or a list A,B,C of integers") from None
    if not out or min(out) < 2:
        raise TlopError(f"--clusters {text}: every cluster count must be at least 2")
    from tlop.apps.gridcast.simulate import MAX_CLUSTERS

    if max(out) > MAX_CLUSTERS:
        raise TlopError(f"--clusters {text}: at most {MAX_CLUSTERS} clusters (each run holds several "
                        f"C × C matrices)")
    return out


def read_matrix(path: str):
    """A square latency matrix from a text file (numbers; '-' or 'nan' for a missing edge)."""
    import numpy as np

    rows = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise TlopError(f"{path}: cannot read the latency matrix: {getattr(err, 'strerror', None) or err}") from None
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            rows.append([float("nan") if x in ("-", "nan") else float(x) for x in line.replace(",", " ").split()])
        except ValueError:
            raise TlopError(f"{path}:{n}: expected numbers separated by spaces or commas") from None
        if any(v < 0 for v in rows[-1]):
            from tlop.apps.gridcast.description import GridError

            raise GridError(f"{path}:{n}: a latency is >= 0 (or '-' for a missing edge); got "
                            f"{min(rows[-1]):g}")
    if not rows or any(len(r) != len(rows) for r in rows):
        raise TlopError(f"{path}: the latency matrix must be square (one row of N numbers per line, N lines)")
    return np.array(rows)


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = sub.add_parser("cluster", help="Lowekamp's clustering of a latency matrix (001 Alg. 1)")
    c.add_argument("--matrix", metavar="FILE", help="latency matrix (default: 001 Table 4's 88 machines)")
    c.add_argument("--rho", type=float, default=0.3, help="tolerance ρ (default 0.3, as 001's GRID5000 run)")
    s = sub.add_parser("schedule", help="every heuristic's inter-cluster schedule for the clustered matrix")
    s.add_argument("--grid", metavar="FILE",
                   help="grid description: subnets and the pLogP profile measured inside each and on each link "
                        "(g_ij(m), L_ij per link); replaces --matrix, --rho and --profile")
    s.add_argument("--matrix", metavar="FILE", help="latency matrix in µs (default: 001 Table 4's 88 machines)")
    s.add_argument("--rho", type=float, default=None, help="tolerance ρ (default 0.3)")
    s.add_argument("--m", default="4MiB", help="message size (default 4MiB, as 001 §7)")
    s.add_argument("--profile", default=None,
                   help="pLogP profile for g(m) and the intra-cluster broadcasts (default localhost-example)")
    m = sub.add_parser("simulate", help="Monte-Carlo comparison of the heuristics (001 §6, Table 3)")
    m.add_argument("--runs", type=int, default=10_000, help="runs per cluster count (default 10000)")
    m.add_argument("--clusters", default="2..10", help="cluster counts: A..B, A..B:+STEP or A,B,C (default 2..10)")
    m.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    m.add_argument("--csv", metavar="OUT", help="also write the table as CSV ('-' for stdout)")
    m.add_argument("--plot", metavar="FILE", help="draw mean completion time against cluster count (.svg .png .pdf)")
    m.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _matrix(args):
    from tlop.apps.gridcast.clustering import table4_latency_matrix

    if args.matrix:
        return read_matrix(args.matrix), "the matrix of " + args.matrix
    return table4_latency_matrix()[0], "001 Table 4 (88 GRID5000 machines)"


def _subnets(args):
    from tlop.apps.gridcast.clustering import lowekamp

    if args.rho < 0:
        raise TlopError(f"--rho {args.rho}: must be >= 0")
    w, what = _matrix(args)
    return w, what, lowekamp(w, args.rho)


def _ranges(members) -> str:
    out, start = [], members[0]
    for a, b in zip(members, members[1:] + [None]):
        if b != a + 1:
            out.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ", ".join(out)


def run(args) -> int:
    return {"cluster": _cluster, "schedule": _schedule, "simulate": _simulate}[args.action](args)


def _cluster(args) -> int:
    _, what, subnets = _subnets(args)
    print(f"{len(subnets)} subnets of {what}, rho = {args.rho:g}")
    for k, s in enumerate(subnets):
        print(f"  subnet {k}: {len(s):3d} nodes  {_ranges(s)}")
    return 0


def _size(text):
    from tlop.runtime.units import split_quantity, unit_factor, unit_kind

    q = split_quantity(str(text))
    if q is None or unit_kind(q[1]) not in ("bytes", "number") or q[0] < 0:
        raise TlopError(f"--m {text}: expected a size such as 4MiB or 65536")
    return q[0] * unit_factor(q[1])


def _matrix_problem(args, m):
    """Lowekamp's subnets of the latency matrix; L_ij the mean latency between two subnets, one
    profile's g(m) on every link and T_j on that profile."""
    import numpy as np

    from tlop.apps.gridcast import Problem
    from tlop.apps.gridcast.problem import intra_cluster_times
    from tlop.api import load
    from tlop.runtime.profile import load_profile
    from tlop.runtime.units import format_time

    if args.rho is None:
        args.rho = 0.3
    w, what, subnets = _subnets(args)
    prof = load_profile(args.profile)
    gh = load("plogp/platform")["send_gap"]
    if not gh.applies_to(prof):
        raise TlopError(f"profile '{prof.name}' has no pLogP g(m); give a profile with pLogP tables (--profile)")
    gm = float(gh.evaluate(prof, m=m))
    C = len(subnets)
    L = np.zeros((C, C))
    for a in range(C):
        for b in range(C):
            if a != b:
                between = w[np.ix_(subnets[a], subnets[b])]
                if not np.isfinite(between).any():
                    from tlop.apps.gridcast.description import GridError

                    raise GridError(f"{what}: no latency between subnet {a} and subnet {b} (every edge between "
                                    f"them is missing); the inter-cluster problem needs one")
                L[a, b] = np.mean(between[np.isfinite(between)]) * 1e-6
    T, chosen = intra_cluster_times([len(s) for s in subnets], m, prof)
    head = (f"{C} subnets of {what} (rho = {args.rho:g}); m = {args.m}; g(m) = {format_time(gm)} on every link "
            f"(pLogP of '{prof.name}'; 001 gives no inter-cluster gaps: --grid FILE gives each link its own); "
            f"L = mean latency between subnets")
    sizes = [len(s) for s in subnets]
    names = tuple(f"subnet {k}" for k in range(C))
    return Problem(np.full((C, C), gm), L, T, 0, names), chosen, sizes, head


def _grid_problem(args, m):
    """The problem of a grid description: every link's own g_ij(m) and L_ij, every subnet's T_j."""
    from tlop.apps.gridcast.description import grid_problem, read_grid

    given = [o for o, v in (("--matrix", args.matrix), ("--rho", args.rho), ("--profile", args.profile)) if v is not None]
    if given:
        raise TlopError(f"--grid {args.grid}: the grid description replaces {', '.join(given)}; give one or the other")
    grid = read_grid(args.grid)
    problem, chosen = grid_problem(grid, m)
    head = (f"{problem.clusters} subnets of the grid description {args.grid}; m = {args.m}; "
            f"g_ij(m) and L_ij from each link's pLogP profile, root '{grid.names[grid.root]}'")
    return problem, chosen, list(grid.machines), head


def _schedule(args) -> int:
    from tlop.apps.gridcast import HEURISTICS, schedule
    from tlop.apps.gridcast.pricing import schedule_program
    from tlop.api import loads
    from tlop.runtime.mapping import sequential
    from tlop.runtime.profile import profile_from_dict
    from tlop.runtime.units import format_time

    m = _size(args.m)
    if args.grid:
        problem, chosen, sizes, head = _grid_problem(args, m)
    else:
        if args.profile is None:
            args.profile = "localhost-example"
        problem, chosen, sizes, head = _matrix_problem(args, m)
    print(head)
    names = problem.names
    for k in range(problem.clusters):
        print(f"  {names[k]}: {sizes[k]:3d} nodes, T = {format_time(problem.T[k])} ({chosen[k]})")
    C = problem.clusters
    if args.grid and C <= 12:
        print("  link            g_ij(m)        L_ij")
        for i in range(C):
            for j in range(i + 1, C):
                print(f"  {i:>2d}-{j:<2d}  {format_time(problem.g[i, j]):>14s} {format_time(problem.L[i, j]):>11s}")
    for h in HEURISTICS:
        sched = schedule(problem, h)
        source, prof = schedule_program(problem, sched)
        cost = loads(source, "grid-schedule.tlop")["grid_schedule"].evaluate(
            profile_from_dict(prof, "grid-schedule profile"), P=C, mapping=sequential(1))
        print(f"{h:10s} {format_time(float(cost)):>10s}  " + " ".join(f"{i}->{j}" for i, j in sched))
    return 0


def _progress(total: int, quiet: bool):
    """A callable taking the runs done: a rich bar on a terminal, a line per 10 % otherwise."""
    if quiet:
        return lambda done: None, lambda: None
    t0 = time.monotonic()
    if sys.stderr.isatty():
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("simulating"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                           console=Console(stderr=True))
            task = bar.add_task("runs", total=total)
            bar.start()
            return (lambda done: bar.update(task, completed=done)), bar.stop
        except ImportError:
            pass
    state = {"next": 0.1}

    def step(done):
        if done >= state["next"] * total or done == total:
            el = time.monotonic() - t0
            print(f"tlop grid-bcast: {done}/{total} runs, {el:.0f} s elapsed, "
                  f"ETA {el / done * (total - done):.0f} s", file=sys.stderr)
            state["next"] = done / total + 0.1
    return step, lambda: None


def build_figure(counts, means: dict, runs: int):
    """Mean completion time (s) against cluster count, one line per heuristic (``gid`` =
    ``heuristic-NAME``)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.add_subplot(1, 1, 1)
    for h, ys in means.items():
        ax.plot(counts, ys, marker="o", markersize=3, label=h, gid=f"heuristic-{h}")
    ax.set_xlabel("clusters")
    ax.set_ylabel("mean completion time (s)")
    ax.set_title(f"Grid broadcast, 001 Table 3 parameters, {runs} runs per point")
    ax.legend()
    fig.tight_layout()
    return fig


def _simulate(args) -> int:
    from tlop.apps.gridcast import HEURISTICS
    from tlop.apps.gridcast.simulate import simulate
    from tlop.cli.plot_stages import check_target, have_matplotlib
    from tlop.cli.table import print_table

    counts = parse_counts(args.clusters)
    if args.runs < 1:
        raise TlopError(f"--runs {args.runs}: must be at least 1")
    if args.plot:
        check_target(args.plot)
        if not have_matplotlib():
            raise TlopError("--plot needs matplotlib, which is not installed; install it with pip install 'tlop[plot]'")
    total = len(counts) * args.runs * len(HEURISTICS)
    step, stop = _progress(total, args.quiet)
    try:
        means = simulate(counts, args.runs, args.seed, progress=step)
    finally:
        stop()
    print(f"mean completion time (s) over {args.runs} runs, 001 Table 3 parameters, seed {args.seed}")
    rows = [[str(c)] + [f"{means[h][k]:.3f}" for h in HEURISTICS] for k, c in enumerate(counts)]
    print_table(["clusters"] + list(HEURISTICS), rows)
    if args.csv:
        import csv

        f = sys.stdout if args.csv == "-" else open(args.csv, "w", newline="", encoding="utf-8")  # noqa: SIM115
        try:
            wr = csv.writer(f, lineterminator="\n")
            wr.writerow(["clusters"] + list(HEURISTICS))
            wr.writerows([[c] + [repr(means[h][k]) for h in HEURISTICS] for k, c in enumerate(counts)])
        finally:
            if f is not sys.stdout:
                f.close()
    if args.plot:
        fig = build_figure(counts, means, args.runs)
        fig.savefig(args.plot, format=Path(args.plot).suffix.lower()[1:],
                    metadata={"Date": None} if args.plot.lower().endswith(".svg") else {})
        print(f"wrote {args.plot}")
    return 0
