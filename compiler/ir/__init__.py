"""The cost IR (:mod:`tlop.ir.nodes`) and the passes that define its meaning once."""

from tlop.ir.nodes import *  # noqa: F401,F403
from tlop.ir.nodes import __all__  # noqa: F401
