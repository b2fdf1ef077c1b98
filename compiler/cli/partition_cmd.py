"""``tlop partition``: show a configuration's partition, generate one from a layout, draw it.

What it does: prints each rank's node, kind, cores and rectangle (``--config NAME`` with
``--partition NAME``, or ``--layout FILE --partition FILE``); with ``--generate N`` computes the
partition from the layout's speeds (:mod:`tlop.runtime.partition`: column-based, or ``--slab``),
or with ``--speeds FILE`` from speed functions (:mod:`tlop.runtime.speedfunc`: the processes finish
at the same time), and writes it with ``--out FILE``; ``--plot FILE`` draws it (:mod:`tlop.cli.plot_partition`).

What it does not do: price anything (``tlop eval kernels/summa …``).
"""

from __future__ import annotations

import json

from tlop.runtime.diagnostics import TlopError

__all__ = ["add_arguments", "run"]


def add_arguments(p) -> None:
    p.add_argument("--config", metavar="NAME", help="a bundled configuration (fig8, fig9, M1 … M16) or file")
    p.add_argument("--layout", metavar="FILE", help="a layout file")
    p.add_argument("--partition", metavar="FILE|NAME", help="a partition file, or a partition of --config")
    p.add_argument("--generate", type=int, metavar="N",
                   help="compute the partition of an N x N matrix of blocks from the layout's speeds")
    p.add_argument("--kernel", default="", help="with --generate: the kernel the partition is for (e.g. summa)")
    p.add_argument("--slab", action="store_true", help="with --generate: 1D slabs of rows instead of columns")
    p.add_argument("--core-speed", action="append", default=[], metavar="TYPE=SPEED",
                   help="with --generate: relative speed of one core of a node type (default 1)")
    p.add_argument("--gpu-speed", type=float, default=1.0, help="with --generate: relative speed of a GPU process")
    p.add_argument("--speeds", metavar="FILE|NAME",
                   help="with --generate: speed functions (problem size -> speed per process type, a "
                        "\"tlop_speeds\" file or a bundled one, e.g. fermi-summa) instead of constant speeds: "
                        "the partition in which every process finishes at the same time")
    p.add_argument("--out", metavar="FILE", help="write the partition as a partition file")
    p.add_argument("--plot", metavar="FILE", help="draw the partition coloured by node (.svg, .png, .pdf)")
    p.add_argument("--plot-speeds", metavar="FILE",
                   help="with --speeds: draw the speed functions and each rank's computation time on its "
                        "rectangle (.svg, .png, .pdf)")


def run(args) -> int:
    from tlop.runtime.configs import configuration, partition_json

    if args.plot_speeds and not args.speeds:
        raise TlopError("--plot-speeds draws the speed functions of --speeds FILE; give it")
    cfg = configuration(args.config, args.layout, None if args.generate else args.partition)
    if cfg is None:
        raise TlopError("give a configuration: --config NAME, or --layout FILE (with --partition FILE or --generate N)")
    if args.generate is not None:
        from tlop.runtime.partition import column_partition, slab_partition, speeds_of

        speeds = {}
        for item in args.core_speed:
            t, _, v = item.partition("=")
            try:
                speeds[t] = float(v)
            except ValueError:
                raise TlopError(f"--core-speed {item}: expected TYPE=SPEED, e.g. fermi8=0.9") from None
        if args.speeds:
            if speeds or args.gpu_speed != 1.0:
                raise TlopError("--speeds gives every process's speed; leave out --core-speed and --gpu-speed")
            from tlop.runtime.speedfunc import fpm_partition, read_speeds_file

            part = fpm_partition(cfg, read_speeds_file(args.speeds), args.generate, slab=args.slab,
                                 kernel=args.kernel)
        else:
            make = slab_partition if args.slab else column_partition
            part = make(speeds_of(cfg, speeds, args.gpu_speed), args.generate, kernel=args.kernel)
        cfg = cfg.with_partition(part)
    elif cfg.partition is None:
        if len(cfg.partitions) == 1:
            cfg = cfg.with_partition(cfg.partitions[0][1])
        else:
            names = ", ".join(n for n, _ in cfg.partitions) or "none"
            raise TlopError(f"which partition? give --partition NAME ({names}) or --generate N")
    part = cfg.partition
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(json.dumps(partition_json(part), indent=1) + "\n")
    kinds = cfg.kinds or ("cpu",) * cfg.P
    cores = cfg.cores or (1,) * cfg.P
    names = cfg.node_names or tuple(str(n) for n in range(max(cfg.node) + 1))
    print(f"{cfg.name or cfg.source}: {part.name or 'partition'} N = {part.N} blocks, P = {cfg.P}")
    print(f"{'rank':>4} {'node':>6} {'kind':>4} {'cores':>5} {'x':>5} {'y':>5} {'w':>5} {'h':>5} {'area':>7}")
    for r in range(cfg.P):
        print(f"{r:>4} {names[cfg.node[r]]:>6} {kinds[r]:>4} {cores[r]:>5} {part.x[r]:>5} {part.y[r]:>5} "
              f"{part.w[r]:>5} {part.h[r]:>5} {part.w[r] * part.h[r]:>7}")
    if args.out:
        print(f"wrote {args.out}")
    if args.plot or args.plot_speeds:
        from tlop.cli.plot_stages import have_matplotlib

        if not have_matplotlib():
            from tlop.cli.colour import print_error

            print_error(TlopError("tlop partition --plot needs matplotlib, which is not installed; install it with "
                                  "pip install 'tlop[plot]'"))
            return 2
    if args.plot:
        from tlop.cli.plot_partition import write_plot

        write_plot(cfg, args.plot)
        print(f"wrote {args.plot}")
    if args.plot_speeds:
        from tlop.cli.plot_speeds import write_plot as write_speeds
        from tlop.runtime.speedfunc import read_speeds_file

        write_speeds(cfg, read_speeds_file(args.speeds), args.plot_speeds)
        print(f"wrote {args.plot_speeds}")
    return 0
