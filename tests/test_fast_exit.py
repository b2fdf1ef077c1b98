"""The ``tlop`` program ends without freeing what it loaded (limits.exit_without_teardown): its
output still arrives whole through a pipe and into a file, its exit status is the command's,
and a process with something left to run at exit (an atexit function) exits normally."""

from __future__ import annotations

import os
import subprocess
import sys

from _bounded import PATIENCE

PROGRAM = [sys.executable, "-c", "import sys; from tlop.cli import main; sys.exit(main())"]


def run(args, **kw):
    return subprocess.run(PROGRAM + args, capture_output=True, text=True, timeout=PATIENCE, **kw)


def test_output_through_a_pipe_and_into_a_file_is_whole(tmp_path):
    args = ["sweep", "taulop/bcast", "binomial_bcast", "P=2..4000:+1", "m=1KiB", "--engine", "interp"]
    piped = run(args)
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.splitlines()
    assert len(lines) == 4001 and lines[-1].split()[0] == "4000"  # a title, a header, 3,999 points
    with open(tmp_path / "out.txt", "w") as f:
        assert subprocess.run(PROGRAM + args, stdout=f, timeout=PATIENCE).returncode == 0
    assert (tmp_path / "out.txt").read_text() == piped.stdout


def test_the_exit_status_is_the_commands(tmp_path):
    bad = tmp_path / "bad.tlop"
    bad.write_text("def f( = 1\n")
    res = run(["check", str(bad)])
    assert res.returncode == 1 and "error" in res.stderr
    assert run(["check", "taulop/bcast"]).returncode == 0


def test_an_atexit_function_still_runs(tmp_path):
    mark = tmp_path / "ran"
    code = (f"import atexit, sys\natexit.register(lambda: open({str(mark)!r}, 'w').close())\n"
            "from tlop.cli import main\nsys.exit(main())")
    res = subprocess.run([sys.executable, "-c", code, "check", "taulop/bcast"], capture_output=True, text=True,
                         timeout=PATIENCE, env=dict(os.environ))
    assert res.returncode == 0 and mark.exists()
