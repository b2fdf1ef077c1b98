"""The ``tlop`` command line (:mod:`tlop.cli.main`); ``tlop rules``/``prove``/``explain`` live in
:mod:`tlop.cli.rules`, ``tlop measure`` in :mod:`tlop.runtime.measure.cli`."""


def main(argv=None):
    """Entry point of the ``tlop`` command (the program itself, ``argv`` None, exits without
    freeing what it loaded: :func:`tlop.frontend.limits.exit_without_teardown`)."""
    from tlop.cli.main import main as _main

    rc = _main(argv)
    if argv is None:
        from tlop.frontend.limits import exit_without_teardown

        return exit_without_teardown(rc)
    return rc
