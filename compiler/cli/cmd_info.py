"""Reference commands: ``tlop configs`` (the bundled configurations), ``tlop explain-code CODE``
and ``tlop help [CODE|COMMAND]`` (what a diagnostic code means, as ``rustc --explain`` and
``ruff rule`` do).

What it does: lists and describes what is bundled, and explains the stable diagnostic codes of
:mod:`tlop.runtime.codes` with the cause and the usual fix.
What it does not do: evaluate anything, or change a code's meaning (the table in
``tlop.runtime.codes`` and docs/cli.rst is the reference; this adds the longer explanation).
"""

from __future__ import annotations

import re

from tlop.runtime.diagnostics import TlopError
from tlop.cli.jsonout import emit as _emit_json

#: code -> (cause, what to do, an example command or line that raises it)
EXPLANATIONS = {
    "E001": ("The source does not follow the grammar: a missing parenthesis, an operator without an "
             "operand, a stray token.  The caret points at the first token the parser could not use; for "
             "an unclosed parenthesis, at the parenthesis.",
             "Close the bracket or remove the token; `tlop check FILE` reports every syntax error at once.",
             "algorithm a(P: int) = (P + 1"),
    "E002": ("A reserved word (stage, send, par, over, where, …) is used as the name of a parameter, "
             "table or algorithm.", "Rename it.", "algorithm stage(P: int) = P"),
    "E003": ("A name is not defined where it is used: a parameter, table, channel, function or algorithm "
             "(in a source file, on the command line, or in the Python API).  The message suggests the "
             "nearest names ('did you mean').",
             "Fix the spelling; `tlop show FILE` lists a file's algorithms and their parameters.",
             "tlop eval taulop/bcast binomal P=16 m=1KiB"),
    "E004": ("An unknown type or unit.  Sizes: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB; times: s, ms, us, µs, "
             "ns.", "Use one of these units (1MiB, 2.5us).", "algorithm a(P: int) = 3 * 5furlongs"),
    "E005": ("Type or dimension mismatch: adding a time to a size, a cost that is not a time, an "
             "int parameter given a fraction.", "Check the units of both sides (a rate is time/bytes).",
             "algorithm a(m: bytes) = m + 1us"),
    "E006": ("The same name is defined twice in one scope.", "Rename or remove one definition.",
             "algorithm a(P: int) = P  (twice in one file)"),
    "E007": ("A file, stdlib module or import cannot be found, or imports form a cycle.  The message "
             "suggests the nearest stdlib module.",
             "`tlop check` lists the stdlib modules by family; give a path or a module such as taulop/bcast.",
             "tlop eval taulop/bcat binomial_bcast P=16 m=1KiB"),
    "E008": ("A definition refers to itself (directly or through others).", "Break the cycle.",
             "def f(P) = f(P)"),
    "E009": ("A call has wrong arguments: missing, extra or of the wrong kind (also an algorithm "
             "evaluated without one of its parameters).", "Give every parameter without a default "
             "(the message names the missing one and its type).", "tlop eval taulop/bcast binomial_bcast m=1KiB"),
    "E010": ("An argument violates a parameter's constraint (P: int >= 2) or the algorithm's where "
             "condition.  `tlop best` and `tlop sweep` leave such points out and say how many.",
             "Choose values inside the constraint.", "tlop eval taulop/allgather ring_allgather_seq P=1 m=1KiB Q=1"),
    "E011": ("A constant is required (a table index, a range bound known before evaluation).",
             "Use a number or a constant expression.", ""),
    "E020": ("A platform profile cannot be used: a missing table, a malformed file, a channel the model "
             "needs but the profile does not bind.",
             "`tlop profiles NAME` shows a profile's tables and channels; --bind net=tcp binds a channel.",
             "tlop eval taulop/bcast binomial_bcast P=16 m=1KiB --profile nowhere.json"),
    "E021": ("A process mapping or layout is malformed or does not fit P: --mapping sequential without the "
             "ranks per node, a layout of 32 ranks evaluated at P=16, a host file line that is not "
             "HOST, HOST:SLOTS or HOST slots=N.",
             "Give sequential(Q), round_robin(Q), sequential(nodes=M), NODESxRANKS (4x8), a layout file "
             "(.json, .csv) or an MPI host file; omit P to take it from a layout.",
             "tlop eval taulop/allgather ring P=8 m=1KiB --mapping sequential"),
    "E022": ("A schedule is malformed: a send outside a stage, a rank outside 0 … P−1, a model without "
             "a meaning for schedules.", "See docs/language.rst (Schedules) and docs/semantics.rst (Schedules).", ""),
    "E023": ("A process configuration (--config, --layout, --partition) is malformed or does not fit "
             "the algorithm: a missing table or field, partitions that do not tile the matrix.",
             "`tlop configs` lists the bundled configurations; `tlop configs NAME` shows one.",
             "tlop eval kernels/summa summa --config M99"),
    "E024": ("A per-rank parameter (counts: bytes[P]) or its argument is malformed: the wrong number "
             "of values.", "Give P values (counts=1KiB,2KiB,…) or one value for all ranks.", ""),
    "E030": ("A bad value on the command line or in the Python API: NAME=VALUE that does not parse, a "
             "range that is empty or not finite, an option value out of range.",
             "Values: 16, 1MiB, 2.5us, shm; ranges: 2..256:x2 (geometric), 0..100:+10 (arithmetic), 1,2,4.",
             "tlop sweep taulop/bcast binomial_bcast P=2..64:x1 m=1KiB"),
    "E040": ("Evaluation produced no finite number (an infinity or NaN): a division by zero, a table "
             "lookup outside its grid with extrapolation switched off.",
             "The message names the sub-expression; check the arguments and the profile's grid.", ""),
    "E041": ("A value outside its domain during evaluation: a negative size, a concurrency that is not "
             "positive, a rank outside 0 … P−1, an empty range.", "Check the arguments at that point.", ""),
    "E031": ("tlop tune, audit or tune-check cannot use what it was given: an argument that is not a range, "
             "a library default outside tlop's catalogue, a tuning file that cannot be read, or an MPI run "
             "whose trace is missing.", "See docs/decisions.rst; tlop catalogue lists the algorithms tlop knows.",
             "tlop tune taulop/bcast P=4 m=1KiB --collective bcast --mapping sequential(4)"),
    "E042": ("A size limit was reached: terms of a sum, points of a grid (--max-points), the expansion "
             "of a definition, nesting depth.", "Evaluate a smaller grid, or raise --max-points.",
             "tlop sweep taulop/bcast binomial_bcast P=1..100000000 m=1KiB"),
    "E050": ("An optional dependency is missing: mpi4py (tlop measure, validate), matplotlib (--plot), "
             "llvmlite (the JIT).", "pip install 'tlop[mpi]', 'tlop[plot]'.", ""),
    "E060": ("A file cannot be read or written (permission, full disk, a directory).",
             "Check the path and its permissions.", ""),
    "E070": ("tlop measure: the MPI job failed, its samples file is unreadable, or another run writes the "
             "same output.", "See docs/measuring.rst; rerun with --verbose.", ""),
    "E080": ("A claim or assumption of tlop prove is malformed, untyped, or cannot be encoded for Z3.",
             "See docs/rules.rst for the claims tlop prove accepts.", ""),
    "E090": ("An internal error of tlop: a bug.", "Please report it with the command that raised it.", ""),
    "E099": ("Any other error.", "The message says what went wrong.", ""),
}


