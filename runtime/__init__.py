"""Platform profiles and the measurement runtime.

The profile API most callers need is re-exported here; see :mod:`tlop.runtime.profile` for the
rest (``TableData``, ``save_profile``, ``profile_from_dict`` …) and docs/profiles.rst for the
file format.  The re-exports are resolved on first use, so that importing a light module of
this package (``tlop.runtime.diagnostics``, ``tlop.runtime.units``) does not import numpy.
"""

__all__ = ["Profile", "ProfileError", "load_profile", "default_profile", "bundled_profiles"]


def __getattr__(name):
    if name in __all__:
        from tlop.runtime import profile

        value = getattr(profile, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tlop.runtime' has no attribute {name!r}")
