"""Start-up of ``tlop eval`` against ``python -c "import numpy"``, measured in the same run.

Each command is run as a whole process, in interleaved rounds (A B C … A B C …) after warm-up
runs, and timed by the operating system's accounting of the finished child (CPU = user + system)
and by the wall clock.  Printed: the median of each and, against the baseline, the median of the
per-round ratios (robust to the machine's speed drifting between rounds).

Commands (all with the same interpreter, a private cache directory, and bytecode caching on):

* baseline: ``python -c "import numpy"``;
* ``tlop eval taulop/bcast binomial_bcast P=16 m=1MiB`` warm (checked-IR cache filled; target:
  <= 1.3 x baseline), with the default engine and with ``--engine interp`` (target: default
  not slower than interp) and ``--engine jit`` (compiled code from the on-disk cache);
* the same with an empty cache in every run (cold: parse, check, write the cache).

Run: ``python bench/bench_startup.py [--rounds N]`` (about 30 s with the default 15 rounds).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TLOP_ARGS = ["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB"]


def tlop_command() -> list:
    exe = Path(sys.executable).with_name("tlop")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from tlop.cli import main; sys.exit(main())"]


def run_once(cmd: list, env: dict) -> tuple:
    """(cpu seconds, wall seconds) of one run of ``cmd``."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read()
    p.stderr.close()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="tlop-bench-startup-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TLOP_CACHE_DIR"] = str(tmp / "cache")
    cold_env = dict(env, TLOP_CACHE_DIR=str(tmp / "cold"))
    tlop = tlop_command()
    commands = {
        "import numpy (baseline)": ([sys.executable, "-c", "import numpy"], env),
        "tlop eval (default engine)": (tlop + TLOP_ARGS, env),
        "tlop eval --engine interp": (tlop + TLOP_ARGS + ["--engine", "interp"], env),
        "tlop eval --engine jit": (tlop + TLOP_ARGS + ["--engine", "jit"], env),
        "tlop eval, cold IR cache": (tlop + TLOP_ARGS, cold_env),
    }
    try:
        for _ in range(args.warmup):
            for cmd, e in commands.values():
                run_once(cmd, e)
        cpu = {k: [] for k in commands}
        wall = {k: [] for k in commands}
        for _ in range(args.rounds):
            for k, (cmd, e) in commands.items():
                if e is cold_env:
                    shutil.rmtree(tmp / "cold", ignore_errors=True)
                c, w = run_once(cmd, e)
                cpu[k].append(c)
                wall[k].append(w)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    base = "import numpy (baseline)"
    print(f"python {sys.version.split()[0]}; {args.rounds} interleaved rounds after {args.warmup} warm-up")
    print(f"{'command':30s} {'cpu ms':>8s} {'wall ms':>8s} {'cpu/base':>9s} {'wall/base':>10s}")
    for k in commands:
        rc = statistics.median(a / b for a, b in zip(cpu[k], cpu[base]))
        rw = statistics.median(a / b for a, b in zip(wall[k], wall[base]))
        print(f"{k:30s} {statistics.median(cpu[k]) * 1e3:8.1f} {statistics.median(wall[k]) * 1e3:8.1f} "
              f"{rc:9.2f} {rw:10.2f}")
    d = "tlop eval (default engine)"
    i = "tlop eval --engine interp"
    print(f"\ntarget: warm tlop eval <= 1.30 x import numpy: cpu {statistics.median(a / b for a, b in zip(cpu[d], cpu[base])):.2f}, "
          f"wall {statistics.median(a / b for a, b in zip(wall[d], wall[base])):.2f}")
    print(f"target: default engine / interp <= 1.00 (noise aside): cpu "
          f"{statistics.median(a / b for a, b in zip(cpu[d], cpu[i])):.2f}, "
          f"wall {statistics.median(a / b for a, b in zip(wall[d], wall[i])):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
