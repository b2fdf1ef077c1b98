"""Reading the selection files MPI libraries load: which algorithm a file names for one call, and
the environment that forces that algorithm instead.

What it does: :func:`mpich_named` walks an MPICH JSON collective selection
(``MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE``) as MPICH's ``MPIR_Csel_search``
(``src/mpi/coll/src/csel.c``) does for an intra-communicator call of P ranks and m bytes: the
keys of an object are tried in order, a key that holds goes into its value, one that fails goes
to the next key, ``…=any`` always holds.  Message sizes are MPICH's ``get_avg_msgsize`` (the
bytes of one rank's buffer: the broadcast buffer, the allreduce/reduce vector, the all-to-all
block) and ``get_total_msgsize`` (that times P; allgather: the block times P); ``count`` is
``get_count`` (elements).  Communicator-size keys are decided when MPICH prunes the tree for a
new communicator (csel.c ``prune_tree``, where ``comm_size<N`` is a strict ``<``; the
``COMM_SIZE_LT`` case of ``MPIR_Csel_search`` tests ``<=`` but never sees a pruned-away node —
the library's own message log showed the strict reading at P = 2 against ``comm_size<2``).  A key this reader does not evaluate (the communicator's
hierarchy, thread level, …) gives None with the key named: the file's choice then depends on
something only the library knows.

:func:`openmpi_named` reads an Open MPI ``coll_tuned`` classic dynamic-rules file
(``coll_tuned_dynamic_file.c``, ``ompi_coll_tuned_read_rules_config_file``: an optional
``rule-file-version-N``, then counts and rules as numbers, ``#`` to the end of a line a comment)
and applies it as ``coll_tuned_dynamic_rules.c`` does: the rule of the largest communicator size
at most P, then the message rule of the largest size at most the size Open MPI computes
(``coll_tuned_decision_dynamic.c``: ``dsize·count`` for bcast, allreduce, reduce; times P for
allgather, alltoall, gather, scatter, reduce_scatter_block).

:func:`forcing_env` is the environment that makes the library run a named algorithm without the
file (MPICH ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM`` and, for its tree broadcasts, the tree CVARs;
Open MPI ``coll_tuned_<coll>_algorithm`` with its segment size and fan-in/out), so a run with
the file can be compared with a run that is known to use that algorithm (:mod:`.witness`).

What it does not do: write files (``tlop tune``), or run anything.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable

__all__ = ["Named", "mpich_named", "openmpi_named", "named_algorithm", "forcing_env", "OPENMPI_ALGORITHMS",
           "OPENMPI_IDS", "library_message_size"]

#: coll_base_functions.h COLLTYPE_T order (the collective ids of a rules file)
OPENMPI_IDS = {"allgather": 0, "allreduce": 2, "alltoall": 3, "barrier": 6, "bcast": 7, "gather": 9,
               "reduce": 11, "reduce_scatter_block": 13, "scatter": 14}

#: coll_tuned_<coll>_decision.c, ``<coll>_algorithms[]``: id → name
OPENMPI_ALGORITHMS = {
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree", 5: "binary_tree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "allreduce": {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                  5: "segmented_ring", 6: "rabenseifner", 7: "allgather_reduce"},
    "allgather": {1: "linear", 2: "bruck-k-fanout", 3: "recursive_doubling", 4: "ring", 5: "neighbor",
                  6: "two_proc", 7: "sparbit", 8: "direct-messaging"},
    "alltoall": {1: "linear", 2: "pairwise", 3: "modified_bruck", 4: "linear_sync", 5: "two_proc"},
    "reduce": {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial", 6: "in-order_binary",
               7: "rabenseifner", 8: "knomial"},
    "gather": {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
    "scatter": {1: "basic_linear", 2: "binomial", 3: "linear_nb"},
    "reduce_scatter_block": {1: "basic_linear", 2: "recursive_doubling", 3: "recursive_halving", 4: "butterfly"},
}

#: the element size of the reductions' vectors (tune-check reduces float64)
ELEMENT = {"allreduce": 8, "reduce": 8, "reduce_scatter_block": 8}


@dataclass(frozen=True)
class Named:
    """The algorithm a file names for one call: a display name and what identifies it to the
    library (MPICH: the ``algorithm=MPIR_…`` leaf and its parameters; Open MPI: id, fan-in/out,
    segment size)."""
    name: str
    library: str                      # "mpich" | "openmpi"
    detail: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


def library_message_size(library: str, collective: str, P: int, m: int) -> dict:
    """The sizes the library compares for a call with tune-check's m (see the module docstring)."""
    per_rank = m
    if library == "mpich":
        total = m * P
        count = m // ELEMENT.get(collective, 1)
        return {"avg": per_rank, "total": total, "count": count}
    if collective in ("allgather", "alltoall", "gather", "scatter", "reduce_scatter_block"):
        return {"dsize": m * P}
    return {"dsize": m}


