"""A ``‖`` chain of n transmissions, ``T[shm](m) || T[shm](m) || …``: how ``tlop check``,
``tlop eval`` and ``tlop show`` grow with n (issue 22 item 12: 1,500 terms took 1.5 s, 18 s and
29 s; the expansion of a ‖ phase asked n² questions).

Each command runs as a whole process on a file of n terms (the τ-Lop platform with one channel
``shm`` and tables ``o`` and ``L``, as the issue's reproducer), with an empty checked-IR cache, and
``--repeat`` times (the median is printed).  Printed for each n and command: the CPU seconds of the
finished child (user + system via ``os.wait4``: the machine is shared, CPU time is steadier than
wall time), the seconds above the same command on a 1-term file (the start-up: imports, profile),
and the ratio of that excess to the excess at n/2 — about 2 when the command is linear in n, 4
when quadratic.  ``eval`` checks that the chain costs what ``n ‖ T[shm](m)`` does.

What it does not do: assert a time (timings depend on the machine and its load).

Run: ``python bench/bench_parallel_chain.py [--sizes 250,500,1000,2000] [--repeat 1]``.
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

PLATFORM = """model taulop
channel shm within node contention node
table o[c: channel](m: bytes) -> time
table L[c: channel](m: bytes, tau: int) -> time
transmission T[shm](m) = o[shm](m) + L[shm](m,1)
"""


def source(n: int) -> str:
    return PLATFORM + "algorithm a(m: bytes) = " + " || ".join(["T[shm](m)"] * n) + "\n"


def tlop_command() -> list:
    exe = Path(sys.executable).with_name("tlop")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from tlop.cli import main; sys.exit(main())"]


COMMANDS = {
    "check": lambda f: ["check", f],
    "eval": lambda f: ["eval", f, "a", "m=1KiB", "--profile", "metropolis", "--out-of-grid", "allow"],
    "show": lambda f: ["show", f, "a"],
}


def run(argv: list, env: dict) -> tuple[float, float, str]:
    """(CPU s, wall s, stdout) of one finished run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed: {proc.stderr.read().decode(errors='replace')[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="250,500,1000,2000")
    ap.add_argument("--repeat", type=int, default=1, metavar="K", help="runs of each command (median; default 1)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'n':>6}  {'command':>7}  {'cpu s':>7}  {'wall s':>7}  {'above 1 term':>12}  {'× at n/2':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)

        def measure(n: int, cmd: str):
            path = Path(tmp) / f"chain{n}.tlop"
            if not path.exists():
                path.write_text(source(n))
            runs = []
            for k in range(args.repeat):
                env["TLOP_CACHE_DIR"] = str(Path(tmp) / f"cache{n}{cmd}{k}")  # cold: parse, check, lower
                runs.append(run(tlop_command() + COMMANDS[cmd](str(path)), env))
            return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), runs[0][2]

        base = {cmd: measure(1, cmd)[0] for cmd in COMMANDS}
        excess: dict = {}
        for n in sizes:
            for cmd in COMMANDS:
                cpu, wall, out = measure(n, cmd)
                if cmd == "eval":
                    one = Path(tmp) / f"one{n}.tlop"
                    one.write_text(PLATFORM + f"algorithm a(m: bytes) = {n} || T[shm](m)\n")
                    env["TLOP_CACHE_DIR"] = str(Path(tmp) / f"cache_one{n}")
                    want = run(tlop_command() + COMMANDS["eval"](str(one)), env)[2]
                    if out.split(":", 1)[1] != want.split(":", 1)[1]:
                        sys.exit(f"n = {n}: the chain gives {out.strip()!r}, {n} ‖ T gives {want.strip()!r}")
                if cmd == "show" and f"{n}‖T^shm(m)" not in out:
                    sys.exit(f"n = {n}: show printed {out!r}")
                over = max(cpu - base[cmd], 1e-3)
                half = excess.get((n // 2, cmd))
                ratio = f"{over / half:>8.2f}" if half else f"{'':>8}"
                excess[(n, cmd)] = over
                print(f"{n:>6}  {cmd:>7}  {cpu:>7.2f}  {wall:>7.2f}  {over:>12.2f}  {ratio}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
