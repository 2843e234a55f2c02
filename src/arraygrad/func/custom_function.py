"""The custom Function's rules at the transform levels (as torch's
`_functorch/autograd_function.py`): one rule per interpreter type, registered in
`FunctionPrimitive.rules` (level 0's rule is in autograd/function.py).

- grad level: bind the Function again one level down (so lower levels see
  it: eager autograd or an outer grad level), call `setup_context` with the
  values of that level and record a node whose backward runs on them. That
  is what makes grad(grad(f)) work through a Function.
- jvp level: bind one level down, `setup_context`, then the `jvp`
  staticmethod on the tangents (or a jvp derived from `backward`, see
  NOTE [jvp from backward]).
- batch level: the `vmap` staticmethod, or a generated rule
  (`generate_vmap_rule = True`) that vmaps forward/backward/jvp.
"""
from .. import _tensor as _t
from .._tensor import Tensor
from ..autograd.function import (BackwardCFunction, Function, FunctionCtx, FunctionPrimitive,
                                  VmapInfo, _NO_EDGE, _SingleLevelFunction, _new_node,
                                  call_backward, eager_rule, grad_args, has_setup_context,
                                  is_diff_dtype, needs_input_grad_of, plain_params, record,
                                  single_output, transform_error, wrap_outputs)
from ..autograd.function_checks import meta_of
from ..autograd.graph import gradient_edge
from ..core import grad_mode
from ..core.dispatch import bind_rules, mark_born, rule_for
from ..core.shapes import sum_to
from ..ops._rules import to_front
from ..ops.creation import zeros
from ..utils._pytree import tree_flatten, tree_unflatten, LEAF
from .batch_level import BatchInterpreter
from .grad_level import GradInterpreter
from .jvp_level import JvpInterpreter, save_duals, eager_below
from .reverse import vjp as func_vjp
from .vmap import broadcast_to_and_flatten


def _unwrap(interp, flat):
    """(values one level down, what the level adds: tangents or bdims) of `flat`."""
    inner, extra = [], []
    for a in flat:
        v, e = interp.unwrap(a)
        inner.append(v)
        extra.append(e)
    return inner, extra


# ----------------------------------------------------------------- grad level
def grad_rule(prim, interp, flat, params):
    cls = prim.cls
    if not has_setup_context(cls):
        raise transform_error(cls)
    inner = []
    own = True          # every tensor arg is of this level
    below = True        # every tensor one level down is a plain level-0 tensor, not a view
    for a in flat:
        if isinstance(a, Tensor):
            if a._lvl is interp:
                a = a._inner
            else:
                own = False
            if a._lvl is not None or a._base is not None:
                below = False
        inner.append(a)
    state = grad_mode.state
    prev, state.grad_enabled = state.grad_enabled, interp.prev_grad_mode
    try:        # bind_rules, one frame less per nested call (no level to find: eager's rule)
        if below:
            out = mark_born(FunctionPrimitive.rules[None](prim, None, inner, params))
        else:
            rule, lower, inner = rule_for(prim, inner)
            out = mark_born(rule(prim, lower, inner, params))
    finally:
        state.grad_enabled = prev
    plain = params is plain_params(len(flat))
    if plain:
        inner_args = tuple(inner)
        needs = tuple([a._lvl is interp and a._requires_grad for a in flat])
    else:
        inner_args = tree_unflatten(inner, params["spec"])
        needs = needs_input_grad_of(tree_unflatten(flat, params["spec"]),
                                    lambda t: t._lvl is interp and t._requires_grad)
    executable = prev and True in needs
    ctx = None
    if executable:
        if plain and own:   # (the edges `_new_node` finds are this level's)
            ctx = _new_node(cls._backward_cls, flat)
        else:
            ctx = cls._backward_cls(tuple([(gradient_edge(a) if a._lvl is interp else None)
                                           or _NO_EDGE for a in flat if isinstance(a, Tensor)]))
        ctx.needs_input_grad = needs
        cls.setup_context(ctx, inner_args, out)
    if plain and single_output(ctx, out, inner):
        w = _t.wrap(out, interp)
        if executable:
            meta = meta_of(out)
            if meta[1].is_differentiable:
                w.grad_fn, w._output_nr, w._requires_grad = ctx, 0, True
            record(ctx, (meta,), (out,), LEAF, inner_args, {}, False)
        return w
    ins = {id(i): a for i, a in zip(inner, flat) if isinstance(a, Tensor)}

    def wrap(i, o, k, orig, dirty, diff):
        # an input returned as is becomes a new tensor of this level (torch's view_as),
        # unless forward modified it in place (mark_dirty): then it is the input itself
        w = orig if dirty else interp.lift(o)
        if executable and diff and (orig is None or dirty):
            w.grad_fn, w._output_nr, w._requires_grad = ctx, k, True
        return w
    out_leaves, out_spec = tree_flatten(out)
    wrapped, out_meta = wrap_outputs(ctx, out_leaves, ins, wrap)
    if executable:
        record(ctx, out_meta, out_leaves, out_spec, inner_args, {}, False)
    return tree_unflatten(wrapped, out_spec)


