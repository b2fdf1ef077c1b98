"""Helpers shared by the ``tlop`` subcommands: loading a module and a profile, reading
``NAME=VALUE`` arguments and a mapping, the engine an evaluation uses, the options several
commands share, and writing tables and CSV.

What it does not do: run a subcommand (each has its module) or build the parser (:mod:`tlop.cli.main`).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
from typing import Sequence

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable
from tlop.cli import format as fmt
from tlop.cli.table import LONG_TABLE, print_table


def _load(name, args=None):
    """The module ``name``; a model-neutral one (``stdlib/coll``) loaded for ``--model`` or, without
    it, for the model of ``--profile`` (:func:`tlop.runtime.profile.default_model`)."""
    from tlop.api import load
    from tlop.frontend.limits import keep_alive

    module = load(name)
    if module.model_neutral and args is not None and hasattr(args, "profile"):
        model = getattr(args, "model", None)
        if model is None:
            from tlop.runtime.profile import default_model

            model = default_model(_profile(args))
        module = module.for_model(model)
    elif getattr(args, "model", None) is not None and not module.model_neutral:
        raise TlopError(f"--model {args.model}: {printable(str(name))} is not model-neutral (it imports its model's "
                        f"platform itself); --model chooses the model of a module that imports \"@model/platform.tlop\", "
                        f"such as coll/bcast")
    keep_alive(module)  # freed by the process's exit, not object by object when the command returns
    return module


def _profile(args):
    from tlop.runtime.profile import default_profile, load_profile

    spec = getattr(args, "profile", None)
    prof = default_profile() if spec is None else load_profile(spec)   # --profile "" is an error
    binds = getattr(args, "bind", None) or []
    if binds:
        mapping = {}
        for b in binds:
            if "=" not in b:
                raise TlopError(f"--bind {b}: expected MODEL_CHANNEL=PROFILE_CHANNEL, e.g. net=tcp")
            k, v = b.split("=", 1)
            mapping[k.strip()] = v.strip()
        prof = prof.with_bindings(mapping)
    if getattr(args, "reduce_op", None):
        prof = prof.with_reduce_op(args.reduce_op)
    if getattr(args, "libtaulop_compat", False):
        prof = prof.with_libtaulop_compat()
    if getattr(args, "out_of_grid", None):
        prof = prof.with_interpolation(out_of_grid=args.out_of_grid)
    return prof


def _provenance(prof, args=None, handle=None) -> dict:
    """What a JSON record needs to be reproduced beyond the profile's name: a profile from a file
    the user gave (not a bundled one) by its path and SHA-256, and the mapping or configuration
    in use (``--mapping``, ``--config``, ``--layout``) as its text."""
    import hashlib

    out = {}
    path = getattr(prof, "path", None)
    if path is not None:
        from pathlib import Path

        from tlop.runtime.profile import bundled_profiles

        path = Path(path).resolve()
        if path not in {Path(p).resolve() for p in bundled_profiles().values()}:
            try:
                out["profile_path"] = str(path)
                out["profile_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                pass
    if args is not None:
        mapping = _mapping(args, handle) if handle is not None else None
        if mapping is None and any(getattr(args, k, None) for k in ("mapping", "config", "layout")):
            mapping = _mapping(args)
        if mapping is not None:
            out["mapping"] = str(mapping)
    return out


def _check_mapping_used(args, handle, point: dict) -> None:
    """Warn when ``--mapping`` is given for an algorithm that is not over a mapping (a closed
    form ignores it), and when its ``Q`` (ranks per node) contradicts what the mapping places at
    that ``P`` — the silent disagreement a ranks-per-node parameter allows."""
    spec = getattr(args, "mapping", None)
    if not spec or handle.ir.over is not None:
        return
    import warnings

    msg = (f"--mapping {printable(spec)}: '{handle.name}' is a closed form, not over a process mapping; "
           f"the mapping is not used")
    q, P = point.get("Q"), point.get("P")
    if q is not None and P is not None and any(p.name == "Q" for p in handle.params):
        try:
            import numpy as np

            from tlop.backends.binding import as_mapping

            Pn, qn = int(float(P)), int(float(q))
            counts = np.bincount(np.asarray(as_mapping(spec).node_of(np.arange(Pn), Pn), dtype=np.int64))
            counts = counts[counts > 0]
            if len(set(counts.tolist())) == 1 and int(counts[0]) != qn:
                msg += (f", and Q={qn} contradicts it: it places {int(counts[0])} ranks per node at P={Pn}")
        except (TlopError, ValueError, OverflowError):
            pass
    warnings.warn(msg, stacklevel=2)


def _assignments(items: Sequence[str]) -> dict:
    out = {}
    for it in items:
        if "=" not in it:
            raise TlopError(f"'{it}': arguments are NAME=VALUE, e.g. P=16 m=1MiB")
        k, v = it.split("=", 1)
        if k.strip() in out:
            raise TlopError(f"'{k.strip()}' is given twice ({k.strip()}={out[k.strip()]} and {it})")
        out[k.strip()] = v.strip()
    return out


def _mapping(args, handle=None):
    """The process mapping of ``--mapping``, or the configuration of ``--config``, ``--layout``
    and ``--partition`` (:mod:`tlop.runtime.configs`); None when none is given.  With the
    algorithm's ``handle``, a configuration offering several partitions gives the one for that
    algorithm and the point's ``N`` (``args._point``, set by the commands at one point)."""
    from tlop.backends.binding import as_mapping

    if all(getattr(args, k, None) is None for k in ("config", "layout", "partition")):
        return as_mapping(getattr(args, "mapping", None))  # (configs is not imported for nothing)
    from tlop.runtime.configs import configuration

    cfg = configuration(getattr(args, "config", None), getattr(args, "layout", None),
                        getattr(args, "partition", None))
    if cfg is None:
        return as_mapping(getattr(args, "mapping", None))
    if getattr(args, "mapping", None):
        raise TlopError("--mapping and --config/--layout both place the ranks; give one of them")
    if handle is not None:
        n = getattr(args, "_point", {}).get("N", "")
        cfg = cfg.select_partition(handle.name, int(n) if n.isdigit() else None)
    return cfg


