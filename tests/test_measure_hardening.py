"""tlop measure against hostile and careless input, without MPI ranks: every option checked
before anything is launched or allocated (resource cases run in a subprocess with a memory cap
and a time bound), one writer per output, damaged sample records refused with their line,
progress that cannot be written dropped, and the process-lifetime plumbing that kills a job with
its launcher (the real-MPI kill test is in test_measure_mpi.py)."""

import argparse
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from _bounded import PATIENCE, cpu_killed, run_bounded

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.measure import cli
from tlop.runtime.measure.launch import die_with_parent, max_local_ranks
from tlop.runtime.measure.lock import OutputLock, lock_path, writer_busy
from tlop.runtime.measure.store import SampleStore, check_records, read_records
from tlop.runtime.measure.worker import LAUNCHER_ENV, process_start


def _args(*argv):
    p = argparse.ArgumentParser()
    cli.add_arguments(p)
    return p.parse_args(list(argv))


def _capped(argv, mem_bytes=2 << 30, env=None):
    """``python -m tlop.runtime.measure ARGV`` with its address space and CPU time capped, so a
    regression that allocates or computes without end fails this test instead of exhausting the
    machine (a bound on CPU time, not wall-clock time: a busy machine cannot fail it)."""
    e = dict(os.environ)
    e.pop(LAUNCHER_ENV, None)
    e.update(env or {})
    return run_bounded([sys.executable, "-m", "tlop.runtime.measure", *argv], cpu_seconds=60,
                       mem_bytes=mem_bytes, env=e)


def _fake_mpiexec(tmp_path):
    """A stand-in ``mpiexec`` that only records that it was started: a run that launches any
    rank leaves the marker file (and a real rank would have stalled waiting for rank 0)."""
    marker = tmp_path / "launched"
    fake = tmp_path / "mpiexec"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\nexit 1\n")
    fake.chmod(0o755)
    return fake, marker


# ----------------------------------------------------------------------------- options

@pytest.mark.parametrize("argv, message", [
    (["--np", "1000000000", "--quick"], "this host can start at most"),
    (["--np", "99999999999999999999", "--quick"], "this host can start at most"),
    (["--eps", "nan"], "--eps nan: must be a finite number"),
    (["--time-cap", "nan"], "--time-cap nan: must be a finite number"),
    (["--timeout", "nan"], "--timeout nan: must be a finite number"),
    (["--timeout", "inf"], "--timeout inf: must be a finite number"),
    (["--cl", "nan"], "--cl nan: must be a finite number"),
    (["--sizes", "1e400"], "'1e400' is not a whole number of bytes"),
    (["--sizes", "1,inf"], "'inf' is not a size"),
    (["--sizes", "4GiB"], "larger than"),
    (["--max-reps", "100000000000"], "--max-reps 100000000000: must be between 1 and 10000000"),
    (["--min-reps", "50", "--max-reps", "10"], "more than --max-reps"),
    (["--warmup", "-1"], "--warmup -1"),
    (["--tau-max", "0"], "--tau-max 0"),
    (["--eps", "0"], "--eps 0: must be above 0"),
    (["--out", "/proc/nope/p.json"], "cannot create the directory /proc/nope"),
    (["--name", "a\x1b[31mred\nerror: forged"], "without control characters"),
    (["--name", ""], "without control characters"),
    (["--net-env", "=x"], "expected KEY=VALUE"),
])
def test_bad_options_fail_at_once_without_launching(tmp_path, argv, message):
    """Each used to stall (120 s, a rank waiting for a dead rank 0), grow without bound, or
    raise a traceback; now it is a one-line error before any rank starts, in bounded memory."""
    if "--out" not in argv:
        argv = argv + ["--out", str(tmp_path / "p.json")]
    fake, launched = _fake_mpiexec(tmp_path)
    r = _capped(argv + ["--mpiexec", str(fake)])
    assert not cpu_killed(r), "ran out of CPU time"
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert message in r.stderr and "Traceback" not in r.stderr
    assert "\x1b" not in r.stderr                       # control characters shown escaped
    assert not launched.exists(), launched.read_text()  # refused before starting any rank
    assert not (tmp_path / "p.samples.jsonl").exists()


def test_np_bound_reflects_this_host():
    most, why = max_local_ranks()
    assert 2 <= most <= 1024 and why
    # the bound moves with the memory available at the moment (other processes come and go), so
    # ask for far more ranks than any bound allows: this must fail before anything is launched
    with pytest.raises(TlopError, match=r"at most \d+ ranks"):
        cli.run(_args("--np", str(10 ** 6), "--out", "/nonexistent-dir-never-created/p.json"))