# ----------------------------------------------------------------- jvp level
def jvp_rule(prim, interp, flat, params):
    cls = prim.cls
    primals, tangents = _unwrap(interp, flat)
    args = tree_unflatten(primals, params["spec"])
    if has_setup_context(cls):
        out = bind_rules(prim, primals, params)
        ctx = FunctionCtx()
        cls.setup_context(ctx, args, out)
    else:
        # torch's forward AD (dual levels) runs forward(ctx, ...) itself; func.jvp may not
        if not interp.dual or any(
                isinstance(p, Tensor) and _t.lower(p)._lvl is not None for p in primals):
            raise transform_error(cls)
        ctx = cls._backward_cls()
        out = eager_rule(prim, None, primals, params, ctx)
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

    def wrap(i, o, k, orig, dirty, diff):
        t = out_tangents[i]
        if not diff:
            if t is not None and user_jvp:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the "
                                   "corresponding forward output is not a differentiable Tensor."
                                   f"You should return None at that position instead. "
                                   f"({cls.__name__}.jvp)")
            t = None
        if dirty and orig._lvl is interp:
            orig._aux = t
            return orig
        return interp.wrap(o, t)
    ins = {id(p): a for p, a in zip(primals, flat) if isinstance(a, Tensor)}
    wrapped, _ = wrap_outputs(ctx, out_leaves, ins, wrap)
    _save_duals(cls, interp, primals, flat, out_leaves, wrapped)
    return tree_unflatten(wrapped, out_spec)


def _save_duals(cls, interp, primals, flat, out_leaves, wrapped):
    """The eager node recorded below a dual level saves the duals of its inputs and outputs,
    so that its backward computes tangents too (NOTE [reverse over duals] in jvp_level)."""
    node = next((o.grad_fn for o in out_leaves if isinstance(o, Tensor) and eager_below(o)
                 and o.grad_fn is not None), None)
    if not (isinstance(node, BackwardCFunction) and node._forward_cls is cls and node._f_saved):
        return
    dual_of = {id(p): a for p, a in zip(primals, flat) if isinstance(a, Tensor) and a._lvl is interp}
    dual_of.update((id(o), w) for o, w in zip(out_leaves, wrapped) if isinstance(o, Tensor))
    save_duals(node._f_saved, dual_of)