def add_configs_arguments(p) -> None:
    p.add_argument("name", nargs="?", metavar="NAME", help="a bundled configuration (fig8, M10, …) or a "
                                                           "configuration file: its nodes, ranks and partitions")
    p.add_argument("--json", action="store_true", help="print JSON")


def _summary(cfg) -> dict:
    per_node = {}
    for n in cfg.node:
        per_node[n] = per_node.get(n, 0) + 1
    return {"name": cfg.name or cfg.source, "P": cfg.P, "nodes": len(per_node),
            "ranks_per_node": sorted(set(per_node.values())),
            "gpus": sum(cfg.gpu()), "partitions": [n for n, _ in cfg.partitions],
            "description": cfg.description}


def cmd_configs(args) -> int:
    """``tlop configs``: the bundled configurations, one line each; ``tlop configs NAME``: one."""
    from tlop.runtime.configs import bundled_configs, load_config

    if args.name:
        cfg = load_config(args.name)
        info = _summary(cfg)
        info["ranks"] = [{"rank": r, "node": (cfg.node_names[n] if cfg.node_names else n),
                          "kind": (cfg.kinds[r] if cfg.kinds else "cpu")} for r, n in enumerate(cfg.node)]
        info["partitions"] = [{"name": n, "kernel": p.kernel, "N": p.N} for n, p in cfg.partitions]
        if args.json:
            _emit_json(info)
            return 0
        print(f"{info['name']}: {cfg.P} ranks on {info['nodes']} nodes, {info['gpus']} on GPUs")
        if cfg.description:
            import textwrap

            print(textwrap.fill(cfg.description, 88, initial_indent="  ", subsequent_indent="  "))
        for node in range(max(cfg.node) + 1):
            ranks = [r for r, n in enumerate(cfg.node) if n == node]
            label = cfg.node_names[node] if cfg.node_names else str(node)
            kinds = [cfg.kinds[r] if cfg.kinds else "cpu" for r in ranks]
            print(f"  {label if cfg.node_names else 'node ' + label}: ranks {_ranges(ranks)}" + (f" ({', '.join(sorted(set(kinds)))})"))
        for p in info["partitions"]:
            print(f"  partition {p['name']}: {p['kernel'] or 'any kernel'}, N={p['N']}")
        print(f"use it: --config {args.name}")
        return 0
    rows = [_summary(load_config(name)) for name in bundled_configs()]
    if args.json:
        _emit_json({"configs": rows})
        return 0
    from tlop.cli.table import print_table

    print_table(["name", "P", "nodes", "GPUs", "partitions"],
                [[r["name"], str(r["P"]), str(r["nodes"]), str(r["gpus"]), ", ".join(r["partitions"]) or "-"]
                 for r in sorted(rows, key=lambda r: _natural(r["name"]))])
    print("tlop configs NAME shows one; use it with --config NAME (eval, sweep, best, explain)")
    return 0


