"""CLI glue for ``tlop rules``, ``tlop explain`` and ``tlop prove`` (wired by :mod:`tlop.cli`).

What it does: argument definitions and runners that print to stdout and return an exit status;
user errors raise :class:`~tlop.runtime.diagnostics.TlopError`.  Claims and ``--assume`` conditions are
``.tlop`` expressions read by the front end (:mod:`tlop.claims`).

What it does not do: parse ``.tlop`` files (the ``load`` callable does).
"""

from __future__ import annotations

import time

from tlop import ir
from tlop.frontend.claims import parse_claim, parse_condition
from tlop.runtime.diagnostics import TlopError
from tlop.cli.format import number_json
from tlop.analysis.rules.catalogue import RULES, MODEL_FAMILIES, assumptions_text, table_assumptions

__all__ = ["add_rules_arguments", "run_rules", "add_explain_arguments", "run_explain",
           "add_prove_arguments", "run_prove"]


# ----------------------------------------------------------------------------- tlop rules

def add_rules_arguments(p):
    p.add_argument("--verify", action="store_true", help="prove every rule with Z3 and print its time")
    p.add_argument("--family", action="append", default=None, help="only rules of this family (repeatable)")
    p.add_argument("--conditions", action="store_true",
                   help="with --verify: also check that every side condition is needed")
    p.add_argument("--json", action="store_true", help="print the rules (and with --verify their proofs) as JSON")


def _rule_text(r) -> str:
    from tlop.backends.notation import format_text
    if r.rhs is None:
        return r.doc
    lhs = format_text(r.lhs).replace("?", "")
    rhs = format_text(r.rhs).replace("?", "")
    s = f"{lhs} → {rhs}"
    if r.conditions:
        s += "  if " + ", ".join(format_text(c).replace("?", "") for c in r.conditions)
    return s


def run_rules(args) -> int:
    from tlop.analysis.prove import verify_rule, condition_needed
    rules = [r for r in RULES if not args.family or r.family in args.family]
    if args.family and not rules:
        fams = ", ".join(dict.fromkeys(r.family for r in RULES))
        raise TlopError(f"no rules in family {', '.join(args.family)}; families: {fams}")
    if getattr(args, "json", False):
        return _rules_json(rules, args)
    if not args.verify:
        for r in rules:
            kind = "model " + "+".join(r.axioms) if r.kind == "model" else "identity"
            print(f"{r.name:16} {r.family:9} {kind:14} {_rule_text(r)}")
        print(f"{len(rules)} rules")
        return 0
    failed = 0
    t0 = time.perf_counter()
    for r in rules:
        o = verify_rule(r)
        how = {"induction": " (induction: " + ", ".join(f"{n} {s}" for n, s in o.obligations) + ")",
               "instances": f" ({len(o.obligations)} instances)"}.get(o.mode, "")
        print(f"{o.status:8} {o.seconds * 1000:8.1f} ms  {r.name}{how}")
        undeclared = [a for a in table_assumptions(o.assumptions) if a not in r.axioms]
        if o.ok and undeclared:
            failed += 1
            print(f"         the proof needs {', '.join(undeclared)}, which the rule does not declare")
        if not o.ok:
            failed += 1
            if o.status == "unknown":
                print("         Z3 returned unknown: counted as a failure")
            if o.counterexample is not None:
                print("         " + o.counterexample.render().replace("\n", "\n         "))
        if args.conditions and o.ok:
            for i, c in enumerate(r.conditions):
                if i in r.keep_reason:
                    print(f"         condition {i + 1} kept: {r.keep_reason[i]}")
                    continue
                d = condition_needed(r, i)
                if d.status != "refuted":
                    failed += 1
                    print(f"         condition {i + 1} is not needed ({d.status})")
    dt = time.perf_counter() - t0
    print(f"{len(rules) - failed} of {len(rules)} rules proved in {dt:.2f} s")
    return 1 if failed else 0


