"""``tlop check`` on files of many declarations, against a 5 s budget for 10⁵ (issue 14, item 8).

Each file holds N declarations (a mix: one ``def`` for every four ``algorithm``s, each algorithm
calling a def), generated in a temporary directory; ``tlop check FILE`` runs as a whole process
with an empty checked-IR cache (cold: parse, check, lower, write the cache), ``--repeat`` times
(3; medians are printed), with the native parser (``tlop.frontend.native``, built first if Go
is installed) and, up to ``--python-max`` declarations, with the Python ANTLR parser
(``TLOP_PARSER=python``).  Printed for each N and
parser: the CPU seconds of the finished child (user + system, the operating system's accounting
via ``os.wait4``: the machine is shared, CPU time is steadier than wall time; the Go runtime's
threads included), the wall seconds, the CPU microseconds per declaration with its ratio to that
of the smallest file (about 1.0 when the front end is linear), the largest peak memory, and the ratio of
the Python parser's CPU time to the native one's; for the largest N the ratio of its CPU time to
the 5 s budget (≤ 1.0 meets it).

``--phases N`` instead splits the CPU time of checking one file of N declarations, in this
process, into its phases: the native parse (the Go library: lex, parse, write the AST; then
each of its two paths alone, the fast path and the ANTLR path, with their ratio) and
decoding its answer into the AST; the Python ANTLR lexer and parser and the Python AST builder
(up to ``--python-max`` declarations); checking and lowering alone (``elaborate``, the AST
given), then the whole load after parsing (checking, lowering and writing the checked-IR cache)
— each per declaration, with the ratio of the Python parsing phases to the native ones
(``bench/bench_elaborate.py`` compares checking and lowering with a baseline revision).

Run: ``python bench/bench_frontend_scale.py [--max 1e5] [--python-max 1e4]`` (about two minutes
with 10⁵), or ``python bench/bench_frontend_scale.py --phases 10000``.
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


def phases(n: int, python_max: float) -> None:
    """Print the CPU seconds of each phase of checking a file of ``n`` declarations."""
    import tlop
    import tlop.frontend.parse as parse_mod
    from tlop.frontend import reference_parser
    from tlop.frontend import native
    from tlop.frontend.limits import gc_paused
    from tlop.runtime.diagnostics import DiagnosticSink, Source

    text = source(n)
    src = Source("decls.tlop", text)
    cpu = time.process_time
    out = {}
    go = {}
    with gc_paused():
        if _native_ready():
            t = cpu()
            answer = native.native_answer(src)
            out["native: lex, parse, write the AST (Go)"] = cpu() - t
            t = cpu()
            module = native.decode(answer, src)
            out["native: decode the AST (unpickle)"] = cpu() - t
            go = {}
            for path in ("fast", "antlr"):  # the library's two paths alone, same source, same run
                t = cpu()
                alone = native.native_answer(src, path)
                go[path] = cpu() - t
                if alone != answer:
                    go[path + " differs"] = True
        if n <= python_max:
            from antlr4 import CommonTokenStream, InputStream

            from tlop._antlr.TlopLexer import TlopLexer
            from tlop._antlr.TlopParser import TlopParser

            t = cpu()
            stream = CommonTokenStream(TlopLexer(InputStream(text)))
            stream.fill()
            out["python: lex (ANTLR lexer)"] = cpu() - t
            t = cpu()
            tree = TlopParser(stream).program()
            out["python: parse (ANTLR, LL)"] = cpu() - t
            t = cpu()
            module = reference_parser._Builder(src, DiagnosticSink()).visit(tree)
            out["python: build the AST"] = cpu() - t
            del tree, stream
    real = parse_mod.parse_source
    parse_mod.parse_source = lambda s: module if s.name.endswith("decls.tlop") else real(s)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "decls.tlop").write_text(text)
        os.environ["TLOP_CACHE_DIR"] = str(Path(tmp) / "cache")
        from tlop.frontend.elaborate import elaborate
        from tlop.frontend.limits import deep
        from tlop.frontend.loader import load_tree

        with deep(), gc_paused():
            modules = load_tree(Path(tmp) / "decls.tlop")  # the module parsed above
            t = cpu()
            elaborate(modules)
            out["check and lower alone (elaborate)"] = cpu() - t
        del modules
        t = cpu()
        tlop.load(str(Path(tmp) / "decls.tlop"))
        out["check, lower, write the cache"] = cpu() - t
    parse_mod.parse_source = real
    print(f"{n:,} declarations, CPU seconds:")
    for label, sec in out.items():
        print(f"  {label:<42} {sec:7.2f}  {sec / n * 1e6:8.1f} µs/decl")
    if go:
        print(f"  Go paths alone: fast {go['fast'] / n * 1e6:.1f} µs/decl, ANTLR {go['antlr'] / n * 1e6:.1f} "
              f"µs/decl: ANTLR / fast = {go['antlr'] / go['fast']:.1f} ×"
              + ("" if len(go) == 2 else f"  (NOT the same answer: {sorted(k for k in go if 'differs' in k)})"))
    nat = sum(v for k, v in out.items() if k.startswith("native"))
    py = sum(v for k, v in out.items() if k.startswith("python"))
    if nat and py:
        print(f"  parsing to an AST: Python {py:.2f} s / native {nat:.2f} s = {py / nat:.1f} ×")


def _native_ready() -> bool:
    """Build the native parser if it is not (needs Go); whether it is used."""
    from tlop.frontend import native

    try:
        native.build()
    except RuntimeError as e:
        print(f"(native parser not available: {e})", file=sys.stderr)
    native._state.clear()
    return native.available()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=float, default=1e5, help="most declarations (default 1e5)")
    ap.add_argument("--python-max", type=float, default=1e4,
                    help="most declarations checked with the Python parser too (default 1e4)")
    ap.add_argument("--phases", type=int, metavar="N", help="split the CPU time of one file of N declarations")
    ap.add_argument("--repeat", type=int, default=3, metavar="K",
                    help="runs of each check; the median CPU and wall time are printed (default 3)")
    args = ap.parse_args()
    if args.phases:
        phases(args.phases, args.python_max)
        return 0
    native_ok = _native_ready()
    parsers = (["native"] if native_ok else []) + ["python"]
    sizes = [n for n in (1000, 10_000, 100_000) if n <= args.max]
    print(f"{'decls':>8}  {'parser':>7}  {'cpu s':>7}  {'wall s':>7}  {'µs/decl':>8}  {'× smallest':>10}  "
          f"{'peak MB':>8}  {'python/native':>13}")
    base = {}
    last = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"decls{n}.tlop"
            path.write_text(source(n))
            cpus = {}
            for parser in parsers:
                if parser == "python" and n > args.python_max:
                    continue
                env = dict(os.environ)
                if parser == "python":
                    env["TLOP_PARSER"] = "python"
                runs = []
                for k in range(args.repeat):  # each with an empty cache: a cold check every time
                    env["TLOP_CACHE_DIR"] = str(Path(tmp) / f"cache{n}{parser}{k}")
                    runs.append(run(tlop_command() + ["check", str(path)], env))
                cpu = statistics.median(r[0] for r in runs)
                wall = statistics.median(r[1] for r in runs)
                mb = max(r[2] for r in runs)
                cpus[parser] = cpu
                per = cpu / n * 1e6
                base.setdefault(parser, per)
                ratio = f"{cpus['python'] / cpus['native']:>13.2f}" if parser == "python" and "native" in cpus else ""
                print(f"{n:>8,}  {parser:>7}  {cpu:>7.2f}  {wall:>7.2f}  {per:>8.1f}  {per / base[parser]:>10.2f}  "
                      f"{mb:>8.1f}  {ratio}", flush=True)
            last = (n, cpus)
        n, cpus = last
        best = cpus.get("native", cpus.get("python"))
        print(f"{n:,} declarations: {best:.2f} s CPU ({parsers[0]} parser), {best / BUDGET_S:.2f} × the "
              f"{BUDGET_S:g} s budget" + ("" if n == 100_000 else f" (at {n:,}, not 10⁵)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
