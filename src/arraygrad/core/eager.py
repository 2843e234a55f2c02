"""Level 0: compute on raw arrays and record a graph node when grad mode asks."""
from .. import _tensor as _t
from .._tensor import Tensor
from ..backends import backend_of, default_backend, common_backend, adopt
from ..dtypes import of_array
from . import grad_mode
from ..autograd.graph import PrimNode, gradient_edge
from ..ops.inplace import refresh_view


def process(prim, args, params):
    if prim.custom:
        return prim.rule(None, args, params)
    arrays = []
    record = False
    backend = None
    mixed = False
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            if a._lvl is not None:      # escaped from a finished transform
                args = tuple(_t.lower(x) for x in args)
                return process(prim, args, params)
            d = a._data
            if backend is None:
                backend = backend_of(d)
                first = d
            elif type(d) is not type(first):
                backend = common_backend(backend, first, d)
                mixed = True
            arrays.append(d)
            if a._requires_grad:
                record = True
            elif a._base is not None and a._vc[0] != a._view_version:
                # a view whose base was written in place (and may have gained history)
                refresh_view(a)
                record = record or a._requires_grad
        else:
            arrays.append(a)
    if backend is None:
        backend = default_backend()
    elif mixed:
        arrays = [adopt(backend, d) if isinstance(a, Tensor) else d for a, d in zip(args, arrays)]
    out = prim.impl(backend.xp, *arrays, **params)
    if prim.multiple_results:
        outs = [_t.make(backend.result(o)) for o in out]
    else:
        outs = [_t.make(backend.result(out))]
    if record and prim.differentiable and grad_mode.state.grad_enabled:
        _record(prim, args, params, outs)
    if prim.is_view:
        mark_view(prim, args[0], params, outs[0])
    return outs if prim.multiple_results else outs[0]


def _record(prim, args, params, outs):
    edges = []
    needs = []
    for a in args:
        e = gradient_edge(a) if isinstance(a, Tensor) else None
        edges.append(e or (None, 0))
        needs.append(e is not None)
    node = PrimNode(prim, params, args, outs, tuple(edges), tuple(needs), True)
    nondiff = prim.nondiff_outputs
    for i, o in enumerate(outs):
        if i in nondiff or not of_array(o._data.dtype).is_floating_point:
            continue
        o._requires_grad = True
        o.grad_fn = node
        o._output_nr = i


def mark_view(prim, src, params, out):
    """`out` shares memory (and the version counter) with `src`; record how to redo the view."""
    out._vc = src._vc
    if not prim.differentiable:
        return
    out._view_version = src._vc[0]
    out._base = src if src._base is None else src._base
    parent = src._view_fn
    if parent is None:
        out._view_fn = lambda b: prim(b, **params)
    else:
        out._view_fn = lambda b: prim(parent(b), **params)
