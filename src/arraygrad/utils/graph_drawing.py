"""Seeing the backward graph: a graphviz drawing (as torchviz draws PyTorch's) or text.

    dot = arraygrad.utils.draw_graph(loss, params=dict(model.named_parameters()),
                                     show_saved=True)
    dot.render("graph", format="svg")     # rendering needs graphviz's `dot` program
    arraygrad.utils.print_graph(loss)     # no graphviz needed

Nodes are named as `grad_fn` names them; custom Function nodes are marked;
leaves show their name in `params` (else their shape); saved tensors their
shape and dtype. `draw_graph` needs the optional `graphviz` package
(`pip install 'arraygrad[graph]'`).
"""
import sys

from .._tensor import Tensor
from ..autograd.function import BackwardCFunction
from ..autograd.graph import AccumulateGrad, PrimNode, SavedTensor, compact_array

__all__ = ["draw_graph", "print_graph", "graph_text"]

_COLOURS = {"output": "darkolivegreen1", "leaf": "lightblue", "custom": "khaki",
            "saved": "orange"}


def _roots(outputs):
    outs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"draw_graph/print_graph expect tensors, got {type(o).__name__}")
    return outs


def _shape(t):
    return tuple(t.shape)


def _label(node, names):
    """(text, kind) of a graph node: kind is 'leaf', 'custom' or 'op'."""
    if isinstance(node, AccumulateGrad):
        v = node.variable
        name = names.get(id(v))
        return (f"{name}\n{_shape(v)}" if name else f"{_shape(v)}"), "leaf"
    if isinstance(node, BackwardCFunction):
        return f"{node.name()}\n(custom Function)", "custom"
    return node.name(), "op"


def _saved(node):
    """(shape, dtype name) of each tensor a node saved; [] once freed."""
    if isinstance(node, BackwardCFunction):
        entries = node._f_saved or ()
    elif isinstance(node, PrimNode):
        entries = list(node._saved or ()) + list(node._saved_outs or ())
    else:
        entries = ()
    out = []
    for s in entries:
        a = compact_array(s)
        if a is not None:
            out.append((tuple(a.shape), str(a.dtype)))
        elif isinstance(s, SavedTensor):
            v = s.value
            dtype = v.dtype.name if isinstance(v, Tensor) else str(v.dtype)
            out.append((tuple(v.shape), dtype))
    return out


def _walk(outputs):
    """The nodes reachable from the outputs' grad_fns, each once, outputs first."""
    order, seen = [], set()
    stack = [o.grad_fn for o in reversed(outputs) if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        for nxt, _ in reversed(node.next_functions or ()):
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return order


def draw_graph(outputs, params=None, show_saved=False):
    """A graphviz Digraph of the backward graph of `outputs` (a tensor or several).

    `params` maps names to tensors (e.g. `dict(model.named_parameters())`) to name
    the leaves; `show_saved=True` adds each node's saved tensors (shape, dtype).
    """
    try:
        from graphviz import Digraph
    except ImportError as e:
        raise ImportError("draw_graph needs the graphviz package: pip install "
                          "'arraygrad[graph]' (and graphviz's `dot` program to render); "
                          "print_graph(...) shows the graph as text without it") from e
    outputs = _roots(outputs)
    names = {id(t): n for n, t in (params or {}).items()}
    dot = Digraph(node_attr=dict(style="filled", shape="box", align="left", fontsize="10",
                                 ranksep="0.1", height="0.2", fontname="monospace"),
                  graph_attr=dict(size="12,12"))
    for node in _walk(outputs):
        text, kind = _label(node, names)
        dot.node(str(id(node)), text, fillcolor=_COLOURS.get(kind, "lightgrey"))
        for nxt, _ in node.next_functions or ():
            if nxt is not None:
                dot.edge(str(id(nxt)), str(id(node)))
        if show_saved:
            for i, (shape, dtype) in enumerate(_saved(node)):
                sid = f"{id(node)}_saved{i}"
                dot.node(sid, f"saved {i}\n{shape}\n{dtype}", fillcolor=_COLOURS["saved"])
                dot.edge(sid, str(id(node)), style="dashed", dir="none")
    for k, o in enumerate(outputs):
        oid = f"output{k}_{id(o)}"
        dot.node(oid, f"output {k}\n{_shape(o)}", fillcolor=_COLOURS["output"])
        if o.grad_fn is not None:
            dot.edge(str(id(o.grad_fn)), oid)
    return dot


def graph_text(outputs, params=None, show_saved=False):
    """The backward graph as indented text, one node a line; a node reached again is
    printed once and then named with '(shown above)'."""
    outputs = _roots(outputs)
    names = {id(t): n for n, t in (params or {}).items()}
    lines, shown = [], set()
    for k, o in enumerate(outputs):
        if o.grad_fn is None:
            lines.append(f"output {k} {_shape(o)}: no grad_fn (a leaf or no history)")
            continue
        stack = [(o.grad_fn, 0)]
        while stack:
            node, depth = stack.pop()
            text, kind = _label(node, names)
            text = " ".join(text.split("\n"))
            pad = "    " * depth
            if id(node) in shown:
                lines.append(f"{pad}{text} (shown above)")
                continue
            shown.add(id(node))
            lines.append(pad + text)
            if show_saved:
                lines.extend(f"{pad}  saved {i}: {shape} {dtype}"
                             for i, (shape, dtype) in enumerate(_saved(node)))
            for nxt, _ in reversed(node.next_functions or ()):
                if nxt is not None:
                    stack.append((nxt, depth + 1))
    return "\n".join(lines)


def print_graph(outputs, params=None, show_saved=False, file=None):
    """Print `graph_text(...)` (to `file`, default stdout): the graph without graphviz."""
    print(graph_text(outputs, params=params, show_saved=show_saved),
          file=sys.stdout if file is None else file)
