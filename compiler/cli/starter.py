"""``tlop new NAME``: a starter ``.tlop`` file, and ``tlop show --source``: a module's text.

What it does: writes a small, valid τ-Lop module (a closed-form algorithm, the same algorithm as
a schedule, and a ``where`` condition) with the commands to try on it; never overwrites a file.
What it does not do: check the file (``tlop check`` does; a test checks the starter).
"""

from __future__ import annotations

from pathlib import Path

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.text import printable

__all__ = ["starter_text", "write_starter"]

STARTER = '''# {name}: a starter τ-Lop module (tlop new).  Check it: tlop check {file}
model taulop
import "taulop/platform"

/// A chain broadcast: the root's m bytes pass along P processes, one transmission after the other
/// on channel c, so (P − 1)·T^c(m).  Try: tlop eval {file} chain P=8 m=1MiB
algorithm chain(P: int >= 1, m: bytes, c: channel = shm) =
    (P - 1) * T[c](m)

/// The same chain written stage by stage over a process mapping: the compiler derives its cost,
/// and puts the transfers of each stage on shm or net by where the ranks are.
/// Try: tlop eval {file} chain_stages P=8 m=1MiB --mapping 'sequential(4)'
///      tlop explain {file} chain_stages P=8 m=1KiB --mapping 'sequential(4)'
algorithm chain_stages(P: int >= 1, m: bytes) over map: mapping =
    stages s in 0 .. P - 2 {{
        send s -> s + 1 : m
    }}

/// A segmented chain: m is cut into segments of seg bytes that follow each other down the chain
/// (a pipeline of ⌈m/seg⌉ + P − 2 steps).  The where condition is checked at every point.
/// Try: tlop sweep {file} pipelined P=2..32:x2 m=1MiB seg=8KiB..1MiB:x4
algorithm pipelined(P: int >= 2, m: bytes, seg: bytes > 0B) where seg <= m =
    (ceil(m / seg) + P - 2) * T[shm](seg)
'''


def starter_text(name: str, file: str) -> str:
    return STARTER.format(name=name, file=file)


def write_starter(name: str) -> Path:
    """Write ``NAME.tlop`` (or ``NAME`` when it ends in ``.tlop``) and return its path; a
    TlopError if it exists or cannot be written."""
    path = Path(name if name.endswith(".tlop") else f"{name}.tlop")
    if path.exists():
        raise TlopError(f"{printable(str(path))} exists; tlop new never overwrites a file")
    stem = path.stem
    try:
        with open(path, "x", encoding="utf-8") as f:
            f.write(starter_text(stem, str(path)))
    except OSError as err:
        raise TlopError(f"{printable(str(path))}: cannot write: {err.strerror or err}") from None
    return path