def _point(args, handle, items) -> dict:
    """The ``NAME=VALUE`` arguments of one point; under a configuration (``--config``,
    ``--layout``) ``P`` defaults to its number of ranks.  Remembered for :func:`_mapping`."""
    point = _assignments(items)
    from tlop.backends.renamed import rename_in_place

    rename_in_place(point, {p.name for p in handle.params}, handle.name)   # S, s: now seg (warned)
    args._point = dict(point)
    if handle.ir.over is not None and "P" not in point and any(p.name == "P" for p in handle.params):
        from tlop.runtime.mapping import Layout

        mapping = _mapping(args, handle)
        if isinstance(mapping, Layout):
            point["P"] = str(mapping.P)
    if "N" in point and not any(p.name == "N" for p in handle.params) and _mapping(args, handle) is not None \
            and getattr(_mapping(args, handle), "partition", None) is not None:
        # N=… chose the configuration's partition of that size (a kernel reads N from it)
        point.pop("N")
    return point


def _engine(args, handle, profile, points: int = 2, mapping=None, config: bool = False, point=None):
    """An evaluate(env) callable for the chosen engine, and the engine's name.  ``auto`` asks the
    one engine policy (:func:`tlop.backends.engine_policy.choose`): the predicted cost of the
    ``points`` evaluations (``point``: the bound arguments of one, the largest of a grid) in the
    interpreter against compiling (or loading from the on-disk cache) and running native code;
    an algorithm the JIT refuses falls back to the interpreter under ``auto``.  The choice and
    its reason are ``args._engine_choice`` (shown by ``--verbose`` where a command has it).
    ``--mapping`` is applied to algorithms over a process mapping (``mapping``, when given,
    instead: a configuration of ``tlop sweep --config M1..M16``); ``config`` is accepted for
    the callers' sake (the prediction counts every configuration's points)."""
    from tlop.backends import engine_policy
    from tlop.backends.binding import bind_mapping

    mapping = _mapping(args, handle) if mapping is None else mapping
    if mapping is not None:  # a configuration's HLogGP parameters (tlop.runtime.hloggp)
        from tlop.runtime.hloggp import for_mapping

        profile = for_mapping(profile, mapping, handle.module.program)
    engine = getattr(args, "engine", "auto")
    # the interpreter chosen by ``auto`` reduces schedule stages by counting (checked against the
    # oracle's sort by tests/test_schedule_count.py); ``--engine interp`` is the oracle itself
    schedules = "count" if engine == "auto" else "sort"
    auto = engine == "auto"
    if auto:
        env = None
        if point is not None:
            try:
                env = bind_mapping(handle.ir, dict(point), mapping) if handle.ir.over is not None else dict(point)
            except TlopError:
                env = None  # the evaluation reports it

        def cached():
            try:
                from tlop.backends.jit.evaluator import is_cached
            except ImportError:
                return False
            return is_cached(handle.module.program, handle.name, profile, mapping)

        choice = engine_policy.choose(handle.module.program, handle.ir, env, points, profile=profile,
                                      mapping=mapping, cached=cached)
        engine = choice.engine if choice.engine == "interp" else "auto"
    else:
        choice = engine_policy.Choice(engine, f"--engine {engine}")
    args._engine_choice = choice
    if getattr(args, "verbose", False):
        print(f"tlop: {choice.describe()}", file=sys.stderr)
    if engine in ("auto", "jit"):
        try:
            from tlop.backends import jit  # noqa: F401
        except ImportError:
            if engine == "jit":
                raise TlopError("the JIT engine is not available in this installation (llvmlite missing?)")
            engine = "interp"
        else:
            engine = "jit"
    if engine == "jit":
        import numpy as np

        try:
            ev = handle.compile(profile, mapping=mapping)
        except TlopError as err:
            from tlop.backends.jit import NotCompilable

            if not (auto and isinstance(err, NotCompilable)):
                raise
            ev = None  # ``auto`` chose the JIT and it refuses: the interpreter evaluates
            args._engine_choice = engine_policy.Choice("interp", "the JIT refuses it")
        if ev is not None:
            return "jit", _fits(profile, mapping if handle.ir.over is not None else None,
                                lambda env: ev.batch(**env) if any(np.ndim(v) for v in env.values()) else ev(**env))
    from tlop.backends.interp import Interpreter

    from tlop.backends.nonfinite import check_finite

    interp = Interpreter(handle.module.program, profile, mapping, schedules)

    def run(env):
        bound = bind_mapping(handle.ir, env, mapping)
        return check_finite(interp.eval(handle.ir.body, bound), handle.name, handle.module.program,
                            profile, handle.ir.body, bound, mapping=mapping)

    return "interp", _fits(profile, mapping if handle.ir.over is not None else None, run)


