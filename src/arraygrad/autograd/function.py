"""Custom autograd Functions: user-defined primitives with a ctx (torch.autograd.Function).

    class Exp(arraygrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    Exp.apply(x)

# NOTE [custom Function as a primitive]
`Function.apply` binds one primitive per Function class (`cls._prim`, custom),
with the flattened positional arguments as its args, so the dispatcher sees
every tensor, even inside lists and dicts. Each level has one rule for it:
- eager (level 0): run `forward` with grad recording off, then record one
  `<Name>Backward` node, which is also the `ctx` (as in torch, `y.grad_fn`
  is the ctx: `y.grad_fn.saved_tensors` works).
- grad level: bind the Function again one level down (so lower levels see
  it: eager autograd or an outer grad level), call `setup_context` with the
  values of that level and record a node whose backward runs on them. That
  is what makes grad(grad(f)) work through a Function.
- jvp level: bind one level down, `setup_context`, then the `jvp`
  staticmethod on the tangents (or a jvp derived from `backward`, see
  NOTE [jvp from backward]).
- batch level: the `vmap` staticmethod, or a generated rule
  (`generate_vmap_rule = True`) that vmaps forward/backward/jvp.
Under any transform only the `setup_context` style is allowed (as torch),
except forward-mode dual levels, which also take `forward(ctx, ...)`.

# NOTE [pytrees in Functions]
Beyond PyTorch, tensors inside lists, tuples and dicts of the arguments and
of the output are tracked. `backward` still returns one entry per positional
argument: for a container argument, None or a container of the same shape.
It receives one gradient per element of a tuple output (a container of
gradients for a container element), or one for a single output.
"""
import functools
import inspect
import os
import sys
import warnings
from typing import NamedTuple

from .. import _tensor as _t
from .._tensor import Tensor
from ..core import grad_mode
from ..core.dispatch import Primitive, bind
from ..utils._pytree import tree_flatten, tree_unflatten, LEAF
from .graph import Node, SavedTensor, FREED_MSG, gradient_edge, current_saved_hooks

__all__ = ["FunctionCtx", "BackwardCFunction", "Function", "once_differentiable",
           "InplaceFunction", "set_strict", "is_strict", "VmapInfo"]


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


def _lint(msg):
    if _Strict.on:
        raise RuntimeError(msg)
    _warn(msg)


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _warn(msg):
    """A UserWarning attributed to the first caller outside arraygrad (the user's line)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PKG):
        frame, level = frame.f_back, level + 1
    warnings.warn(msg, UserWarning, stacklevel=level)


# ----------------------------------------------------------------- ctx
# NOTE [ctx attributes]
# Everything the machinery keeps on a ctx starts with `_f_`, so the user's
# own attributes (`ctx.dim`, `ctx.scale`) are exactly the other names, which
# is what the attribute lint walks.
_TORCH_CTX_NAMES = frozenset(("to_save", "saved_for_forward", "dirty_tensors",
                              "non_differentiable", "materialize_grads", "needs_input_grad",
                              "next_functions", "n_outputs", "_seq", "_metadata",
                              "_pre_hooks", "_post_hooks", "_tensor_hooks"))


class FunctionCtx:
    """The `ctx` of a custom Function: what forward/setup_context hand to backward/jvp."""

    to_save = ()
    saved_for_forward = ()
    dirty_tensors = ()
    non_differentiable = ()
    materialize_grads = True
    needs_input_grad = ()
    _f_saved = None          # packed SavedTensors once recorded; None after release
    _f_recorded = False
    _f_fwd_mode = False      # inside jvp: saved_tensors are those of save_for_forward

    def save_for_backward(self, *tensors):
        """Save tensors (inputs, outputs, intermediates or None) for backward."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is "
                                f"of type {type(t).__name__}{_where(self)}; keep non-tensors as "
                                "ctx attributes")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors for `jvp`, where they are `ctx.saved_tensors`."""
        for t in tensors:
            if not (isinstance(t, Tensor) or t is None):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                     "should save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark inputs that forward modified in place (they must also be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs that do not require grad (backward still gets a zero grad for them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """False: undefined output grads reach backward/jvp as None instead of zeros."""
        self.materialize_grads = bool(value)

    def mark_shared_storage(self, *pairs):
        warnings.warn("`mark_shared_storage` is deprecated. Tensors with shared storages are "
                      "automatically tracked. Note that calls to `set_()` are not tracked",
                      FutureWarning, stacklevel=2)

    @property
    def saved_tensors(self):
        if self._f_fwd_mode:
            return tuple(self.saved_for_forward)
        if not self._f_recorded:
            return tuple(self.to_save)
        saved = self._f_saved
        if saved is None:
            raise RuntimeError(FREED_MSG)
        return tuple(None if s is None else s.unpack(self) for s in saved)

    @property
    def saved_data(self):
        """The C++ API's map for non-tensor state (an attribute dict here)."""
        d = self.__dict__.get("_f_saved_data")
        if d is None:
            d = self._f_saved_data = {}
        return d

    def get_saved_variables(self):
        """The C++ API's name for `saved_tensors`."""
        return self.saved_tensors

    def name(self):
        return type(self).__name__


class BackwardCFunction(Node, FunctionCtx):
    """The graph node of one call of a custom Function, and its ctx (`<Name>Backward`)."""

    _forward_cls = None

    def __init__(self):
        Node.__init__(self, ())

    def release(self):
        if self._f_recorded:
            self._f_saved = None

    def _user_backward(self):
        cls = self._forward_cls
        backward, vjp = cls.backward, cls.vjp
        if backward is not Function.backward and vjp is not Function.vjp \
                and backward is not vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return vjp if vjp is not Function.vjp else backward

    def apply(self, grads):
        """Run the user's backward on the output grads; validated input grads."""
        _check_attr_versions(self)
        grads = list(grads)
        if self.materialize_grads:
            from ..ops.creation import zeros
            for i, g in enumerate(grads):
                if g is None:
                    shape, dtype = self._f_out_meta[i]
                    grads[i] = zeros(shape, dtype=dtype)
        args = _grad_args(self._f_out_leaves, self._f_out_spec, grads)
        versions = _saved_versions(self)
        result = _call_backward(self._forward_cls, self._user_backward(), self, args)
        _check_saved_unchanged(self, versions)
        return _validate_grads(self, result)