def _rules_json(rules, args) -> int:
    from tlop.analysis.prove import verify_rule
    from tlop.cli.jsonout import emit

    out, failed = [], 0
    for r in rules:
        item = {"name": r.name, "family": r.family, "kind": r.kind, "axioms": list(r.axioms), "text": _rule_text(r)}
        if args.verify:
            o = verify_rule(r)
            undeclared = [a for a in table_assumptions(o.assumptions) if a not in r.axioms]
            ok = o.ok and not undeclared
            failed += not ok
            item["proof"] = {"status": o.status, "ok": ok, "mode": o.mode, "seconds": o.seconds,
                             "assumptions": list(o.assumptions), "undeclared_assumptions": undeclared,
                             "counterexample": o.counterexample.render() if o.counterexample is not None else None}
        out.append(item)
    emit({"rules": out, **({"proved": len(rules) - failed, "total": len(rules)} if args.verify else {})})
    return 1 if failed else 0


# ----------------------------------------------------------------------------- tlop explain

def add_explain_arguments(p):
    p.add_argument("file", help="a .tlop file or stdlib module")
    p.add_argument("algorithm", help="the algorithm to explain")
    p.add_argument("assignments", nargs="*", metavar="NAME=VALUE",
                   help="a point, e.g. P=16 m=1KiB: explain a schedule stage by stage there (with --mapping)")
    p.add_argument("--no", action="append", default=[], choices=list(MODEL_FAMILIES),
                   help="switch a model-assumption family off (repeatable), e.g. --no A1")
    p.add_argument("--assume", action="append", default=[], help='an assumption such as "P >= 4"')
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of text")
    p.add_argument("--time-passes", action="store_true", help="print each simplifier pass's time and size")
    p.add_argument("--dump-after", action="append", default=[], metavar="PASS",
                   help="print the IR after this pass (fold, parcomp, rewrite, or all; repeatable)")
    g = p.add_argument_group("stages of a schedule at a point (with NAME=VALUE arguments)")
    g.add_argument("--mapping", metavar="MAPPING",
                   help="process mapping: sequential(Q), round_robin(Q), sequential(nodes=M), round_robin(nodes=M), "
                        "or a layout file (.json, .csv)")
    g.add_argument("--profile", help="bundled profile name or path to a profile JSON (default: metropolis)")
    g.add_argument("--model", choices=("taulop", "loggp", "plogp"),
                   help="the model a model-neutral module (coll/…) is priced in (default: the profile's)")
    g.add_argument("--bind", action="append", metavar="CH=PCH",
                   help="bind a model channel to a profile channel, e.g. --bind net=tcp")
    g.add_argument("--reduce-op", metavar="OP", help="the reduction operation whose cost gamma holds, e.g. max")
    g.add_argument("--libtaulop-compat", action="store_true",
                   help="read the tables as libtaulop does (tau clamp, 4 MiB chunks, float32)")
    g.add_argument("--json", action="store_true", help="print the stages, groups and costs as JSON")
    g.add_argument("--plot", metavar="FILE", help="draw the stages into FILE (.svg, .png or .pdf; needs matplotlib)")
    g.add_argument("--view", choices=("auto", "stages", "timeline"), default="auto",
                   help="with --plot: one panel per stage (stages), a timeline per rank (timeline: sends, receives, "
                        "reductions, idle), or auto: the timeline from 13 stages on")
    from tlop.cli.common import _add_config_options

    _add_config_options(g)
    g.add_argument("--derive", action="store_true",
                   help="derive the stages' cost as paper 000 does: each process's sends, their composition, "
                        "A2/A3, then A1 over the stages (eq. 8-10, 13-14)")
    g.add_argument("--at", metavar="VAR=VALUE",
                   help="explain one term of the algorithm's 'sum VAR in …' (e.g. --at k=80: one SUMMA iteration); "
                        "implies --derive")
    g.add_argument("--unit", metavar="NAME",
                   help="print sizes as multiples of the argument NAME (e.g. --unit b: SUMMA's sizes in blocks)")


def _algorithm(program, name):
    if name not in program.algorithms:
        known = ", ".join(sorted(program.algorithms)) or "(none)"
        raise TlopError(f"no algorithm '{name}'; algorithms: {known}")
    return program.algorithms[name]


