"""Checks of custom Functions: strict mode, validation of the gradients backward returns,
and the ctx lints (tensors kept as ctx attributes, saved tensors changed in place).

Beyond PyTorch's own checks, these find the mistakes that give a wrong gradient without an
error; in strict mode (`set_strict`) the warnings are errors.
"""
import os
import sys
import warnings

from .._tensor import Tensor
from ..backends import numpy_backend
from ..dtypes import of_array, _FROM_NP
from ..utils._pytree import tree_flatten, LEAF
from .graph import Node, next_nodes, sum_to_shape

_ndarray = numpy_backend.array_type

# ----------------------------------------------------------------- strict mode
class _Strict:
    on = False


def is_strict():
    """Whether strict Function checking is on (see `set_strict`)."""
    return _Strict.on


class set_strict:
    """Strict checking of custom Functions (beyond PyTorch); a call, a context manager.

    When on, a gradient that PyTorch would silently sum to the input's shape
    or cast to its dtype raises, and the ctx lints (tensors stored as ctx
    attributes, saved tensors changed in place) raise instead of warning.

        >>> arraygrad.autograd.set_strict(True)
        >>> with arraygrad.autograd.set_strict(True): ...
    """

    def __init__(self, mode=True):
        self.prev = _Strict.on
        _Strict.on = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _Strict.on = self.prev


def lint(msg):
    if _Strict.on:
        raise RuntimeError(msg)
    warn(msg)


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def warn(msg):
    """A UserWarning attributed to the first caller outside arraygrad (the user's line)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PKG):
        frame, level = frame.f_back, level + 1
    warnings.warn(msg, UserWarning, stacklevel=level)



# NOTE [ctx attributes]
# Everything the machinery keeps on a ctx starts with `_f_`, so the user's
# own attributes (`ctx.dim`, `ctx.scale`) are exactly the other names, which
# is what the attribute lint walks.
_TORCH_CTX_NAMES = frozenset(("to_save", "saved_for_forward", "dirty_tensors",
                              "non_differentiable", "materialize_grads", "needs_input_grad",
                              "next_functions", "n_outputs", "_seq", "_metadata",
                              "_pre_hooks", "_post_hooks", "_tensor_hooks", "_watched"))
# what recording puts on every ctx, and a graph node on itself (its edges, its number): a
# ctx with nothing else needs no attribute lint
_MACHINERY_NAMES = (_TORCH_CTX_NAMES | set(getattr(Node(((None, 0),)), "__dict__", ())) |
                    {"_f_out_meta", "_f_out_leaves", "_f_out_spec", "_f_in_meta", "_f_saved",
                     "_f_recorded"})



# ----------------------------------------------------------------- grad validation
_SCALAR_FIX = (" (backward must return a gradient of the input's shape: to spread a scalar "
               "grad_output over the input, return grad_output.expand_as(input) or "
               "grad_output * torch.ones_like(input))")


def validate_grads(node, result):
    """Check backward's return against the inputs and bring each grad to its input's
    shape (sum over broadcast dims) and dtype, as torch's validate_outputs; grads of
    inputs that need none are dropped unchecked, as in torch."""
    metas = node._f_in_meta
    if not isinstance(result, tuple):
        result = (result,)
    n = len(metas)
    if len(result) == n:
        # the common case first: every input a tensor, each gradient None or a plain array
        # tensor of its input's shape and dtype (nothing to check or convert)
        fns = next_nodes(node)
        out = []
        for k, r in enumerate(result):
            spec, leaf_meta = metas[k]
            meta = leaf_meta[0] if spec is LEAF else None
            if meta is None:
                break
            if r is None or fns[k] is None:
                out.append(None)
                continue
            if not isinstance(r, Tensor) or r._lvl is not None:
                break
            d = r._data
            if type(d) is not _ndarray or d.shape != meta[0] or \
                    _FROM_NP.get(d.dtype) is not meta[1]:
                break
            out.append(r)
        else:
            return out
    elif len(result) > n and all(r is None for r in result[n:]):
        result = result[:n]
    else:
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {n}, got {len(result)})")
    edges = next_nodes(node)       # one per tensor leaf of the inputs, in order
    out = []
    for i, (r, (spec, leaf_meta)) in enumerate(zip(result, metas)):
        if spec is LEAF:
            meta = leaf_meta[0]
            if meta is None:
                if r is not None:
                    raise RuntimeError(f"function {node.name()} returned a gradient different "
                                       f"than None at position {i + 1}, but the corresponding "
                                       "forward input was not a Variable")
            elif r is None or edges[len(out)] is None:
                out.append(None)
            else:
                out.append(check_grad(node, r, meta, i))
            continue
        if r is None:
            out.extend(None for m in leaf_meta if m is not None)
            continue
        leaves, rspec = tree_flatten(r)
        if rspec != spec:
            raise RuntimeError(f"function {node.name()} returned a gradient of structure {rspec} "
                               f"for input {i}, which has structure {spec}: return None or a "
                               "gradient (or None) in the place of each of its tensors")
        for j, (g, m) in enumerate(zip(leaves, leaf_meta)):
            if m is None:
                if g is not None:
                    raise RuntimeError(f"function {node.name()} returned a gradient different "
                                       f"than None for the non-tensor element {j} of input {i}")
            elif g is None or edges[len(out)] is None:
                out.append(None)
            else:
                out.append(check_grad(node, g, m, i, j))
    return out


def check_grad(node, g, meta, i, j=None):
    """`g` checked as the gradient of leaf `j` (None: the whole) of input `i` of `node`'s
    Function, brought to the input's shape and dtype."""
    if not isinstance(g, Tensor):
        raise RuntimeError(f"expected Variable or None (got {type(g).__name__}): function "
                           f"{node.name()} returned it as the gradient of input "
                           f"{_where(i, j)}; return a Tensor of the input's shape (or None)")
    shape, dtype = meta
    gshape, gdtype = meta_of(g)
    if gshape != shape:
        if _Strict.on:
            raise RuntimeError(f"Function {node.name()} returned a gradient of shape "
                               f"{list(gshape)} for input {_where(i, j)} of shape {list(shape)} "
                               "(strict mode: PyTorch would sum it to the input's shape)")
        try:
            g = sum_to_shape(g, shape, node, _where(i, j))
        except RuntimeError as e:
            fix = _SCALAR_FIX if gshape == () else ""
            raise RuntimeError(str(e) + fix) from None
    if gdtype is not dtype:
        if _Strict.on:
            raise RuntimeError(f"Function {node.name()} returned a gradient of dtype {gdtype} "
                               f"for input {_where(i, j)} of dtype {dtype} (strict mode: PyTorch "
                               "would cast it)")
        g = g.to(dtype)
    return g