def _call_backward(cls, backward, ctx, grads):
    """The user's backward (or vjp) on the output grads, boxed as `cls.boxed_grads_call` asks."""
    if getattr(cls, "boxed_grads_call", False):
        return backward(ctx, list(grads))
    return backward(ctx, *grads)


class _DelayedError(Node):
    """Node whose backward raises: what @once_differentiable puts under its results."""

    def __init__(self, msg, edges):
        Node.__init__(self, edges)
        self.msg = msg
        self.n_outputs = len(edges)

    def name(self):
        return "Error"

    def apply(self, grads):
        raise RuntimeError(self.msg)


def once_differentiable(fn):
    """Decorate a backward that is not itself differentiable: it runs without recording,
    and differentiating through it again raises (as torch)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not grad_mode.state.grad_enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        msg = "trying to differentiate twice a function that was marked with @once_differentiable"
        if any(isinstance(o, Tensor) and o._lvl is not None for o in outs):
            raise RuntimeError(msg)     # inside a transform: the outer level differentiates now
        fakes = []
        for o in outs:
            if isinstance(o, Tensor):
                o = o.detach()
                o._requires_grad = True
            fakes.append(o)
        edges = tuple(gradient_edge(o) if isinstance(o, Tensor) else (None, 0) for o in fakes)
        node = _DelayedError(msg, edges)
        res = []
        for i, o in enumerate(fakes):
            if isinstance(o, Tensor):
                a = _alias(o)
                a.grad_fn, a._output_nr, a._requires_grad = node, i, True
                o = a
            res.append(o)
        return res[0] if single else tuple(res)
    wrapper._once_differentiable = True
    return wrapper


# ----------------------------------------------------------------- Function
class _FunctionCall(Primitive):
    """The primitive of one Function class: args are the flat positional leaves."""

    custom = True

    def __init__(self, cls):
        Primitive.__init__(self, cls.__name__, None, multiple_results=False)
        self.cls = cls

    def rule(self, interp, args, params):
        kind = None if interp is None else interp.kind
        if kind is None:
            return _eager(self.cls, args, params)
        if kind == "grad":
            return _grad_level(self.cls, interp, args, params)
        if kind == "jvp":
            return _jvp_level(self.cls, interp, args, params)
        if kind == "batch":
            return _batch_level(self.cls, interp, args, params)
        raise NotImplementedError(f"{self.cls.__name__}: custom Functions are not supported "
                                  f"inside a {kind} transform")


class _SingleLevelFunction(FunctionCtx):
    """Base of custom Functions (see `Function`)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})
        cls._prim = _FunctionCall(cls)
        cls._f_signature = None

    @staticmethod
    def forward(*args, **kwargs):
        """`forward(ctx, *args)`, or `forward(*args)` with `setup_context`."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """`setup_context(ctx, inputs, output)`: save what backward/jvp need."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient per forward input, given one per output."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """One tangent per forward output, given one per input."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")


class Function(_SingleLevelFunction):
    """Base class of custom autograd Functions: subclass, write static `forward` and
    `backward` (or `forward` + `setup_context`), call with `.apply(...)`."""

    generate_vmap_rule = False
    # True: backward(ctx, grads) gets the output gradients as one list (which it may empty
    # as it goes, to free memory early) instead of backward(ctx, *grads)
    boxed_grads_call = False
    # NOTE [jvp from backward] the opt-out: False gives torch's "implement jvp" error
    jvp_from_backward = True

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def vmap(info, in_dims, *args):
        """`vmap(info, in_dims, *args) -> (output, out_dims)`: forward over a batch dim."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs or (_has_setup_context(cls) and len(args) != _signature(cls)[1]):
            args, kwargs = _bind_args(cls, args, kwargs)
        flat, spec = tree_flatten(args)
        return bind(cls._prim, flat, {"spec": spec, "kwargs": kwargs})


class InplaceFunction(Function):
    """Kept for torch compatibility; use `Function`."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class VmapInfo(NamedTuple):
    batch_size: int
    randomness: str


def _has_setup_context(cls):
    return cls.setup_context is not _SingleLevelFunction.setup_context


def _signature(cls):
    """(signature of forward without ctx, its arity when all parameters are plain
    positional ones, else -1); cached on the class."""
    cached = cls.__dict__.get("_f_signature")
    if cached is None:
        sig = inspect.signature(cls.forward)
        if not _has_setup_context(cls):
            sig = sig.replace(parameters=list(sig.parameters.values())[1:])
        plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                    for p in sig.parameters.values())
        cached = cls._f_signature = (sig, len(sig.parameters) if plain else -1)
    return cached


def _bind_args(cls, args, kwargs):
    """Keyword arguments moved to their positions (and defaults filled in for the
    setup_context style, as torch), so `backward` returns one grad per position."""
    bound = _signature(cls)[0].bind(*args, **kwargs)
    if _has_setup_context(cls):
        bound.apply_defaults()
    return bound.args, bound.kwargs


def _transform_error(cls):
    return RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, "
                        "grad, jvp, jacrev, ...), it must override the setup_context staticmethod. "
                        "For more details, please see "
                        "https://pytorch.org/docs/main/notes/extending.func.html "
                        f"({cls.__name__} defines forward(ctx, ...): move what it does with ctx "
                        "into setup_context(ctx, inputs, output))")


def _where(ctx):
    cls = getattr(ctx, "_forward_cls", None)
    return f" (in {cls.__name__})" if cls is not None else ""


def _new_ctx(cls):
    return cls._backward_cls()


def _run_forward(cls, ctx, args, kwargs):
    """forward (+ setup_context) with grad recording off, as torch's below-autograd call."""
    with grad_mode.no_grad():
        if _has_setup_context(cls):
            output = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    return output


