"""Run a child process bounded in CPU time and memory instead of wall-clock time.

What it does: :func:`run_bounded` runs a command with ``RLIMIT_CPU`` (a runaway computation is
killed by SIGXCPU after ``cpu_seconds`` of its own CPU time, the same on an idle and on a loaded
machine) and optionally ``RLIMIT_AS`` (a runaway allocation fails); the wall-clock ``timeout``
is only a last guard against a child blocked without using CPU (a rank waiting for a dead rank),
set far above what a loaded machine needs.  :data:`PATIENCE` is that guard for tests that wait
for an event (a file appearing, a process ending).
What it does not do: measure or assert speed — no test may (speed goes into ``bench/``).
"""

from __future__ import annotations

import subprocess

__all__ = ["run_bounded", "PATIENCE", "cpu_killed"]

#: seconds a test waits for something to happen before it gives up (a hang guard, never a
#: speed requirement: on a busy 2-core machine a Python start alone can take seconds)
PATIENCE = 600.0


def run_bounded(argv, *, cpu_seconds: int = 60, mem_bytes: int | None = None, timeout: float = PATIENCE,
                **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run(argv, capture_output=True, text=True, **kwargs)`` with the child's CPU
    time capped at ``cpu_seconds`` and its address space at ``mem_bytes`` (when given)."""

    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        if mem_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))

    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, preexec_fn=limit, **kwargs)


def cpu_killed(proc: subprocess.CompletedProcess) -> bool:
    """Whether the child was ended by its CPU-time limit (SIGXCPU, or SIGKILL at the hard limit)."""
    import signal

    return proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
