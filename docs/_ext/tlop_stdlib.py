"""Sphinx directive ``.. tlop-stdlib::``: the standard library reference, generated from the
``.tlop`` files themselves (doc comments, signatures, and each cost in the papers' notation), so
the page cannot drift from the code."""

from docutils import nodes
from docutils.parsers.rst import Directive


class TlopStdlib(Directive):
    has_content = False

    def run(self):
        import tlop
        from tlop.cli.common import _signature
        from tlop.frontend.loader import stdlib_modules
        from tlop.backends.notation import format_text

        out = []
        for name in stdlib_modules():
            module = tlop.load(name)
            algs = module.own_algorithms
            if not algs:
                continue
            section = nodes.section(ids=[nodes.make_id("stdlib-" + name)])
            section += nodes.title(text=name)
            for alg in algs:
                h = module[alg]
                sig = ", ".join(_signature(p, module.program) for p in h.params)
                section += nodes.paragraph(text=f"{alg}({sig})")
                if h.doc:
                    section += nodes.block_quote("", nodes.paragraph(text=" ".join(h.doc.splitlines())))
                section += nodes.literal_block(text=format_text(h.ir.body, module.program))
            out.append(section)
        return out


def setup(app):
    app.add_directive("tlop-stdlib", TlopStdlib)
    return {"parallel_read_safe": True, "version": "1"}