def _fits(profile, mapping, run):
    """``run`` that first warns when ``mapping`` needs more than the machine ``profile``
    describes (:mod:`tlop.runtime.machine`, once per mapping in one command)."""
    if mapping is None:
        return run
    from tlop.runtime.machine import check_fits

    def checked(env):
        check_fits(profile, mapping, env.get("P"))
        return run(env)

    return checked


def _largest_point(handle, axes: dict, extra: dict = None):
    """The bound arguments of the largest point of a grid (each axis's largest value; a channel
    axis its first) for the engine policy to predict the work from; None when they cannot be
    bound (the evaluation reports why)."""
    point = {}
    for p in handle.params:
        if p.name in axes and len(axes[p.name]):
            values = axes[p.name]
            n = len(values)
            if p.type == "channel":
                point[p.name] = float(values[0])
            else:  # a long axis is arithmetic: its largest value is at one end
                import numpy as np

                ends = values.take(np.arange(n) if n <= 100_000 else np.array([0, n - 1]))
                point[p.name] = float(np.max(ends))
    point.update(extra or {})
    try:
        return handle.bind(point)
    except (TlopError, TypeError, ValueError):
        return None


def _fmt_arg(p, v) -> str:
    return fmt.param_text(p.type, v)


def _check_targets(items):
    """The files ``tlop check`` checks: each FILE (or stdlib module) as given, and every
    ``.tlop`` file under each DIR (sorted, hidden directories skipped)."""
    from pathlib import Path

    out = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*.tlop")
                           if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise TlopError(f"{printable(item)}: no .tlop files under this directory")
            out.extend(str(f) for f in found)
        else:
            out.append(item)
    return out