_MPICH_CMP = re.compile(r"^(comm_size|avg_msg_size|total_msg_size|count|comm_avg_ppn)(<=|<)(\d+)$")


def _mpich_holds(key: str, coll: str, P: int, m: int) -> Optional[bool]:
    if key == "any" or key.endswith("=any"):
        return True
    if key == "comm_type=intra":
        return True
    if key == "comm_type=inter":
        return False
    if key.startswith("collective="):
        return key == f"collective={coll}"
    if key == "comm_size=pow2":
        return P & (P - 1) == 0
    if key in ("is_commutative=yes", "is_op_built_in=yes", "is_block_regular=yes", "is_sbuf_inplace=no",
               "is_multi_threaded=no"):
        return True                  # MPI_SUM on MPI_DOUBLE, regular blocks, no MPI_IN_PLACE, one thread
    if key in ("is_commutative=no", "is_op_built_in=no", "is_block_regular=no", "is_sbuf_inplace=yes",
               "is_multi_threaded=yes"):
        return False
    if key == "count<pow2":
        n = library_message_size("mpich", coll, P, m)["count"]
        return n < 1 << (P.bit_length() - 1)
    hit = _MPICH_CMP.match(key)
    if hit is None:
        return None
    what, op, val = hit.group(1), hit.group(2), int(hit.group(3))
    if what == "comm_avg_ppn":
        return None
    sizes = library_message_size("mpich", coll, P, m)
    x = {"comm_size": P, "avg_msg_size": sizes["avg"], "total_msg_size": sizes["total"], "count": sizes["count"]}[what]
    return x <= val if op == "<=" else x < val     # comm_size too: prune_tree's strict <


def mpich_named(tree: dict, collective: str, P: int, m: int) -> tuple:
    """``(Named or None, why)``: the leaf of an MPICH selection tree for this call, or None and
    why it cannot be told."""
    node = tree
    path = []
    while isinstance(node, dict):
        algo = [k for k in node if k.startswith(("algorithm=", "composition="))]
        if algo:
            name = algo[0].split("=", 1)[1]
            params = node[algo[0]] if isinstance(node[algo[0]], dict) else {}
            short = name.split("_intra_", 1)[1] if "_intra_" in name else name
            extra = ", ".join(k for k in params if not k.startswith("topo_"))
            return Named(short + (f" ({extra})" if extra else ""), "mpich",
                         {"function": name, "params": list(params)}), " / ".join(path)
        for k in node:
            holds = _mpich_holds(k, collective, P, m)
            if holds is None:
                return None, f"the file's tree tests '{k}', which depends on what only the library knows"
            if holds:
                path.append(k)
                node = node[k]
                break
        else:
            return None, f"no branch of the file holds for P={P}, m={m} ({' / '.join(path) or 'top'})"
    return None, "the file's tree ends without an algorithm"


def _openmpi_tokens(text: str) -> tuple:
    version = 1
    toks = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        for t in line.split():
            hit = re.fullmatch(r"rule-file-version-(\d+)", t)
            if hit and not toks:
                version = int(hit.group(1))
                continue
            try:
                toks.append((int(t, 0), lineno))
            except ValueError:
                raise TlopError(f"line {lineno}: '{printable(t)[:40]}' is not a number (an Open MPI "
                                f"dynamic-rules file holds numbers and # comments)") from None
    return version, toks


def openmpi_rules_table(text: str) -> dict:
    """collective id → [(comm size, [(msg size, alg, faninout, segsize), …]), …] of a classic file."""
    version, toks = _openmpi_tokens(text)
    pos = 0

    def nxt(what):
        nonlocal pos
        if pos >= len(toks):
            raise TlopError(f"the file ends where Open MPI expects {what}")
        v = toks[pos]
        pos += 1
        return v

    table = {}
    for _ in range(nxt("the number of collectives")[0]):
        cid = nxt("a collective id")[0]
        coms = []
        for _ in range(nxt("the number of communicator sizes")[0]):
            comsize = nxt("a communicator size")[0]
            rules = []
            for i in range(nxt("the number of message sizes")[0]):
                size, line = nxt("a message size")
                alg = nxt("an algorithm")[0]
                fan = nxt("a fan-in/out")[0]
                seg = nxt("a segment size")[0]
                if version > 1 and pos < len(toks) and toks[pos][1] == line:
                    pos += 1        # max_requests
                if i == 0 and size != 0:
                    raise TlopError(f"line {line}: the first message rule of communicator size {comsize} "
                                    f"is for {size} B; Open MPI requires 0 (it refuses the whole file)")
                rules.append((size, alg, fan, seg))
            coms.append((comsize, rules))
        table[cid] = coms
    return table