def _tangent_args(ctx, primals, tangents, spec):
    """jvp's arguments: one tangent per positional input (zeros for an input without
    one when materializing, None for non-tensors)."""
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
    is_tensor = [isinstance(o, Tensor) for o in out_leaves]
    outs = [o for o in out_leaves if isinstance(o, Tensor)]
    g_all = [zeros(tuple(o.shape), dtype=o.dtype) for o in outs]
    diff = [i for i, o in enumerate(outs) if is_diff_dtype(o)]   # integer outputs: constant 0
    in_tensors = [x for a in args for x in tree_flatten(a)[0] if isinstance(x, Tensor)]
    in_diff = [j for j, x in enumerate(in_tensors) if is_diff_dtype(x)]

    def u(*gs):
        full = list(g_all)
        for i, g in zip(diff, gs):
            full[i] = g
        res = call_backward(cls, backward, ctx, grad_args(is_tensor, out_spec, full))
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
def batch_rule(prim, interp, flat, params):
    cls = prim.cls
    values, bdims = _unwrap(interp, flat)
    if all(d is None for d in bdims):
        return bind_rules(prim, values, params)
    if not has_setup_context(cls):
        raise transform_error(cls)
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
    leaves, spec = tree_flatten(output)
    dims = ([out_dims] if spec is LEAF and not isinstance(out_dims, tuple) else
            broadcast_to_and_flatten(out_dims, spec))
    if dims is None or len(dims) != len(leaves):
        raise RuntimeError(f"The autograd.Function's vmap staticmethod returned an incompatible "
                           f"(output, out_dims) tuple. Expected out_dims={out_dims} to be "
                           f"compatible with the structure of `output`. out_dims has structure "
                           f"{tree_flatten(out_dims)[1]} but output has structure {spec}. For more "
                           "details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    ins = {id(v): a for v, a in zip(values, flat) if isinstance(a, Tensor)}
    out, _ = wrap_outputs(None, leaves, ins, lambda i, o, k, orig, dirty, diff:
                          interp.wrap(o, dims[i]) if orig is None else orig)
    return tree_unflatten(out, spec)


# NOTE [generated vmap rule]
# With generate_vmap_rule=True, vmap over a Function calls, one level down, a
# Function whose forward, backward and jvp are the user's run under a fresh
# batch level of the same size (the bdims of the values they receive
# restored), as torch's vmapify_autograd_function. setup_context runs under
# that level too; saving a batched tensor saves its value and remembers its
# bdim, so backward can re-batch it. Outputs keep their batch dim in front.
# The generated Function class is made once per Function class; what one call
# knows (the bdims, the batch size, the output structure) travels as its first,
# non-tensor argument (`_Call`), which its backward gets no gradient for.
def _under_vmap(fn, values, bdims, batch_size, randomness):
    """fn(list of batched tensors) -> list; returns (values, bdims) of its results."""
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
        _push(self, "_f_saved_bdims", dims)

    def save_for_forward(self, *tensors):
        FunctionCtx.save_for_forward(self, *tensors)
        vals, dims = self._split(tensors)
        self._f_real.save_for_forward(*vals)
        _push(self, "_f_fwd_bdims", dims)

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


def _push(ctx, attr, entry):
    """Put this generated level's `entry` on a stack of the real ctx: nested generated rules
    share one, outermost first (the outer level's setup runs to its end before the inner
    one's)."""
    root = ctx._f_root if isinstance(ctx, _BatchedCtx) else ctx
    root.__dict__[attr] = root.__dict__.get(attr, []) + [entry]


def _stack(ctx, attr, n):
    """(this generated level's entry of stack `attr` (n Nones if none), those inside it)."""
    stack = getattr(ctx, attr, None) or [[None] * n]
    return stack[0], stack[1:]


class _Call:
    """What one call under a generated rule knows: a non-tensor first argument of the
    generated Function, so that its class is made once per Function class."""

    def __init__(self, cls, interp, values, bdims, params):
        self.cls, self.spec, self.kwargs = cls, params["spec"], params["kwargs"]
        self.size, self.randomness = interp.batch_size, interp.randomness
        self.bdims = bdims
        shapes = [tuple(v.shape) if isinstance(v, Tensor) else None for v in values]
        for i, (v, d) in enumerate(zip(values, bdims)):
            if d is not None:
                s = list(v.shape)
                del s[d]
                shapes[i] = tuple(s)
        self.shapes = shapes        # of one example
        self.out_spec = self.non_tensor = None      # set by forward


def _generated_class(cls):
    """The Function a generated rule calls one level down (made once per class)."""
    gen = cls.__dict__.get("_f_generated")
    if gen is None:
        body = {"forward": staticmethod(_gen_forward),
                "setup_context": staticmethod(_gen_setup_context),
                "backward": staticmethod(_gen_backward),
                "jvp_from_backward": cls.jvp_from_backward,
                "generate_vmap_rule": True}     # an outer vmap generates its rule in turn
        if cls.jvp is not _SingleLevelFunction.jvp:
            body["jvp"] = staticmethod(_gen_jvp)
        gen = type(cls.__name__ + "Generated", (Function,), body)
        cls._f_generated = gen
    return gen


def _gen_forward(call, *vals):
    def run(batched):
        out = call.cls.forward(*tree_unflatten(batched, call.spec), **call.kwargs)
        leaves, call.out_spec = tree_flatten(out)
        call.non_tensor = [None if isinstance(o, Tensor) else o for o in leaves]
        return [o for o in leaves if isinstance(o, Tensor)]
    out_v, out_d = _under_vmap(run, list(vals), call.bdims, call.size, call.randomness)
    return tuple(_front(v, d, call.size) for v, d in zip(out_v, out_d))


def _gen_setup_context(ctx, inputs, output):
    call, inputs = inputs[0], inputs[1:]
    _push(ctx, "_f_calls", call)
    with BatchInterpreter(call.size, call.randomness) as lvl:
        ins = [lvl.wrap(v, d) if isinstance(v, Tensor) else v for v, d in zip(inputs, call.bdims)]
        outs_b = [lvl.wrap(o, 0) for o in output]
        it = iter(outs_b)
        outs = [next(it) if o is None else o for o in call.non_tensor]
        bctx = _BatchedCtx(ctx, lvl, outs_b, list(output))
        call.cls.setup_context(bctx, tree_unflatten(ins, call.spec),
                               tree_unflatten(outs, call.out_spec))


def _gen_backward(ctx, *grads):
    call, inner_calls = _stack(ctx, "_f_calls", 1)
    saved = list(ctx.saved_tensors)
    saved_d, inner_d = _stack(ctx, "_f_saved_bdims", len(saved))
    mask = []

    def run(batched):
        sv, gs = batched[:len(saved)], batched[len(saved):]
        args = grad_args([o is None for o in call.non_tensor], call.out_spec, list(gs))
        sctx = _SavedCtx(ctx, saved_tensors=tuple(sv), _f_saved_bdims=inner_d,
                         _f_calls=inner_calls, needs_input_grad=ctx.needs_input_grad[1:])
        res = call_backward(call.cls, call.cls.backward, sctx, args)
        if not isinstance(res, tuple):
            res = (res,)
        res = tree_flatten(list(res[:len(call.bdims)]))[0]
        out = []
        mask.clear()
        for i, (g, shape) in enumerate(zip(res, call.shapes)):
            if g is None or shape is None:
                mask.append(False)
                continue
            if tuple(g.shape) != shape:
                g = sum_to(g, shape)
            mask.append(True)
            out.append(g)
        return out
    out_v, out_d = _under_vmap(run, saved + list(grads), saved_d + [0] * len(grads), call.size,
                               call.randomness)
    it = iter(zip(out_v, out_d))
    result = [None]     # the call's own argument
    for m, d_in in zip(mask, call.bdims):
        if not m:
            result.append(None)
            continue
        v, d = next(it)
        v = _front(v, d, call.size)
        result.append(v.sum(0) if d_in is None else v.movedim(0, d_in))
    return tuple(result)


def _gen_jvp(ctx, call_tangent, *tangents):
    # the user's jvp may read saved_for_forward and saved_tensors: both re-batched
    call, inner_calls = _stack(ctx, "_f_calls", 1)
    fwd = list(ctx.saved_for_forward)
    fwd_d, fwd_inner = _stack(ctx, "_f_fwd_bdims", len(fwd))
    bwd = list(ctx.saved_tensors)
    bwd_d, bwd_inner = _stack(ctx, "_f_saved_bdims", len(bwd))
    saved = fwd + bwd
    t_d = [d if t is not None else None for t, d in zip(tangents, call.bdims)]

    def run(batched):
        sv, ts = batched[:len(saved)], batched[len(saved):]
        sctx = _SavedCtx(ctx, saved_for_forward=tuple(sv[:len(fwd)]), _f_fwd_bdims=fwd_inner,
                         saved_tensors=tuple(sv[len(fwd):]), _f_saved_bdims=bwd_inner,
                         _f_calls=inner_calls, needs_input_grad=ctx.needs_input_grad[1:])
        res = call.cls.jvp(sctx, *tree_unflatten(list(ts), call.spec))
        if call.out_spec.kind is not tuple or not isinstance(res, tuple):
            res = (res,)    # (a generated forward returns a tuple, its jvp one tangent)
        return [r for r, o in zip(tree_flatten(list(res))[0], call.non_tensor) if o is None]
    out_v, out_d = _under_vmap(run, saved + list(tangents), fwd_d + bwd_d + t_d, call.size,
                               call.randomness)
    res = tuple(_front(v, d, call.size) for v, d in zip(out_v, out_d))
    return res if len(res) != 1 else res[0]


def _generated_vmap(cls, interp, flat, values, bdims, params):
    call = _Call(cls, interp, values, bdims, params)
    out = _generated_class(cls).apply(call, *values)
    if not isinstance(out, tuple):
        out = (out,)
    it = iter(out)
    leaves = [next(it) if o is None else o for o in call.non_tensor]
    ins = {id(v): a for v, a in zip(values, flat) if isinstance(a, Tensor)}
    wrapped, _ = wrap_outputs(None, leaves, ins, lambda i, o, k, orig, dirty, diff:
                              interp.wrap(o, 0) if orig is None else orig)
    return tree_unflatten(wrapped, call.out_spec)


def _front(v, d, size):
    """`v` with its batch dim in front (broadcast along a new one when unbatched)."""
    if d is None:
        return v.unsqueeze(0).expand((size,) + tuple(v.shape))
    return to_front(v, d)


FunctionPrimitive.rules.update({GradInterpreter: grad_rule, JvpInterpreter: jvp_rule,
                                BatchInterpreter: batch_rule})
