"""Front end: source text → parse tree (ANTLR) → AST with spans → checked, typed IR.

Pipeline order: :mod:`parse` → :mod:`loader` (imports) → :mod:`elaborate` (names, types,
dimensions, lowering to :mod:`tlop.ir`) → :mod:`binding` (argument values against declared types
and constraints).  :mod:`unparse` prints an AST back as source; :mod:`claims` reads ``tlop prove``
relations with the same machinery.
"""
