"""The ``tlop`` command line (:mod:`tlop.cli.main`); ``tlop rules``/``prove``/``explain`` live in
:mod:`tlop.cli.rules`, ``tlop measure`` in :mod:`tlop.runtime.measure.cli`."""


def main(argv=None):
    """Entry point of the ``tlop`` command."""
    from tlop.cli.main import main as _main

    return _main(argv)
