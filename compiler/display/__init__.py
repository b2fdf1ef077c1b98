"""Presentation shared by the command line and the Python API: text tables, number formats, a
parameter's signature, and the figures of a grid.

What it does: formats; draws figures without pyplot.  What it does not do: evaluate, or parse
command lines (:mod:`tlop.cli`).
"""
