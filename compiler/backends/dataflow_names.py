"""The names the dataflow back end (:mod:`tlop.backends.dataflow`) is keyed by, without it.

What it does: names the models whose schedules mean a dataflow program and the platform
functions a send is priced with, so that modules which only need the names (the API's
dependency walk, run by every ``tlop check``) do not import the back end and numpy with it.
What it does not do: anything else; the meaning is in :mod:`tlop.backends.dataflow`.
"""

__all__ = ["DATAFLOW_MODELS", "DATAFLOW_FUNCTIONS"]

#: the models whose schedules mean a dataflow program (every other model: τ-Lop's stages, or none)
DATAFLOW_MODELS = ("loggp", "plogp", "loggph")
#: the platform's functions of the message size m (bytes) a send is priced with
DATAFLOW_FUNCTIONS = ("send_overhead", "send_gap", "delivery", "recv_overhead")
