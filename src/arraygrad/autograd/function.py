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

This module holds the ctx, the Function classes, the graph node and the rule of level 0;
the checks are in `function_checks.py`, the rules of the transform levels in
`func/custom_function.py`.

# NOTE [custom Function as a primitive]
`Function.apply` binds one primitive per Function class (`cls._prim`), with the flattened
positional arguments as its args, so the dispatcher sees every tensor, even inside lists
and dicts. The primitive has one rule per level, keyed by interpreter type
(`FunctionPrimitive.rules`, bound by `dispatch.bind_rules`):
- eager (level 0, here): run `forward` with grad recording off, then record one
  `<Name>Backward` node, which is also the `ctx` (as in torch, `y.grad_fn`
  is the ctx: `y.grad_fn.saved_tensors` works).
- grad, jvp and batch levels: see func/custom_function.py.
Under any transform only the `setup_context` style is allowed (as torch),
except forward-mode dual levels, which also take `forward(ctx, ...)`.
`apply` calls the rule itself: a nested `apply` costs three Python frames per level
(apply, the rule, forward), so Functions nest ~330 deep, as in torch.

# NOTE [pytrees in Functions]
Beyond PyTorch, tensors inside lists, tuples and dicts of the arguments and
of the output are tracked. `backward` still returns one entry per positional
argument: for a container argument, None or a container of the same shape.
It receives one gradient per element of a tuple output (a container of
gradients for a container element), or one for a single output.
"""
import functools
import inspect
import warnings
from typing import NamedTuple

from .. import _tensor as _t
from .._tensor import Tensor
from ..core import dispatch, grad_mode
from ..core.dispatch import Primitive, _tls as _dispatch_tls
from ..utils._pytree import TreeSpec, tree_flatten, tree_unflatten, LEAF
from .function_checks import (set_strict, is_strict, warn, validate_grads, lint_attrs,  # noqa: F401
                              check_attr_versions, saved_versions, check_saved_unchanged,
                              meta_of)
from ..dtypes import _FROM_NP
from .anomaly_mode import state as anomaly, forward_stack
from .graph import (Node, SavedTensor, FREED_MSG, gradient_edge, current_saved_hooks, zeros,
                    packed_fns, accumulator, _ZEROS, _seq, _new, _ndarray)
from .inplace import rebase

__all__ = ["FunctionCtx", "BackwardCFunction", "Function", "once_differentiable",
           "InplaceFunction", "set_strict", "is_strict", "VmapInfo"]


# ----------------------------------------------------------------- ctx
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
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                i = next(k for k, a in enumerate(tensors) if a is t)
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
        out = []
        for s in saved:
            # SavedTensor.unpack, inline where it returns the tensor it holds (no hooks,
            # unchanged since saved; an output that is still alive)
            if s is not None and s.hooks is None and s.fn is None:
                t = s.value if s.ref is None else s.ref()
                if t is not None and t._vc[0] == s.version:
                    out.append(t)
                    continue
            out.append(None if s is None else s.unpack(self))
        return tuple(out)

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

    # NOTE [ctx slots] what every call stores on its node lives in slots, so that the
    # attribute dict holds only what the user's forward/setup_context put there: the ctx
    # lint looks at it only when it is not empty, and a node adds no dict to what the
    # cyclic collector walks. The slots shadow FunctionCtx's defaults: `_init_slots`.
    __slots__ = ("_seq", "_fns", "_nrs", "needs_input_grad", "to_save", "_f_saved",
                 "_f_recorded", "_f_out_meta", "_f_in_meta")
    _forward_cls = None
    _f_attr_versions = None     # see function_checks.lint_attrs
    _f_out_leaves = (True,)     # one tensor output, unless `record` says otherwise
    _f_out_spec = LEAF

    def __init__(self, edges=()):
        Node.__init__(self, edges)
        _init_slots(self)

    def release(self):
        if self._f_recorded:
            self._f_saved = None

    def apply(self, grads):
        """Run the user's backward on the output grads; validated input grads."""
        if self._f_attr_versions is not None:
            check_attr_versions(self)
        if self._f_out_spec is LEAF:    # one output: its grad is backward's one argument
            g = grads[0]
            args = (zeros(*self._f_out_meta[0]) if g is None and self.materialize_grads else g,)
        else:
            grads = list(grads)
            if self.materialize_grads:
                for i, g in enumerate(grads):
                    if g is None:
                        grads[i] = zeros(*self._f_out_meta[i])
            args = grad_args(self._f_out_leaves, self._f_out_spec, grads)
        cls = self._forward_cls
        backward, vjp = cls.backward, cls.vjp
        if vjp is not _BASE_VJP:
            if backward is not _BASE_VJP and backward is not vjp:
                raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function "
                                   "is not allowed. You should only implement one of them.")
            backward = vjp
        versions = saved_versions(self)
        result = call_backward(cls, backward, self, args)
        if versions is not None:
            check_saved_unchanged(self, versions)
        return validate_grads(self, result)


