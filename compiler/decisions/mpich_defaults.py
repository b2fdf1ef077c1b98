"""MPICH's built-in decisions: its JSON selection tree, evaluated as MPICH's ``csel`` does.

What it does: :func:`decide` walks MPICH's collective-selection tree for one call — by default
the tree compiled into the ``mpich`` wheel's ``libmpi`` (:func:`default_tree`, found by
:func:`mpich_default_selection`; in MPICH's source it is
``maint/tuning/coll/mpir/generic.json``, compiled into ``src/mpi/coll/src/csel_container.c``), or
any tree given (a selection file MPICH would load instead) — and returns the ``MPIR_…`` function
it reaches with the parameters of that leaf.

How MPICH walks it (``src/mpi/coll/src/csel.c``, tag v5.0.1, commit
f47d175fffa7ac9aecd912079be6bdb723c8e706; unchanged on the 5.0.x branch head f5694eb9, from which
the 5.0.2 wheel comes): ``parse_json_tree`` (l. 321-545) turns each JSON object into a chain of
nodes in key order — a key's subtree is its *success* branch, the next key of the same object its
*failure* branch, and an ``algorithm=…``/``composition=…`` key ends the walk with that leaf
(the container keeps the parameters written under it, ``csel_container.c``).  The walk tries the
keys of an object in order and descends into the first whose test holds (``MPIR_Csel_search``,
l. 1175-1364; keys ending in ``=any`` always hold).  Communicator tests are decided once per
communicator by ``prune_tree`` (l. 592-679) — there ``comm_size<N`` is strict — while a
communicator test met *below* a message test is decided by the search, where ``comm_size<N``
is tested as ``<=`` (l. 1219-1224); :func:`decide` does the same.  The tests:
``collective=``; ``comm_type=intra|inter``; ``comm_size<=N``, ``comm_size<N``,
``comm_size=pow2``, ``comm_size=node_comm_size`` (the communicator is on one node);
``comm_avg_ppn<=N``/``<N`` (local_size ≤ N · number of nodes, and the communicator knows its
nodes); ``comm_hierarchy=parent`` (``MPIR_Comm_is_parent_comm``: a communicator with a node
hierarchy that is not itself a node or node-roots sub-communicator — ``MPI_COMM_WORLD`` and its
user duplicates; ``=node``, ``=node_roots`` and ``=flat`` all test *not parent*, l. 521-532);
``is_node_consecutive=yes|no``; ``avg_msg_size``, ``total_msg_size`` and ``count`` ``<=N``/``<N``
(their values per collective: :func:`tlop.decisions.library_size.mpich_sizes`); ``count<pow2``
(count < the largest power of two ≤ P); ``is_commutative``, ``is_op_built_in``,
``is_sendbuf_inplace``, ``is_block_regular``, ``is_multi_threaded`` ``=yes|no``.

The communicator facts a tree may ask are arguments; with ``mapping`` (a
:class:`tlop.runtime.mapping.Mapping`) the node facts come from it.  MPI_COMM_WORLD on one node
is the default: a parent communicator, node-consecutive, on one node.  ``parent_comm`` not given is
derived as MPICH does: a parent communicator unless every rank is on its own node.

What it does not do: read the ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM`` forcing variables, or the
device-level (``MPIDI_…``) selection MPICH applies before it (the tests set
``MPIR_CVAR_DEVICE_COLLECTIVES=none``, as the project's MPICH runs do), or price anything.
"""

from __future__ import annotations

import json
from typing import Optional

from tlop.decisions.library_size import mpich_sizes
from tlop.decisions.openmpi_defaults import Decision

__all__ = ["decide", "default_tree", "grid", "known_algorithms", "leaf_params", "mpich_default_selection", "SOURCE"]

SOURCE = ("src/mpi/coll/src/csel.c MPIR_Csel_search, MPICH v5.0.1 (f47d175fffa7ac9aecd912079be6bdb723c8e706); "
          "default tree maint/tuning/coll/mpir/generic.json as compiled into the mpich wheel's libmpi")


