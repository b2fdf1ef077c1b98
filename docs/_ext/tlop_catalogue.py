"""Sphinx directive ``.. tlop-catalogue::``: the MPI libraries' algorithm catalogues
(:mod:`tlop.decisions.catalogue`) as tables — counts per library and collective, then every
algorithm with its id, stdlib schedule, searched parameters and status — generated from the
catalogue itself, so the page cannot drift from the code."""

from docutils import nodes
from docutils.parsers.rst import Directive


def _table(header, rows):
    table = nodes.table()
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for target, data in ((head, [header]), (body, rows)):
        for r in data:
            row = nodes.row()
            for cell in r:
                entry = nodes.entry()
                entry += nodes.paragraph(text=str(cell))
                row += entry
            target += row
    return table


class TlopCatalogue(Directive):
    has_content = False

    def run(self):
        from tlop.decisions.catalogue import COLLECTIVES
        from tlop.decisions.catalogue_table import HEADER, counts, rows

        out = [nodes.paragraph(text="Schedules / algorithms per library and collective:"),
               _table(["collective", "Open MPI 5.0 coll/tuned", "MPICH 4.x", "NCCL"], counts())]
        for coll in COLLECTIVES:
            section = nodes.section(ids=[nodes.make_id("catalogue-" + coll)])
            section += nodes.title(text=coll)
            section += _table(HEADER, rows(coll))
            out.append(section)
        return out


def setup(app):
    app.add_directive("tlop-catalogue", TlopCatalogue)
    return {"parallel_read_safe": True, "version": "1"}
