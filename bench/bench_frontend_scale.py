"""``tlop check`` on files of many declarations, against a 5 s budget for 10⁵ (issue 14, item 8).

Each file holds N declarations (a mix: one ``def`` for every four ``algorithm``s, each algorithm
calling a def), generated in a temporary directory; ``tlop check FILE`` runs as a whole process
with an empty checked-IR cache (cold: parse, check, lower, write the cache).  Printed for each N:
the CPU seconds of the finished child (user + system, the operating system's accounting via
``os.wait4``: the machine is shared, CPU time is steadier than wall time), the wall seconds,
the CPU microseconds per declaration with its ratio to that of the smallest file (about 1.0 when
the front end is linear), the peak memory, and for the largest N the ratio of its CPU time to the
5 s budget (≤ 1.0 meets it).

``--phases N`` instead splits the CPU time of checking one file of N declarations, in this
process, into its phases: ANTLR's lexer, ANTLR's parser (in its default LL mode, and in the
two-stage SLL-with-bail mode ANTLR recommends for speed, each on a parser whose DFA cache is
warm and cold), building the AST, and checking and lowering it — each with its share of the total.

Run: ``python bench/bench_frontend_scale.py [--max 1e5]`` (about two minutes with 10⁵), or
``python bench/bench_frontend_scale.py --phases 10000``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 5.0


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


def phases(n: int) -> None:
    """Print the CPU seconds of each phase of checking a file of ``n`` declarations."""
    from antlr4 import CommonTokenStream, InputStream
    from antlr4.atn.PredictionMode import PredictionMode
    from antlr4.error.ErrorStrategy import BailErrorStrategy

    import tlop
    import tlop.frontend.parse as parse_mod
    from tlop._antlr.TlopLexer import TlopLexer
    from tlop._antlr.TlopParser import TlopParser
    from tlop.runtime.diagnostics import DiagnosticSink, Source

    text = source(n)
    cpu = time.process_time
    out = {}
    t = cpu()
    stream = CommonTokenStream(TlopLexer(InputStream(text)))
    stream.fill()
    out["lex (ANTLR lexer)"] = cpu() - t
    for label, fast in (("parse, LL, cold DFA", False), ("parse, LL, warm DFA", False),
                        ("parse, SLL + bail, warm DFA", True)):
        stream.seek(0)
        parser = TlopParser(stream)
        if fast:
            parser._interp.predictionMode = PredictionMode.SLL
            parser._errHandler = BailErrorStrategy()
        t = cpu()
        tree = parser.program()
        out[label] = cpu() - t
    src = Source("decls.tlop", text)
    t = cpu()
    module = parse_mod._Builder(src, DiagnosticSink()).visit(tree)
    out["build the AST"] = cpu() - t
    real = parse_mod.parse_source
    parse_mod.parse_source = lambda s: module if s.name.endswith("decls.tlop") else real(s)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "decls.tlop").write_text(text)
        os.environ["TLOP_CACHE_DIR"] = str(Path(tmp) / "cache")
        t = cpu()
        tlop.load(str(Path(tmp) / "decls.tlop"))
        out["check and lower (parse memoised)"] = cpu() - t
    parse_mod.parse_source = real
    total = out["lex (ANTLR lexer)"] + out["parse, LL, cold DFA"] + out["build the AST"] + out[
        "check and lower (parse memoised)"]
    print(f"{n:,} declarations, CPU seconds (share of lex + cold parse + AST + check = {total:.2f} s):")
    for label, sec in out.items():
        print(f"  {label:<34} {sec:7.2f}  {sec / total:6.1%}  {sec / n * 1e6:8.1f} µs/decl")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=float, default=1e5, help="most declarations (default 1e5)")
    ap.add_argument("--phases", type=int, metavar="N", help="split the CPU time of one file of N declarations")
    args = ap.parse_args()
    if args.phases:
        phases(args.phases)
        return 0
    sizes = [n for n in (1000, 10_000, 100_000) if n <= args.max]
    print(f"{'decls':>8}  {'cpu s':>7}  {'wall s':>7}  {'µs/decl':>8}  {'× smallest':>10}  {'peak MB':>8}")
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        for n in sizes:
            path = Path(tmp) / f"decls{n}.tlop"
            path.write_text(source(n))
            env["TLOP_CACHE_DIR"] = str(Path(tmp) / f"cache{n}")   # empty: a cold check
            cpu, wall, mb = run(tlop_command() + ["check", str(path)], env)
            per = cpu / n * 1e6
            base = base or per
            print(f"{n:>8,}  {cpu:>7.2f}  {wall:>7.2f}  {per:>8.1f}  {per / base:>10.2f}  {mb:>8.1f}", flush=True)
        print(f"{sizes[-1]:,} declarations: {cpu:.2f} s CPU, {cpu / BUDGET_S:.2f} × the {BUDGET_S:g} s budget"
              + ("" if sizes[-1] == 100_000 else f" (at {sizes[-1]:,}, not 10⁵)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
