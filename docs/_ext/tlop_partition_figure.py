"""Sphinx directive ``.. tlop-partition-figure:: CONFIG PARTITION``: a bundled configuration's
partition drawn by ``tlop.cli.plot_partition`` when the docs build (so the picture is the code's),
written to ``docs/_generated/``; without matplotlib, a sentence saying how to draw it."""

import os

from docutils import nodes
from docutils.parsers.rst import Directive


class TlopPartitionFigure(Directive):
    required_arguments = 2
    has_content = False

    def run(self):
        config, partition = self.arguments
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return [nodes.paragraph(text=f"(The picture needs matplotlib: tlop partition --config {config} "
                                         f"--partition {partition} --plot {config}.svg)")]
        from tlop.cli.plot_partition import write_plot
        from tlop.runtime.configs import load_config

        env = self.state.document.settings.env
        out_dir = os.path.join(env.srcdir, "_generated")
        os.makedirs(out_dir, exist_ok=True)
        name = f"partition-{config}-{partition}.svg"
        cfg = load_config(config)
        write_plot(cfg.with_partition(cfg.partition_named(partition)), os.path.join(out_dir, name))
        env.note_dependency(os.path.join(out_dir, name))
        return [nodes.image(uri=f"_generated/{name}", alt=f"{config} {partition} partition coloured by node")]


def setup(app):
    app.add_directive("tlop-partition-figure", TlopPartitionFigure)
    return {"parallel_read_safe": True}
