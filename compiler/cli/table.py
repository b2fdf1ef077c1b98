"""Moved to :mod:`tlop.display.table` (presentation shared by the command line and the Python API);
this name is the same module."""

import sys

from tlop.display import table as _moved

sys.modules[__name__] = _moved
