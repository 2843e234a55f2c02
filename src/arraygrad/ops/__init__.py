"""Primitives grouped by family; each module holds its ops with all their rules."""
from . import creation, elementwise, reduce, shape, index, linalg  # noqa: F401
from . import bits, stats  # noqa: F401
from . import solve, norms  # noqa: F401