def _needs_input_grad(args, requires):
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(requires(a))
        else:
            out.append(any(isinstance(x, Tensor) and requires(x) for x in tree_flatten(a)[0]))
    return tuple(out)


def _alias(t):
    """A new tensor sharing `t`'s memory and version counter (torch's view_as(t))."""
    a = _t.make(t._data)
    a._vc = t._vc
    a._base = t if t._base is None else t._base
    return a


def _is_diff_dtype(t):
    return t.dtype.is_floating_point


# ----------------------------------------------------------------- eager level
def _eager(cls, flat, params):
    return _eager_call(cls, flat, params)[0]


def _eager_call(cls, flat, params):
    """Run the Function at level 0: (output, ctx)."""
    flat = [_t.lower(a) if isinstance(a, Tensor) and a._lvl is not None else a for a in flat]
    args = tree_unflatten(flat, params["spec"])
    ctx = _new_ctx(cls)
    ctx.needs_input_grad = _needs_input_grad(args, lambda t: t._requires_grad)
    tensor_ins = [a for a in flat if isinstance(a, Tensor)]
    executable = grad_mode.state.grad_enabled and any(t._requires_grad for t in tensor_ins)
    if executable:      # before forward: a dirty input's history is about to become ctx
        ctx.next_functions = tuple(gradient_edge(t) or (None, 0) for t in tensor_ins)
    output = _run_forward(cls, ctx, args, params["kwargs"])

    out_leaves, out_spec = tree_flatten(output)
    in_ids = {id(t) for t in tensor_ins}
    out_ids = {id(o) for o in out_leaves if isinstance(o, Tensor)}
    dirty = set()
    for d in ctx.dirty_tensors:
        if id(d) not in in_ids:
            _warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                  "Tensors that have been mutated should be passed to ctx.mark_dirty().")
            continue
        if id(d) not in out_ids:
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must all "
                               f"be outputs of the Function ({cls.__name__}: return the tensor "
                               "passed to ctx.mark_dirty).")
        dirty.add(id(d))
    nondiff = {id(t) for t in ctx.non_differentiable}

    new_leaves, out_meta, saved_as_out = [], [], {}
    k = 0
    for o in out_leaves:
        if not isinstance(o, Tensor):
            new_leaves.append(o)
            continue
        if id(o) in dirty:
            o._vc[0] += 1
            r = o
        elif id(o) in in_ids:
            r = _alias(o)
        else:
            r = o
        if executable:
            if id(o) not in nondiff and _is_diff_dtype(o):
                if id(o) in dirty:
                    _rewrite_history(o, ctx, k)
                else:
                    r.grad_fn, r._output_nr, r._requires_grad = ctx, k, True
                    if r._base is not None:     # an in-place write would bypass backward
                        r._custom_view = (cls.__name__, k)
                    if r is o:
                        saved_as_out[id(o)] = (o, k)
            elif id(o) not in dirty and id(o) not in in_ids:
                r._requires_grad = False
        out_meta.append((tuple(o.shape), o.dtype))
        new_leaves.append(r)
        k += 1

    if executable:
        ctx.n_outputs = k
        ctx._f_out_meta = out_meta
        ctx._f_out_leaves = [isinstance(o, Tensor) for o in out_leaves]
        ctx._f_out_spec = out_spec
        _record_inputs(ctx, args)
        _pack_saved(ctx, saved_as_out, owner_is_output=True)
        _lint_attrs(ctx, in_ids | out_ids)
    return tree_unflatten(new_leaves, out_spec), ctx


def _rewrite_history(t, node, k):
    """A dirty input now holds this node's output: its history becomes the node."""
    if t.grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                           f"operation. ({node._forward_cls.__name__} marked it dirty: pass it a "
                           "non-leaf, e.g. x.clone())")
    base = t._base
    if base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if base is not None and t._view_fn is not None:
        from ..ops.inplace import _rebase
        r = _t.make(t._data)
        r.grad_fn, r._output_nr, r._requires_grad = node, k, True
        _rebase(t, r)
    else:
        t.grad_fn, t._output_nr, t._requires_grad = node, k, True


def _record_inputs(ctx, args):
    """Per positional arg: its pytree spec and the shape/dtype of each tensor leaf."""
    metas = []
    for a in args:
        if isinstance(a, Tensor):
            metas.append((LEAF, [(tuple(a.shape), a.dtype)]))
            continue
        leaves, spec = tree_flatten(a)
        metas.append((spec, [(tuple(x.shape), x.dtype) if isinstance(x, Tensor) else None
                             for x in leaves]))
    ctx._f_in_meta = metas


def _pack_saved(ctx, outputs, owner_is_output):
    """Turn `to_save` into version-checked SavedTensors (outputs held weakly in eager)."""
    packed = []
    hooks = current_saved_hooks() if owner_is_output else None    # eager: saved-tensor hooks
    for t in ctx.to_save:
        if t is None:
            packed.append(None)
        elif id(t) in outputs and owner_is_output and t._lvl is None:
            packed.append(SavedTensor(t, True, outputs[id(t)][1], hooks))
        else:
            packed.append(SavedTensor(t, hooks=hooks))
    ctx._f_saved = packed
    ctx._f_recorded = True
    # as torch, the ctx lets go of what it was handed: the outputs among these would
    # otherwise keep themselves alive through their grad_fn, and release() could not free
    ctx.__dict__.pop("to_save", None)
    for name in ("dirty_tensors", "non_differentiable"):
        ctx.__dict__["_f_ids_" + name] = {id(t) for t in ctx.__dict__.pop(name, ())}


