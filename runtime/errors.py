"""The error and warning types of the profile runtime.

What it does: defines the three user-facing conditions a platform profile can raise —
:class:`ProfileError` (a profile file or raw parameter file is malformed, or a name is missing),
:class:`OutOfGridError` (a lookup outside the measured grid when the profile's policy is
``"out_of_grid": "error"``) and :class:`OutOfGridWarning` (the same with ``"warn"``).

What it does not do: render anything — both errors are :class:`tlop.runtime.diagnostics.TlopError`, so
the CLI prints them like every other tlop error.
"""

from __future__ import annotations

from tlop.runtime.diagnostics import TlopError

__all__ = ["ProfileError", "OutOfGridError", "OutOfGridWarning"]


class ProfileError(TlopError):
    """A platform profile (or a libtaulop parameter file) is malformed, or asks for something
    the profile does not hold.  The message names the file and the exact field."""

    code = "E020"


class OutOfGridError(TlopError):
    """A table lookup fell outside the measured grid under ``"out_of_grid": "error"``; the
    message names the table, the channel, the offending value and the grid range."""

    code = "E020"


class OutOfGridWarning(UserWarning):
    """A table lookup fell outside the measured grid under ``"out_of_grid": "warn"`` (issued
    once per table)."""
