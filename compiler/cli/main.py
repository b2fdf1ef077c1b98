"""The ``tlop`` command.

``main(argv=None)`` parses arguments, runs one subcommand, prints to stdout, and returns the exit
status: 0 on success, 1 for a user error (printed as a diagnostic on stderr, never a traceback),
2 for bad command-line usage (or a missing optional dependency), 130 when interrupted.

Start-up: nothing heavy is imported at module level (numpy, the front end, the JIT, Z3 and
the rules and measure CLIs are imported by the subcommands that use them), and only the
chosen subcommand's argument parser is built.

Layout: this module builds the parser and dispatches; each subcommand lives in a module of its
own (``cmd_check``, ``cmd_show``, ``cmd_eval``, ``cmd_sweep``, ``cmd_best``, ``cmd_small``, and the
package commands ``rules``, ``tune``, ``validate``, …); helpers they share are in ``common``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Sequence

from tlop.runtime.diagnostics import TlopError
from tlop.frontend.limits import deep
from tlop.cli import format as fmt
from tlop.cli.jsonout import emit as _emit_json
from tlop.cli.common import _add_markdown_option, _add_max_points, _add_pager_option, _add_profile_options, _load, \
    _print_error
from tlop.cli.cmd_check import cmd_check
from tlop.cli.cmd_show import cmd_show
from tlop.cli.cmd_eval import cmd_eval
from tlop.cli.cmd_sweep import cmd_sweep
from tlop.cli.cmd_best import cmd_best
from tlop.cli.cmd_small import cmd_completion, cmd_demo, cmd_new, cmd_profiles

__all__ = ["main"]


#: subcommands whose arguments and runners live with their packages: name -> help
PACKAGE_COMMANDS = {
    "rules": "list the rewrite rules; --verify proves them with Z3",
    "explain": "print the derivation of an algorithm's simplified cost",
    "prove": "prove or refute an inequality under the model axioms",
    "measure": "measure a platform profile with MPI benchmarks",
    "grid-bcast": "grid-aware broadcast (paper 001): clustering, schedules, Monte-Carlo",
    "tune": "pick the cheapest library algorithm per (P, m) and write Open MPI / MPICH selection files",
    "validate": "run schedules for real with MPI and compare with their predictions (µ per cell, report)",
    "catalogue": "list the MPI libraries' algorithms (Open MPI coll/tuned, MPICH) and their stdlib schedules",
    "audit": "price the MPI libraries' default decisions against their best algorithm per (P, m)",
    "tune-check": "run the MPI library's collective with its default and with a tuning file: times, ratio, "
                  "and which algorithm ran",
}

#: package commands whose module has ``add_arguments(parser)`` and ``run(args)``
_MODULE_COMMANDS = {"tune": "tlop.cli.tune", "validate": "tlop.cli.validate", "catalogue": "tlop.cli.catalogue_cmd",
                    "audit": "tlop.cli.audit", "tune-check": "tlop.cli.tune_check"}


MPI_HINT = ("tlop measure needs mpi4py, which is not installed; install it with "
            "pip install 'tlop[mpi]' (or 'tlop[mpich]' to get an MPI library as well)")


#: every subcommand, in the order of ``tlop --help``
COMMANDS = ("check", "show", "eval", "sweep", "best", "profiles", "configs", "new", "completion", "demo",
            "convert-taulop", "partition") + tuple(PACKAGE_COMMANDS) + ("explain-code", "help")


def build_parser(chosen=None) -> argparse.ArgumentParser:
    """The argument parser; with ``chosen`` (a name of :data:`COMMANDS`) only that
    subcommand's parser is built (start-up: the others may import heavy modules)."""
    ap = argparse.ArgumentParser(prog="tlop", description="Compile and evaluate communication-cost models.")
    ap.add_argument("--version", action=_VersionAction)
    ap.add_argument("--color", "--colour", dest="color", choices=("auto", "always", "never"), default="auto",
                    help="colour diagnostics: auto (a terminal without NO_COLOR; the default), always, never")
    sub = _Subcommands(ap.add_subparsers(dest="command", metavar="COMMAND"), chosen)

    p = sub.add_parser("check", help="parse and check .tlop files (every .tlop file under a directory)")
    p.add_argument("files", nargs="+", metavar="FILE|DIR")
    p.add_argument("--json", action="store_true",
                   help="print the files and their diagnostics (file, line, column, end, severity, code, "
                        "message) as JSON")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("show", help="print an algorithm's cost expression in the papers' notation")
    p.add_argument("file", metavar="FILE")
    p.add_argument("algorithm", nargs="?", metavar="ALG")
    p.add_argument("--latex", action="store_true", help="print LaTeX")
    p.add_argument("--source", action="store_true", help="print the file's text (e.g. of a stdlib module)")
    p.add_argument("--path", action="store_true", help="print where the file is (e.g. a stdlib module's path)")
    p.add_argument("--json", action="store_true", help="print each algorithm's signature, cost (text and LaTeX) "
                                                       "and notes as JSON")
    p.add_argument("--raw", action="store_true", help="print the expression as written, not simplified")
    p.add_argument("--verify", action="store_true",
                   help="prove the simplified expression equal to the original with Z3 (translation validation)")
    p.add_argument("--no", action="append", default=[], choices=("linearity", "A1", "A2", "A3"),
                   help="do not simplify with this model assumption (repeatable), e.g. --no A1")
    p.add_argument("--profile", help="also check that the simplified and the original cost agree on this "
                                     "profile's tables (its message sizes and τ values); bundled name or path")
    p.add_argument("--bind", action="append", metavar="CH=PCH",
                   help="with --profile: bind a model channel to a profile channel, e.g. --bind net=tcp")
    p.add_argument("--mapping", metavar="MAPPING",
                   help="for algorithms over a process mapping: print the schedule's closed form for "
                        "'sequential' or 'round_robin' (Q ranks per node, symbolic) or a concrete mapping "
                        "such as sequential(8); with --profile, also its transfer-level form and its agreement "
                        "with enumeration (concrete mapping)")
    p.set_defaults(run=cmd_show)

    p = sub.add_parser("eval", help="evaluate an algorithm at one point")
    p.add_argument("file", metavar="FILE")
    p.add_argument("algorithm", metavar="ALG")
    p.add_argument("assignments", nargs="*", metavar="NAME=VALUE")
    p.add_argument("--json", action="store_true", help="print JSON (full-precision seconds)")
    fmt.add_unit_option(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_eval)

    p = sub.add_parser("sweep", help="evaluate an algorithm over a grid of points")
    p.add_argument("file", metavar="FILE")
    p.add_argument("algorithm", metavar="ALG")
    p.add_argument("assignments", nargs="*", metavar="NAME=RANGE",
                   help="e.g. P=2..256:x2 m=1KiB..4MiB:x4 Q=8 or c=shm,net")
    p.add_argument("--csv", metavar="OUT", help="write the grid as CSV ('-' for stdout)")
    _add_max_points(p)
    p.add_argument("--json", action="store_true", help="print the grid as JSON (full-precision seconds)")
    p.add_argument("--plot", metavar="FILE", help="also draw the cost over one or two swept parameters into FILE "
                                                  "(.svg, .png or .pdf; needs matplotlib)")
    p.add_argument("--invalid", choices=("skip", "error"), default="skip",
                   help="points where the algorithm's constraints or where condition fail: skip them (shown as -, "
                        "counted in a note; the default, as tlop best does) or stop with the error")
    _add_markdown_option(p)
    p.add_argument("--distributed", action="store_true",
                   help="evaluate the grid on the workers of an MPI job: mpiexec -n N python -m mpi4py.futures "
                        "-m tlop.cli sweep … --distributed (same output as a serial sweep)")
    fmt.add_unit_option(p)
    _add_pager_option(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_sweep)

    p = sub.add_parser("best", help="which algorithm of one or more files is cheapest at each point of a grid")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("positional", nargs="*", metavar="NAME=RANGE", help="e.g. P=2..256:x2 m=1KiB..4MiB:x4 s=8KiB")
    p.add_argument("--only", dest="algorithms", action="append", metavar="ALG",
                   help="compare this algorithm (repeatable; it may come from an import); default: the algorithms "
                        "each FILE declares (all algorithms in its scope when it declares none)")
    p.add_argument("--csv", metavar="OUT", help="write every algorithm's cost per point as CSV ('-' for stdout)")
    _add_max_points(p)
    p.add_argument("--json", action="store_true",
                   help="print every algorithm's cost per point, and why each excluded one is excluded, as JSON")
    p.add_argument("--crossover", metavar="AXIS",
                   help="for each value of the other parameters, from which value of AXIS each algorithm "
                        "becomes the cheapest (e.g. the message count n from which 3-step beats GPUDirect)")
    p.add_argument("--plot", metavar="FILE", help="also draw a selection map (which algorithm is cheapest where, "
                                                  "over one or two swept parameters) into FILE (.svg, .png or .pdf); "
                                                  "with --crossover, the crossover value against the other swept "
                                                  "parameter")
    _add_markdown_option(p)
    fmt.add_unit_option(p)
    _add_pager_option(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_best)

    p = sub.add_parser("profiles", help="list the bundled platform profiles; with NAME, show one in detail")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="a bundled profile name or a profile JSON: its channels, tables with their grids, scalars, "
                        "model families and provenance")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=cmd_profiles)

    p = sub.add_parser("configs", help="list the bundled process configurations (--config NAME); with NAME, "
                                       "show one")
    if not isinstance(p, _Skipped):
        from tlop.cli import cmd_info

        cmd_info.add_configs_arguments(p)
        p.set_defaults(run=cmd_info.cmd_configs)

    p = sub.add_parser("new", help="write a starter .tlop file")
    p.add_argument("name", metavar="NAME", help="the file to write: NAME.tlop (never overwritten)")
    p.set_defaults(run=cmd_new)

    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)")
    p.add_argument("shell", choices=("bash", "zsh", "fish"))
    p.set_defaults(run=cmd_completion)

    p = sub.add_parser("demo", help="price several stdlib algorithms on the default profile")
    p.add_argument("-P", nargs="+", default=["2", "8", "32"], help="process counts (default: 2 8 32)")
    fmt.add_unit_option(p)
    _add_profile_options(p)
    p.set_defaults(run=cmd_demo)

    p = sub.add_parser("convert-taulop", help="convert libtaulop parameter files into a profile")
    if not isinstance(p, _Skipped):
        from tlop.runtime import convert_taulop

        convert_taulop.add_arguments(p)
        p.set_defaults(run=convert_taulop.run)

    p = sub.add_parser("partition", help="show, generate or draw a configuration's data partition")
    if not isinstance(p, _Skipped):
        from tlop.cli import partition_cmd

        partition_cmd.add_arguments(p)
        p.set_defaults(run=partition_cmd.run)

    _add_package_commands(sub)

    p = sub.add_parser("explain-code", help="explain a diagnostic code, e.g. tlop explain-code E021")
    if not isinstance(p, _Skipped):
        from tlop.cli import cmd_info

        cmd_info.add_explain_code_arguments(p)
        p.set_defaults(run=cmd_info.cmd_explain_code)

    p = sub.add_parser("help", help="explain a diagnostic code (tlop help E021) or show a command's help")
    if not isinstance(p, _Skipped):
        from tlop.cli import cmd_info

        cmd_info.add_help_arguments(p)
        p.set_defaults(run=cmd_info.cmd_help)
    return ap


