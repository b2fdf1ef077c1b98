"""Writing what ``tlop tune`` decided into the files the libraries load.

What it does: turns the decision tables (:class:`tlop.decisions.selection.Cell`, per library and
collective) into :class:`tlop.decisions.rules.Rule` — one per cell, naming exactly the algorithm
and parameters the printed table shows, or ``algorithm=None`` where the table keeps the library's
default (the file then leaves the library's own decision in place) — and writes the files asked
for: Open MPI's classic dynamic rules, Open MPI 6.0's JSON rules, MPICH's JSON selection, and the
CSV of NVIDIA's example NCCL tuner plugin (each NCCL rule carries the protocol the table chose and
:data:`tlop.decisions.catalogue.nccl.CHANNELS`, every channel of the communicator, unless
``--nccl-channels`` says how many).

What it does not do: choose (:mod:`tlop.decisions.selection`) or know a format
(:mod:`tlop.decisions.files`).
"""

from __future__ import annotations

__all__ = ["rules_of", "write_files"]


def rules_of(result, library: str) -> list:
    """The rules of ``library``'s cells in ``result`` (``{(library, collective): [Cell]}``)."""
    from tlop.decisions.rules import Rule

    out = []
    for (lib, collective), cells in result.items():
        if lib != library:
            continue
        for c in cells:
            if c.chosen is None:
                continue
            keep = c.default is not None and c.chosen is c.default
            out.append(Rule(collective, c.P, c.m, None if keep else c.chosen.algorithm,
                            {} if keep else dict(c.chosen.params),
                            c.chosen.cost if c.chosen.cost < float("inf") else None))
    return out


def nccl_rules(rules, channels=None) -> list:
    """NCCL rules as the tuner CSV takes them: ``{"protocol": "ll"|"ll128"|"simple", "channels": …}``
    from the table's ``{"proto": 0|1|2}``; ``channels`` default
    :data:`tlop.decisions.catalogue.nccl.CHANNELS`."""
    from dataclasses import replace

    from tlop.decisions.catalogue.nccl import CHANNELS, PROTOCOLS

    n = CHANNELS if channels is None else int(channels)
    return [replace(r, params={"protocol": PROTOCOLS[int(r.params["proto"])], "channels": n})
            if r.algorithm is not None else r for r in rules]


def write_files(args, result, profile, mapping, mapping_text: str, model: str) -> list:
    """Write the files ``args`` asks for (``--openmpi``, ``--openmpi-json``, ``--mpich``,
    ``--nccl``); the lines to print about them."""
    from tlop.decisions.files import mpich_json, nccl_csv, openmpi_classic, openmpi_json
    from tlop.runtime.atomic import open_text_atomic
    from tlop.runtime.text import printable

    header = (f"tlop tune: profile {profile.name}, model {model}, mapping {mapping_text}",
              "each rule is the choice of the table tlop tune printed (its predicted cost in the comment)")
    lines = []
    for option, library, make in (
            ("openmpi", "openmpi", lambda rules: openmpi_classic.write(rules, header=header)),
            ("openmpi_json", "openmpi", lambda rules: openmpi_json.write(rules, mapping=mapping)),
            ("mpich", "mpich", lambda rules: mpich_json.write(rules)),
            ("nccl", "nccl", lambda rules: nccl_csv.write(nccl_rules(rules, getattr(args, "nccl_channels", None)),
                                                         header=header, mapping=mapping))):
        target = getattr(args, option, None)
        if not target:
            continue
        rules = rules_of(result, library)
        if not rules:
            lines.append(f"tlop: warning: --{option.replace('_', '-')}: no {library} rules were decided (is "
                         f"{library} among --library?); {printable(target)} not written")
            continue
        text = make(rules)
        with open_text_atomic(target) as f:
            f.write(text)
        lines.append(f"wrote {printable(target)} ({library}, {len({r.collective for r in rules})} collective(s), "
                     f"{len(rules)} rules)")
    return lines
