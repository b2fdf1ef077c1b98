"""Where tlop keeps its per-user caches (compiled code, checked IR).

``$TLOP_CACHE_DIR`` if set (``off``/``none``/``0``/empty: no cache at all), else
``~/.cache/tlop/jit`` (the historical name: the JIT's object files live at its top level, other
caches in sub-folders).  Nothing here creates the directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

__all__ = ["user_cache_dir"]


def user_cache_dir() -> Optional[Path]:
    """The cache directory, or None when caching is disabled (``TLOP_CACHE_DIR=off``)."""
    env = os.environ.get("TLOP_CACHE_DIR")
    if env is not None:
        if env.strip().lower() in ("", "off", "none", "0"):
            return None
        return Path(env).expanduser()
    return Path.home() / ".cache" / "tlop" / "jit"
