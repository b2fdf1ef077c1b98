"""Selection files that real MPI libraries load: Open MPI ``coll_tuned`` dynamic rules and MPICH's
JSON collective selection.

What it does: :data:`LIBRARY_ALGORITHMS` says which stdlib algorithms are a real library
algorithm — per collective, ``"module:algorithm"`` → the Open MPI ``coll_tuned`` algorithm number
(and the fan-in/out its rules line carries) and the MPICH ``MPIR_*_intra_*`` function with the
JSON parameters that make it that algorithm (MPICH's tree broadcasts are the chain, binary, flat
and segmented trees), either of them None when that library has no such algorithm.  A selection
is a list of :class:`Rule` — for a communicator size P and message sizes from ``m`` on (until the
next rule), the library algorithm and its segment size.  :func:`openmpi_rules` writes the Open MPI file (read with
``OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_dynamic_rules_filename=FILE``:
per collective its id, per communicator size the message-size thresholds, each with algorithm,
fan-in/out and segment size; a rule applies to the largest communicator size and then the largest
message size at most the actual one), :func:`mpich_json` the MPICH file (read with
``MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=FILE``: a decision tree of ``comm_size<=P`` and
``avg_msg_size<=m`` / ``total_msg_size<=m`` nodes with an ``algorithm=…`` leaf).  The message
size each library compares is the one it computes: Open MPI uses the whole broadcast buffer and,
for allgather and all-to-all, the block times the communicator size; :func:`library_size` gives it.
:func:`mpich_forcing` gives the CVARs that force one MPICH algorithm instead (``tlop validate
--library``).

The writers are :mod:`tlop.decisions.files` (these names keep the old per-collective calls
working: :func:`openmpi_rules` and :func:`mpich_json` turn these rules into
:class:`tlop.decisions.rules.Rule` and call them).

What it does not do: choose the algorithms (:mod:`tlop.cli.tune`) or run MPI.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

from tlop.decisions.files.openmpi_classic import COLLECTIVE_IDS as _CLASSIC_IDS
from tlop.decisions.library_size import compared_size

__all__ = ["Rule", "LIBRARY_ALGORITHMS", "OPENMPI_COLLECTIVE_IDS", "openmpi_rules", "mpich_json", "mpich_leaf",
           "mpich_forcing", "library_size",
           "mpich_default_selection",
           "COLLECTIVES"]

COLLECTIVES = ("bcast", "allgather", "alltoall")

#: Open MPI's COLLTYPE_T ids (kept for old callers; :data:`tlop.decisions.files.openmpi_classic.COLLECTIVE_IDS`)
OPENMPI_COLLECTIVE_IDS = {c: i for c, i in _CLASSIC_IDS.items()
                          if c in ("allgather", "allreduce", "alltoall", "barrier", "bcast", "reduce", "scatter", "gather")}


@dataclass(frozen=True)
class LibraryAlgorithm:
    openmpi: Optional[int]     # coll_tuned algorithm number
    openmpi_name: Optional[str]
    mpich: Optional[str]       # MPIR function
    fan: int = 0               # Open MPI fan-in/out (chain fanout for chain broadcasts)
    pow2: bool = False         # the libraries run it only for P a power of two
    mpich_params: tuple = ()   # the MPICH algorithm's JSON parameters ({flat}: P - 1, {s}: the segment)


#: MPICH's tree broadcasts (``bcast_intra_tree.c``, ``bcast_intra_pipelined_tree.c``) and the JSON
#: parameters that make them the stdlib's trees: a k-ary tree is rank r's children l·k + 1 … l·k + k
#: (l = r relative to the root), so k = 1 is the chain, k = 2 the binary tree and k = P − 1 the flat
#: tree (the root's P − 1 non-blocking sends: Open MPI's basic_linear); the pipelined tree sends
#: ``chunk_size`` segments, each forwarded as it arrives (the segmented chain); ``knomial_1`` with
#: k = 2 is a binomial tree.  MPICH reads only the parameters given (the container is not zeroed),
#: so every one is written; the ``topo_*`` ones matter only for topology-aware trees.  A flat tree
#: written for P ranks has k = P − 1, flat on every communicator the rule covers up to P; one larger
#: than the largest P tuned falls into the last rule and gets a k-ary tree of that k.
_TREE = "MPIR_Bcast_intra_tree"
_PIPELINED = "MPIR_Bcast_intra_pipelined_tree"
_TOPO = ("topo_overhead=0", "topo_diff_groups=0", "topo_diff_switches=0", "topo_same_switches=0")
_FLAT = ("tree_type=kary", "k={flat}", "is_non_blocking=1") + _TOPO
_CHAIN = ("tree_type=kary", "k=1", "is_non_blocking=0") + _TOPO
_BINARY = ("tree_type=kary", "k=2", "is_non_blocking=0") + _TOPO
_CHAIN_SEGMENTED = ("tree_type=kary", "k=1", "is_non_blocking=1", "chunk_size={s}", "recv_pre_posted=0")
_BINOMIAL_SEGMENTED = ("tree_type=knomial_1", "k=2", "is_non_blocking=1", "chunk_size={s}", "recv_pre_posted=0")

#: collective → stdlib "module:algorithm" → the library algorithms it is
LIBRARY_ALGORITHMS = {
    "bcast": {
        "taulop/bcast:linear": LibraryAlgorithm(1, "basic_linear", _TREE, mpich_params=_FLAT),
        "taulop/bcast:binomial_openmpi": LibraryAlgorithm(6, "binomial", None),
        "taulop/bcast:binomial": LibraryAlgorithm(None, None, "MPIR_Bcast_intra_binomial"),
        "plogp/bcast:flat": LibraryAlgorithm(1, "basic_linear", _TREE, mpich_params=_FLAT),
        "plogp/bcast:chain": LibraryAlgorithm(2, "chain", _TREE, fan=1, mpich_params=_CHAIN),
        "plogp/bcast:chain_segmented": LibraryAlgorithm(2, "chain", _PIPELINED, fan=1, mpich_params=_CHAIN_SEGMENTED),
        "plogp/bcast:binary": LibraryAlgorithm(5, "binary_tree", _TREE, mpich_params=_BINARY),
        "plogp/bcast:binomial_closed": LibraryAlgorithm(6, "binomial", "MPIR_Bcast_intra_binomial"),
        "plogp/bcast:binomial_segmented": LibraryAlgorithm(6, "binomial", _PIPELINED,
                                                           mpich_params=_BINOMIAL_SEGMENTED),
    },
    "allgather": {
        "taulop/allgather:ring": LibraryAlgorithm(4, "ring", "MPIR_Allgather_intra_ring"),
        "taulop/allgather:rda": LibraryAlgorithm(3, "recursive_doubling", "MPIR_Allgather_intra_recursive_doubling",
                                                  pow2=True),
    },
    "alltoall": {
        "taulop/alltoall:basic": LibraryAlgorithm(1, "basic_linear", None),
        "taulop/alltoall:pairwise": LibraryAlgorithm(2, "pairwise", "MPIR_Alltoall_intra_pairwise"),
    },
}

@dataclass(frozen=True)
class Rule:
    P: int              # communicator size
    m: int              # from this message size on (the model's m: the broadcast buffer, or one block)
    algorithm: str      # stdlib "module:algorithm"
    segment: int = 0    # segment size in bytes (0: not segmented)


def library_size(library: str, collective: str, P: int, m: int) -> int:
    """The message size ``library`` compares in its rules for the model's ``m``
    (:func:`tlop.decisions.library_size.compared_size`, rules files)."""
    return compared_size(library, collective, P, m, kind="rules")


def _library_algorithm(library: str, collective: str, key: str):
    from tlop.decisions.catalogue import LibraryAlgorithm

    a = LIBRARY_ALGORITHMS[collective][key]
    if library == "openmpi":
        return LibraryAlgorithm("openmpi", collective, a.openmpi_name, a.openmpi, key, "tlop.runtime.tuning_files")
    name = a.mpich.split("_intra_", 1)[1]
    return LibraryAlgorithm("mpich", collective, name, a.mpich, key, "tlop.runtime.tuning_files",
                            mpich_params=a.mpich_params)


def _new_rules(library: str, collective: str, rules: list) -> list:
    """The old rules as :class:`tlop.decisions.rules.Rule` for ``library`` (those it has)."""
    from tlop.decisions.rules import Rule as NewRule

    table = LIBRARY_ALGORITHMS[collective]
    out = []
    for r in rules:
        a = table[r.algorithm]
        if getattr(a, library) is None:
            continue
        if library == "openmpi":
            params = {"k": a.fan, "seg": r.segment}
        else:
            params = {"flat": max(r.P - 1, 1), "s": r.segment}
        out.append(NewRule(collective, r.P, int(r.m), _library_algorithm(library, collective, r.algorithm), params))
    return out


def openmpi_rules(collective: str, rules: list) -> str:
    """The text of an Open MPI coll_tuned dynamic rules file for one collective (written by
    :func:`tlop.decisions.files.openmpi_classic.write`)."""
    from tlop.decisions.files import openmpi_classic

    return openmpi_classic.write(_new_rules("openmpi", collective, rules))


def mpich_default_selection(lib=None) -> Optional[dict]:
    """MPICH's own MPIR-level selection tree, as compiled into its library (``libmpi.so`` beside
    the interpreter unless ``lib`` is given), or None.  MPICH reads a selection file *instead of*
    its default, so a file must cover every collective; this is the rest of it."""
    import re
    import sys
    from pathlib import Path

    paths = [Path(lib)] if lib else sorted(Path(sys.prefix, "lib").glob("libmpi.so*"))
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        for hit in re.finditer(rb'\{"collective=bcast":\{"comm_type=intra"[\x20-\x7e]*', data):
            try:
                tree = json.loads(hit.group(0).decode("ascii"))
            except ValueError:
                continue
            if "algorithm=MPIR_Bcast_intra_binomial" in hit.group(0).decode("ascii") and "collective=barrier" in tree:
                return tree
    return None


def mpich_leaf(collective: str, rule: Rule) -> dict:
    """The ``{"algorithm=MPIR_…": {parameter: {}, …}}`` leaf MPICH runs for ``rule``."""
    a = LIBRARY_ALGORITHMS[collective][rule.algorithm]
    params = [p.format(flat=max(rule.P - 1, 1), s=rule.segment) for p in a.mpich_params]
    return {f"algorithm={a.mpich}": {p: {} for p in params}}


#: the CVARs that set a tree broadcast's parameters when its algorithm is forced by CVAR
#: (``MPIR_CVAR_BCAST_INTRA_ALGORITHM=tree``) rather than chosen by a selection file
_MPICH_TREE_CVARS = {"tree_type": "MPIR_CVAR_BCAST_TREE_TYPE", "k": "MPIR_CVAR_BCAST_TREE_KVAL",
                     "is_non_blocking": "MPIR_CVAR_BCAST_IS_NON_BLOCKING"}


def mpich_forcing(collective: str, algorithm: str, P: int) -> Optional[dict]:
    """The MPICH CVARs that make MPICH run ``algorithm`` ("module:algorithm") on P ranks —
    ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM`` and, for a tree broadcast, its tree — or None when
    MPICH has no such algorithm or it takes a parameter per message size (the pipelined tree's
    segment, which only a selection file sets per size)."""
    a = LIBRARY_ALGORITHMS[collective].get(algorithm)
    if a is None or a.mpich is None:
        return None
    env = {f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM": a.mpich.split("_intra_", 1)[1]}
    for p in a.mpich_params:
        name, value = p.split("=", 1)
        if name.startswith("topo_"):
            continue  # only topology-aware trees read them
        if name not in _MPICH_TREE_CVARS:
            return None
        env[_MPICH_TREE_CVARS[name]] = value.format(flat=max(P - 1, 1))
    return env


def mpich_json(collective: str, rules: list, base: Optional[dict] = None) -> str:
    """MPICH JSON collective selection (written by :func:`tlop.decisions.files.mpich_json.write`
    into ``base``, MPICH's default tree, :func:`mpich_default_selection` when not given): with
    ``base`` the whole file MPICH needs; without, only ``collective``'s part of it."""
    from tlop.decisions.files import mpich_json as writer

    whole = base if base is not None else mpich_default_selection()
    if whole is None:
        raise ValueError("MPICH's default selection was not found beside Python: pass base (MPICH reads a "
                         "selection file instead of its default, so the file must carry every collective)")
    text = writer.write(_new_rules("mpich", collective, rules), base=whole)
    if base is not None:
        return text
    key = f"collective={collective}"
    return json.dumps({key: json.loads(text)[key]}, indent=2) + "\n"
