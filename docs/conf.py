"""Sphinx configuration for the tlop documentation (built warning-free with -W in CI)."""

project = "tlop"
author = "the tlop developers"
copyright = "2026, the tlop developers"
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

extensions = ["sphinx.ext.autodoc", "sphinx.ext.mathjax", "tlop_stdlib", "tlop_catalogue", "tlop_partition_figure", "tlop_speeds_figure",
              "tlop_explain_figure"]
exclude_patterns = ["_build", "_generated"]
html_static_path = ["_static"]
html_theme = "alabaster"
autodoc_member_order = "bysource"
nitpicky = True
# Every cross-reference must resolve, except to these: the build reads no other project's
# inventory (no intersphinx: it runs offline), and the IR and source classes that appear in the
# API's signatures are internal (docs/dev).
nitpick_ignore = [
    ("py:class", "pathlib.Path"),
    ("py:class", "numpy.ndarray"),
    ("py:mod", "pickle"),
    ("py:class", "tlop.ir.program.Program"),
    ("py:class", "tlop.ir.program.Algorithm"),
    ("py:class", "tlop.runtime.diagnostics.Source"),
]


def setup(app):
    """Highlight ``.. code-block:: tlop`` with tlop's own Pygments lexer (also registered as the
    ``pygments.lexers`` entry point ``tlop`` of the installed package)."""
    from tlop.cli.lexer import TlopLexer

    app.add_lexer("tlop", TlopLexer)