_STAGE_OPTIONS = ("mapping", "config", "layout", "partition", "derive", "at", "unit", "profile", "bind", "reduce_op", "libtaulop_compat", "json", "plot")
_DERIVATION_OPTIONS = {"latex": "--latex", "time_passes": "--time-passes", "dump_after": "--dump-after", "no": "--no",
                       "assume": "--assume"}


def run_explain(args, load) -> int:
    """The derivation of the simplified cost (symbolic); with point arguments, the stages of a
    schedule at that point (:func:`run_explain_stages`)."""
    staged = [o for o in _STAGE_OPTIONS if getattr(args, o, None)]
    if staged == ["json"] and not getattr(args, "assignments", None):
        # --json alone: the derivation as JSON (an algorithm with a schedule needs a point)
        module = load(args.file)
        if not ir.has_schedule(_algorithm(module.program, args.algorithm).body):
            return _run_derivation(args, load, as_json=True)
    if getattr(args, "assignments", None) or staged:
        return run_explain_stages(args, load)
    return _run_derivation(args, load)


def run_explain_stages(args, load) -> int:
    """``tlop explain FILE ALG NAME=VALUE… --mapping M [--json] [--plot FILE]``."""
    import json

    from tlop import ir
    from tlop.analysis.stages import explain_stages, explanation_json, explanation_lines
    from tlop.backends.binding import bind_mapping
    from tlop.cli.common import _add_config_options, _fmt_arg, _mapping, _point, _profile

    mixed = [flag for attr, flag in _DERIVATION_OPTIONS.items() if getattr(args, attr, None)]
    if mixed:
        raise TlopError(f"{', '.join(mixed)} explain the derivation of the symbolic cost; they do not go with "
                        f"point arguments or the stage options (--mapping, --json, --plot)")
    module = load(args.file)
    handle = module[args.algorithm]
    alg = handle.ir
    if not ir.has_schedule(alg.body):
        raise TlopError(f"'{alg.name}' has no schedule stages to explain at a point; without NAME=VALUE arguments "
                        f"and stage options, tlop explain prints the derivation of its cost")
    if args.plot:
        from tlop.cli.plot_stages import PLOT_HINT, check_target, have_matplotlib

        check_target(args.plot)
        if not have_matplotlib():
            from tlop.cli.colour import print_error

            print_error(TlopError(PLOT_HINT))
            return 2  # a missing optional dependency, as tlop measure without mpi4py
    env = handle.bind(_point(args, handle, args.assignments), strings=True)
    mapping = _mapping(args, handle)
    profile = _profile(args)
    bound = bind_mapping(alg, env, mapping)
    program = module.program
    shown = {p.name: (program.channels[int(env[p.name])] if p.type == "channel" else _fmt_arg(p, env[p.name]))
             for p in alg.params}
    if mapping is None:
        raise TlopError(f"'{alg.name}' has schedule stages: give a process mapping, e.g. --mapping 'sequential(4)'")
    from tlop.cli.format import param_json

    values = {p.name: param_json(p.type, env[p.name], program.channels) for p in alg.params}  # 8, not 8.0
    at = _at(args, alg)
    if at is not None:
        import dataclasses

        from tlop.analysis.derivation import focus

        alg = dataclasses.replace(alg, body=focus(alg.body, *at))
    unit = None
    if args.unit is not None:
        p = next((p for p in alg.params if p.name == args.unit), None)
        if p is None or p.type != "bytes":
            raise TlopError(f"--unit {args.unit}: not a size parameter of '{alg.name}' "
                            f"({', '.join(q.name for q in alg.params if q.type == 'bytes') or 'it has none'})")
        unit = (args.unit, float(env[args.unit]))
    e = explain_stages(program, alg, profile, mapping, bound, shown, values)
    if args.derive or at is not None:
        from tlop.analysis.derivation import derivation_lines

        if args.json or args.plot:
            raise TlopError("--derive and --at print text; leave out --json and --plot")
        for line in derivation_lines(e, program, profile, unit, at):
            print(line)
        return 0
    if args.plot:
        from tlop.cli.plot_stages import write_plot

        write_plot(e, args.plot, getattr(args, "view", "auto"))
    if args.json:
        print(json.dumps(explanation_json(e), indent=2, ensure_ascii=False))
    else:
        for line in explanation_lines(e):
            print(line)
        if args.plot:
            print(f"wrote {args.plot}")
    return 0


