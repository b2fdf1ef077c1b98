"""Sphinx directive ``.. tlop-speeds-figure:: CONFIG SPEEDS PARTITION``: the speed functions of a
bundled speed-function file on a bundled configuration and each rank's computation time on a
partition — a partition of the configuration by name, or a number N: the partition balancing the
speed functions (``tlop.runtime.speedfunc.fpm_partition``) — drawn by ``tlop.cli.plot_speeds``
when the docs build, into ``docs/_generated/``; without matplotlib, a sentence saying how to draw it."""

import os

from docutils import nodes
from docutils.parsers.rst import Directive


class TlopSpeedsFigure(Directive):
    required_arguments = 3
    has_content = False

    def run(self):
        config, speeds, partition = self.arguments
        how = (f"--generate {partition}" if partition.isdigit() else f"--partition {partition}")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return [nodes.paragraph(text=f"(The picture needs matplotlib: tlop partition --config {config} {how} "
                                         f"--speeds {speeds} --plot-speeds {config}.svg)")]
        from tlop.cli.plot_speeds import write_plot
        from tlop.runtime.configs import load_config
        from tlop.runtime.speedfunc import fpm_partition, read_speeds_file

        env = self.state.document.settings.env
        out_dir = os.path.join(env.srcdir, "_generated")
        os.makedirs(out_dir, exist_ok=True)
        name = f"speeds-{config}-{speeds}-{partition}.svg"
        cfg = load_config(config)
        fns = read_speeds_file(speeds)
        part = (fpm_partition(cfg, fns, int(partition), name=f"balanced-{partition}") if partition.isdigit()
                else cfg.partition_named(partition))
        write_plot(cfg.with_partition(part), fns, os.path.join(out_dir, name))
        env.note_dependency(os.path.join(out_dir, name))
        return [nodes.image(uri=f"_generated/{name}", alt=f"{speeds} speed functions and times on {config} {partition}")]


def setup(app):
    app.add_directive("tlop-speeds-figure", TlopSpeedsFigure)
    return {"parallel_read_safe": True}