def _marked(ctx, name):
    """ids of the tensors given to ctx.mark_dirty / mark_non_differentiable."""
    ids = ctx.__dict__.get("_f_ids_" + name)
    return ids if ids is not None else {id(t) for t in getattr(ctx, name)}


def _grad_args(is_tensor, out_spec, grads):
    """The output grads in the shape of forward's output, as backward's arguments."""
    it = iter(grads)
    leaves = [next(it) if t else None for t in is_tensor]
    tree = tree_unflatten(leaves, out_spec)
    if out_spec.kind is tuple:
        return tuple(tree)
    return (tree,)


# ----------------------------------------------------------------- grad validation
_SCALAR_FIX = (" (backward must return a gradient of the input's shape: to spread a scalar "
               "grad_output over the input, return grad_output.expand_as(input) or "
               "grad_output * torch.ones_like(input))")


def _validate_grads(node, result):
    """Check backward's return against the inputs and bring each grad to its input's
    shape (sum over broadcast dims) and dtype, as torch's validate_outputs; grads of
    inputs that need none are dropped unchecked, as in torch."""
    name = node.name()
    metas = node._f_in_meta
    if not isinstance(result, tuple):
        result = (result,)
    n = len(metas)
    if len(result) > n and all(r is None for r in result[n:]):
        result = result[:n]
    if len(result) != n:
        raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected "
                           f"{n}, got {len(result)})")
    needs = iter([e[0] is not None for e in node.next_functions])
    out = []

    def take(g, meta, where):
        out.append(_check_grad(node, g, meta, where) if next(needs) else None)
    for i, (r, (spec, leaf_meta)) in enumerate(zip(result, metas)):
        if spec is LEAF:
            meta = leaf_meta[0]
            if meta is None:
                if r is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None "
                                       f"at position {i + 1}, but the corresponding forward input "
                                       "was not a Variable")
                continue
            take(r, meta, f"{i}")
            continue
        if r is None:
            for m in leaf_meta:
                if m is not None:
                    take(None, m, "")
            continue
        leaves, rspec = tree_flatten(r)
        if rspec != spec:
            raise RuntimeError(f"function {name} returned a gradient of structure {rspec} for "
                               f"input {i}, which has structure {spec}: return None or a "
                               "gradient (or None) in the place of each of its tensors")
        for j, (g, m) in enumerate(zip(leaves, leaf_meta)):
            if m is None:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None "
                                       f"for the non-tensor element {j} of input {i}")
                continue
            take(g, m, f"{i}[{j}]")
    return out


def _check_grad(node, g, meta, where):
    if g is None:
        return None
    if not isinstance(g, Tensor):
        raise RuntimeError(f"expected Variable or None (got {type(g).__name__}): function "
                           f"{node.name()} returned it as the gradient of input {where}; return a "
                           "Tensor of the input's shape (or None)")
    shape, dtype = meta
    gshape = tuple(g.shape)
    if gshape != shape:
        if _Strict.on:
            raise RuntimeError(f"Function {node.name()} returned a gradient of shape "
                               f"{list(gshape)} for input {where} of shape {list(shape)} (strict "
                               "mode: PyTorch would sum it to the input's shape)")
        from .graph import sum_to_shape
        try:
            g = sum_to_shape(g, shape, node, where)
        except RuntimeError as e:
            fix = _SCALAR_FIX if gshape == () else ""
            raise RuntimeError(str(e) + fix) from None
    if g.dtype is not dtype:
        if _Strict.on:
            raise RuntimeError(f"Function {node.name()} returned a gradient of dtype {g.dtype} for "
                               f"input {where} of dtype {dtype} (strict mode: PyTorch would cast "
                               "it)")
        g = g.to(dtype)
    return g


