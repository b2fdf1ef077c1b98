"""Parameter names the stdlib has retired, still read (with a warning) where the new name is meant.

What it does: the segment size had three names in the stdlib — ``S`` in taulop, ``s`` in the
pLogP closed forms, ``seg`` in the LogGP/pLogP schedules and ``stdlib/coll`` — so ``tlop best
plogp/bcast … s=16KiB`` left the schedules out until ``seg=`` was given too (issue 25).  It is
now ``seg`` everywhere.  :func:`renamed_arguments` reads an old name (:data:`RENAMED`) as the new
one for an algorithm that has the new name and not the old, and warns once per call
(:class:`RenamedParameterWarning`, a ``UserWarning``: the command line prints it as ``tlop:
warning: …``); an algorithm that still declares the old name (a user's module with its own
``S``) is left alone, and an argument given under both names is left to binding (which reports
the old one as unknown).  :func:`rename_map` is the same decision for a set of names (a grid's
axes, before the values are read).

What it does not do: rename anything in ``.tlop`` sources, or accept old names for algorithms that
never had them in the stdlib (the rule is by name, so ``S=`` for a user's algorithm with ``seg``
is read as ``seg`` too — with the warning saying so).
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable, Mapping

__all__ = ["RENAMED", "RenamedParameterWarning", "renamed_arguments", "rename_map", "retired_note", "rename_in_place"]

#: an old parameter name -> its name now
RENAMED = {"S": "seg", "s": "seg"}


class RenamedParameterWarning(UserWarning):
    """An argument was given under a parameter name the stdlib has retired."""


def rename_map(given: Iterable[str], names) -> dict:
    """``{old: new}`` for the names in ``given`` that an algorithm with parameters ``names`` reads
    under their new name (the new name declared, the old one not, the new one not given too)."""
    given = list(given)
    return {k: RENAMED[k] for k in given
            if k in RENAMED and k not in names and RENAMED[k] in names and RENAMED[k] not in given}


def retired_note(alg_name: str, renames: dict) -> str:
    """The warning's text for ``renames`` ({old: new}) of algorithm ``alg_name``."""
    parts = ", ".join(f"'{old}' is now '{new}'" for old, new in renames.items())
    news = ", ".join(f"{new}=" for new in dict.fromkeys(renames.values()))
    return (f"'{alg_name}': {parts} (the segment size has one name in the stdlib); read as {news} — write "
            f"{news} (the old name will be refused in a later version)")


def renamed_arguments(args: Mapping[str, Any], names, alg_name: str) -> Mapping[str, Any]:
    """``args`` with retired names replaced by the new ones (see the module docstring), warning;
    ``args`` itself when there is nothing to rename."""
    renames = rename_map(args, names)
    if not renames:
        return args
    warnings.warn(RenamedParameterWarning(retired_note(alg_name, renames)), stacklevel=3)
    return {renames.get(k, k): v for k, v in args.items()}


def rename_in_place(raw: dict, names, label: str) -> None:
    """Rename the retired names among the keys of ``raw`` (a command line's ``NAME=VALUE``
    assignments, in order) for parameters ``names`` (of one algorithm, or of every candidate of a
    comparison: then the old name counts only when no candidate declares it), warning once."""
    renames = rename_map(raw, names)
    if not renames:
        return
    warnings.warn(RenamedParameterWarning(retired_note(label, renames)), stacklevel=3)
    items = [(renames.get(k, k), v) for k, v in raw.items()]
    raw.clear()
    raw.update(items)