def _add_package_commands(sub):
    """The package subcommands (their modules are imported only when the parser is built for
    them, see :class:`_Subcommands`)."""
    for name, help_ in PACKAGE_COMMANDS.items():
        p = sub.add_parser(name, help=help_)
        if isinstance(p, _Skipped):
            continue
        if name in _MODULE_COMMANDS:
            import importlib

            mod = importlib.import_module(_MODULE_COMMANDS[name])
            mod.add_arguments(p)
            p.set_defaults(run=mod.run)
            continue
        if name == "measure":
            from tlop.runtime.measure import cli as measure_cli

            measure_cli.add_arguments(p)
            p.set_defaults(run=_run_measure)
            continue
        if name == "grid-bcast":
            from tlop.cli import gridbcast

            gridbcast.add_arguments(p)
            p.set_defaults(run=gridbcast.run)
            continue
        from tlop.cli import rules as rules_cli

        if name == "rules":
            rules_cli.add_rules_arguments(p)
            p.set_defaults(run=rules_cli.run_rules)
        elif name == "explain":
            rules_cli.add_explain_arguments(p)
            p.set_defaults(run=lambda a: rules_cli.run_explain(a, lambda name: _load(name, a)))
        else:
            rules_cli.add_prove_arguments(p)
            p.set_defaults(run=lambda a: rules_cli.run_prove(a, _load))


