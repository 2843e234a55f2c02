"""Every primitive of arraygrad by name: each is declared once, with all its rules, by
`primitive(...)` in its family's module, which records it here.

The coverage tests and `python -m arraygrad.coverage` read this table (after `import
arraygrad`, which loads every family), so a new primitive is listed and checked for a vjp,
jvp and batching rule as soon as it is declared.
`Primitive(...)` itself registers nothing: custom Function calls and tests make their own.
"""
from ..core.dispatch import Primitive

PRIMITIVES = {}     # name -> Primitive, in declaration order


def primitive(name, impl, **rules):
    """Declare the primitive `name` (see `Primitive` for the rules and flags) and register it.

        _exp = primitive("exp", lambda xp, x: xp.exp(x), vjp=..., jvp=..., batch=elementwise)
    """
    if name in PRIMITIVES:
        raise ValueError(f"a primitive named '{name}' is already declared "
                         f"(primitive names are unique)")
    prim = PRIMITIVES[name] = Primitive(name, impl, **rules)
    return prim

