"""Reverse-mode transforms: grad, grad_and_value, vjp."""
import functools

from .. import _tensor as _t
from ..autograd import engine
from ..autograd.graph import gradient_edge
from ..autograd.views import refresh_view
from ..backends import numpy_backend
from ..core.dispatch import born_here
from ..ops import creation
from ..utils._pytree import tree_flatten, tree_unflatten, tree_map
from .grad_level import GradInterpreter

_ndarray, _np = numpy_backend.array_type, numpy_backend.xp


def _argnums_tuple(argnums, nargs, name):
    if type(argnums) is int and 0 <= argnums < nargs:
        return (argnums,)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{name}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{name}: argnums must be int or Tuple[int, ...], got {type(a)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"{name}: Got argnums={a}, but only {nargs} positional inputs")
    return tuple(a % nargs for a in nums)


def _lift_tree(level, tree, name):
    if type(tree) is _t.Tensor and tree.dtype.is_differentiable:
        return level.lift(tree, requires_grad=True)

    def lift(x):
        if not isinstance(x, _t.Tensor):     # torch's ValueError
            raise ValueError(f"{name}: Thing passed to transform API must be Tensor, got "
                             f"{type(x)}")
        if not x.dtype.is_differentiable:
            raise RuntimeError(f"{name}: only floating point inputs can be differentiated, got "
                               f"{x.dtype}")
        return level.lift(x, requires_grad=True)
    return tree_map(lift, tree)


def _unwrap_tree(level, tree):
    return tree_map(lambda x: level.unwrap(x) if isinstance(x, _t.Tensor) else x, tree)


def _one(t):
    """`ones_like(t)` (the cotangent of a one-element output), its common case (a plain NumPy
    array) made here."""
    d = t._data
    if t._lvl is None and type(d) is _ndarray:
        return born_here(_t.make(_np.ones(d.shape, d.dtype)))
    return creation.ones_like(t)


def _vjp_of(level, outputs, cotangents, inputs, retain):
    """Cotangents of `inputs` (level tensors) given those of `outputs`."""
    roots, grads = [], []
    for o, c in zip(outputs, cotangents):
        if isinstance(o, _t.Tensor) and o._lvl is level and o._requires_grad:
            roots.append(gradient_edge(o))
            grads.append(c)
    edges = [gradient_edge(x) for x in inputs]
    result = engine.run(roots, grads, retain, True, capture=edges) if roots else [None] * len(edges)
    return [creation.zeros_like(x._inner) if r is None else r for x, r in zip(inputs, result)]


def grad_and_value(func, argnums=0, has_aux=False):
    """Like `grad`, also returning the value (and aux) of `func`."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "grad_and_value(f)(*args)")
        with GradInterpreter() as level:
            args = list(args)
            for a in nums:
                args[a] = _lift_tree(level, args[a], "grad_and_value(f)(*args)")
            out = func(*args, **kwargs)
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be "
                                       "a tuple: (output, aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, _t.Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out).__name__}")
            if out.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.dim()} dims. Maybe you "
                                   "wanted to use the vjp or jacrev APIs instead?")
            diff = [args[a] for a in nums]
            if len(diff) == 1 and type(diff[0]) is _t.Tensor:
                flat, spec = diff, None
            else:
                flat, spec = tree_flatten(diff)
            inner_out = level.unwrap(out)
            grads = _vjp_of(level, [out], [_one(inner_out)], flat, False)
            g = grads if spec is None else tree_unflatten(grads, spec)
            g = g[0] if isinstance(argnums, int) else tuple(g)
            value = inner_out
            if has_aux:
                return g, (value, _unwrap_tree(level, aux))
            return g, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued `func` with respect to argument(s) `argnums`.

        >>> from arraygrad.func import grad
        >>> grad(lambda x: (x ** 3).sum())(arraygrad.tensor([1., 2.]))
        tensor([ 3., 12.])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives cotangents of the primals."""
    level = GradInterpreter()
    with level:
        args = [_lift_tree(level, p, "vjp(f, *primals)") for p in primals]
        out = func(*args)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, aux = out
        out_flat, out_spec = tree_flatten(out)
        for o in out_flat:
            if not isinstance(o, _t.Tensor):
                raise RuntimeError("vjp(f, *primals): Expected f to be a function that has only "
                                   f"Tensors as outputs, got {type(o).__name__}")
        for o in out_flat:
            if o._lvl is level and o._base is not None and o._vc[0] != o._view_version:
                refresh_view(o)     # a view written through its base: now, not in vjp_fn
        in_flat, in_spec = tree_flatten(args)
        value = _unwrap_tree(level, out)

    def vjp_fn(cotangents, *rest, retain_graph=True, create_graph=None):
        ct = cotangents if not rest else (cotangents,) + rest
        ct_flat, ct_spec = tree_flatten(ct)
        if len(ct_flat) != len(out_flat):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{ct_spec}, primal output: {out_spec}")
        for i, (c, o) in enumerate(zip(ct_flat, out_flat)):
            if c is None:       # as torch's autograd: ones for a one-element output
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                c = ct_flat[i] = _one(level.unwrap(o))
            elif not isinstance(c, _t.Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got "
                                f"{type(c).__name__}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output has a shape of {c.shape} "
                                   f"and output has a shape of {o.shape}.")
        grads = _vjp_of(level, out_flat, ct_flat, in_flat, True)
        return tuple(tree_unflatten(grads, in_spec))

    if has_aux:
        return value, vjp_fn, _unwrap_tree(level, aux)
    return value, vjp_fn
