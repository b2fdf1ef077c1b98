"""The libraries' built-in decisions, in the form the selection takes them.

What it does: :func:`default_decision` is what ``library`` runs by default for ``collective`` on
``P`` ranks with the model's message size ``m`` — Open MPI 5.0's fixed decision functions
(:mod:`tlop.decisions.openmpi_defaults`) or MPICH's compiled-in selection tree
(:mod:`tlop.decisions.mpich_defaults`) — as ``(algorithm id, params)``, None when the library
has no decision there (MPICH's tree reaches no leaf and falls back by itself).

What it does not do: price it (:mod:`tlop.decisions.selection`).
"""

from __future__ import annotations

from typing import Optional

__all__ = ["default_decision", "SOURCES"]


def default_decision(library: str, collective: str, P: int, m: int, mapping=None) -> Optional[tuple]:
    if library == "openmpi":
        from tlop.decisions.openmpi_defaults import TABLES, decide

        if collective not in TABLES:
            return None
        d = decide(collective, P, m)
    elif library == "mpich":
        from tlop.decisions.mpich_defaults import decide

        try:
            d = decide(collective, P, m, mapping=mapping)
        except ValueError:
            return None
    else:
        raise ValueError(f"no library {library!r}")
    return d.id, dict(d.params)


def SOURCES() -> dict:
    """Where each library's default decision is read from (file and version)."""
    from tlop.decisions import mpich_defaults, openmpi_defaults

    return {"openmpi": openmpi_defaults.SOURCE, "mpich": mpich_defaults.SOURCE}
