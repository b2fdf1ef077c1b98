"""The cost IR (:mod:`tlop.ir.nodes`) and the passes that define its meaning once.

Types: :mod:`tlop.ir.types` (dimensions and the rule of each operator), :mod:`tlop.ir.typecheck`
(the rule of each node; ``annotate`` types the nodes a pass built without a type) and
:mod:`tlop.ir.verify` (checks every annotation; tests run it after lowering and between passes).
"""

from tlop.ir.nodes import *  # noqa: F401,F403
from tlop.ir.nodes import __all__  # noqa: F401
