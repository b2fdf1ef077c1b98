"""Heterogeneous configurations as data: a process layout plus a data partition (paper 000 §2, §5.3).

A *configuration* says where each process runs and what part of the data it owns:

layout file (``"tlop_layout": 1``)
    rank → node, and optionally each node's *type* (``node_types``: cores and GPUs of that kind of
    machine), each rank's processor ``kind`` (``"cpu"`` or ``"gpu"``) and its ``cores``.  It is a
    process mapping (:class:`tlop.runtime.mapping.Layout`) like the files ``--mapping`` reads,
    with the extra fields; a plain ``--mapping`` layout file is a valid layout file here.
partition file (``"tlop_partition": 1``)
    the matrix size ``N`` (in blocks) and each rank's rectangle ``x, y, w, h`` in blocks (column,
    row, width, height); the rectangles must tile the ``N × N`` matrix exactly.
configuration file (``"tlop_config": 1``)
    a layout and named partitions in one file (the bundled examples, ``--config fig8``).

The schema is in ``docs/configurations.rst``.  Every error names the file, the line and column of
the offending value (:mod:`tlop.runtime.jsonpos`) and the field (``ranks[3].w``).

A :class:`Configuration` is the :class:`~tlop.runtime.mapping.Layout` an algorithm ``over`` a
mapping is evaluated with, plus the tables that its ``config`` declarations read
(:meth:`Configuration.table`): ``layout.node``, ``layout.gpu`` (1 for a GPU process),
``layout.cores``, ``layout.type`` (node type number), ``partition.N`` and ``partition.x/y/w/h``.

What it does not do: compute a partition (:mod:`tlop.runtime.partition`) or price anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional, Union

import numpy as np

from tlop.runtime.diagnostics import Diagnostic, Source, TlopError
from tlop.runtime.jsonpos import positions, span_of
from tlop.runtime.mapping import MAX_RANKS, Layout, MappingError, _build

__all__ = ["ConfigError", "Partition", "Configuration", "read_layout_file", "read_partition_file",
           "read_config_file", "bundled_configs", "load_config", "configuration", "layout_json",
           "partition_json", "CONFIG_FIELDS", "MAX_N"]

#: the largest matrix size (in blocks) a partition describes
MAX_N = 1 << 20

#: the fields each configuration table offers to ``config`` declarations: name -> (field -> per rank?)
CONFIG_FIELDS = {
    "layout": {"node": True, "gpu": True, "cores": True, "type": True},
    "partition": {"N": False, "x": True, "y": True, "w": True, "h": True},
}


class ConfigError(MappingError):
    """A layout, partition or configuration file is malformed, or does not fit its use."""


@dataclass(frozen=True)
class Partition:
    """Each rank's rectangle of an ``N × N`` matrix of blocks: columns ``x … x+w−1``, rows
    ``y … y+h−1``."""
    N: int
    x: tuple
    y: tuple
    w: tuple
    h: tuple
    name: str = ""
    kernel: str = ""
    description: str = ""
    source: str = field(default="<partition>", compare=False)

    @property
    def P(self) -> int:
        return len(self.x)

    def areas(self) -> np.ndarray:
        return np.asarray(self.w, dtype=np.int64) * np.asarray(self.h, dtype=np.int64)


@dataclass(frozen=True)
class Configuration(Layout):
    """A layout (a process mapping) with node types, cores and GPU flags per rank, and the
    partition in use (``partition``); ``partitions`` are the named alternatives a
    configuration file offers."""
    cores: tuple = ()
    node_type: tuple = ()             # node type number of each rank's node
    type_names: tuple = ()            # node type names, by number
    type_cores: tuple = ()            # cores of each node type (0: unknown)
    name: str = ""
    description: str = ""
    partition: Optional[Partition] = None
    partitions: tuple = ()            # ((name, Partition), …)

    kind = "layout"

    def check(self, P: int) -> None:
        super().check(P)
        if self.partition is not None and self.partition.P != P:
            raise ConfigError(f"{self.partition.source}: the partition has {self.partition.P} rectangles, "
                              f"but the layout places {P} ranks")

    def gpu(self) -> tuple:
        return tuple(int(k == "gpu") for k in (self.kinds or ("cpu",) * self.P))

    def table(self, config: str, name: str):
        """The values of ``config.name`` (``partition.x``: an int array over ranks;
        ``partition.N``: an int).  ConfigError when the configuration lacks them."""
        if config == "layout":
            values = {"node": self.node, "gpu": self.gpu(), "cores": self.cores or (1,) * self.P,
                      "type": self.node_type or (0,) * self.P}
        elif config == "partition":
            if self.partition is None:
                raise ConfigError(f"{self.source}: no partition: give --partition FILE (or a configuration "
                                  f"with one, --config NAME)")
            part = self.partition
            values = {"N": part.N, "x": part.x, "y": part.y, "w": part.w, "h": part.h}
        else:
            raise ConfigError(f"no configuration table '{config}' (tables: {', '.join(CONFIG_FIELDS)})")
        if name not in values:
            raise ConfigError(f"configuration table '{config}' has no field '{name}' "
                              f"(fields: {', '.join(values)})")
        v = values[name]
        return v if isinstance(v, int) else np.asarray(v, dtype=float)

    def with_partition(self, part: Optional[Partition]) -> "Configuration":
        if part is not None and part.P != self.P:
            raise ConfigError(f"{part.source}: the partition has {part.P} rectangles, but the layout "
                              f"{self.source} places {self.P} ranks")
        return replace(self, partition=part)

    def partition_named(self, name: str) -> Partition:
        for n, p in self.partitions:
            if n == name:
                return p
        names = ", ".join(n for n, _ in self.partitions) or "none"
        raise ConfigError(f"{self.source}: no partition named '{name}' (partitions: {names})")

    def select_partition(self, kernel: str, N=None) -> "Configuration":
        """The configuration with the partition for ``kernel`` (an algorithm's name) and matrix
        size ``N``: the only one, else the one whose ``kernel`` and ``N`` match (a partition for
        ``summa`` serves ``summa_banded`` and ``summa_hloggp`` too)."""
        if self.partition is not None or not self.partitions:
            return self
        if len(self.partitions) == 1:
            return self.with_partition(self.partitions[0][1])
        fits = [p for _, p in self.partitions if (p.kernel == kernel or kernel.startswith(p.kernel + "_"))
                and (N is None or p.N == N)]
        if len(fits) == 1:
            return self.with_partition(fits[0])
        names = ", ".join(f"{n} ({p.kernel}, N={p.N})" for n, p in self.partitions)
        raise ConfigError(f"{self.source}: {len(fits) or 'no'} partition(s) fit {kernel}"
                          f"{'' if N is None else f' with N={N}'}; choose one with --partition NAME ({names})")

    def __str__(self) -> str:
        label = self.name or self.source
        out = f"{label} ({self.P} ranks on {max(self.node) + 1} nodes"
        if self.partition is not None:
            out += f", {self.partition.name or 'partition'} N={self.partition.N}"
        return out + ")"


# ---------------------------------------------------------------------------------------- reading

class _Doc:
    """One JSON document being validated: failures point at the value's line and column."""

    def __init__(self, text: str, source: str, base: tuple = (), index: Optional[dict] = None):
        self.src = Source(source, text)
        self.source = source
        self.index = positions(text) if index is None else index
        self.base = base

    @classmethod
    def parse(cls, text: str, source: str):
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as err:
            src = Source(source, text)
            from tlop.runtime.diagnostics import Span

            raise ConfigError(Diagnostic(f"not valid JSON: {err.msg}",
                                         Span(src, err.lineno, err.colno, err.lineno, err.colno))) from None
        except _Duplicate as dup:
            raise ConfigError(f"{source}: duplicate key '{dup.args[0]}'") from None
        except (RecursionError, ValueError) as err:
            raise ConfigError(f"{source}: not JSON: {err}") from None
        return cls(text, source), data

    def sub(self, path) -> "_Doc":
        out = _Doc.__new__(_Doc)
        out.src, out.source, out.index, out.base = self.src, self.source, self.index, self.base + tuple(path)
        return out

    def fail(self, path, message: str):
        full = self.base + tuple(path)
        shown = _field_path(full)
        raise ConfigError(Diagnostic(f"{shown}: {message}" if shown else message,
                                     span_of(self.src, self.index, full)))

    def obj(self, v, path, allowed, required=()):
        if not isinstance(v, dict):
            self.fail(path, f"expected an object, got {_describe(v)}")
        for k in v:
            if k not in allowed:
                self.fail(tuple(path) + (k,), f"unknown field; expected one of {', '.join(allowed)}")
        for k in required:
            if k not in v:
                self.fail(path, f"missing the field '{k}'")
        return v

    def integer(self, v, path, lo=0, hi=None, what="a whole number"):
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                self.fail(path, f"expected {what}, got {_describe(v)}")
        if v < lo or (hi is not None and v > hi):
            bound = f">= {lo}" if hi is None else f"between {lo} and {hi:,}"
            self.fail(path, f"expected {what} {bound}, got {v}")
        return v

    def text(self, v, path):
        if not isinstance(v, str):
            self.fail(path, f"expected a string, got {_describe(v)}")
        return v


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _field_path(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _describe(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return repr(v) if len(v) <= 40 else repr(v[:37]) + "…"
    return repr(v)


def _read_text(path: Union[str, Path], what: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{path}: cannot read the {what}: {'is a directory' if p.is_dir() else 'no such file'}")
    if p.stat().st_size > 64 * MAX_RANKS:
        raise ConfigError(f"{path}: the {what} file is too large")
    try:
        return p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a {what}: the file is not UTF-8 text") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the {what}: {err.strerror or err}") from None


_LAYOUT_KEYS = ("tlop_layout", "name", "description", "node_types", "nodes", "ranks")
_RANK_KEYS = ("node", "kind", "cores")
_TYPE_KEYS = ("cores", "gpus", "description")
_NODE_KEYS = ("type", "description")
_PART_KEYS = ("tlop_partition", "name", "description", "kernel", "N", "unit", "ranks")
_RECT_KEYS = ("x", "y", "w", "h")
_CONFIG_KEYS = ("tlop_config", "name", "description", "layout", "partitions")


def _layout(doc: _Doc, data, source: str) -> Configuration:
    doc.obj(data, (), _LAYOUT_KEYS, ("tlop_layout", "ranks"))
    if data["tlop_layout"] != 1:
        doc.fail(("tlop_layout",), f"expected 1 (the layout format version), got {_describe(data['tlop_layout'])}")
    types = data.get("node_types", {})
    doc.obj(types, ("node_types",), tuple(types) if isinstance(types, dict) else ())
    type_names, type_cores = [], []
    for t, spec in types.items():
        doc.obj(spec, ("node_types", t), _TYPE_KEYS)
        type_names.append(t)
        type_cores.append(doc.integer(spec.get("cores", 0), ("node_types", t, "cores"), 0, 1 << 20))
        doc.integer(spec.get("gpus", 0), ("node_types", t, "gpus"), 0, 1 << 10)
    nodes = data.get("nodes")
    node_type = {}
    if nodes is not None:
        if not isinstance(nodes, dict):
            doc.fail(("nodes",), f"expected an object of node name -> {{\"type\": …}}, got {_describe(nodes)}")
        for n, spec in nodes.items():
            if isinstance(spec, str):
                continue  # a description, as --mapping layout files have it
            doc.obj(spec, ("nodes", n), _NODE_KEYS)
            if "type" in spec:
                t = doc.text(spec["type"], ("nodes", n, "type"))
                if t not in type_names:
                    doc.fail(("nodes", n, "type"), f"node type '{t}' is not declared in node_types"
                             f"{' (' + ', '.join(type_names) + ')' if type_names else ''}")
                node_type[n] = type_names.index(t)
    ranks = data["ranks"]
    if not isinstance(ranks, list) or not ranks:
        doc.fail(("ranks",), "expected a non-empty list of {\"node\": …} objects")
    if len(ranks) > MAX_RANKS:
        doc.fail(("ranks",), f"{len(ranks):,} ranks; at most {MAX_RANKS:,}")
    entries, cores = [], []
    for i, r in enumerate(ranks):
        doc.obj(r, ("ranks", i), _RANK_KEYS, ("node",))
        node = r["node"]
        if isinstance(node, bool) or not isinstance(node, (int, str)) or (isinstance(node, int) and node < 0):
            doc.fail(("ranks", i, "node"), f"expected a node name or a number >= 0, got {_describe(node)}")
        if nodes is not None and isinstance(node, str) and node not in nodes:
            doc.fail(("ranks", i, "node"), f"node '{node}' is not declared in 'nodes'")
        kind = r.get("kind", "cpu")
        if kind not in ("cpu", "gpu"):
            doc.fail(("ranks", i, "kind"), f"expected \"cpu\" or \"gpu\", got {_describe(kind)}")
        cores.append(doc.integer(r.get("cores", 1), ("ranks", i, "cores"), 1, 1 << 20))
        entries.append((node, kind))
    try:
        base = _build(entries, source)
    except MappingError as err:
        doc.fail(("ranks",), str(err).split(": ", 1)[-1])
    names = base.node_names or tuple(str(n) for n in range(max(base.node) + 1))
    if node_type:
        missing = [n for n in names if n not in node_type]
        if missing:
            doc.fail(("nodes", missing[0]) if nodes and missing[0] in nodes else ("nodes",),
                     f"node '{missing[0]}' has no type (every node needs one when any has)")
        per_rank = tuple(node_type[names[n]] for n in base.node)
        used = np.bincount(np.asarray(base.node), weights=np.asarray(cores, dtype=float))
        for n, total in enumerate(used):
            limit = type_cores[node_type[names[n]]]
            if limit and total > limit:
                first = base.node.index(n)
                doc.fail(("ranks", first, "cores"), f"the ranks on node '{names[n]}' use {int(total)} cores; "
                         f"its type '{type_names[node_type[names[n]]]}' has {limit}")
    else:
        per_rank = (0,) * len(entries)
    return Configuration(node=base.node, kinds=tuple(k for _, k in entries), node_names=base.node_names,
                         source=source, cores=tuple(cores), node_type=per_rank, type_names=tuple(type_names),
                         type_cores=tuple(type_cores), name=str(data.get("name", "")),
                         description=str(data.get("description", "")))


def _partition(doc: _Doc, data, source: str, name: str = "") -> Partition:
    doc.obj(data, (), _PART_KEYS, ("tlop_partition", "N", "ranks"))
    if data["tlop_partition"] != 1:
        doc.fail(("tlop_partition",), f"expected 1 (the partition format version), got "
                 f"{_describe(data['tlop_partition'])}")
    if data.get("unit", "blocks") != "blocks":
        doc.fail(("unit",), f"expected \"blocks\", got {_describe(data['unit'])}")
    N = doc.integer(data["N"], ("N",), 1, MAX_N, "a matrix size in blocks")
    ranks = data["ranks"]
    if not isinstance(ranks, list) or not ranks:
        doc.fail(("ranks",), "expected a non-empty list of {\"x\", \"y\", \"w\", \"h\"} rectangles")
    if len(ranks) > MAX_RANKS:
        doc.fail(("ranks",), f"{len(ranks):,} rectangles; at most {MAX_RANKS:,}")
    rects = []
    for i, r in enumerate(ranks):
        doc.obj(r, ("ranks", i), _RECT_KEYS, _RECT_KEYS)
        x = doc.integer(r["x"], ("ranks", i, "x"), 0, N - 1, "a column")
        y = doc.integer(r["y"], ("ranks", i, "y"), 0, N - 1, "a row")
        w = doc.integer(r["w"], ("ranks", i, "w"), 1, N - x, "a width in blocks")
        h = doc.integer(r["h"], ("ranks", i, "h"), 1, N - y, "a height in blocks")
        rects.append((x, y, w, h))
    bad = _tiling_error(N, rects)
    if bad is not None:
        path, message = bad
        doc.fail(path, message)
    x, y, w, h = (tuple(c) for c in zip(*rects))
    return Partition(N=N, x=x, y=y, w=w, h=h, name=str(data.get("name", name)), kernel=str(data.get("kernel", "")),
                     description=str(data.get("description", "")), source=source)


def _tiling_error(N: int, rects: list):
    """(path, message) when the rectangles do not tile the N × N matrix exactly, else None."""
    r = np.asarray(rects, dtype=np.int64)
    x0, y0, x1, y1 = r[:, 0], r[:, 1], r[:, 0] + r[:, 2], r[:, 1] + r[:, 3]
    for i in range(len(r)):  # one overlap test per rectangle against the later ones (numpy over them)
        j = np.flatnonzero((x0[i + 1:] < x1[i]) & (x0[i] < x1[i + 1:]) & (y0[i + 1:] < y1[i]) & (y0[i] < y1[i + 1:]))
        if len(j):
            k = i + 1 + int(j[0])
            return ("ranks", k), f"rectangle {k} overlaps rectangle {i}"
    area = int((r[:, 2] * r[:, 3]).sum())
    if area != N * N:
        return ("ranks",), (f"the rectangles cover {area:,} of the {N * N:,} blocks of the {N} × {N} matrix; "
                            f"they must tile it exactly")
    return None


def _load(path, what: str):
    text = _read_text(path, what)
    return _Doc.parse(text, str(path))


def read_layout_file(path: Union[str, Path]) -> Configuration:
    """A layout file as a :class:`Configuration` without a partition."""
    doc, data = _load(path, "layout")
    return _layout(doc, data, str(path))


def read_partition_file(path: Union[str, Path]) -> Partition:
    """A partition file, validated (every rectangle inside the matrix, together tiling it)."""
    doc, data = _load(path, "partition")
    return _partition(doc, data, str(path), Path(path).stem)


def read_config_file(path: Union[str, Path]) -> Configuration:
    """A configuration file: its layout with its named partitions (none selected)."""
    doc, data = _load(path, "configuration")
    return _config(doc, data, str(path))


def _config(doc: _Doc, data, source: str) -> Configuration:
    doc.obj(data, (), _CONFIG_KEYS, ("tlop_config", "layout"))
    if data["tlop_config"] != 1:
        doc.fail(("tlop_config",), f"expected 1 (the configuration format version), got "
                 f"{_describe(data['tlop_config'])}")
    cfg = _layout(doc.sub(("layout",)), data["layout"], source)
    parts = data.get("partitions", {})
    if not isinstance(parts, dict):
        doc.fail(("partitions",), f"expected an object of name -> partition, got {_describe(parts)}")
    named = []
    for n, p in parts.items():
        part = _partition(doc.sub(("partitions", n)), p, source, n)
        if part.P != cfg.P:
            doc.sub(("partitions", n)).fail(("ranks",), f"{part.P} rectangles, but the layout places {cfg.P} ranks")
        named.append((n, replace(part, name=n)))
    return replace(cfg, name=str(data.get("name", cfg.name)), description=str(data.get("description", cfg.description)),
                   partitions=tuple(named))


def _configs_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "stdlib" / "configs"


def bundled_configs() -> dict:
    """Name -> path of the bundled configurations (``stdlib/configs/*.json``)."""
    d = _configs_dir()
    if not d.is_dir():
        from importlib import resources

        d = Path(str(resources.files("tlop.stdlib") / "configs"))
    return {p.stem: p for p in sorted(d.glob("*.json"))} if d.is_dir() else {}


def load_config(name_or_path: str) -> Configuration:
    """A bundled configuration by name (``fig8``, ``M10``) or a configuration file by path."""
    known = bundled_configs()
    if name_or_path in known:
        return read_config_file(known[name_or_path])
    if Path(name_or_path).is_file():
        return read_config_file(name_or_path)
    from difflib import get_close_matches

    near = get_close_matches(name_or_path, list(known), n=1)
    hint = f"; did you mean '{near[0]}'?" if near else ""
    raise ConfigError(f"--config {name_or_path}: no bundled configuration or file of that name{hint} "
                      f"(bundled: {', '.join(known) or 'none'})")


def configuration(config: Optional[str] = None, layout: Optional[str] = None,
                  partition: Optional[str] = None) -> Optional[Configuration]:
    """The configuration of the command-line options ``--config``, ``--layout`` and
    ``--partition`` (None when none is given).  ``--partition`` is a file, or with ``--config``
    the name of one of its partitions; ``--layout`` replaces the configuration's layout."""
    if config is None and layout is None and partition is None:
        return None
    cfg = load_config(config) if config is not None else None
    if layout is not None:
        lay = read_layout_file(layout)
        cfg = lay if cfg is None else replace(lay, partitions=cfg.partitions, name=lay.name or cfg.name)
    if cfg is None:
        raise ConfigError("--partition needs a layout: give --layout FILE or --config NAME as well")
    if partition is not None:
        if cfg.partitions and not Path(partition).is_file():
            cfg = cfg.with_partition(cfg.partition_named(partition))
        else:
            cfg = cfg.with_partition(read_partition_file(partition))
    return cfg


# ---------------------------------------------------------------------------------------- writing

def layout_json(cfg: Configuration) -> dict:
    """The layout of ``cfg`` as a layout-file object (the inverse of :func:`read_layout_file`)."""
    names = cfg.node_names or tuple(str(n) for n in range(max(cfg.node) + 1))
    out = {"tlop_layout": 1}
    if cfg.name:
        out["name"] = cfg.name
    if cfg.description:
        out["description"] = cfg.description
    if cfg.type_names:
        out["node_types"] = {t: {"cores": c} for t, c in zip(cfg.type_names, cfg.type_cores)}
        types = {}
        for r, n in enumerate(cfg.node):
            types[names[n]] = cfg.type_names[cfg.node_type[r]]
        out["nodes"] = {n: {"type": types[n]} for n in names}
    kinds = cfg.kinds or ("cpu",) * cfg.P
    cores = cfg.cores or (1,) * cfg.P
    out["ranks"] = [{"node": names[n] if cfg.node_names else n, "kind": k, "cores": c}
                    for n, k, c in zip(cfg.node, kinds, cores)]
    return out


def partition_json(part: Partition) -> dict:
    """A partition as a partition-file object (the inverse of :func:`read_partition_file`)."""
    out = {"tlop_partition": 1}
    for k in ("name", "kernel", "description"):
        if getattr(part, k):
            out[k] = getattr(part, k)
    out["N"] = part.N
    out["unit"] = "blocks"
    out["ranks"] = [{"x": int(a), "y": int(b), "w": int(c), "h": int(d)}
                    for a, b, c, d in zip(part.x, part.y, part.w, part.h)]
    return out
