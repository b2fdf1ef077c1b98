"""``tlop measure``: MPI micro-benchmarks that produce a platform profile.

What it does: runs τ-Lop (overhead o^c(m), Ring_τ), postal, pLogP, LogGP, max-rate and
collective benchmarks with mpi4py under ``mpiexec``, keeps every raw sample in a JSON-lines
file beside the profile (appended and fsync'ed point by point, so an interrupted run can be
resumed), and assembles a version-1 profile (``tlop.runtime.profile``) from the medians.

Modules, one job each:

* :mod:`.stats` — summaries (min, median, mean, p95, CI of the median, outliers) and the
  adaptive stopping rule (pure, no MPI);
* :mod:`.plan` — the settings (``--quick`` or full) and the list of points to measure;
* :mod:`.engine` — the adaptive repetition loop over an MPI communicator and the watchdog;
* :mod:`.bench_taulop`, :mod:`.bench_plogp`, :mod:`.bench_maxrate`, :mod:`.bench_coll`,
  :mod:`.bench_cuda` — the timed kernels;
* :mod:`.worker` — what every MPI rank runs;
* :mod:`.store` — the raw-sample file: append, read, resume, refuse damaged records;
* :mod:`.lock` — one writer per output (a ``flock`` on ``PATH.lock``);
* :mod:`.fit` — postal segmented fits, τ-Lop/pLogP/LogGP derivations (pure);
* :mod:`.assemble` — point records → profile dictionary;
* :mod:`.launch` — relaunching under the ``mpiexec`` beside the interpreter, with timeouts;
* :mod:`.binding` — binding ranks to cores of their own, and what their CPU affinity showed;
* :mod:`.window` — ReproMPI's window-based start on synchronised clocks (tune-check, validate);
* :mod:`.plot` — the ``--plot`` figure: ping-pong latency with its spread;
* :mod:`.cli` — ``add_arguments`` / ``run`` for the ``tlop measure`` subcommand.

What it does not do: read or interpolate profiles (``tlop.runtime.profile``).
"""
