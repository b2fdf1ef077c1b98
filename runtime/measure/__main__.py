"""``python -m tlop.runtime.measure``: the ``tlop measure`` command before (and besides) the
``tlop`` CLI wiring; also the entry point of every relaunched MPI rank."""

import sys

from tlop.runtime.measure.cli import main

sys.exit(main())
