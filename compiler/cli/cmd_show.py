"""``tlop show``: an algorithm in the papers' notation, simplified, its closed form over a mapping,
``--verify`` proving the simplification.

What it does not do: evaluate (``tlop eval``) or explain stage by stage (``tlop explain``).
"""

from __future__ import annotations

import sys

from tlop.runtime.diagnostics import TlopError
from tlop.cli.jsonout import emit as _emit_json
from tlop.cli.common import _load, _mapping, _profile, _signature


def cmd_show(args) -> int:
    from tlop.backends.notation import format_latex, format_text

    if args.source or args.path:  # the module's text, or where it is (stdlib modules included)
        from tlop.frontend.loader import resolve_path

        path = resolve_path(args.file)
        if args.path:
            print(path)
        else:
            sys.stdout.write(path.read_text(encoding="utf-8"))
        return 0
    m = _load(args.file, args)
    names = [args.algorithm] if args.algorithm else m.own_algorithms
    if args.raw and args.profile:
        raise TlopError("--profile checks a simplified cost against the original; it does not combine with --raw")
    profile = _profile(args) if args.profile else None
    kind, mapping = _show_mapping(args)
    status = 0
    shown = []
    for i, name in enumerate(names):
        h = m[name]
        over = ""
        if (kind or mapping) and h.ir.over is not None:
            expr, notes, ok, over = _closed_form_shown(args, m.program, h.ir, profile, kind, mapping)
        else:
            expr, notes, ok = _shown_expression(args, m.program, h.ir, profile, mapping)
        status = status if ok else 1
        sig = ", ".join(_signature(p, m.program) for p in h.params)
        if h.ir.requires is not None:
            over = f"{over} where {format_text(h.ir.requires, m.program)}"
        if args.json:
            shown.append({"algorithm": name, "signature": f"{name}({sig}){over}", "doc": h.doc or None,
                          "text": format_text(expr, m.program), "latex": format_latex(expr, m.program),
                          "notes": list(notes), "ok": ok})
            continue
        if i:
            print()
        if h.doc:
            from tlop.runtime.text import printable

            for line in h.doc.split("\n"):  # only newlines end a line; anything a terminal acts on is escaped
                print(f"/// {printable(line)}")
        if args.latex:
            print(f"{name}({sig}){over} = {format_latex(expr, m.program)}")
        else:
            print(f"{name}({sig}){over} =")
            print(f"    {format_text(expr, m.program)}")
        for note in notes:
            print(f"    [{note}]")
    if args.json:
        _emit_json({"file": str(m.path), "algorithms": shown})
    return status


def _show_mapping(args):
    """``(kind, mapping)`` of ``show --mapping``: a kind alone (``sequential``, ``round_robin``:
    symbolic Q) or a concrete mapping (``sequential(8)``: its kind and Q)."""
    text = getattr(args, "mapping", None)
    if text is None:
        return None, None
    from tlop.analysis.closedform import parse_kind

    kind = parse_kind(text)
    if kind is not None:
        return kind, None
    mp = _mapping(args)
    return (mp.kind if mp.kind in ("sequential", "round_robin") else None), mp