def default_tree(lib=None) -> dict:
    """MPICH's default selection tree, read from its ``libmpi`` (the ``mpich`` wheel's unless
    ``lib`` names one); ValueError when there is none."""
    tree = mpich_default_selection(lib)
    if tree is None:
        raise ValueError("MPICH's default selection tree was not found (no mpich wheel's libmpi beside this "
                         "Python); pass tree= explicitly")
    return tree


def known_algorithms(lib=None) -> frozenset:
    """The ``MPIR_…`` names MPICH's selection files may use: the ``"algorithm=MPIR_…"`` strings its
    container parser compares keys with (``csel_container.c``, which aborts on any other), read
    from the ``libmpi`` beside the interpreter (or ``lib``); empty when there is none."""
    import re
    import sys
    from pathlib import Path

    paths = [Path(lib)] if lib else sorted(Path(sys.prefix, "lib").glob("libmpi.so*"))
    for path in sorted(paths, key=lambda p: p.stat().st_size if p.exists() else 0, reverse=True):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found = frozenset(x.decode() for x in re.findall(rb"algorithm=(MPIR_[A-Za-z0-9_]+)\x00", data))
        if found:
            return found
    return frozenset()


def _pof2(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def _number(key: str, op: str) -> int:
    return int(key.split(op, 1)[1])


def leaf_params(params: dict) -> dict:
    """``{"k=4": {}, "tree_type=kary": {}}`` → ``{"k": 4, "tree_type": "kary"}``."""
    out = {}
    for key in params:
        name, _, value = key.partition("=")
        try:
            out[name] = int(value)
        except ValueError:
            out[name] = value
    return out


class _Call:
    """The facts of one call that the tree's tests read."""

    def __init__(self, collective, P, m, commutative, dtype_size, mapping, parent_comm, node_consecutive,
                 nodes, inplace, op_built_in, block_regular, threaded, intercomm):
        self.collective, self.P = collective, int(P)
        self.sizes = mpich_sizes(collective, P, m, dtype_size)
        self.commutative, self.inplace, self.op_built_in = commutative, inplace, op_built_in
        self.block_regular, self.threaded, self.intercomm = block_regular, threaded, intercomm
        if mapping is not None:
            nodes = mapping.nodes(self.P)
            node = list(mapping.node_of(range(self.P), self.P))
            if node_consecutive is None:
                # MPII_Comm_is_node_consecutive: every node's ranks form one run, in node order
                node_consecutive = all(a <= b for a, b in zip(node, node[1:]))
        self.nodes = 1 if nodes is None else int(nodes)
        self.node_consecutive = True if node_consecutive is None else node_consecutive
        if parent_comm is None:
            # MPIR_Comm_commit (src/mpi/comm/commutil.c) builds the node sub-communicators, and so
            # makes a parent communicator, only when num_external != local_size: some node holds
            # two ranks
            parent_comm = self.nodes < self.P
        self.parent_comm = parent_comm

    def size(self, what: str, key: str) -> int:
        if what not in self.sizes:
            raise ValueError(f"MPICH's tree asks {what} for {self.collective} ({key!r}), which csel.c does not "
                             f"define for it (MPICH would abort)")
        return self.sizes[what]

    def holds(self, key: str, below_message: bool) -> bool:
        k = key.replace(" ", "")
        if k == "any" or k.endswith("=any"):
            return True
        if k.startswith("collective="):
            return k[len("collective="):] == self.collective
        if k == "comm_type=intra":
            return not self.intercomm
        if k == "comm_type=inter":
            return self.intercomm
        if k.startswith("comm_size<="):
            return self.P <= _number(k, "<=")
        if k.startswith("comm_size<"):
            n = _number(k, "<")
            return self.P <= n if below_message else self.P < n  # csel.c l. 1220 vs l. 620
        if k == "comm_size=pow2":
            return self.P & (self.P - 1) == 0
        if k == "comm_size=node_comm_size":
            return self.nodes == 1
        if k.startswith("comm_avg_ppn<="):
            return self.P <= _number(k, "<=") * self.nodes
        if k.startswith("comm_avg_ppn<"):
            return self.P < _number(k, "<") * self.nodes
        if k == "comm_hierarchy=parent":
            return self.parent_comm
        if k in ("comm_hierarchy=node", "comm_hierarchy=node_roots", "comm_hierarchy=flat"):
            return not self.parent_comm  # csel.c l. 524-532: all three parse as val = false
        if k.startswith("is_node_consecutive="):
            return self.node_consecutive == (k.endswith("=yes"))
        if k == "count<pow2":
            return self.size("count", key) < _pof2(self.P)
        for what in ("avg_msg_size", "total_msg_size", "count"):
            if k.startswith(what + "<="):
                return self.size(what, key) <= _number(k, "<=")
            if k.startswith(what + "<"):
                return self.size(what, key) < _number(k, "<")
        flags = {"is_commutative": self.commutative, "is_op_built_in": self.op_built_in,
                 "is_sendbuf_inplace": self.inplace, "is_block_regular": self.block_regular,
                 "is_multi_threaded": self.threaded}
        name, _, value = k.partition("=")
        if name in flags and value in ("yes", "no"):
            return flags[name] == (value == "yes")
        raise ValueError(f"MPICH's csel has no test {key!r} (MPICH aborts on it: 'unknown key')")


def _walk(node: dict, call: _Call, below_message: bool, path: list):
    for key, sub in node.items():
        if key.startswith("algorithm=") or key.startswith("composition="):
            return key, sub
        if call.holds(key, below_message):
            path.append(key)
            msg = below_message or key.split("<")[0].split("=")[0] in ("avg_msg_size", "total_msg_size", "count")
            return _walk(sub, call, msg, path)
    return None, None


def decide(collective: str, P: int, m: int, commutative: bool = True, tree: Optional[dict] = None, *,
           dtype_size: int = 1, mapping=None, parent_comm: Optional[bool] = None,
           node_consecutive: Optional[bool] = None,
           nodes: Optional[int] = None, inplace: bool = False, op_built_in: bool = True,
           block_regular: bool = True, threaded: bool = False, intercomm: bool = False) -> Decision:
    """The ``MPIR_…`` algorithm (and its leaf's parameters) MPICH's selection ``tree`` (default:
    the wheel's, :func:`default_tree`) reaches for ``collective`` on ``P`` ranks with the model's
    message size ``m``; ValueError when the tree reaches no leaf (MPICH then falls back to its
    ``MPIR_<Coll>_allcomm_auto`` fallback path)."""
    if tree is None:
        tree = default_tree()
    call = _Call(collective, P, m, commutative, dtype_size, mapping, parent_comm, node_consecutive, nodes,
                 inplace, op_built_in, block_regular, threaded, intercomm)
    path: list = []
    key, params = _walk(tree, call, False, path)
    if key is None:
        raise ValueError(f"MPICH's selection tree has no leaf for {collective} on {P} ranks, m = {m}")
    name = key.split("=", 1)[1]
    short = name.split("_intra_", 1)[1] if "_intra_" in name else name
    return Decision("mpich", collective, name, short, leaf_params(params),
                    f"{SOURCE}: " + " / ".join(path))


def grid(collective: str, tree: Optional[dict] = None) -> tuple:
    """``(Ps, sizes)``: the communicator sizes and message-size thresholds (of any kind: avg,
    total, count) the tree of ``collective`` tests — the points an audit of it should include."""
    import re

    if tree is None:
        tree = default_tree()
    Ps, sizes = set(), set()

    def walk(node):
        for key, sub in node.items():
            k = key.replace(" ", "")
            hit = re.match(r"comm_size<=?(\d+)$", k)
            if hit:
                Ps.add(int(hit.group(1)))
            hit = re.match(r"(avg_msg_size|total_msg_size|count)<=?(\d+)$", k)
            if hit:
                sizes.add(int(hit.group(2)))
            if isinstance(sub, dict) and not k.startswith(("algorithm=", "composition=")):
                walk(sub)

    walk(tree.get(f"collective={collective}", {}))
    return tuple(sorted(Ps)), tuple(sorted(sizes))


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
