"""Sphinx configuration for the tlop documentation (built warning-free with -W in CI)."""

project = "tlop"
author = "the tlop developers"
copyright = "2026, the tlop developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.mathjax"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
autodoc_member_order = "bysource"
nitpicky = False