class _Skipped:
    """Stands for the parser of a subcommand that was not chosen: accepts and ignores every
    call made to define it."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


class _Subcommands:
    """``add_subparsers()`` that builds only the chosen subcommand's parser (all of them when
    ``chosen`` is None: ``tlop --help``, or a command line naming no known command, so that
    argparse lists the choices)."""

    def __init__(self, sub, chosen):
        self.sub, self.chosen = sub, chosen

    def add_parser(self, name, **kwargs):
        if self.chosen is not None and name != self.chosen:
            return _Skipped()
        from tlop.cli.helptext import decorate

        if name not in INTERMIXED:
            return _with_colour_option(self.sub.add_parser(name, **decorate(name, kwargs)))
        saved, self.sub._parser_class = self.sub._parser_class, _IntermixedParser  # noqa: SLF001
        try:
            return _with_colour_option(self.sub.add_parser(name, **decorate(name, kwargs)))
        finally:
            self.sub._parser_class = saved  # noqa: SLF001


def _with_colour_option(p):
    """``--color`` after the command too (``tlop check f.tlop --color=never``); SUPPRESS keeps a
    value given before the command."""
    p.add_argument("--color", "--colour", dest="color", choices=("auto", "always", "never"),
                   default=argparse.SUPPRESS, help="colour diagnostics: auto (the default), always, never")
    return p


#: subcommands whose options may sit between the algorithm and its NAME=VALUE arguments
INTERMIXED = ("eval", "sweep", "best", "explain")


class _IntermixedParser(argparse.ArgumentParser):
    """A subcommand's parser whose options and positionals may be intermixed
    (``tlop eval FILE ALG --profile lusitania P=16 m=1KiB``): argparse's
    ``parse_known_intermixed_args`` for the subcommand (the top-level parser, which has
    subparsers, cannot use it)."""

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:  # the two passes of parse_known_intermixed_args
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def _run_measure(args) -> int:
    """``tlop measure``, or one line saying how to install mpi4py (exit status 2)."""
    try:
        import mpi4py  # noqa: F401  (the optional dependency: the 'mpi' extra)
    except ImportError:
        _print_error(TlopError(MPI_HINT))
        return 2
    from tlop.runtime.measure import cli as measure_cli

    return measure_cli.run(args)


class _VersionAction(argparse.Action):
    """``--version``: tlop's version and the parser that reads sources."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show the version and the parser in use, and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from tlop.frontend.parse import PARSER

        print(f"tlop {_version()}\n{PARSER}")
        parser.exit()


