"""Process mappings: which node (and which kind of processor) each rank runs on.

A mapping is a value that an algorithm declared ``over mapping`` receives at evaluation time; the
schedule layer asks it, for every send, whether source and destination share a node (channel
``shm``) or not (``net``), and on which node each transfer lands (for contention).

Three kinds, matching the reference library (``libtaulop`` ``src/mapping.cpp``) and the papers:

``sequential(Q)``
    ranks fill a node before the next one starts: ``node(p) = ⌊p / Q⌋`` (Q ranks per node).
    ``sequential(nodes=M)`` is the same with ``Q = ⌈P / M⌉``.
``round_robin(Q)``
    ranks are dealt to the nodes in turn: ``node(p) = p mod M`` with ``M = ⌈P / Q⌉`` nodes, which
    is what the reference library computes for Q ranks per node.  ``round_robin(nodes=M)`` gives
    the node count directly.
a layout (``Layout``)
    an explicit table rank → node (and optionally rank → processor kind), read from a JSON or CSV
    file (:func:`read_layout`), from an MPI host file (``node0:8`` per line as ``mpiexec -f`` of
    MPICH's Hydra and ``smpirun -hostfile`` read it, or ``node0 slots=8`` as Open MPI's
    ``mpirun --hostfile``; each host's slots filled in turn), or written ``4x8`` (4 nodes of 8
    ranks, filled in turn); it fixes P.

``sequential`` and ``round_robin`` take an optional ``rack=R`` (``sequential(8, rack=4)``): nodes
``0 … R−1`` form rack 0, the next R rack 1, … (``rack(x) = ⌊x / R⌋``, :meth:`Mapping.rack_of`),
for the ``rack`` contention key.  Without it (and for layouts) the whole machine is one rack.

What it does: parse the textual forms the command line takes (:func:`parse_mapping`), read and
validate layout files with errors that name the file and the field, and compute node numbers
for arrays of ranks (numpy, vectorised).  What it does not do: decide channels or contention —
that is the platform's declaration, applied by the compiler.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from tlop.runtime.diagnostics import TlopError

__all__ = ["Mapping", "Sequential", "RoundRobin", "Layout", "sequential", "round_robin",
           "parse_mapping", "read_layout", "layout_from_dict", "layout_from_hostfile", "MappingError", "MAX_RANKS"]

#: the largest process count a mapping describes (a layout file larger than this is refused
#: before it is read into memory)
MAX_RANKS = 1 << 24


class MappingError(TlopError):
    """A mapping is malformed or does not fit the process count it is used with."""

    code = "E021"


class Mapping:
    """Base class: a rule placing ranks ``0 … P−1`` on nodes ``0 … nodes(P)−1``."""

    kind: str = ""
    #: nodes per rack (None: the whole machine is one rack)
    rack: Optional[int] = None

    def node_of(self, ranks, P: int):
        """Node number of each rank (an int for an int, an int array for an array)."""
        raise NotImplementedError

    def nodes(self, P: int) -> int:
        """How many nodes the mapping uses for ``P`` ranks."""
        raise NotImplementedError

    def rack_of(self, nodes):
        """Rack number of each node number (``⌊x / rack⌋``; 0 for every node without racks)."""
        if self.rack is None:
            return np.zeros_like(nodes) if isinstance(nodes, np.ndarray) else 0
        return np.floor_divide(nodes, self.rack)

    def check(self, P: int) -> None:
        """Raise :class:`MappingError` when the mapping cannot place ``P`` ranks."""
        if not (isinstance(P, (int, np.integer)) and 1 <= P <= MAX_RANKS):
            raise MappingError(f"{self}: cannot map P={P} ranks (1 … {MAX_RANKS:,})")

    def describe(self) -> str:
        return str(self)


def _positive_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_RANKS:
        raise MappingError(f"{what} must be a whole number between 1 and {MAX_RANKS:,}, not {value!r}")
    return int(value)


def _check_q_or_m(mapping, what: str) -> None:
    """Exactly one of ``Q`` (ranks per node) and ``M`` (node count), a positive whole number;
    ``rack`` (nodes per rack) None or a positive whole number."""
    if mapping.rack is not None:
        _positive_int(mapping.rack, f"{what}: rack (nodes per rack)")
    if (mapping.Q is None) == (mapping.M is None):
        raise MappingError(f"{what}: give the ranks per node Q or the node count, not both")
    if mapping.Q is not None:
        _positive_int(mapping.Q, f"{what}: Q (ranks per node)")
    else:
        _positive_int(mapping.M, f"{what}: the node count")


def _args(mapping) -> str:
    """The arguments of a sequential or round-robin mapping's text form (parsed back by :func:`parse_mapping`)."""
    first = str(mapping.Q) if mapping.Q is not None else f"nodes={mapping.M}"
    return first if mapping.rack is None else f"{first}, rack={mapping.rack}"