def _at(args, alg):
    """``(var, value)`` of ``--at VAR=VALUE``, checked against the algorithm's sums; None without it."""
    from tlop.analysis.derivation import focus

    if not args.at:
        return None
    var, eq, text = args.at.partition("=")
    var = var.strip()
    try:
        value = int(text.strip())
    except ValueError:
        raise TlopError(f"--at {args.at}: expected VAR=VALUE with a whole number, e.g. --at k=80") from None
    if not eq or focus(alg.body, var, value) is None:
        sums = sorted({n.var for n in ir.walk_unique(alg.body) if isinstance(n, ir.Reduce) and n.kind == "sum"
                       and focus(alg.body, n.var, 0) is not None})
        raise TlopError(f"--at {args.at}: '{alg.name}' has no 'sum {var} in …' to take a term of"
                        f"{'; its sums: ' + ', '.join(sums) if sums else ''}")
    return var, value


def _run_derivation(args, load, as_json: bool = False) -> int:
    from tlop.analysis.explain import derivation_lines
    from tlop.analysis.simplify import DEFAULT_FAMILIES, PassManager, context_for
    module = load(args.file)
    program = module.program
    alg = _algorithm(program, args.algorithm)
    fams = DEFAULT_FAMILIES - set(args.no)
    types = {p.name: p.type for p in alg.params}
    assume = tuple(parse_condition(a, module, types) for a in args.assume)
    ctx = context_for(program, alg, families=fams, assume=assume)
    passes = [name for name, _, _ in PassManager.PASSES]
    for d in args.dump_after:
        if d != "all" and d not in passes:
            raise TlopError(f"--dump-after {d}: no such pass; passes: {', '.join(passes)}, or all")

    def dump(name, expr):
        from tlop.backends.notation import format_text
        print(f"-- IR after {name}: {format_text(expr, program)}")
        print(f"   {expr!r}")

    res = PassManager(ctx, dump=dump, dump_after=args.dump_after).run(alg.body)
    if as_json:
        return _derivation_json(res, program, alg)
    if args.time_passes:
        for rec in res.passes:
            print(f"-- pass {rec.name:8} {rec.seconds * 1000:8.2f} ms  terms {rec.nodes_before} → "
                  f"{rec.nodes_after}  rewrites {rec.rewrites}")
    print(f"{alg.name}:")
    for line in derivation_lines(res, program, latex=args.latex):
        print(line)
    return 0


def _derivation_json(res, program, alg) -> int:
    from tlop.analysis.rules.catalogue import rules_by_name
    from tlop.backends.notation import format_latex, format_text
    from tlop.cli.jsonout import emit

    rules = rules_by_name()
    used = sorted({a for s in res.steps for a in (rules[s.rule].axioms if s.rule in rules else ())})
    emit({"algorithm": alg.name,
          "original": {"text": format_text(res.original, program), "latex": format_latex(res.original, program)},
          "steps": [{"rule": s.rule, "kind": rules[s.rule].kind if s.rule in rules else None,
                     "axioms": list(rules[s.rule].axioms) if s.rule in rules else [],
                     "before": format_text(s.before, program), "after": format_text(s.after, program)}
                    for s in res.steps],
          "result": {"text": format_text(res.expr, program), "latex": format_latex(res.expr, program)},
          "assumptions": used, "table_assumptions": table_assumptions(used),
          "terms": {"before": ir.node_count(res.original), "after": ir.node_count(res.expr)}})
    return 0


# ----------------------------------------------------------------------------- tlop prove

