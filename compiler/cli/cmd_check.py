"""``tlop check``: parse and check files (every error with file:line:col and a caret).

What it does not do: evaluate anything.
"""

from __future__ import annotations


from tlop.runtime.diagnostics import TlopError
from tlop.cli.jsonout import emit as _emit_json
from tlop.cli.common import _check_targets, _load, _print_error


def cmd_check(args) -> int:
    """Check every file (all of them, also after one fails); exit 1 when any has an error."""
    from tlop.cli.jsonout import diagnostics_json

    files = _check_targets(args.files)
    results, diagnostics, failed = [], [], 0
    for f in files:
        try:
            m = _load(f)
        except TlopError as err:
            failed += 1
            results.append({"file": f, "ok": False, "algorithms": []})
            diagnostics.extend(diagnostics_json(err))
            if not args.json:
                _print_error(err)
            continue
        results.append({"file": f, "ok": True, "algorithms": list(m.own_algorithms)})
        if not args.json:
            n = len(m.own_algorithms)
            print(f"{f}: ok ({n} algorithm{'s' if n != 1 else ''})")
    if args.json:
        _emit_json({"ok": not failed, "files": results, "diagnostics": diagnostics})
    elif len(files) > 1 and (failed or len(files) != len(args.files)):
        print(f"{len(files)} files checked: {len(files) - failed} ok, {failed} with errors")
    return 1 if failed else 0