def call_backward(cls, backward, ctx, grads):
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
class FunctionPrimitive(Primitive):
    """The primitive of one Function class: args are the flat positional leaves, params
    the pytree spec and the keyword arguments. Its rules are shared by all Functions."""

    rules = {}      # interpreter type -> rule(prim, interp, flat, params); None: level 0

    def __init__(self, cls):
        Primitive.__init__(self, cls.__name__, None, multiple_results=False, complex=True)
        self.cls = cls


class _SingleLevelFunction(FunctionCtx):
    """Base of custom Functions (see `Function`)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})
        cls._prim = FunctionPrimitive(cls)
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
        if kwargs or (cls.setup_context is not _BASE_SETUP
                      and len(args) != (cls._f_signature or _signature(cls))[1]):
            args, kwargs = _bind_args(cls, args, kwargs)
        params = None
        if not kwargs:
            for a in args:
                if not isinstance(a, Tensor):
                    break
            else:               # positional tensors only: NOTE [plain calls]
                flat = args
                params = plain_params(len(args))
        if params is None:
            flat, spec = tree_flatten(args)
            params = {"spec": spec, "kwargs": kwargs}
        if not _dispatch_tls.interpreters:
            return FunctionPrimitive.rules[None](cls._prim, None, flat, params)
        # bind_rules, with the rule called from here: one frame less per nested call
        rule, interp, flat = dispatch.rule_for(cls._prim, flat)
        return dispatch.mark_born(rule(cls._prim, interp, flat, params))


class InplaceFunction(Function):
    """Kept for torch compatibility; use `Function`."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class VmapInfo(NamedTuple):
    batch_size: int
    randomness: str


_BASE_SETUP = _SingleLevelFunction.setup_context
_BASE_VJP = _SingleLevelFunction.vjp     # also the base backward


def has_setup_context(cls):
    return cls.setup_context is not _BASE_SETUP


def _signature(cls):
    """(signature of forward without ctx, its arity when all parameters are plain
    positional ones, else -1); cached on the class."""
    cached = cls.__dict__.get("_f_signature")
    if cached is None:
        sig = inspect.signature(cls.forward)
        if not has_setup_context(cls):
            sig = sig.replace(parameters=list(sig.parameters.values())[1:])
        plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                    for p in sig.parameters.values())
        cached = cls._f_signature = (sig, len(sig.parameters) if plain else -1)
    return cached


def _bind_args(cls, args, kwargs):
    """Keyword arguments moved to their positions (and defaults filled in for the
    setup_context style, as torch), so `backward` returns one grad per position."""
    bound = _signature(cls)[0].bind(*args, **kwargs)
    if has_setup_context(cls):
        bound.apply_defaults()
    return bound.args, bound.kwargs


def transform_error(cls):
    """The error for a forward(ctx, ...) Function under a transform (as torch's)."""
    return RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, "
                        "grad, jvp, jacrev, ...), it must override the setup_context staticmethod. "
                        "For more details, please see "
                        "https://pytorch.org/docs/main/notes/extending.func.html "
                        f"({cls.__name__} defines forward(ctx, ...): move what it does with ctx "
                        "into setup_context(ctx, inputs, output))")


def _where(ctx):
    cls = getattr(ctx, "_forward_cls", None)
    return f" (in {cls.__name__})" if cls is not None else ""


def needs_input_grad_of(args, requires):
    """ctx.needs_input_grad: per positional arg, whether it (or a tensor inside it) `requires`."""
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