def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse type)."""
    import argparse
    import math

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"the timeout must be a positive number of seconds, not {text}")
    return v


def add_prove_arguments(p):
    p.add_argument("file", help="a .tlop file or stdlib module")
    p.add_argument("claim", help='e.g. "recursive_doubling(P, m) > 2 * binomial_scatter(P, m)"')
    p.add_argument("--assume", action="append", default=[], help='e.g. "P >= 4" (repeatable)')
    p.add_argument("--var", action="append", default=[], metavar="NAME:TYPE",
                   help="the type of a variable the claim does not pass to any algorithm, e.g. --var k:int")
    p.add_argument("--for", dest="for_", action="append", default=[], metavar="NAME=RANGE",
                   help="prove one instance per value, e.g. --for P=2..64:x2 (repeatable: the product)")
    p.add_argument("--bound", type=int, default=64, help="unroll sums to at most this many terms")
    p.add_argument("--timeout", type=_seconds, default=30.0, metavar="SECONDS",
                   help="give up on an instance after this many seconds (wall clock; default 30)")
    p.add_argument("--no", action="append", default=[], choices=list(MODEL_FAMILIES),
                   help="do not assume this model family")
    p.add_argument("--mapping", metavar="MAPPING",
                   help="the process mapping a counterexample's schedules are evaluated with, e.g. 'sequential(4)'")
    p.add_argument("--json", action="store_true", help="print each instance's outcome as JSON")


def _instances(specs, types):
    """``--for P=2..64:x2`` → a list of {name: value} points (the product of every spec)."""
    import itertools

    from tlop.cli.ranges import parse_range as _parse_range

    axes = []
    for spec in specs:
        name, sep, rng = spec.partition("=")
        name = name.strip()
        if not sep or name not in types:
            known = ", ".join(sorted(types)) or "(none)"
            raise TlopError(f"--for {spec}: expected NAME=RANGE for a variable of the claim ({known})")
        axes.append([(name, v) for v in _parse_range(name, rng.strip(), types[name], None)])
    return [dict(point) for point in itertools.product(*axes)] or [{}]


def _bind(expr, point):
    return ir.Let(tuple((k, ir.Num(float(v))) for k, v in sorted(point.items())), expr) if point else expr


def _fixed_by(assume):
    """Variables an assumption pins to a constant (``P == 8``): they are substituted, so that
    log2 and powers of them fold exactly instead of being abstracted."""
    out = {}
    for a in assume:
        if isinstance(a, ir.Bin) and a.op == "==" and isinstance(a.lhs, ir.Var) and isinstance(a.rhs, ir.Num):
            out[a.lhs.name] = a.rhs.value
    return out


def run_prove(args, load) -> int:
    from tlop.analysis.prove import NUMBER_MODEL, prove_relation
    from tlop.analysis.smt import ModelAxioms
    module = load(args.file)
    program = module.program
    declared = {}
    for v in args.var:
        name, sep, vtype = v.partition(":")
        if not sep or not name.strip() or not vtype.strip():
            raise TlopError(f"--var {v}: expected NAME:TYPE, e.g. k:int")
        declared[name.strip()] = vtype.strip()
    lhs, rel, rhs, ints, facts, types = parse_claim(args.claim, module, declared)
    # the parameter constraints and where clauses of the algorithms called hold, and the user's assumptions
    assume = list(facts) + [parse_condition(a, module, types) for a in args.assume]
    ax = ModelAxioms(linearity="linearity" not in args.no, a1="A1" not in args.no)
    mapping = None
    if getattr(args, "mapping", None):
        from tlop.backends.binding import as_mapping

        mapping = as_mapping(args.mapping)

    timeout = getattr(args, "timeout", 30.0)

    def attempt(point):
        point = {**_fixed_by(assume), **point}
        pre = [_bind(a, point) for a in assume]
        return prove_relation(_bind(lhs, point), rel, _bind(rhs, point), program, assume=pre, int_vars=ints,
                              axioms=ax, bound=args.bound, mapping=mapping,
                              timeout_ms=int(getattr(args, "timeout", 30.0) * 1000))

    points = _instances(args.for_, types)
    failed = 0
    results = []
    as_json = getattr(args, "json", False)
    progress = _Progress(len(points), timeout)
    for i, point in enumerate(points):
        label = args.claim + (f"  [{', '.join(f'{k} = {v:g}' for k, v in point.items())}]" if point else "")
        progress.start(i, label)
        o = attempt(point)
        progress.done()
        status, lines = _outcome_lines(o, label, point, ints, attempt, timeout, types)
        failed += status != "proved"
        if as_json:
            results.append({"claim": args.claim, "instance": {k: number_json(v) for k, v in point.items()},
                            "status": status, "mode": o.mode, "seconds": o.seconds,
                            "assumptions": list(o.assumptions), "detail": "\n".join(lines[1:]) or None,
                            "number_model": NUMBER_MODEL})
            continue
        for line in lines:
            print(line, flush=True)  # each instance as soon as it is decided (also into a pipe)
    if as_json:
        from tlop.cli.jsonout import emit

        emit({"instances": results, "proved": len(points) - failed, "total": len(points),
              "number_model": NUMBER_MODEL})
    else:
        if len(points) > 1:
            print(f"{len(points) - failed} of {len(points)} instances proved")
        print(f"(every verdict is in {NUMBER_MODEL})")
    return 1 if failed else 0


def _outcome_lines(o, label, point, ints, attempt, timeout, types=None):
    """``(status, lines)`` of one instance: proved, vacuous (contradictory assumptions), refuted
    (with the interpreter-confirmed counterexample), unknown (with the reason)."""
    if o.ok:
        return "proved", [f"proved ({o.mode}) in {o.seconds:.2f} s, {assumptions_text(o.assumptions)}: {label}"]
    if o.status == "vacuous":
        return "vacuous", [f"vacuous: {label}", f"  {o.detail}"]
    cex = o.counterexample
    if o.status == "refuted" or (cex is not None and cex.checked is not None and cex.checked.fails is False):
        pinned = {k: v for k, v in (cex.values if cex else {}).items() if k in ints}
        if pinned and pinned.keys() - point.keys() and attempt({**point, **pinned}).ok:
            # with the integers of the counterexample fixed the claim holds: the counterexample
            # came from an abstraction (log2 or 2^x of a symbolic integer), not from the model
            return "unknown", [f"unknown: {label}",
                               f"  the solver's counterexample at {', '.join(f'{k} = {v}' for k, v in pinned.items())} "
                               f"is spurious (the claim holds there); fix the integers with --for or --assume"]
    if o.status == "refuted":
        return "refuted", [f"refuted: {label}", cex.render(types)]
    if cex is not None and cex.spurious:
        at = ", ".join(f"{k} = {v:.10g}" for k, v in sorted(cex.values.items()) if v is not None)
        return "unknown", [f"unknown: {label}",
                           f"  the solver's counterexample at {at or 'no variables'} is spurious: evaluated there, "
                           f"lhs = {cex.checked.lhs:.10g} and rhs = {cex.checked.rhs:.10g}, and the claim holds"]
    if cex is not None:
        at = ", ".join(f"{k} = {_fmt_value(v, (types or {}).get(k))}" for k, v in sorted(cex.values.items())
                       if v is not None)
        return "unknown", [f"unknown: {label}",
                           f"  the solver proposed a counterexample at {at or 'no variables'} that the interpreter "
                           f"did not confirm, so it is not a refutation: {cex.checked.error}"]
    if not o.detail or "could not decide" in o.detail:
        return "unknown", [f"unknown: Z3 could not decide {label} within {timeout:g} s per check (counted as a "
                           f"failure; --timeout gives it longer)"]
    return "unknown", [f"unknown: {label}", f"  {o.detail}"]


def _fmt_value(v, ty):
    text = f"{float(v):.10g}" if isinstance(v, (int, float)) else str(v)
    return text + (" B" if ty == "bytes" else " s" if ty in ("time", "cost") else "")


class _Progress:
    """``[2/7] proving …`` on stderr while an instance is being proved, on a terminal only (a
    log or a pipe gets the results alone); erased when the instance is decided."""

    def __init__(self, total, timeout):
        import sys

        self.total, self.timeout, self.stream = total, timeout, sys.stderr
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = 0

    def start(self, i, label):
        if self.on:
            text = f"[{i + 1}/{self.total}] proving {label} (timeout {self.timeout:g} s per check; Ctrl-C stops)"
            self.width = len(text)
            self.stream.write(text)
            self.stream.flush()

    def done(self):
        if self.on:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
