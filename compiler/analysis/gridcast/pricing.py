"""Old import path of :mod:`tlop.apps.gridcast.pricing` (moved there with the paper applications, issue 23): this name is
that very module, so code written against the old path keeps running.  Import :mod:`tlop.apps.gridcast.pricing`."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("tlop.apps.gridcast.pricing")