def test_unwritable_output_directory(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        if os.access(d, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        with pytest.raises(TlopError, match="is not writable"):
            cli.run(_args("--out", str(d / "p.json")))
    finally:
        d.chmod(0o700)


def test_output_that_is_a_directory(tmp_path):
    (tmp_path / "p.json").mkdir()
    with pytest.raises(TlopError, match="is a directory"):
        cli.run(_args("--out", str(tmp_path / "p.json")))


def test_ranges_accept_the_edges():
    st = cli.settings_from_args(_args("--eps", "1", "--cl", "0.5", "--min-reps", "1", "--max-reps", "1",
                                      "--warmup", "0", "--time-cap", "86400", "--sizes", "0,1GiB"))
    assert st.rule.eps == 1 and st.rule.min_n == st.rule.max_n == 1 and st.sizes == (0, 1 << 30)


# ----------------------------------------------------------------------------- one writer

def test_a_second_run_on_the_same_output_is_refused(tmp_path):
    out = tmp_path / "p.json"
    with OutputLock(out):
        with pytest.raises(TlopError, match=rf"another tlop measure \(process {os.getpid()}"):
            OutputLock(out).acquire()
        with pytest.raises(TlopError, match="another tlop measure"):
            cli.run(_args("--out", str(out), "--resume", "--mpiexec", str(tmp_path / "no-mpiexec")))
    assert not lock_path(out).exists()                    # removed on release
    with OutputLock(out):                                 # and free again
        pass


def _holder(path, ready):
    """A process that takes a flock on ``path`` and waits to be killed."""
    code = textwrap.dedent(f"""
        import fcntl, os, sys, time
        fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"%d somehost\\n" % os.getpid())
        open({str(ready)!r}, "w").close()
        time.sleep({2 * PATIENCE})
    """)
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + PATIENCE
    while not ready.exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.01)
    return proc


def test_lock_of_a_killed_run_is_taken_over(tmp_path):
    out = tmp_path / "p.json"
    proc = _holder(lock_path(out), tmp_path / "ready")
    try:
        with pytest.raises(TlopError, match=rf"process {proc.pid} on somehost"):
            OutputLock(out).acquire()
    finally:
        proc.kill()
        proc.wait(timeout=PATIENCE)
    assert lock_path(out).exists()                        # left behind by the dead holder …
    with OutputLock(out) as lock:                         # … and simply taken over
        assert lock.held
        assert lock_path(out).read_text().split()[0] == str(os.getpid())


def test_orphan_writer_of_the_samples_blocks_a_resume(tmp_path):
    """Ranks of a killed launcher that still append to the samples file (no lock file held any
    more) must not be joined by a second job writing the same keys."""
    out = tmp_path / "p.json"
    samples = tmp_path / "p.samples.jsonl"
    samples.write_text('{"kind": "run"}\n')
    proc = _holder(samples, tmp_path / "ready")
    try:
        assert writer_busy(samples)
        with pytest.raises(TlopError, match="another process is still writing"):
            cli.run(_args("--out", str(out), "--resume", "--mpiexec", str(tmp_path / "no-mpiexec")))
        with pytest.raises(TlopError, match="another process is writing this samples file"):
            SampleStore(samples)
    finally:
        proc.kill()
        proc.wait(timeout=PATIENCE)
    assert not writer_busy(samples)
    with SampleStore(samples) as s:                       # the writer's lock …
        assert writer_busy(samples)                       # … is seen by others
        s.append({"kind": "run"})


# ----------------------------------------------------------------------------- damaged samples

def _point(key="shm/pingpong/m=1", **over):
    rec = {"kind": "point", "key": key, "bench": "pingpong", "channel": "shm", "params": {"m": 1},
           "stop": "converged", "stats": {"n": 3, "median": 1e-6, "min": 1e-6, "p95": 2e-6},
           "unit": "s", "samples": [1e-6, 1e-6, 2e-6]}
    rec.update(over)
    return {k: v for k, v in rec.items() if v is not ...}


@pytest.mark.parametrize("bad, message", [
    (_point(key=...), "a point record without a 'key'"),
    (_point(stats=...), "no 'stats' object"),
    (_point(stats="fast"), "no 'stats' object"),
    (_point(stats={"n": 3}), "stats.median is missing"),
    (_point(params=...), "no 'params' object"),
    (_point(key="shm/pingpong/m=2"), "its channel, bench and params say shm/pingpong/m=1"),
    ({"kind": "skip", "key": 7}, "a skip record without a 'key'"),
    ({"kind": "pont", "key": "x"}, "unknown record kind"),
])
def test_damaged_sample_record_is_refused_with_its_line(tmp_path, bad, message):
    out = tmp_path / "p.json"
    samples = tmp_path / "p.samples.jsonl"
    good = _point()
    text = "\n".join(json.dumps(r) for r in ({"kind": "run"}, good, bad, _point("shm/pingpong/m=4", params={"m": 4})))
    samples.write_text(text + "\n")
    with pytest.raises(TlopError) as err:             # (never launches: no such mpiexec)
        cli.run(_args("--out", str(out), "--resume", "--mpiexec", str(tmp_path / "no-mpiexec")))
    shown = str(err.value)
    assert "p.samples.jsonl:3: " in shown and message in shown and "delete that line" in shown
    assert samples.read_text() == text + "\n"             # nothing dropped or rewritten
    assert read_records(samples)[1] == good


def test_torn_lines_are_still_skipped(tmp_path):
    samples = tmp_path / "s.samples.jsonl"
    samples.write_text(json.dumps(_point()) + "\n" + '{"kind": "point", "key": "to\n' + "[" * 100000 + "\n")
    assert check_records(samples) == 1


# ----------------------------------------------------------------------------- progress output

def test_progress_to_a_closed_pipe_is_dropped_not_fatal(monkeypatch):
    class Gone:
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

        def isatty(self):
            return False

    monkeypatch.setattr(sys, "stderr", Gone())
    monkeypatch.setattr(cli, "_stderr_gone", False)
    progress = cli._Progress(20, quiet=False)
    for i in range(20):                                   # every 10th point prints: both fail
        progress.event({"event": "done", "key": f"k{i}"})
    assert progress.done == 20 and cli._stderr_gone
    cli.say("and later news")                             # dropped without a write
    assert not isinstance(sys.stderr, Gone)


# ----------------------------------------------------------------------------- job lifetime

def _wait_gone(pid, seconds=PATIENCE):
    """Whether ``pid`` ends within ``seconds`` (a hang guard); if it does not, it is killed so
    that a failing test leaves no process behind."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process_start(pid) is None:
            return True
        try:                                              # reap our own child if it is one
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    return False


def _launcher_and_child(tmp_path, child_code, use_pdeathsig):
    """A stand-in launcher process that starts ``child_code`` (as a relaunched rank would be
    started) and prints the child's PID, then waits to be killed."""
    code = textwrap.dedent(f"""
        import os, subprocess, sys, time
        from tlop.runtime.measure.launch import die_with_parent
        from tlop.runtime.measure.worker import LAUNCHER_ENV, process_start
        env = dict(os.environ)
        env[LAUNCHER_ENV] = "%d:%s" % (os.getpid(), process_start(os.getpid()) or "")
        pre = die_with_parent(os.getpid()) if {use_pdeathsig!r} else None
        child = subprocess.Popen([sys.executable, "-c", {child_code!r}], env=env,
                                 start_new_session=True, preexec_fn=pre)
        print(child.pid, flush=True)
        time.sleep({2 * PATIENCE})
    """)
    launcher = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(launcher.stdout.readline())
    return launcher, child


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")
def test_pdeathsig_kills_the_child_of_a_sigkilled_launcher(tmp_path):
    assert die_with_parent(os.getpid()) is not None
    launcher, child = _launcher_and_child(tmp_path, f"import time; time.sleep({2 * PATIENCE})",
                                          use_pdeathsig=True)
    time.sleep(0.3)
    assert process_start(child) is not None
    launcher.kill()
    launcher.wait(timeout=PATIENCE)
    assert _wait_gone(child), "the child outlived its SIGKILLed launcher"


def test_a_rank_ends_when_its_launcher_is_gone(tmp_path):
    """Without the death signal (another MPI's ranks are grandchildren of the launcher), the
    rank's own watch of the launcher PID ends it."""
    ready = tmp_path / "watching"
    rank = textwrap.dedent(f"""
        import time
        from tlop.runtime.measure.worker import watch_launcher
        assert watch_launcher()
        open({str(ready)!r}, "w").close()
        time.sleep({2 * PATIENCE})
    """)
    launcher, child = _launcher_and_child(tmp_path, rank, use_pdeathsig=False)
    deadline = time.monotonic() + PATIENCE
    while not ready.exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    launcher.send_signal(signal.SIGKILL)
    launcher.wait(timeout=PATIENCE)
    assert _wait_gone(child), "the rank outlived its SIGKILLed launcher"


def test_watch_of_a_launcher_already_gone_or_reused(tmp_path):
    code = ("import os; from tlop.runtime.measure.worker import watch_launcher; "
            "watch_launcher(); print('survived')")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    for spec in (f"{dead}:1", f"{os.getpid()}:999999999999"):   # gone; or the PID is someone else's now
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PATIENCE,
                           env={**os.environ, LAUNCHER_ENV: spec})
        if spec.startswith(str(os.getpid())) and not process_start(os.getpid()):
            continue                                          # no /proc start times here
        assert r.returncode == 4 and "survived" not in r.stdout, (spec, r.stdout, r.stderr)
        assert "its launcher" in r.stderr
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PATIENCE,
                       env={**os.environ, LAUNCHER_ENV: f"{os.getpid()}:{process_start(os.getpid())}"})
    assert r.returncode == 0 and "survived" in r.stdout
