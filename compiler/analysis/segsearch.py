"""Old import path of :mod:`tlop.apps.segsearch` (moved there with the paper applications, issue 23): this name is
that very module, so code written against the old path keeps running.  Import :mod:`tlop.apps.segsearch`."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("tlop.apps.segsearch")
