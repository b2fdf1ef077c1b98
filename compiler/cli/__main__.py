"""``python -m tlop.cli``: the ``tlop`` command (e.g. under ``python -m mpi4py.futures``, whose
workers import this module without running it)."""

import sys

from tlop.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
