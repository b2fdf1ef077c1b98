"""A selection: the rules a tuning file carries, one per (collective, communicator size, from
message size).

What it does: :class:`Rule` says that for communicators of ``P`` ranks and the model's message
sizes from ``m_from`` on (until the next rule of the same collective and P) the library should run
``algorithm`` (a :class:`tlop.decisions.catalogue.LibraryAlgorithm`, one the caller priced) with
``params`` (``{"seg": bytes, "k": fan-out or radix, "reqs": outstanding requests, …}``), and its
predicted cost ``cost`` in seconds when known; ``algorithm=None`` keeps the library's own default
there.  :func:`table` groups rules per collective and P, sorted, with consecutive rules that pick
the same thing merged, after checking them (:func:`check`): every rule names an algorithm of the
file's library and of its own collective, sizes are non-negative, no two rules share a
(collective, P, m_from).

What it does not do: choose rules (``tlop tune``) or write a format (:mod:`tlop.decisions.files`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

__all__ = ["Rule", "check", "table"]


@dataclass(frozen=True)
class Rule:
    collective: str
    P: int
    m_from: int                       # the model's m (catalogue meaning), bytes
    algorithm: Optional[object]       # LibraryAlgorithm, or None: the library's default
    params: dict = field(default_factory=dict, hash=False)
    cost: Optional[float] = None      # predicted seconds, for the file's comments

    def same_choice(self, other: "Rule") -> bool:
        a, b = self.algorithm, other.algorithm
        key = (lambda x: None if x is None else (x.library, x.collective, x.name, x.id))
        return key(a) == key(b) and self.params == other.params


def check(rules, library: str) -> None:
    """ValueError unless every rule is one a ``library`` file can carry."""
    seen = set()
    for r in rules:
        if r.algorithm is not None:
            if r.algorithm.library != library:
                raise ValueError(f"a rule for {r.collective} P={r.P} names {r.algorithm.library}'s "
                                 f"{r.algorithm.name}; a {library} file names {library}'s algorithms only")
            if r.algorithm.collective != r.collective:
                raise ValueError(f"a {r.collective} rule names the {r.algorithm.collective} algorithm "
                                 f"{r.algorithm.name}")
        if r.P < 1 or r.m_from < 0:
            raise ValueError(f"a rule for {r.collective} has P={r.P}, m_from={r.m_from}: P >= 1, m_from >= 0")
        key = (r.collective, r.P, r.m_from)
        if key in seen:
            raise ValueError(f"two rules for {r.collective} P={r.P} from m={r.m_from}")
        seen.add(key)


def table(rules, library: str) -> dict:
    """``{collective: {P: [Rule, …]}}``, checked, collectives and P ascending, each P's rules by
    ``m_from`` with consecutive equal choices merged (the first keeps its ``m_from``)."""
    rules = list(rules)
    check(rules, library)
    out: dict = {}
    for r in sorted(rules, key=lambda r: (r.collective, r.P, r.m_from)):
        lst = out.setdefault(r.collective, {}).setdefault(r.P, [])
        if lst and lst[-1].same_choice(r):
            continue
        lst.append(r)
    return out