from tlop.display.signature import signature as _signature, value_text as _fmt_value  # noqa: E402


def _plot_checked(args, command: str) -> bool:
    """Whether ``--plot`` can be drawn: its suffix is a picture format (else a TlopError) and
    matplotlib is installed (else a one-line hint on stderr and False)."""
    if not getattr(args, "plot", None):
        return True
    from tlop.cli.plot_grid import PLOT_HINT, check_target
    from tlop.cli.plot_stages import have_matplotlib

    check_target(args.plot, command)
    if not have_matplotlib():
        _print_error(TlopError(PLOT_HINT.format(command=command)))
        return False
    return True


def _plot_wrote(args) -> None:
    if getattr(args, "plot", None) and not args.json and args.csv != "-":
        print(f"wrote {printable(args.plot)}")


def _write_csv(target: str, header: list, chunks) -> None:
    """Write rows (an iterable of lists of rows, one list a chunk, or of blocks of CSV lines
    already written as text, :mod:`tlop.cli.csvfast`) as CSV to the file ``target``
    (atomically: a temporary file written chunk by chunk, then a rename), or to standard output
    for ``-``.  Memory holds one chunk's rows at a time."""
    n = 0

    def write(f):
        nonlocal n
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for rows in chunks:
            if isinstance(rows, str):  # a block of CSV lines (tlop.cli.csvfast)
                f.write(rows)
                n += rows.count("\n")
            else:
                w.writerows(rows)
                n += len(rows)

    if target == "-":
        write(sys.stdout)
        return
    from tlop.runtime.atomic import open_text_atomic

    try:  # all or nothing: a failure leaves the previous file as it was
        with open_text_atomic(target) as f:
            write(f)
    except OSError as err:
        raise TlopError(f"{printable(target)}: cannot write the CSV: {err.strerror or err}") from None
    print(f"wrote {n} rows to {printable(target)}")


def _add_pager_option(p) -> None:
    p.add_argument("--no-pager", dest="pager", action="store_false",
                   help="never page a table taller than the terminal (pipes and files are never paged)")


def _paged(args, lines: int):
    """Standard output through the pager for a table of ``lines`` lines (:mod:`tlop.cli.pager`)."""
    from tlop.cli.pager import paged

    return paged(lines, getattr(args, "pager", True))


def _print_table_chunks(header, chunks, preamble=None) -> None:
    """Print an aligned table whose rows come from ``chunks()`` (a fresh iterator of lists of
    rows at each call).  A table of one chunk is kept and printed; a longer one is produced
    twice — once to measure the columns, once to print — so memory holds one chunk."""
    it = chunks()
    first = next(it, [])
    second = next(it, None)
    if second is None:
        if preamble:
            preamble()
        _print_table(header, first)
        return
    widths = [len(str(h)) for h in header]
    nrows = 0
    for rows in itertools.chain([first, second], it):
        nrows += len(rows)
        for r in rows:
            for i, c in enumerate(r):
                if len(c) > widths[i]:
                    widths[i] = len(c)
    if preamble:
        preamble()
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    kept = [] if _markdown_tables is not None else None
    for rows in chunks():
        sys.stdout.write("".join("  ".join(str(c).rjust(w) for c, w in zip(r, widths)) + "\n" for r in rows))
        if kept is not None:
            kept.extend(rows)
    if kept is not None:
        _markdown_tables.append((list(header), kept))
    if nrows > LONG_TABLE:
        print(f"tlop: note: {nrows} rows; --csv OUT writes the grid as CSV (--csv - to standard output)",
              file=sys.stderr)


_csv_number = fmt.csv_number


def _print_table(header, rows) -> None:
    """An aligned table on stdout (:func:`tlop.cli.table.print_table`), kept for
    ``--export-markdown`` when that is asked for."""
    print_table(header, rows)
    if _markdown_tables is not None:
        _markdown_tables.append((list(header), [list(r) for r in rows]))