def _natural(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _ranges(ranks: list) -> str:
    """``0–3, 8`` for ranks 0, 1, 2, 3, 8."""
    out, start = [], None
    for i, r in enumerate(ranks):
        if start is None:
            start = r
        if i + 1 == len(ranks) or ranks[i + 1] != r + 1:
            out.append(str(start) if start == r else f"{start}–{r}")
            start = None
    return ", ".join(out)


def add_explain_code_arguments(p) -> None:
    p.add_argument("code", metavar="CODE", help="a diagnostic code such as E021 (e021 and 21 are accepted)")


def explain_code_text(code: str) -> str:
    """The explanation of a diagnostic code; TlopError (E030) for an unknown one."""
    from tlop.runtime.codes import CODES
    from tlop.runtime.diagnostics import Diagnostic
    from tlop.runtime.suggest import hint

    titles = {c: t for c, t, _ in CODES}
    text = code.strip().upper()
    if re.fullmatch(r"E?\d{1,3}", text):
        text = f"E{int(text.lstrip('E')):03d}"
    if text not in titles:
        raise TlopError(Diagnostic(f"give a diagnostic code: '{code}' is none{hint(text, titles) or ';'} codes: "
                                   f"{', '.join(sorted(titles))}", code="E030"))
    import textwrap

    cause, fix, example = EXPLANATIONS.get(text, ("", "", ""))
    out = [f"{text}: {titles[text]}", ""]
    if cause:
        out += [textwrap.fill(cause, 88), "", textwrap.fill(f"What to do: {fix}", 88)]
    if example:
        out += ["", f"Example:  {example}"]
    return "\n".join(out) + "\n"


def cmd_explain_code(args) -> int:
    print(explain_code_text(args.code), end="")
    return 0


def add_help_arguments(p) -> None:
    p.add_argument("topic", nargs="?", metavar="CODE|COMMAND",
                   help="a diagnostic code (E021) or a command (sweep); none: the list of commands")


def cmd_help(args) -> int:
    """``tlop help E021`` explains a code; ``tlop help sweep`` is ``tlop sweep --help``."""
    from tlop.cli.main import COMMANDS, build_parser

    topic = args.topic
    if topic is None:
        build_parser().print_help()
        return 0
    if re.fullmatch(r"[eE]?\d{1,3}", topic.strip()):
        print(explain_code_text(topic), end="")
        return 0
    if topic in COMMANDS:
        parser = build_parser(topic)
        try:
            parser.parse_args([topic, "--help"])
        except SystemExit:
            pass
        return 0
    from tlop.runtime.diagnostics import Diagnostic
    from tlop.runtime.suggest import hint

    raise TlopError(Diagnostic(f"give a command or a diagnostic code: '{topic}' is neither"
                               f"{hint(topic, COMMANDS) or ';'} "
                    f"commands: {', '.join(COMMANDS)}", code="E030"))