# ----------------------------------------------------------------- ctx lints
def _lint_attrs(ctx, io_ids):
    """Warn about tensors kept as ctx attributes (NOTE [ctx attributes]); remember the
    versions of all of them to catch a change before backward."""
    versions = {}
    name = ctx._forward_cls.__name__
    for attr, v in list(vars(ctx).items()):
        if not isinstance(v, _HOLDERS) or attr in _TORCH_CTX_NAMES or attr.startswith("_f_"):
            continue
        for t in _attr_tensors(v):
            if t._requires_grad or id(t) in io_ids:
                what = "an input or output" if id(t) in io_ids else "a tensor that requires grad"
                _lint(f"{name}: ctx.{attr} holds {what}; save it with ctx.save_for_backward(...) "
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


def _check_attr_versions(ctx):
    versions = ctx.__dict__.get("_f_attr_versions")
    if not versions:
        return
    for attr, t, v in versions.values():
        if t._vc[0] != v:
            _lint(f"{ctx.name()}: the tensor in ctx.{attr} was modified in place after forward "
                  f"(version {v} -> {t._vc[0]}); backward would read the new values. Save "
                  "it with ctx.save_for_backward(...) to get an error, or clone it in forward")


def _saved_versions(ctx):
    saved = ctx._f_saved
    if not saved:
        return None
    return [None if s is None else s.value._vc[0] if s.ref is None else None for s in saved]


def _check_saved_unchanged(ctx, versions):
    if not versions or not ctx._f_saved:
        return
    for i, (s, v) in enumerate(zip(ctx._f_saved, versions)):
        if v is not None and s.value._vc[0] != v:
            _lint(f"{ctx.name()}: backward modified saved tensor {i} in place; a later backward "
                  "through this graph (retain_graph=True) will fail or be wrong. Use out-of-place "
                  "ops on saved tensors")


# ----------------------------------------------------------------- grad level
def _grad_level(cls, interp, flat, params):
    if not _has_setup_context(cls):
        raise _transform_error(cls)
    inner = [interp.unwrap(a) for a in flat]
    with grad_mode.set_grad_enabled(interp.prev_grad_mode):
        out = bind(cls._prim, inner, params)
    level_ins = [a for a in flat if isinstance(a, Tensor)]
    executable = grad_mode.state.grad_enabled and any(
        a._lvl is interp and a._requires_grad for a in level_ins)
    out_leaves, out_spec = tree_flatten(out)
    inner_args = tree_unflatten(inner, params["spec"])
    ctx = None
    if executable:
        ctx = _new_ctx(cls)
        ctx.needs_input_grad = _needs_input_grad(
            tree_unflatten(flat, params["spec"]), lambda t: t._lvl is interp and t._requires_grad)
        ctx.next_functions = tuple(
            (gradient_edge(a) if a._lvl is interp else None) or (None, 0) for a in level_ins)
        cls.setup_context(ctx, inner_args, out)
    orig_of = {id(i): a for i, a in zip(inner, flat) if isinstance(a, Tensor)}
    dirty = _marked(ctx, "dirty_tensors") if ctx is not None else set()
    nondiff = _marked(ctx, "non_differentiable") if ctx is not None else set()
    wrapped, out_meta = [], []
    k = 0
    for o in out_leaves:
        if not isinstance(o, Tensor):
            wrapped.append(o)
            continue
        # an input returned as is becomes a new tensor of this level (torch's view_as),
        # unless forward modified it in place (mark_dirty): then it is the input itself
        w = orig_of.get(id(o)) if id(o) in dirty else None
        if w is None:
            w = interp.lift(o)
        if executable and id(o) not in nondiff and _is_diff_dtype(o) and (
                id(o) not in orig_of or id(o) in dirty):
            w.grad_fn, w._output_nr, w._requires_grad = ctx, k, True
        out_meta.append((tuple(o.shape), o.dtype))
        wrapped.append(w)
        k += 1
    if executable:
        ctx.n_outputs = k
        ctx._f_out_meta = out_meta
        ctx._f_out_leaves = [isinstance(o, Tensor) for o in out_leaves]
        ctx._f_out_spec = out_spec
        _record_inputs(ctx, inner_args)
        _pack_saved(ctx, {}, owner_is_output=False)
        _lint_attrs(ctx, {id(i) for i in inner if isinstance(i, Tensor)} |
                    {id(o) for o in out_leaves if isinstance(o, Tensor)})
    return tree_unflatten(wrapped, out_spec)


# ----------------------------------------------------------------- jvp level
def _jvp_level(cls, interp, flat, params):
    from . import forward_ad
    primals, tangents = [], []
    for a in flat:
        p, t = interp.unwrap(a)
        primals.append(p)
        tangents.append(t)
    args = tree_unflatten(primals, params["spec"])
    if _has_setup_context(cls):
        out = bind(cls._prim, primals, params)
        ctx = FunctionCtx()
        cls.setup_context(ctx, args, out)
    else:
        # torch's forward AD (dual levels) runs forward(ctx, ...) itself; func.jvp may not
        if interp not in forward_ad._levels.stack or any(
                isinstance(p, Tensor) and _t.lower(p)._lvl is not None for p in primals):
            raise _transform_error(cls)
        out, ctx = _eager_call(cls, primals, params)
    out_leaves, out_spec = tree_flatten(out)
    if not any(t is not None for t in tangents):
        return out
    t_args = _tangent_args(ctx, primals, tangents, params["spec"])
    user_jvp = cls.jvp is not _SingleLevelFunction.jvp
    if user_jvp:
        ctx._f_fwd_mode = True
        try:
            res = cls.jvp(ctx, *t_args)
        finally:
            ctx._f_fwd_mode = False
    else:
        res = _jvp_from_backward(cls, ctx, args, out_leaves, out_spec, t_args)
    out_tangents = _flat_out_tangents(cls, res, out_leaves, out_spec)
    orig_of = {id(p): a for p, a in zip(primals, flat) if isinstance(a, Tensor)}
    dirty = _marked(ctx, "dirty_tensors")
    nondiff = _marked(ctx, "non_differentiable")
    wrapped = []
    for i, (o, t) in enumerate(zip(out_leaves, out_tangents)):
        if not isinstance(o, Tensor):
            wrapped.append(o)
            continue
        if id(o) in nondiff or not _is_diff_dtype(o):
            if t is not None and user_jvp:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the "
                                   "corresponding forward output is not a differentiable Tensor."
                                   f"You should return None at that position instead. "
                                   f"({cls.__name__}.jvp)")
            t = None
        orig = orig_of.get(id(o))
        if orig is not None and id(o) in dirty and orig._lvl is interp:
            orig._aux = t
            wrapped.append(orig)
        else:
            wrapped.append(interp.wrap(o, t))
    _save_duals(cls, interp, primals, flat, out_leaves, wrapped)
    return tree_unflatten(wrapped, out_spec)


def _save_duals(cls, interp, primals, flat, out_leaves, wrapped):
    """The eager node recorded below a dual level saves the duals of its inputs and outputs,
    so that its backward computes tangents too (NOTE [reverse over duals] in jvp_level)."""
    from ..func.jvp_level import save_duals
    node = next((o.grad_fn for o in out_leaves if isinstance(o, Tensor) and o._lvl is None
                 and o.grad_fn is not None), None)
    if not (isinstance(node, BackwardCFunction) and node._forward_cls is cls and node._f_saved):
        return
    dual_of = {id(p): a for p, a in zip(primals, flat) if isinstance(a, Tensor) and a._lvl is interp}
    dual_of.update((id(o), w) for o, w in zip(out_leaves, wrapped) if isinstance(o, Tensor))
    save_duals(node._f_saved, dual_of)


def _tangent_args(ctx, primals, tangents, spec):
    """jvp's arguments: one tangent per positional input (zeros for an input without
    one when materializing, None for non-tensors)."""
    from ..ops.creation import zeros
    leaves = []
    for p, t in zip(primals, tangents):
        if isinstance(p, Tensor) and t is None and ctx.materialize_grads:
            t = zeros(tuple(p.shape), dtype=p.dtype)
        leaves.append(t if isinstance(p, Tensor) else None)
    return tuple(tree_unflatten(leaves, spec))