def openmpi_named(text: str, collective: str, P: int, m: int) -> tuple:
    """``(Named or None, why)`` for an Open MPI classic rules file."""
    table = openmpi_rules_table(text)
    cid = OPENMPI_IDS.get(collective)
    if cid not in table:
        return None, f"the file has no rules for {collective} (Open MPI keeps its fixed decision)"
    com = None
    for comsize, rules in sorted(table[cid], key=lambda x: x[0]):
        if comsize <= P:
            com = (comsize, rules)
    if com is None:
        return None, f"no communicator-size rule at most P={P} (Open MPI keeps its fixed decision)"
    size = library_message_size("openmpi", collective, P, m)["dsize"]
    rule = None
    for r in sorted(com[1]):
        if r[0] <= size:
            rule = r
    if rule is None:
        return None, f"no message rule at most {size} B"
    _, alg, fan, seg = rule
    if alg == 0:
        return None, "the rule says 0 (ignore: Open MPI keeps its fixed decision)"
    name = OPENMPI_ALGORITHMS.get(collective, {}).get(alg, f"algorithm {alg}")
    extra = ", ".join(x for x in (f"fan {fan}" if fan else "", f"segment {seg} B" if seg else "") if x)
    return Named(f"{name}" + (f" ({extra})" if extra else ""), "openmpi",
                 {"id": alg, "fan": fan, "segment": seg}), f"communicator size {com[0]}, from {rule[0]} B"


def named_algorithm(library: str, path, collective: str, P: int, m: int) -> tuple:
    """``(Named or None, why)`` for the file at ``path`` read as ``library`` ("mpich" or "openmpi")."""
    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as err:
        raise TlopError(f"{printable(str(path))}: cannot read the tuning file: "
                        f"{getattr(err, 'strerror', None) or err}") from None
    if library == "mpich":
        try:
            tree = json.loads(text)
        except ValueError as err:
            raise TlopError(f"{printable(str(path))}: not JSON ({err}); MPICH reads a JSON selection") from None
        top = tree.get(f"collective={collective}") if isinstance(tree, dict) else None
        if top is None:
            return None, f"the file has no 'collective={collective}' (MPICH then has no algorithm for it)"
        return mpich_named(top, collective, P, m)
    try:
        return openmpi_named(text, collective, P, m)
    except TlopError as err:
        raise TlopError(f"{printable(str(path))}: {err.diagnostics[0].message}") from None


#: MPICH's tree-broadcast parameters that have a CVAR (used when the algorithm is forced by CVAR)
_MPICH_TREE = {"tree_type": "MPIR_CVAR_BCAST_TREE_TYPE", "k": "MPIR_CVAR_BCAST_TREE_KVAL",
               "is_non_blocking": "MPIR_CVAR_BCAST_IS_NON_BLOCKING"}


def forcing_env(named: Named, collective: str) -> tuple:
    """``(environment, why-not)``: the variables that make the library run ``named`` without the
    file, or ({}, the reason) where a parameter of the file has no variable."""
    if named.library == "mpich":
        fn = named.detail["function"]
        if "_intra_" not in fn:
            return {}, f"{fn} is not an intra-communicator algorithm"
        env = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_COLLECTIVE_FALLBACK": "error",
               f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM": fn.split("_intra_", 1)[1]}
        for p in named.detail.get("params", []):
            k, _, v = p.partition("=")
            if k.startswith("topo_"):
                continue
            if k not in _MPICH_TREE:
                return {}, f"the file's parameter '{p}' has no CVAR to force it with"
            env[_MPICH_TREE[k]] = v
        return env, ""
    d = named.detail
    base = f"OMPI_MCA_coll_tuned_{collective}_algorithm"
    env = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_priority": "100",
           base: str(d["id"])}
    if d.get("segment"):
        env[base + "_segmentsize"] = str(d["segment"])
    if d.get("fan"):
        env[base + ("_chain_fanout" if collective in ("bcast", "reduce") and "chain" in named.name
                    else "_tree_fanout")] = str(d["fan"])
    return env, ""
