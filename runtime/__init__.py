"""Platform profiles and the measurement runtime.

The profile API most callers need is re-exported here; see :mod:`tlop.runtime.profile` for the
rest (``TableData``, ``save_profile``, ``profile_from_dict`` …) and docs/profiles.rst for the
file format.
"""

from tlop.runtime.profile import (Profile, ProfileError, bundled_profiles, default_profile,  # noqa: F401
                      load_profile)

__all__ = ["Profile", "ProfileError", "load_profile", "default_profile", "bundled_profiles"]