def is_diff_dtype(t):
    return t.dtype.is_differentiable


# ----------------------------------------------------------------- level 0
# NOTE [plain calls]
# Most calls pass positional tensors only. `apply` then skips flattening: `flat` is the
# args tuple and `params` the shared `plain_params(n)`, which the rules recognise by
# identity. The eager and grad rules then record a single new tensor output that nothing
# was marked on (`single_output`) without the general output loop; any other result
# goes through `wrap_outputs`, so the two paths cannot disagree on anything but speed.
_PLAIN = {}         # arity -> params of a call with positional tensors only
_NO_EDGE = (None, 0)


def plain_params(n):
    params = _PLAIN.get(n)
    if params is None:
        params = _PLAIN[n] = {"spec": TreeSpec(tuple, None, [LEAF] * n), "kwargs": {}}
    return params


def eager_rule(prim, interp, flat, params, ctx=None):
    """Run the Function at level 0 and record its node (`ctx`: the node to fill, for a
    caller that needs it even when nothing is recorded). Forward is called from here
    (NOTE [custom Function as a primitive]: frames per nesting level)."""
    cls = prim.cls
    plain = params is _PLAIN.get(len(flat))
    if plain:
        args = tensor_ins = flat
        needs = []
        for a in flat:
            if a._lvl is not None:
                args = tensor_ins = tuple([_t.lower(x) for x in flat])
                needs = [a._requires_grad for a in args]
                break
            needs.append(a._requires_grad)
        needs = tuple(needs)
    else:
        flat = [_t.lower(a) if isinstance(a, Tensor) and a._lvl is not None else a
                for a in flat]
        args = tree_unflatten(flat, params["spec"])
        tensor_ins = [a for a in flat if isinstance(a, Tensor)]
        needs = needs_input_grad_of(args, _requires_grad)
    state = grad_mode.state
    prev = state.grad_enabled
    executable = prev and True in needs
    # the edges before forward: a dirty input's history is about to become ctx
    if ctx is None:
        ctx = _new_node(cls._backward_cls, tensor_ins if executable else ())
    elif executable:
        ctx.next_functions = tuple([gradient_edge(t) or _NO_EDGE for t in tensor_ins])
    ctx.needs_input_grad = needs
    kwargs = params["kwargs"]
    state.grad_enabled = False      # forward runs below autograd, as torch's
    try:
        if cls.setup_context is not _BASE_SETUP:
            output = cls.forward(*args, **kwargs) if kwargs else cls.forward(*args)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args, **kwargs) if kwargs else cls.forward(ctx, *args)
    finally:
        state.grad_enabled = prev
    if plain and single_output(ctx, output, args):
        if not executable:
            return output
        d = output._data if output._lvl is None else None
        forms = shared_meta((d.shape, _FROM_NP[d.dtype]) if type(d) is _ndarray
                            else meta_of(output))
        if forms[0][1].is_differentiable:
            output.grad_fn, output._output_nr, output._requires_grad = ctx, 0, True
            if output._base is not None:    # an in-place write would bypass backward
                output._custom_view = (cls.__name__, 0)
            record(ctx, forms[1], (output,), LEAF, args, {id(output): (output, 0)}, True)
            return output
    return _eager_outputs(cls, ctx, args, tensor_ins, output, executable)


def _new_node(node_cls, ins):
    """A `node_cls` (a ctx) with edges to the tensors `ins`: `Node.__init__` without building
    the edge pairs, the common edge (a non-view with a history) found here."""
    node = _new(node_cls)
    node._seq = next(_seq)
    fns, nrs = [], []
    for t in ins:
        if t._base is None:
            fn = t.grad_fn
            if fn is not None:
                fns.append(fn)
                nrs.append(t._output_nr)
                continue
            if t._requires_grad and t._lvl is None:     # a leaf
                fns.append(accumulator(t))
                nrs.append(0)
                continue
        fn, nr = gradient_edge(t) or _NO_EDGE
        fns.append(fn)
        nrs.append(nr)
    node._fns = packed_fns(fns)
    nrs = tuple(nrs)
    node._nrs = _ZEROS.get(nrs, nrs)
    if anomaly.enabled:
        node.metadata["traceback_"] = forward_stack()
    _init_slots(node)
    return node