def _version() -> str:
    from tlop import __version__

    return __version__


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings (e.g. a table lookup outside the measured grid) as one line, no source dump
    (in colour on a terminal)."""
    from tlop.cli.colour import colour_diagnostics, wants_colour

    text = f"tlop: warning: {message}"
    print(colour_diagnostics(text) if wants_colour(sys.stderr) else text, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the program itself (not a caller's main([...])): it exits after the command
        from tlop.frontend.limits import keep_loaded_objects

        keep_loaded_objects()
    argv = list(sys.argv[1:] if argv is None else argv)
    # the command: the first word that is not an option (nor the value of a top-level --color)
    first = next((a for i, a in enumerate(argv) if not a.startswith("-")
                  and not (i and argv[i - 1] in ("--color", "--colour"))), None)
    parser = build_parser(first if first in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits on usage errors and --help
        return int(e.code or 0)
    from tlop.cli.colour import set_mode

    set_mode(getattr(args, "color", "auto"))
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        with deep(), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.run(args) or 0)
    except TlopError as e:
        if getattr(args, "json", False):  # machine-readable failure: the diagnostics, on stdout
            from tlop.cli.jsonout import diagnostics_json

            _emit_json({"ok": False, "diagnostics": diagnostics_json(e)})
        else:
            _print_error(e)
        return 1
    except KeyboardInterrupt:
        print("tlop: interrupted", file=sys.stderr)
        return 130
    except MemoryError:  # the input (or its evaluation) is larger than the memory tlop may use
        import gc

        gc.collect()
        from tlop.runtime.diagnostics import Diagnostic

        _print_error(TlopError(Diagnostic(
            f"out of memory running 'tlop {first}': the input or its evaluation is larger than the memory "
            f"this process may use (split the file, evaluate fewer points, or raise the limit)", code="E042")))
        return 1
    except BrokenPipeError:  # the reader of our output went away (tlop ... | head)
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (so the exit flush does not complain)
        except OSError:
            pass
        return 0
    except OSError as e:  # a file the user named cannot be read or written
        from tlop.runtime.diagnostics import Diagnostic

        where = f": {e.filename}" if getattr(e, "filename", None) else ""
        _print_error(TlopError(Diagnostic(f"{e.strerror or e}{where}", code="E060")))
        return 1


if __name__ == "__main__":
    sys.exit(main())
