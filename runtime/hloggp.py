"""HLogGP parameters per pair of node types: a profile's ``hloggp`` section, keyed for a layout.

Paper 000 compares τ-Lop with HLogGP [23], which extends LogGP's scalar parameters to one value
per processor and per link.  A profile carries them per *pair of node types* and *link* (a
message within a node, ``"shm"``, or between nodes, ``"net"``: kernels/platform's channels)::

    "hloggp": {"description": "…", "provenance": "…",
               "pairs": [{"from": "fermi12", "to": "fermi8", "channel": "net",
                          "L": 1.9e-6, "o_s": 1.2e-6, "o_r": 1.3e-6, "G": 3.1e-10}, …]}

``L`` (latency), ``o_s`` and ``o_r`` (send and receive overheads) are seconds, ``G`` the gap per
byte (seconds per byte); a message of m bytes costs ``o_s + L + (m − 1)·G + o_r``
(``stdlib/kernels/hloggp.tlop``).  The schema is in ``docs/configurations.rst``.

What it does:

* :func:`check_section` — validate the section (called by :mod:`tlop.runtime.profile_schema`,
  whose checker names the file and the field: ``hloggp.pairs[2].G: expected a number >= 0``);
* :func:`for_mapping` — the profile an evaluation over a configuration uses: a copy with the
  tables ``hloggp_L``, ``hloggp_os``, ``hloggp_or`` and ``hloggp_G`` of the layout's node types,
  keyed by the code ``(type(p)·1024 + type(q))·2 + link`` the kernels compute from
  ``layout.type`` (the layout's numbering); a pair and link the layout can use that the section
  lacks is an error naming both types.  Memoised per (profile, configuration).

What it does not do: measure HLogGP parameters, or price anything itself (the kernels do).
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass

import numpy as np

__all__ = ["HLogGPParams", "check_section", "for_mapping", "TABLES", "MAX_TYPES", "pair_code"]

#: the kernels' table of each parameter
TABLES = {"L": "hloggp_L", "o_s": "hloggp_os", "o_r": "hloggp_or", "G": "hloggp_G"}
#: the links of a pair: kernels/platform's channels
LINKS = ("shm", "net")
#: most node types a layout priced by HLogGP may have (the stride of the pair code)
MAX_TYPES = 1024
_SECTION_KEYS = ("description", "provenance", "pairs")
_PAIR_KEYS = ("from", "to", "channel", "L", "o_s", "o_r", "G", "description")


@dataclass(frozen=True)
class HLogGPParams:
    """A validated ``hloggp`` section: ``pairs`` maps ``(from, to, channel)`` to the parameters
    ``{"L": …, "o_s": …, "o_r": …, "G": …}``."""
    pairs: dict
    description: str = ""
    provenance: str = ""

    def to_dict(self) -> dict:
        out = {}
        if self.description:
            out["description"] = self.description
        if self.provenance:
            out["provenance"] = self.provenance
        out["pairs"] = [{"from": a, "to": b, "channel": c, **v} for (a, b, c), v in self.pairs.items()]
        return out

    def node_types(self) -> list:
        return sorted({t for a, b, _ in self.pairs for t in (a, b)})


def pair_code(sender_type: int, receiver_type: int, between_nodes: bool) -> int:
    """The code under which the kernels read a pair's parameters (``hloggp_pair`` in
    ``kernels/hloggp.tlop``)."""
    return (sender_type * MAX_TYPES + receiver_type) * 2 + int(between_nodes)


def check_section(checker, d) -> HLogGPParams:
    """Validate a profile's ``hloggp`` section with the profile checker (its ``fail`` names the
    file and the field)."""
    path = ["hloggp"]
    checker.obj(d, path, _SECTION_KEYS, ("pairs",))
    desc = checker.string(d.get("description", ""), path + ["description"])
    prov = checker.string(d.get("provenance", ""), path + ["provenance"])
    pairs = d["pairs"]
    if not isinstance(pairs, list) or not pairs:
        checker.fail(path + ["pairs"], "expected a non-empty list of {\"from\", \"to\", \"channel\", \"L\", \"o_s\", "
                                       "\"o_r\", \"G\"} objects")
    out, where = {}, {}
    for i, p in enumerate(pairs):
        at = path + ["pairs", i]
        checker.obj(p, at, _PAIR_KEYS, _PAIR_KEYS[:-1])
        a = checker.string(p["from"], at + ["from"], nonempty=True)
        b = checker.string(p["to"], at + ["to"], nonempty=True)
        c = checker.string(p["channel"], at + ["channel"])
        if c not in LINKS:
            checker.fail(at + ["channel"], f"expected \"shm\" (a message within a node) or \"net\" (between nodes), "
                                           f"got {c!r}")
        if c == "shm" and a != b:
            checker.fail(at + ["to"], f"a shared-memory message stays on one node, of one type: 'from' is {a!r}, "
                                      f"'to' {b!r}")
        if "description" in p:
            checker.string(p["description"], at + ["description"])
        values = {}
        for k in TABLES:
            x = checker.number(p[k], at + [k])
            if x < 0:
                checker.fail(at + [k], f"expected a number >= 0 (seconds{' per byte' if k == 'G' else ''}), got {x:g}")
            values[k] = x
        key = (a, b, c)
        if key in out:
            checker.fail(at, f"the pair {a} -> {b} on {c} is given twice (also hloggp.pairs[{where[key]}])")
        out[key], where[key] = values, i
    return HLogGPParams(out, desc, prov)


# ---------------------------------------------------------------------------------------- binding

_CACHE: dict = {}
_LOCK = threading.Lock()
_CACHE_SIZE = 64


def for_mapping(profile, mapping, program=None):
    """``profile`` with the HLogGP tables of ``mapping``'s node types when ``mapping`` is a
    configuration (:class:`tlop.runtime.configs.Configuration`), the profile has an ``hloggp``
    section and ``program`` (an IR program; None: any) declares those tables; otherwise
    ``profile`` unchanged (then the HLogGP kernels say the tables are missing)."""
    from tlop.runtime.configs import Configuration

    if not isinstance(mapping, Configuration):
        return profile
    if program is not None and not any(t in program.tables for t in TABLES.values()):
        return profile  # a model that does not read them: nothing to key (nor to complain about)
    from tlop.runtime.profile import as_profile

    prof = as_profile(profile)
    if getattr(prof, "hloggp", None) is None:
        return profile
    key = (id(prof), id(mapping))
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] is prof and hit[1] is mapping:
            return hit[2]
    bound = _bind(prof, mapping)
    with _LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = (prof, mapping, bound)  # strong references: the ids cannot be reused
    return bound


def _used_links(cfg) -> set:
    """``(sender type, receiver type, link)`` of every ordered pair of distinct ranks."""
    node = np.asarray(cfg.node, dtype=np.int64)
    types = np.asarray(cfg.node_type or (0,) * cfg.P, dtype=np.int64)
    used = set()
    counts = np.bincount(node)
    for n in np.flatnonzero(counts >= 2):  # two ranks on a node: a message within it
        t = int(types[np.flatnonzero(node == n)[0]])
        used.add((t, t, "shm"))
    nodes_of = {int(t): set(node[types == t].tolist()) for t in np.unique(types)}
    for a, na in nodes_of.items():
        for b, nb in nodes_of.items():
            if len(na | nb) >= 2:  # some rank of type a and some of type b on different nodes
                used.add((a, b, "net"))
    return used


def _bind(prof, cfg):
    from tlop.runtime.errors import ProfileError
    from tlop.runtime.profile_schema import RawTable

    params: HLogGPParams = prof.hloggp
    names = list(cfg.type_names)
    if not names:
        raise ProfileError(f"{cfg.name or cfg.source}: the layout gives no node types; HLogGP's parameters "
                           f"(profile '{prof.name}') are per pair of node types: declare node_types and each "
                           f"node's type")
    if len(names) > MAX_TYPES:
        raise ProfileError(f"{cfg.name or cfg.source}: {len(names)} node types; HLogGP takes at most {MAX_TYPES}")
    used = _used_links(cfg)
    codes, values = [], {k: [] for k in TABLES}
    for a in range(len(names)):
        for b in range(len(names)):
            for link in LINKS:
                got = params.pairs.get((names[a], names[b], link))
                if got is None and (a, b, link) in used:
                    have = ", ".join(f"{x}->{y} ({c})" for x, y, c in params.pairs)
                    raise ProfileError(
                        f"profile '{prof.name}' has no HLogGP parameters for messages from a node of type "
                        f"'{names[a]}' to {'the same node' if link == 'shm' else f'a node of type {names[b]!r}'} "
                        f"({link}), which the layout {cfg.name or cfg.source} has; its hloggp.pairs: {have}")
                codes.append(pair_code(a, b, link == "net"))
                for k in TABLES:  # a pair the layout never uses is never read: 0
                    values[k].append(0.0 if got is None else got[k])
    order = np.argsort(codes)
    m = np.asarray(codes, dtype=np.float64)[order]
    m.setflags(write=False)
    new = copy.copy(prof)
    new._raw = dict(prof._raw)
    for k, table in TABLES.items():
        v = np.asarray(values[k], dtype=np.float64)[order]
        v.setflags(write=False)
        new._raw[table] = {"*": RawTable(m, None, v)}
    new._tables = new._build_tables(new.interpolation)
    return new