def _init_slots(node):
    """FunctionCtx's defaults, which a BackwardCFunction's slots shadow (NOTE [ctx slots])."""
    node.needs_input_grad = node.to_save = ()
    node._f_saved = None
    node._f_recorded = False


def single_output(ctx, out, args):
    """Whether `out` is one new tensor that nothing was marked on (`ctx` None: nothing
    can be): what the rules record without the output loop (NOTE [plain calls])."""
    if not isinstance(out, Tensor):
        return False
    if ctx is not None and (ctx.dirty_tensors or ctx.non_differentiable):
        return False
    for a in args:
        if a is out:
            return False
    return True


def _eager_outputs(cls, ctx, args, tensor_ins, output, executable):
    """Level 0's outputs: an input returned as is becomes an alias, a dirty one gets the
    node as its history; recorded when `executable`."""
    out_leaves, out_spec = tree_flatten(output)
    ins = {id(t): t for t in tensor_ins}
    _check_dirty(cls, ctx, ins, out_leaves)
    saved_as_out = {}

    def wrap(i, o, k, orig, dirty, diff):
        if dirty:
            o._vc[0] += 1
            if executable and diff:
                _rewrite_history(o, ctx, k)
            return o
        r = o if orig is None else _alias(o)
        if executable:
            if diff:
                r.grad_fn, r._output_nr, r._requires_grad = ctx, k, True
                if r._base is not None:     # an in-place write would bypass backward
                    r._custom_view = (cls.__name__, k)
                if r is o:
                    saved_as_out[id(o)] = (o, k)
            elif orig is None:
                r._requires_grad = False
        return r
    leaves, out_meta = wrap_outputs(ctx, out_leaves, ins, wrap)
    if executable:
        record(ctx, out_meta, out_leaves, out_spec, args, saved_as_out, True)
    return tree_unflatten(leaves, out_spec)


def _check_dirty(cls, ctx, ins, out_leaves):
    """ctx.mark_dirty's contract (as torch): inputs only, and each of them returned."""
    dirty = ctx.dirty_tensors
    if not dirty:
        return
    out_ids = {id(o) for o in out_leaves if isinstance(o, Tensor)}
    for d in dirty:
        if id(d) not in ins:
            warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                 "Tensors that have been mutated should be passed to ctx.mark_dirty().")
        if id(d) not in out_ids:
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must all "
                               f"be outputs of the Function ({cls.__name__}: return the tensor "
                               "passed to ctx.mark_dirty).")


def _requires_grad(t):
    return t._requires_grad


FunctionPrimitive.rules[None] = eager_rule


def wrap_outputs(ctx, out_leaves, ins, wrap):
    """The one output loop of the Function's rules, at every level. For each tensor output
    `o` (the `i`th leaf, the `k`th tensor), `wrap(i, o, k, orig, dirty, diff)` gives what the
    level returns: `orig` is the input `o` is (`ins`: id -> the level's tensor; None for a
    new tensor), `dirty` whether forward modified it in place (mark_dirty), `diff` whether
    `o` is differentiable (not marked non-differentiable, a floating or complex dtype).
    `ctx` None: nothing is marked. Returns (the leaves to return, (shape, dtype) per
    tensor output)."""
    dirty = marked(ctx, "dirty_tensors") if ctx is not None else ()
    nondiff = marked(ctx, "non_differentiable") if ctx is not None else ()
    leaves, out_meta = [], []
    for i, o in enumerate(out_leaves):
        if not isinstance(o, Tensor):
            leaves.append(o)
            continue
        orig = ins.get(id(o))
        meta = meta_of(o)
        diff = id(o) not in nondiff and meta[1].is_differentiable
        leaves.append(wrap(i, o, len(out_meta), orig, orig is not None and id(o) in dirty, diff))
        out_meta.append(meta)
    return leaves, out_meta


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
        r = _t.make(t._data)
        r.grad_fn, r._output_nr, r._requires_grad = node, k, True
        rebase(t, r)
    else:
        t.grad_fn, t._output_nr, t._requires_grad = node, k, True