def _flat_out_tangents(cls, res, out_leaves, out_spec):
    """jvp's return checked against the outputs: one tangent per output leaf."""
    name = cls.__name__
    if out_spec.kind is tuple:
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) != len(out_spec.children):
            raise RuntimeError(f"function {name}.jvp returned an incorrect number of tangents "
                               f"(expected {len(out_spec.children)}, got {len(res)})")
        flat = []
        for r, s in zip(res, out_spec.children):
            flat.extend(_leaves_like(name, r, s))
    else:
        if isinstance(res, tuple) and len(res) == 1:
            res = res[0]
        flat = _leaves_like(name, res, out_spec)
    out = []
    for i, (t, o) in enumerate(zip(flat, out_leaves)):
        if t is None or not isinstance(o, Tensor):
            out.append(None)
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(t).__name__}): function "
                               f"{name}.jvp returned it as the tangent of output {i}")
        if tuple(t.shape) != tuple(o.shape):
            raise RuntimeError(f"Function {name} returned an invalid tangent at output {i} - got "
                               f"{list(t.shape)} but expected the output's shape {list(o.shape)}")
        if t.dtype is not o.dtype:
            t = t.to(o.dtype)
        out.append(t)
    return out


def _leaves_like(name, r, spec):
    if r is None:
        return [None] * spec.num_leaves
    if spec is LEAF:
        return [r]
    leaves, rs = tree_flatten(r)
    if rs != spec:
        raise RuntimeError(f"function {name}.jvp returned a tangent of structure {rs} for an "
                           f"output of structure {spec}")
    return leaves


# NOTE [jvp from backward]
# Beyond PyTorch: a Function with a backward but no jvp still works in
# forward mode when its backward is made of arraygrad ops. backward(ctx, g)
# is linear in g: u(g) = J^T g. The jvp is its transpose, J t = d/dg <u(g), t>,
# i.e. the vjp of u with cotangent t, computed with func.vjp around backward
# (at g = 0, any g gives the same). Cost per call: one backward traced at a
# new grad level plus one backward through it (about 2-3 backwards), against
# one jvp when written by hand. Set `jvp_from_backward = False` on the class
# to get PyTorch's "implement jvp" error instead. A @once_differentiable
# backward cannot be transposed and raises the same error.
def _jvp_from_backward(cls, ctx, args, out_leaves, out_spec, t_args):
    backward = cls.vjp if cls.vjp is not _SingleLevelFunction.vjp else cls.backward
    if (not cls.jvp_from_backward or backward is _SingleLevelFunction.backward or
            getattr(backward, "_once_differentiable", False)):
        return _SingleLevelFunction.jvp(ctx)
    from ..func import vjp as func_vjp
    from ..ops.creation import zeros
    is_tensor = [isinstance(o, Tensor) for o in out_leaves]
    outs = [o for o in out_leaves if isinstance(o, Tensor)]
    g_all = [zeros(tuple(o.shape), dtype=o.dtype) for o in outs]
    diff = [i for i, o in enumerate(outs) if _is_diff_dtype(o)]   # integer outputs: constant 0
    in_tensors = [x for a in args for x in tree_flatten(a)[0] if isinstance(x, Tensor)]
    in_diff = [j for j, x in enumerate(in_tensors) if _is_diff_dtype(x)]

    def u(*gs):
        full = list(g_all)
        for i, g in zip(diff, gs):
            full[i] = g
        res = _call_backward(cls, backward, ctx, _grad_args(is_tensor, out_spec, full))
        if not isinstance(res, tuple):
            res = (res,)
        flat = []
        for r, a in zip(res, args):
            leaves = tree_flatten(a)[0]
            rl = [None] * len(leaves) if r is None else tree_flatten(r)[0]
            flat.extend(g if g is not None else zeros(tuple(x.shape), dtype=x.dtype)
                        for g, x in zip(rl, leaves) if isinstance(x, Tensor))
        return tuple(flat[j] for j in in_diff)
    try:
        _, pullback = func_vjp(u, *[g_all[i] for i in diff])
        ts = _tensor_tangents(t_args, args)
        jt = pullback(tuple(zeros(tuple(in_tensors[j].shape), dtype=in_tensors[j].dtype)
                            if ts[j] is None else ts[j] for j in in_diff))
    except Exception as e:
        raise RuntimeError(f"{cls.__name__} has no jvp staticmethod, and deriving one from its "
                           f"backward failed ({type(e).__name__}: {e}). Write a jvp staticmethod, "
                           f"or set {cls.__name__}.jvp_from_backward = False") from e
    per_out = [None] * len(outs)
    for i, t in zip(diff, jt):
        per_out[i] = t
    it = iter(per_out)
    leaves = [next(it) if t else None for t in is_tensor]
    tree = tree_unflatten(leaves, out_spec)
    return tuple(tree) if out_spec.kind is tuple else tree


def _tensor_tangents(t_args, args):
    out = []
    for t, a in zip(t_args, args):
        leaves = tree_flatten(a)[0]
        tl = [None] * len(leaves) if t is None else tree_flatten(t)[0]
        out.extend(tt for tt, x in zip(tl, leaves) if isinstance(x, Tensor))
    return out