def _closed_form_shown(args, program, alg, profile, kind, mapping):
    """``(expression, notes, ok, signature suffix)`` of ``show --mapping`` for an algorithm over a
    process mapping: its closed form (tlop.analysis.closedform) when the schedule has one — with
    Q symbolic, or the mapping's Q substituted —, else the schedule and why there is none."""
    from tlop import ir
    from tlop.analysis.closedform import conditions_for_q, derive, expand_transmissions, substitute_q

    from tlop.backends.dataflow_names import DATAFLOW_MODELS

    q = getattr(mapping, "Q", None) if mapping is not None else None
    label = str(mapping) if mapping is not None else f"{kind}(Q)"
    if program.model in DATAFLOW_MODELS:
        # the closed forms are τ-Lop's (stages of ‖-transmissions); a schedule of a LogGP-family
        # model means a dataflow program, which has none
        notes = [] if args.raw else [f"no closed form for {label}: a {program.model} schedule is a dataflow "
                                     f"program (docs/semantics.rst, \"Schedules in LogGP and pLogP\"); "
                                     f"it is evaluated event by event"]
        return alg.body, notes, True, f" over {label}"
    d = derive(program, alg, kind) if kind is not None else None
    remaining, failed = conditions_for_q(d, q) if (d is not None and d.ok and q is not None) else (None, [])
    if d is None or not d.ok or args.raw or failed:
        why = d.reason if d is not None else f"{mapping} is not a sequential or round-robin mapping"
        if failed:
            why = f"the derived form needs {', '.join(failed)}"
        notes = [] if args.raw else [f"no closed form for {label}: {why}; the schedule is evaluated by enumeration"]
        return alg.body, notes, True, f" over {label}"
    expr = d.expr if q is None else substitute_q(program, alg, d, q)
    if mapping is None:
        label = f"{kind}({d.q})"
    conds = ", ".join(d.condition_text if q is None else remaining)
    notes = [f"closed form of the schedule ({'; '.join(d.patterns)}), valid when {conds}; "
             f"otherwise the schedule is evaluated by enumeration"]
    ok = True
    if profile is not None:
        try:
            low = expand_transmissions(program, expr, profile)
        except TlopError as err:
            notes.append(f"transfer level on {profile.name}: {err.diagnostics[0].message if err.diagnostics else err}")
        else:
            from tlop.backends.notation import format_text

            nets = [f"{c} via {profile.transmission_kind(profile.resolve_channel(c))}" for c in program.channels
                    if profile.resolve_channel(c) is not None and len(program.variants(ir.SEND_TRANSMISSION,
                                                                                          program.channel_index(c))) > 1]
            via = f" ({', '.join(nets)})" if nets else ""
            notes.append(f"transfer level on {profile.name}{via}: {format_text(low, program)}")
        if mapping is not None:
            from tlop.analysis.agreement import check_on_profile

            guarded = ir.Cond(d.conditions, d.expr, alg.body) if q is None else \
                substitute_q(program, alg, d, q, guarded=True)
            check = check_on_profile(program, alg, guarded, profile, mapping=mapping)
            notes.append(check.render().replace("agrees on", "agrees with enumeration on"))
            ok = check.ok or not check.points
    return expr, notes, ok, f" over {label}"


def _shown_expression(args, program, alg, profile=None, mapping=None):
    """``(expression, notes, ok)`` for ``show``: the expression simplified (all model families
    unless --no), validated with Z3 under --verify (falling back to the original on failure), or
    --raw; the notes say which model assumptions it rests on and, with a profile, whether it
    agrees with the original on that profile's tables (``ok`` False when it does not)."""
    if args.raw:
        return alg.body, [], True
    from tlop.analysis.rules.catalogue import assumptions_text, table_assumptions
    from tlop.analysis.simplify import DEFAULT_FAMILIES

    families = DEFAULT_FAMILIES - set(args.no)
    if args.verify:
        from tlop.analysis.prove import simplify_validated

        v = simplify_validated(program, alg, families=families)
        if v.fell_back:
            return v.expr, [f"translation validation failed ({v.outcome.status}); showing the original"], True
        if v.outcome.mode == "unchanged":
            return v.expr, ["validated: unchanged"], True
        expr, used = v.expr, v.outcome.assumptions
        notes = [f"validated: {v.outcome.mode}, {assumptions_text(used)}"]
    else:
        from tlop.analysis.simplify import PassManager, context_for

        res = PassManager(context_for(program, alg, families=families)).run(alg.body)
        if res.expr == alg.body:
            return res.expr, [], True
        expr, used = res.expr, res.assumptions
        notes = [f"simplified, {assumptions_text(used)}"]
    if profile is None:
        return expr, notes, True
    from tlop.analysis.agreement import check_on_profile

    check = check_on_profile(program, alg, expr, profile, mapping=mapping)
    notes.append(check.render())
    if not check.ok and check.points:
        rest = table_assumptions(used)
        if rest:
            flags = " ".join(f"--no {n}" for n in rest if n in ("linearity", "A1"))
            notes.append(f"the rewrite assumes {', '.join(rest)}"
                         + (f"; {flags} gives a form that does not" if flags else ""))
    return expr, notes, check.ok