@dataclass(frozen=True)
class Sequential(Mapping):
    """``node(p) = ⌊p / Q⌋``; give ``Q`` (ranks per node) or ``M`` (node count), not both."""
    Q: Optional[int] = None
    M: Optional[int] = None
    rack: Optional[int] = None
    kind = "sequential"

    def __post_init__(self):
        _check_q_or_m(self, "sequential mapping")

    def per_node(self, P: int) -> int:
        return self.Q if self.Q is not None else -(-P // self.M)

    def node_of(self, ranks, P: int):
        return np.floor_divide(ranks, self.per_node(P))

    def nodes(self, P: int) -> int:
        return -(-P // self.per_node(P))

    def __str__(self) -> str:
        return f"sequential({_args(self)})"


@dataclass(frozen=True)
class RoundRobin(Mapping):
    """``node(p) = p mod M`` with ``M = ⌈P / Q⌉`` (give ``Q``) or ``M`` nodes (give ``M``)."""
    Q: Optional[int] = None
    M: Optional[int] = None
    rack: Optional[int] = None
    kind = "round_robin"

    def __post_init__(self):
        _check_q_or_m(self, "round-robin mapping")

    def nodes(self, P: int) -> int:
        return self.M if self.M is not None else max(1, -(-P // self.Q))

    def node_of(self, ranks, P: int):
        return np.remainder(ranks, self.nodes(P))

    def __str__(self) -> str:
        return f"round_robin({_args(self)})"


@dataclass(frozen=True)
class Layout(Mapping):
    """An explicit placement: ``node[p]`` (0-based node numbers) and optionally ``kinds[p]``."""
    node: tuple
    kinds: Optional[tuple] = None
    node_names: tuple = ()
    source: str = field(default="<layout>", compare=False)
    kind = "layout"

    @property
    def P(self) -> int:
        return len(self.node)

    def check(self, P: int) -> None:
        if P != len(self.node):
            raise MappingError(f"{self.source}: the layout places {len(self.node)} ranks, "
                               f"but the algorithm is evaluated with P={P}")

    def node_of(self, ranks, P: int):
        self.check(P)
        table = np.asarray(self.node, dtype=np.int64)
        r = np.asarray(ranks)
        if np.any((r < 0) | (r >= len(table))):
            raise MappingError(f"{self.source}: rank outside 0 … {len(table) - 1}")
        out = table[r.astype(np.int64)]
        return int(out) if out.ndim == 0 else out

    def nodes(self, P: int) -> int:
        self.check(P)
        return int(max(self.node)) + 1

    def __str__(self) -> str:
        return f"layout {self.source} ({len(self.node)} ranks on {max(self.node) + 1} nodes)"


def sequential(Q: Optional[int] = None, *, nodes: Optional[int] = None, rack: Optional[int] = None) -> Sequential:
    """Ranks fill nodes in order, ``Q`` per node (``sequential(8)``) or on ``nodes`` nodes;
    ``rack``: nodes per rack (default: one rack)."""
    return Sequential(Q=Q, M=nodes, rack=rack)


def round_robin(Q: Optional[int] = None, *, nodes: Optional[int] = None, rack: Optional[int] = None) -> RoundRobin:
    """Ranks dealt to nodes in turn: ``⌈P/Q⌉`` nodes (``round_robin(8)``) or ``nodes`` nodes;
    ``rack``: nodes per rack (default: one rack)."""
    return RoundRobin(Q=Q, M=nodes, rack=rack)


_CALL = re.compile(r"^\s*(sequential|seq|round_robin|rr)\s*\(\s*(?:(nodes|Q)\s*=\s*)?([^),]*?)\s*"
                   r"(?:,\s*rack\s*=\s*([^)]*?)\s*)?\)\s*$")


def parse_mapping(text: str) -> Mapping:
    """A mapping from its command-line form: ``sequential(8)``, ``round_robin(nodes=4)``, or the
    path of a layout file (``.json`` or ``.csv``)."""
    if not isinstance(text, str) or not text.strip():
        raise MappingError("--mapping needs a value: sequential(Q), round_robin(Q), "
                           "round_robin(nodes=M) or a layout file")
    m = _CALL.match(text)
    if m:
        fn, key, arg, rack = m.groups()
        if not re.fullmatch(r"[0-9]+", arg or ""):
            raise MappingError(f"--mapping {text}: the argument must be a positive whole number")
        if rack is not None and not re.fullmatch(r"[0-9]+", rack):
            raise MappingError(f"--mapping {text}: rack (nodes per rack) must be a whole number >= 1, "
                               f"e.g. {fn}({arg}, rack=4)")
        n = int(arg)
        r = None if rack is None else int(rack)
        make = sequential if fn in ("sequential", "seq") else round_robin
        return make(nodes=n, rack=r) if key == "nodes" else make(n, rack=r)
    bare = text.strip()
    if bare in ("sequential", "seq", "round_robin", "rr") and not Path(text).exists():
        fn = "sequential" if bare.startswith("seq") else "round_robin"
        raise MappingError(f"--mapping {text}: missing the ranks per node: {fn}(Q), e.g. {fn}(8), "
                           f"or the number of nodes: {fn}(nodes=M) (tlop show --mapping {fn} keeps Q symbolic)")
    grid = re.fullmatch(r"\s*([0-9]+)\s*[xX×]\s*([0-9]+)\s*", text)
    if grid and not Path(text).exists():
        nodes, per = int(grid.group(1)), int(grid.group(2))
        if nodes < 1 or per < 1 or nodes * per > MAX_RANKS:
            raise MappingError(f"--mapping {text}: NODESxRANKS needs whole numbers >= 1 "
                               f"(at most {MAX_RANKS:,} ranks), e.g. 4x8")
        return Layout(node=tuple(p // per for p in range(nodes * per)), source=text.strip())
    if re.match(r"^\s*\w+\s*\(", text):
        raise MappingError(f"--mapping {text}: unknown mapping; use sequential(Q), round_robin(Q), "
                           f"round_robin(nodes=M) (each optionally with , rack=R), or the path of a layout file")
    return read_layout(text)


def read_layout(path: Union[str, Path]) -> Layout:
    """Read a layout file: JSON (``{"tlop_layout": 1, "ranks": [{"node": …, "kind": …}, …]}``)
    or CSV (header ``rank,node`` and optionally ``kind``)."""
    p = Path(path)
    name = str(path)
    if not p.is_file():
        raise MappingError(f"{name}: cannot read the layout: {'is a directory' if p.is_dir() else 'no such file'}")
    if p.stat().st_size > 64 * MAX_RANKS:
        raise MappingError(f"{name}: the layout file is too large")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise MappingError(f"{name}: not a layout: the file is not UTF-8 text") from None
    except OSError as err:
        raise MappingError(f"{name}: cannot read the layout: {err.strerror or err}") from None
    if p.suffix.lower() == ".csv":
        return _layout_from_csv(text, name)
    if p.suffix.lower() != ".json" and not text.lstrip().startswith(("{", "[")):
        return layout_from_hostfile(text, name)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise MappingError(f"{name}:{err.lineno}:{err.colno}: not valid JSON: {err.msg}") from None
    except (RecursionError, ValueError) as err:
        raise MappingError(f"{name}: not a layout: {err}") from None
    return layout_from_dict(data, name)


def layout_from_dict(data, source: str = "<layout>") -> Layout:
    """Validate a layout given as parsed JSON; errors name the field (``ranks[3].node``)."""
    if not isinstance(data, dict):
        raise MappingError(f"{source}: a layout is a JSON object with a 'ranks' list")
    version = data.get("tlop_layout")
    if version != 1:
        raise MappingError(f"{source}: tlop_layout: expected 1 (the layout format version), got {version!r}")
    unknown = set(data) - {"tlop_layout", "name", "description", "ranks", "nodes"}
    if unknown:
        raise MappingError(f"{source}: unknown field(s) {', '.join(sorted(map(str, unknown)))}; "
                           f"a layout has tlop_layout, name, description, nodes, ranks")
    ranks = data.get("ranks")
    if not isinstance(ranks, list) or not ranks:
        raise MappingError(f"{source}: ranks: expected a non-empty list of {{\"node\": …}} objects")
    if len(ranks) > MAX_RANKS:
        raise MappingError(f"{source}: ranks: {len(ranks):,} ranks; at most {MAX_RANKS:,}")
    nodes_decl = data.get("nodes")
    if nodes_decl is not None and not isinstance(nodes_decl, dict):
        raise MappingError(f"{source}: nodes: expected an object of node name → description")
    entries = []
    for i, r in enumerate(ranks):
        where = f"{source}: ranks[{i}]"
        if not isinstance(r, dict) or "node" not in r:
            raise MappingError(f"{where}: expected an object with a 'node' field")
        extra = set(r) - {"node", "kind"}
        if extra:
            raise MappingError(f"{where}: unknown field(s) {', '.join(sorted(map(str, extra)))} (node, kind)")
        node = r["node"]
        if isinstance(node, bool) or not isinstance(node, (int, str)) or (isinstance(node, int) and node < 0):
            raise MappingError(f"{where}.node: expected a node name or a number >= 0, got {node!r}")
        if nodes_decl is not None and isinstance(node, str) and node not in nodes_decl:
            raise MappingError(f"{where}.node: node {node!r} is not declared in 'nodes'")
        kind = r.get("kind")
        if kind is not None and not isinstance(kind, str):
            raise MappingError(f"{where}.kind: expected a processor kind name such as \"cpu\", got {kind!r}")
        entries.append((node, kind))
    return _build(entries, source)


_HOST_LINE = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)(?::([0-9]+))?(?:\s+(.*))?$")


def layout_from_hostfile(text: str, source: str = "<hostfile>") -> Layout:
    """A layout from an MPI host file: one host per line, ``node0:8`` (MPICH Hydra's
    ``mpiexec -f``, SimGrid's ``smpirun -hostfile``), ``node0 slots=8`` (Open MPI's
    ``mpirun --hostfile``) or ``node0`` (one slot); ``#`` starts a comment.  Ranks fill each
    host's slots in turn, in the order of the file (the default placement of both launchers:
    by slot); a host named twice adds slots to the same node."""
    entries = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _HOST_LINE.match(line)
        slots_t = None
        if m:
            host, slots_t, rest = m.groups()
            if rest:
                opts = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
                bad = [kv for kv in rest.split() if "=" not in kv]
                if bad or set(opts) - {"slots", "max_slots", "max-slots"}:
                    m = None
                elif "slots" in opts:
                    if slots_t is not None or not opts["slots"].isdigit():
                        m = None
                    slots_t = opts["slots"]
        if not m:
            raise MappingError(f"{source}:{line_no}: not a host line: {raw.strip()!r} "
                               f"(expected HOST, HOST:SLOTS or HOST slots=N)")
        slots = int(slots_t) if slots_t is not None else 1
        if slots < 1:
            raise MappingError(f"{source}:{line_no}: {host}: slots must be at least 1")
        if len(entries) + slots > MAX_RANKS:
            raise MappingError(f"{source}:{line_no}: more than {MAX_RANKS:,} ranks")
        entries.extend((host, None) for _ in range(slots))
    if not entries:
        raise MappingError(f"{source}: the host file names no host")
    return _build(entries, source)


def _layout_from_csv(text: str, source: str) -> Layout:
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if r and not (len(r) == 1 and not r[0].strip())]
    if not rows:
        raise MappingError(f"{source}: the layout is empty (expected a header rank,node[,kind])")
    header = [h.strip().lower() for h in rows[0]]
    if header[:2] != ["rank", "node"] or len(header) > 3 or (len(header) == 3 and header[2] != "kind"):
        raise MappingError(f"{source}:1: expected the header rank,node or rank,node,kind")
    placed = {}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise MappingError(f"{source}:{line}: expected {len(header)} fields, got {len(row)}")
        rank_t = row[0].strip()
        if not rank_t.isdigit():
            raise MappingError(f"{source}:{line}: rank: expected a number >= 0, got {row[0]!r}")
        rank = int(rank_t)
        if rank in placed:
            raise MappingError(f"{source}:{line}: rank {rank} is placed twice")
        if rank >= MAX_RANKS:
            raise MappingError(f"{source}:{line}: rank {rank} is beyond {MAX_RANKS:,}")
        node = row[1].strip()
        if not node:
            raise MappingError(f"{source}:{line}: node: empty")
        kind = row[2].strip() if len(header) == 3 and row[2].strip() else None
        placed[rank] = (int(node) if node.isdigit() else node, kind)
    if not placed:
        raise MappingError(f"{source}: the layout places no rank")
    missing = sorted(set(range(len(placed))) - set(placed))
    if missing:
        raise MappingError(f"{source}: ranks must be 0 … {len(placed) - 1}; rank {missing[0]} is missing")
    return _build([placed[r] for r in range(len(placed))], source)


def _build(entries: Sequence[tuple], source: str) -> Layout:
    """Node numbers in order of first appearance for named nodes; numbered nodes keep numbers."""
    names = {}
    numbers = []
    numeric = all(isinstance(n, int) for n, _ in entries)
    for n, _ in entries:
        if numeric:
            numbers.append(n)
        else:
            key = str(n)
            names.setdefault(key, len(names))
            numbers.append(names[key])
    if numeric and max(numbers) >= len(numbers) * 4 + 1024:
        raise MappingError(f"{source}: node numbers up to {max(numbers)} for {len(numbers)} ranks; "
                           f"number the nodes 0, 1, 2, … or name them")
    kinds = tuple(k for _, k in entries)
    has_kinds = any(k is not None for k in kinds)
    if has_kinds and any(k is None for k in kinds):
        first = next(i for i, k in enumerate(kinds) if k is None)
        raise MappingError(f"{source}: ranks[{first}]: a kind is given for some ranks but not this one")
    return Layout(node=tuple(numbers), kinds=kinds if has_kinds else None,
                  node_names=tuple(names) if names else (), source=source)