def record(ctx, out_meta, out_leaves, out_spec, args, saved_outputs, level_owned):
    """Make `ctx` the node of one call whose outputs were given it as grad_fn: the one
    recording path of the eager and grad levels' Function rules. `args`: the inputs as
    the node's backward sees them; `saved_outputs`: id -> (output, number) of the outputs
    that may be saved as such; `level_owned`: eager's node (NOTE [saved tensors])."""
    if out_spec is not LEAF or len(out_meta) != 1:     # else the class's defaults hold
        ctx.n_outputs = len(out_meta)
        ctx._f_out_leaves = tuple([isinstance(o, Tensor) for o in out_leaves])
        ctx._f_out_spec = out_spec
    ctx._f_out_meta = out_meta
    in_meta, forms = [], None
    for a in args:
        if isinstance(a, Tensor):
            d = a._data if a._lvl is None else None     # meta_of, inline for plain arrays
            forms = shared_meta((d.shape, _FROM_NP[d.dtype]) if type(d) is _ndarray
                                else meta_of(a))
            in_meta.append(forms[2])
        else:
            in_meta.append(_leaf_metas(a))
    ctx._f_in_meta = forms[3] if len(in_meta) == 1 and forms is not None else tuple(in_meta)
    _pack_saved(ctx, saved_outputs, level_owned)
    lint_attrs(ctx, args, out_leaves)


_SHARED_META = {}


def shared_meta(meta):
    """(meta, (meta,), (LEAF, (meta,)), ((LEAF, (meta,)),)): the forms in which nodes keep
    the (shape, dtype) of one tensor, one set per shape and dtype shared by every node (each
    tuple holds a dtype, so each would be one more object for the cyclic collector to walk
    per node; NOTE [node footprint] in graph.py). A bounded cache: cleared when full."""
    forms = _SHARED_META.get(meta)
    if forms is None:
        if len(_SHARED_META) >= 1024:
            _SHARED_META.clear()
        leaf = (LEAF, (meta,))
        forms = _SHARED_META[meta] = (meta, (meta,), leaf, (leaf,))
    return forms


def _leaf_metas(a):
    """(pytree spec of a positional argument, shape/dtype of each tensor leaf or None)."""
    leaves, spec = tree_flatten(a)
    return spec, [meta_of(x) if isinstance(x, Tensor) else None for x in leaves]


def _pack_saved(ctx, outputs, owner_is_output):
    """Turn `to_save` into version-checked SavedTensors (outputs held weakly in eager)."""
    to_save = ctx.to_save
    if to_save:
        ctx.to_save = ()
        packed = []
        hooks = current_saved_hooks() if owner_is_output else None  # eager: saved-tensor hooks
        for t in to_save:
            if t is None:
                packed.append(None)
            elif owner_is_output and id(t) in outputs and t._lvl is None:
                packed.append(SavedTensor(t, True, outputs[id(t)][1], hooks))
            else:
                packed.append(SavedTensor(t, hooks=hooks))
        ctx._f_saved = tuple(packed)
    else:
        ctx._f_saved = ()
    ctx._f_recorded = True
    # as torch, the ctx lets go of what it was handed (to_save above): the outputs among
    # these would otherwise keep themselves alive through their grad_fn, and release()
    # could not free
    if ctx.dirty_tensors:
        ctx._f_ids_dirty_tensors = {id(t) for t in ctx.dirty_tensors}
        del ctx.dirty_tensors
    if ctx.non_differentiable:
        ctx._f_ids_non_differentiable = {id(t) for t in ctx.non_differentiable}
        del ctx.non_differentiable


def marked(ctx, name):
    """ids of the tensors given to ctx.mark_dirty / mark_non_differentiable."""
    ids = ctx.__dict__.get("_f_ids_" + name)
    return ids if ids is not None else {id(t) for t in getattr(ctx, name)}


def grad_args(is_tensor, out_spec, grads):
    """The output grads in the shape of forward's output, as backward's arguments."""
    if out_spec is LEAF:
        return (grads[0],)
    it = iter(grads)
    leaves = [next(it) if t else None for t in is_tensor]
    tree = tree_unflatten(leaves, out_spec)
    if out_spec.kind is tuple:
        return tuple(tree)
    return (tree,)
