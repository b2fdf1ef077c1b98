"""Checking and lowering alone (``tlop.frontend.elaborate.elaborate``), µs per declaration, against a
baseline revision measured in the same run (issue 14, item 8).

The file is ``bench_frontend_scale.source(N)`` (one ``def`` for every four ``algorithm``s, each
algorithm calling a def).  It is parsed once (the ANTLR parser), with the cyclic garbage collector paused as ``tlop check`` does; then ``elaborate`` runs
``--repeat`` times and the least CPU time (``time.process_time``: the machine is shared) is kept.

``--against REV`` measures the same file with the compiler of git revision ``REV`` too (default
``main``): the revision's ``compiler/``, ``runtime/``, ``stdlib/`` and ``grammar/`` are exported
(``git archive``) into a temporary directory laid out as the installed package ``tlop`` and
this script runs there in a child process; the two measurements alternate ``--rounds`` times, so
a change in the machine's load hits both.  Printed: each side's best µs per declaration and the
ratio baseline / this tree (> 1: this tree is faster).

Run: ``python bench/bench_elaborate.py [--n 30000] [--against main]`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(n: int, repeat: int) -> float:
    """The least CPU seconds of elaborating the benchmark file of ``n`` declarations."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_frontend_scale import source

    from tlop.frontend.elaborate import elaborate
    from tlop.frontend.limits import deep, gc_paused
    from tlop.frontend.loader import load_tree

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decls.tlop"
        path.write_text(source(n))
        with deep(), gc_paused():
            modules = load_tree(path)
            best = float("inf")
            for _ in range(repeat):
                t = time.process_time()
                result = elaborate(modules)
                best = min(best, time.process_time() - t)
                del result
    return best


def export(rev: str, into: Path) -> Path:
    """An importable copy of revision ``rev``: ``into/tlop`` laid out as the installed package
    (``pyproject.toml``'s package-dir)."""
    archive = into / "src.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev, "compiler", "runtime", "stdlib", "grammar"],
                       stdout=out, check=True)
    src = into / "src"
    with tarfile.open(archive) as tar:
        tar.extractall(src, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(src)
    pkg = src / "compiler"
    shutil.copytree(src / "runtime", pkg / "runtime")
    shutil.copytree(src / "stdlib", pkg / "stdlib")
    shutil.copytree(src / "grammar" / "_antlr", pkg / "_antlr")
    (into / "pkg").mkdir()
    pkg.rename(into / "pkg" / "tlop")
    return into / "pkg"


def child(pythonpath: Path | None, n: int, repeat: int) -> tuple:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)  # ahead of the editable install's finder
    out = subprocess.run([sys.executable, __file__, "--child", "--n", str(n), "--repeat", str(repeat)],
                         env=env, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    if pythonpath is not None and not answer["tlop"].startswith(str(pythonpath)):
        sys.exit(f"the baseline child imported {answer['tlop']}, not the exported revision")
    return answer["seconds"], answer["parser"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30_000, help="declarations (default 30,000)")
    ap.add_argument("--repeat", type=int, default=3, help="elaborations per measurement, the best kept (3)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating measurements of each side (2)")
    ap.add_argument("--against", metavar="REV", default="main", help="baseline git revision (default main); "
                    "'' to measure this tree alone")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        import tlop
        seconds = measure(args.n, args.repeat)
        print(json.dumps({"seconds": seconds, "tlop": tlop.__file__, "parser": "ANTLR"}))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        base_path = export(args.against, Path(tmp)) if args.against else None
        here, base, parsers = [], [], {}
        for _ in range(args.rounds):
            seconds, parsers["here"] = child(None, args.n, args.repeat)
            here.append(seconds)
            if base_path is not None:
                seconds, parsers["base"] = child(base_path, args.n, args.repeat)
                base.append(seconds)
    per = lambda s: min(s) / args.n * 1e6  # noqa: E731
    print(f"elaborate {args.n:,} declarations (best of {args.rounds} x {args.repeat}, CPU):")
    print(f"  this tree        {per(here):8.1f} µs/decl  ({min(here):.2f} s; {parsers['here']} parser)")
    if base:
        print(f"  {args.against:<16} {per(base):8.1f} µs/decl  ({min(base):.2f} s; {parsers['base']} parser)")
        print(f"  {args.against} / this tree = {min(base) / min(here):.2f} ×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
