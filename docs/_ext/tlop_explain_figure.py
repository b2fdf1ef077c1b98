"""Sphinx directive ``.. tlop-explain-figure:: FILE ALG ARG…``: the picture ``tlop explain FILE
ALG ARG… --plot`` draws, made by the CLI itself when the docs build (so the picture is the
code's), written to ``docs/_generated/``.  FILE is relative to the page.  Without matplotlib, a
sentence saying how to draw it.  It does not check the command's text output (the docs test
does)."""

import contextlib
import io
import os
import shlex

from docutils import nodes
from docutils.parsers.rst import Directive


class TlopExplainFigure(Directive):
    required_arguments = 1
    final_argument_whitespace = True
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        argv = shlex.split(self.arguments[0])
        page_dir = os.path.dirname(env.doc2path(env.docname))
        argv[0] = os.path.join(page_dir, argv[0])
        env.note_dependency(argv[0])
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return [nodes.paragraph(text=f"(The picture needs matplotlib: tlop explain {self.arguments[0]} "
                                         "--plot stages.svg)")]
        from tlop.cli.main import main

        out_dir = os.path.join(env.srcdir, "_generated")
        os.makedirs(out_dir, exist_ok=True)
        name = "explain-" + "-".join(a.strip("'\"()").replace("=", "").replace("(", "").replace(")", "")
                                     for a in argv[1:]) + ".svg"
        name = "".join(c if c.isalnum() or c in "-._" else "_" for c in name)
        text = io.StringIO()
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
            rc = main(["explain", *argv, "--plot", os.path.join(out_dir, name)])
        if rc != 0:
            raise self.error(f"tlop explain {self.arguments[0]} --plot failed ({rc}):\n{text.getvalue()}")
        return [nodes.image(uri=f"/_generated/{name}", alt=f"tlop explain {self.arguments[0]}")]


def setup(app):
    app.add_directive("tlop-explain-figure", TlopExplainFigure)
    return {"parallel_read_safe": True}