#: the tables printed while ``--export-markdown`` collects them (None: not collecting)
_markdown_tables = None


def _add_markdown_option(p) -> None:
    p.add_argument("--export-markdown", metavar="FILE",
                   help="also write the printed table as a GitHub Markdown table into FILE (as hyperfine does)")


class _markdown_export:
    """``with _markdown_export(args):`` — the tables printed inside are also written, as Markdown,
    to ``args.export_markdown`` (nothing when the option is not given)."""

    def __init__(self, args):
        self.target = getattr(args, "export_markdown", None)

    def __enter__(self):
        global _markdown_tables
        if self.target:
            _markdown_tables = []
        return self

    def __exit__(self, kind, value, tb):
        global _markdown_tables
        tables, _markdown_tables = _markdown_tables, None
        if not self.target or kind is not None:
            return False
        from tlop.cli.table import markdown_table
        from tlop.runtime.atomic import open_text_atomic

        try:
            with open_text_atomic(self.target) as f:
                f.write("\n".join(markdown_table(h, r) for h, r in tables or []))
        except OSError as err:
            raise TlopError(f"{printable(self.target)}: cannot write the Markdown table: {err.strerror or err}") \
                from None
        print(f"wrote {printable(self.target)}", file=sys.stderr)
        return False


def _add_profile_options(p):
    p.add_argument("--profile", help="bundled profile name or path to a profile JSON (default: metropolis)")
    p.add_argument("--model", choices=("taulop", "loggp", "plogp"),
                   help="the model a model-neutral module (coll/…) is priced in (default: the profile's first: "
                        "taulop when it has tau-Lop tables)")
    p.add_argument("--bind", action="append", metavar="CH=PCH",
                   help="bind a model channel to a profile channel, e.g. --bind net=tcp")
    p.add_argument("--out-of-grid", choices=("allow", "warn", "error"),
                   help="what a table lookup outside the measured grid does")
    p.add_argument("--reduce-op", metavar="OP",
                   help="the reduction operation whose cost the table gamma holds, e.g. max "
                        "(the profile's gamma_OP table; default: as stored, libtaulop's SUM)")
    p.add_argument("--libtaulop-compat", action="store_true",
                   help="read the tables as libtaulop does: tau beyond the largest column clamps, sizes "
                        "past the grid are charged in whole largest-size chunks, numbers rounded to float32")
    p.add_argument("--engine", choices=("auto", "jit", "interp"), default="auto",
                   help="evaluation engine (default: the cheaper by the predicted cost of the evaluation "
                        "against compiling it)")
    p.add_argument("--mapping", metavar="MAPPING",
                   help="process mapping for algorithms over one: sequential(Q), round_robin(Q), "
                        "sequential(nodes=M), round_robin(nodes=M), or a layout file (.json, .csv)")
    _add_config_options(p)


def _add_config_options(p) -> None:
    """``--config``, ``--layout``, ``--partition``: a heterogeneous configuration (docs/configurations)."""
    p.add_argument("--config", metavar="NAME",
                   help="a configuration (layout and partitions): a bundled one (fig8, fig9, M1 … M16; "
                        "tlop configs lists them) or a configuration file")
    p.add_argument("--layout", metavar="FILE", help="a layout file: rank -> node, node type, kind, cores")
    p.add_argument("--partition", metavar="FILE|NAME",
                   help="a partition file (each rank's rectangle of blocks), or with --config the name of "
                        "one of its partitions")


def _positive_count(text: str) -> int:
    try:
        n = int(float(text)) if text.strip().lower() not in ("inf", "nan") else 0
    except (ValueError, OverflowError):
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of points, not '{printable(text)}'")
    return n


def _add_max_points(p) -> None:
    p.add_argument("--max-points", type=_positive_count, metavar="N",
                   help="evaluate grids of up to N points (default 10,000,000); any grid is evaluated and "
                        "written in chunks, in bounded memory")


def _print_error(err: TlopError) -> None:
    """A diagnostic on stderr, in colour on a terminal (not with NO_COLOR)."""
    from tlop.cli.colour import print_error

    print_error(err)