def _where(i, j):
    return f"{i}" if j is None else f"{i}[{j}]"


def meta_of(t):
    """(shape, dtype) of `t`: what a Function's node keeps of its inputs and outputs."""
    if t._lvl is None:
        d = t._data
        return tuple(d.shape), of_array(d.dtype)
    return tuple(t.shape), t.dtype


# ----------------------------------------------------------------- ctx lints
def lint_attrs(ctx, args, out_leaves):
    """Warn about tensors kept as ctx attributes (NOTE [ctx attributes]); remember the
    versions of all of them to catch a change before backward. Free when the ctx holds
    only what the machinery put there."""
    d = ctx.__dict__        # a node's own state is in slots (NOTE [ctx slots] in function.py)
    if d and not _MACHINERY_NAMES.issuperset(d):
        _lint_user_attrs(ctx, args, out_leaves)


def _lint_user_attrs(ctx, args, out_leaves):
    io_ids = {id(t) for t in tree_flatten([args, out_leaves])[0] if isinstance(t, Tensor)}
    versions = {}
    name = ctx._forward_cls.__name__
    for attr, v in list(vars(ctx).items()):
        if not isinstance(v, _HOLDERS) or attr in _TORCH_CTX_NAMES or attr.startswith("_f_"):
            continue
        for t in _attr_tensors(v):
            if t._requires_grad or id(t) in io_ids:
                what = "an input or output" if id(t) in io_ids else "a tensor that requires grad"
                lint(f"{name}: ctx.{attr} holds {what}; save it with ctx.save_for_backward(...) "
                      "instead, so that in-place changes are caught and the graph is not kept "
                      "alive")
            versions[id(t)] = (attr, t, t._vc[0])
    if versions:
        ctx._f_attr_versions = versions


_HOLDERS = (Tensor, list, tuple, dict)


def _attr_tensors(v):
    if isinstance(v, Tensor):
        return (v,)
    if isinstance(v, (list, tuple, dict)):
        return tuple(x for x in tree_flatten(v)[0] if isinstance(x, Tensor))
    return ()


def check_attr_versions(ctx):
    versions = ctx._f_attr_versions
    if not versions:
        return
    for attr, t, v in versions.values():
        if t._vc[0] != v:
            lint(f"{ctx.name()}: the tensor in ctx.{attr} was modified in place after forward "
                  f"(version {v} -> {t._vc[0]}); backward would read the new values. Save "
                  "it with ctx.save_for_backward(...) to get an error, or clone it in forward")


def saved_versions(ctx):
    """Versions of the saved tensors the node holds as such (not outputs, which it rebuilds,
    nor what saved-tensor hooks packed, which the hooks own), or None if there are none."""
    saved = ctx._f_saved
    if not saved:
        return None
    for s in saved:
        if s is not None and s.ref is None and s.hooks is None:
            break
    else:
        return None
    return [s.value._vc[0] if s is not None and s.ref is None and s.hooks is None else None
            for s in saved]


def check_saved_unchanged(ctx, versions):
    if not versions or not ctx._f_saved:
        return
    for i, (s, v) in enumerate(zip(ctx._f_saved, versions)):
        if v is not None and s.value._vc[0] != v:
            lint(f"{ctx.name()}: backward modified saved tensor {i} in place; a later backward "
                  "through this graph (retain_graph=True) will fail or be wrong. Use out-of-place "
                  "ops on saved tensors")