# ----------------------------------------------------------------- batch level
def _batch_level(cls, interp, flat, params):
    values, bdims = [], []
    for a in flat:
        v, d = interp.unwrap(a)
        values.append(v)
        bdims.append(d)
    if all(d is None for d in bdims):
        return bind(cls._prim, values, params)
    if not _has_setup_context(cls):
        raise _transform_error(cls)
    kwargs = params["kwargs"]
    if any(isinstance(v, Tensor) for v in tree_flatten(kwargs)[0]):
        raise NotImplementedError(f"Run vmap on autograd.Function with kwarg-only Tensor args. "
                                  f"Please do not pass kwarg-only Tensors to autograd.Function. "
                                  f"Got: {kwargs}")
    overridden = cls.vmap is not Function.vmap
    if cls.generate_vmap_rule:
        if overridden:
            raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both "
                               "generate_vmap_rule=True and an overridden vmap staticmethod. "
                               "Please set generate_vmap_rule=False or delete the overridden vmap "
                               "staticmethod to avoid ambiguity. For more details, please see "
                               "https://pytorch.org/docs/main/notes/extending.func.html")
        return _generated_vmap(cls, interp, flat, values, bdims, params)
    if not overridden:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           "support. Please override and implement the vmap staticmethod or set "
                           "generate_vmap_rule=True. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    info = VmapInfo(interp.batch_size, interp.randomness)
    spec = params["spec"]
    args = tree_unflatten(values, spec)
    in_dims = tuple(tree_unflatten(bdims, spec))
    result = cls.vmap(info, in_dims, *args, **kwargs)
    base = ("Expected the vmap staticmethod to have two returns, an output and out_dims with "
            "pytree structure compatible with the output. ")
    if not isinstance(result, tuple):
        raise RuntimeError(base + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(base + f"Got {len(result)} returns instead")
    output, out_dims = result
    return _wrap_batched(cls, interp, flat, values, output, out_dims)


def _wrap_batched(cls, interp, flat, values, output, out_dims):
    from ..func.vmap import _broadcast_to_and_flatten
    leaves, spec = tree_flatten(output)
    dims = ([out_dims] if spec is LEAF and not isinstance(out_dims, tuple) else
            _broadcast_to_and_flatten(out_dims, spec))
    if dims is None or len(dims) != len(leaves):
        raise RuntimeError(f"The autograd.Function's vmap staticmethod returned an incompatible "
                           f"(output, out_dims) tuple. Expected out_dims={out_dims} to be "
                           f"compatible with the structure of `output`. out_dims has structure "
                           f"{tree_flatten(out_dims)[1]} but output has structure {spec}. For more "
                           "details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    orig_of = {id(v): a for v, a in zip(values, flat) if isinstance(a, Tensor)}
    out = []
    for o, d in zip(leaves, dims):
        if not isinstance(o, Tensor):
            out.append(o)
        elif id(o) in orig_of:
            out.append(orig_of[id(o)])
        else:
            out.append(interp.wrap(o, d))
    return tree_unflatten(out, spec)


# NOTE [generated vmap rule]
# With generate_vmap_rule=True, vmap over a Function calls, one level down, a
# Function whose forward, backward and jvp are the user's run under a fresh
# batch level of the same size (the bdims of the values they receive
# restored), as torch's vmapify_autograd_function. setup_context runs under
# that level too; saving a batched tensor saves its value and remembers its
# bdim, so backward can re-batch it. Outputs keep their batch dim in front.
def _under_vmap(fn, values, bdims, batch_size, randomness):
    """fn(list of batched tensors) -> list; returns (values, bdims) of its results."""
    from ..func.batch_level import BatchInterpreter
    with BatchInterpreter(batch_size, randomness) as lvl:
        res = fn([lvl.wrap(v, d) if isinstance(v, Tensor) else v for v, d in zip(values, bdims)])
        out_v, out_d = [], []
        for r in res:
            v, d = lvl.unwrap(r)
            out_v.append(v)
            out_d.append(d)
    return out_v, out_d


class _BatchedCtx(FunctionCtx):
    """The ctx setup_context sees under a generated vmap rule: saves unbatched values."""

    def __init__(self, real, level, outs_batched, outs_real):
        object.__setattr__(self, "_f_real", real)
        object.__setattr__(self, "_f_level", level)
        object.__setattr__(self, "_f_out_map", {id(b): r for b, r in zip(outs_batched, outs_real)})
        object.__setattr__(self, "_f_root", real._f_root if isinstance(real, _BatchedCtx) else real)

    def _push_bdims(self, attr, dims):
        # nested generated rules share one real ctx: each level's bdims go on a stack there,
        # outermost first (the outer level's save runs to its end before the inner one's)
        root = self._f_root
        root.__dict__[attr] = root.__dict__.get(attr, []) + [dims]

    def _split(self, tensors):
        vals, dims = [], []
        for t in tensors:
            v, d = self._f_level.unwrap(t) if t is not None else (None, None)
            vals.append(v)
            dims.append(d)
        return vals, dims

    def save_for_backward(self, *tensors):
        FunctionCtx.save_for_backward(self, *tensors)
        vals, dims = self._split(tensors)
        self._f_real.save_for_backward(*vals)
        self._push_bdims("_f_saved_bdims", dims)

    def save_for_forward(self, *tensors):
        FunctionCtx.save_for_forward(self, *tensors)
        vals, dims = self._split(tensors)
        self._f_real.save_for_forward(*vals)
        self._push_bdims("_f_fwd_bdims", dims)

    def mark_non_differentiable(self, *args):
        self._f_real.mark_non_differentiable(*(self._f_out_map.get(id(a), a) for a in args))

    def mark_dirty(self, *args):
        raise NotImplementedError("mark_dirty is not supported with generate_vmap_rule=True; "
                                  "write a vmap staticmethod instead")

    def set_materialize_grads(self, value):
        self._f_real.set_materialize_grads(value)

    def __setattr__(self, name, value):
        setattr(self._f_real, name, value)

    def __getattr__(self, name):
        return getattr(self._f_real, name)


class _SavedCtx:
    """The ctx backward/jvp sees under a generated rule: re-batched saved tensors, and the
    bdims of the generated levels nested inside this one."""

    def __init__(self, real, **attrs):
        self._f_real = real
        self.__dict__.update(attrs)

    def __getattr__(self, name):
        return getattr(self._f_real, name)


def _bdims_stack(ctx, attr, n):
    """(bdims of this generated level's saved tensors, those of the levels inside it)."""
    stack = getattr(ctx, attr, None) or [[None] * n]
    return stack[0], stack[1:]


def _generated_vmap(cls, interp, flat, values, bdims, params):
    spec, kwargs = params["spec"], params["kwargs"]
    size, randomness = interp.batch_size, interp.randomness
    state = {}

    def forward(*vals):
        def run(batched):
            out = cls.forward(*tree_unflatten(batched, spec), **kwargs)
            leaves, ospec = tree_flatten(out)
            state["out_spec"] = ospec
            state["non_tensor"] = [None if isinstance(o, Tensor) else o for o in leaves]
            return [o for o in leaves if isinstance(o, Tensor)]
        out_v, out_d = _under_vmap(run, list(vals), bdims, size, randomness)
        moved = [_front(v, d, size) for v, d in zip(out_v, out_d)]
        return tuple(moved)

    def setup_context(ctx, inputs, output):
        from ..func.batch_level import BatchInterpreter
        with BatchInterpreter(size, randomness) as lvl:
            ins = [lvl.wrap(v, d) if isinstance(v, Tensor) else v for v, d in zip(inputs, bdims)]
            outs_b = [lvl.wrap(o, 0) for o in output]
            it = iter(outs_b)
            outs = [next(it) if o is None else o for o in state["non_tensor"]]
            bctx = _BatchedCtx(ctx, lvl, outs_b, list(output))
            cls.setup_context(bctx, tree_unflatten(ins, spec),
                              tree_unflatten(outs, state["out_spec"]))

    def backward(ctx, *grads):
        saved = list(ctx.saved_tensors)
        saved_d, inner_d = _bdims_stack(ctx, "_f_saved_bdims", len(saved))
        n_in = len(values)
        shapes = [tuple(v.shape) if isinstance(v, Tensor) else None for v in values]
        for i, (v, d) in enumerate(zip(values, bdims)):
            if d is not None:
                s = list(v.shape)
                del s[d]
                shapes[i] = tuple(s)
        mask = []

        def run(batched):
            sv, gs = batched[:len(saved)], batched[len(saved):]
            it = iter(gs)
            args = _grad_args([o is None for o in state["non_tensor"]], state["out_spec"],
                              list(it))
            sctx = _SavedCtx(ctx, saved_tensors=tuple(sv), _f_saved_bdims=inner_d)
            res = _call_backward(cls, cls.backward, sctx, args)
            if not isinstance(res, tuple):
                res = (res,)
            res = tree_flatten(list(res[:n_in]))[0]
            out = []
            mask.clear()
            for g, shape in zip(res, shapes):
                if g is None or shape is None:
                    mask.append(False)
                    continue
                if tuple(g.shape) != shape:
                    from ..ops.shape import _sum_to
                    g = _sum_to(g, shape)
                mask.append(True)
                out.append(g)
            return out
        gvals = [g for g in grads]
        out_v, out_d = _under_vmap(run, saved + gvals, saved_d + [0] * len(gvals), size,
                                   randomness)
        it = iter(zip(out_v, out_d))
        result = []
        for m, d_in in zip(mask, bdims):
            if not m:
                result.append(None)
                continue
            v, d = next(it)
            v = _front(v, d, size)
            result.append(v.sum(0) if d_in is None else v.movedim(0, d_in))
        return tuple(result)

    def jvp(ctx, *tangents):
        # the user's jvp may read saved_for_forward and saved_tensors: both re-batched
        fwd = list(ctx.saved_for_forward)
        fwd_d, fwd_inner = _bdims_stack(ctx, "_f_fwd_bdims", len(fwd))
        bwd = list(ctx.saved_tensors)
        bwd_d, bwd_inner = _bdims_stack(ctx, "_f_saved_bdims", len(bwd))
        saved = fwd + bwd
        t_d = [d if t is not None else None for t, d in zip(tangents, bdims)]

        def run(batched):
            sv, ts = batched[:len(saved)], batched[len(saved):]
            sctx = _SavedCtx(ctx, saved_for_forward=tuple(sv[:len(fwd)]), _f_fwd_bdims=fwd_inner,
                             saved_tensors=tuple(sv[len(fwd):]), _f_saved_bdims=bwd_inner)
            res = cls.jvp(sctx, *tree_unflatten(list(ts), spec))
            if state["out_spec"].kind is not tuple or not isinstance(res, tuple):
                res = (res,)    # (a generated forward returns a tuple, its jvp one tangent)
            return [r for r, o in zip(tree_flatten(list(res))[0], state["non_tensor"])
                    if o is None]
        out_v, out_d = _under_vmap(run, saved + list(tangents), fwd_d + bwd_d + t_d, size,
                                   randomness)
        res = tuple(_front(v, d, size) for v, d in zip(out_v, out_d))
        return res if len(res) != 1 else res[0]

    body = {"forward": staticmethod(forward), "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward), "jvp_from_backward": cls.jvp_from_backward,
            "generate_vmap_rule": True}     # an outer vmap generates its rule in turn
    if cls.jvp is not _SingleLevelFunction.jvp:
        body["jvp"] = staticmethod(jvp)
    Generated = type(cls.__name__ + "Generated", (Function,), body)
    out = Generated.apply(*values)
    if not isinstance(out, tuple):
        out = (out,)
    it = iter(out)
    leaves = [next(it) if o is None else o for o in state["non_tensor"]]
    orig_of = {id(v): a for v, a in zip(values, flat) if isinstance(a, Tensor)}
    wrapped = [o if not isinstance(o, Tensor) else orig_of.get(id(o)) or interp.wrap(o, 0)
               for o in leaves]
    return tree_unflatten(wrapped, state["out_spec"])


def _front(v, d, size):
    """`v` with its batch dim in front (broadcast along a new one when unbatched)."""
    if d is None:
        return v.unsqueeze(0).expand((size,) + tuple(v.shape))
    return v if d == 0 else v.movedim(d, 0)
