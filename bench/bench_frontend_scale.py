"""``tlop check`` on files of many declarations: linear growth, bounded memory, 10⁴ declarations
cold and 10⁵ warm — the front-end budget users need (issue 23).

Each file holds N declarations (a mix: one ``def`` for every four ``algorithm``s, each algorithm
calling a def), generated in a temporary directory; ``tlop check FILE`` runs as a whole process
with the one parser every user has (ANTLR's Python runtime), ``--repeat`` times (3; medians are
printed): cold (an empty checked-IR cache: parse, check, lower, write the cache) up to ``--cold-max``
declarations (10⁴), and warm (the cache filled by a first run) for every N.  Printed for each N:
the CPU seconds of the finished child (user + system via ``os.wait4``: the machine is shared, CPU
time is steadier than wall time), the wall seconds, the CPU microseconds per declaration with its
ratio to that of the smallest file (about 1.0 when the front end is linear), and the peak memory
with its kilobytes per declaration (bounded: about constant across N).

Run: ``python bench/bench_frontend_scale.py [--max 1e5] [--cold-max 1e4]``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

def source(n: int) -> str:
    out = []
    for i in range(n):
        if i % 5 == 0:
            out.append(f"def d{i}(P: int, m: bytes) -> time = P * m * 0.2ns / 1B + {i % 97}us\n")
        else:
            out.append(f"/// algorithm {i}\nalgorithm a{i}(P: int >= 1, m: bytes = 1KiB) = "
                       f"d{i - i % 5}(P, m) + log2(P) * 1us\n")
    return "".join(out)


def tlop_command() -> list:
    exe = Path(sys.executable).with_name("tlop")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from tlop.cli import main; sys.exit(main())"]


def run(argv: list, env: dict) -> tuple[float, float, float]:
    """(CPU s, wall s, peak MB) of one finished run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed: {proc.stderr.read().decode(errors='replace')[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=float, default=1e5, help="most declarations (default 1e5)")
    ap.add_argument("--cold-max", type=float, default=1e4, help="most declarations checked cold (default 1e4)")
    ap.add_argument("--repeat", type=int, default=3, metavar="K",
                    help="runs of each check; the median CPU and wall time are printed (default 3)")
    args = ap.parse_args()
    sizes = [n for n in (1000, 10_000, 100_000) if n <= args.max]
    print(f"{'decls':>8}  {'cache':>5}  {'cpu s':>7}  {'wall s':>7}  {'µs/decl':>8}  {'× smallest':>10}  "
          f"{'peak MB':>8}  {'KB/decl':>8}")
    base = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"decls{n}.tlop"
            path.write_text(source(n))
            env = dict(os.environ)
            for kind in ("cold", "warm"):
                if kind == "cold" and n > args.cold_max:
                    continue
                runs = []
                for k in range(args.repeat):
                    if kind == "cold":  # each with an empty cache
                        env["TLOP_CACHE_DIR"] = str(Path(tmp) / f"cache{n}cold{k}")
                    else:
                        env["TLOP_CACHE_DIR"] = str(Path(tmp) / f"cache{n}warm")
                        if k == 0:
                            run(tlop_command() + ["check", str(path)], env)  # fills the cache
                    runs.append(run(tlop_command() + ["check", str(path)], env))
                cpu = statistics.median(r[0] for r in runs)
                wall = statistics.median(r[1] for r in runs)
                mb = max(r[2] for r in runs)
                per = cpu / n * 1e6
                base.setdefault(kind, per)
                print(f"{n:>8,}  {kind:>5}  {cpu:>7.2f}  {wall:>7.2f}  {per:>8.1f}  {per / base[kind]:>10.2f}  "
                      f"{mb:>8.1f}  {mb * 1024 / n:>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
