"""arraygrad.utils: pytrees (used by the core) and graph drawing (draw_graph, print_graph)."""

_DRAWING = ("draw_graph", "print_graph", "graph_text")


def __getattr__(name):
    # lazily: the core imports utils._pytree while the package is still loading, and
    # graph drawing sits on top of autograd
    if name in _DRAWING:
        from . import graph_drawing
        return getattr(graph_drawing, name)
    raise AttributeError(f"module 'arraygrad.utils' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_DRAWING))
