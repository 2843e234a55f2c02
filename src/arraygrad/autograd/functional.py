"""torch.autograd.functional: Jacobians, Hessians and their products of a whole function.

The older functional API, kept because scripts call it: each function runs `func` on fresh
leaves under grad mode and differentiates with `autograd.grad` (double backward for the forward
products), or with the `func` transforms where `vectorize=True` asks for one batched pass.
Results are detached unless `create_graph=True`, as torch's.

    >>> jacobian(lambda x: x ** 2, arraygrad.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
"""
from .. import _tensor as _t
from ..core.grad_mode import enable_grad
from ..ops.creation import eye
from ..ops.shape import stack
from . import engine, forward_ad
from .batched import grad as batched_grad


def _as_tuple(x, arg_name, fn_name):
    """(was it a tuple, the tensors as a tuple), with torch's TypeError for anything else."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, _t.Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but the {where} has type {type(el)}.")
    return is_tuple, items


def _unpack(res, is_tuple):
    """Undo `_as_tuple` on results: one level, or two for (outputs x inputs) tables."""
    if isinstance(is_tuple, tuple):
        outer, inner = is_tuple
        if not inner:
            res = tuple(r[0] for r in res)
        return res if outer else res[0]
    return res if is_tuple else res[0]


def _fresh(inputs, create_graph, need_graph):
    """Leaves to differentiate at; with create_graph, views that keep the callers' history."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in inputs)


def _finish(ts, create_graph):
    if isinstance(ts, tuple):
        return tuple(_finish(t, create_graph) for t in ts)
    return ts if create_graph or ts is None else ts.detach()


def _check_v(v, others, is_tuple):
    if len(v) != len(others):
        if is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(others)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, others)):
        if a.shape != b.shape:
            prefix = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.shape} but got "
                               f"{a.shape}.")


_SCALAR_INPUT = "the input to the user-provided function is a single Tensor with a single element"


def _vector(v, refs, is_tuple, create_graph, fn_name, when_none):
    """The product's vector as a tuple matching `refs`; None only where `refs` is one scalar."""
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if {when_none}.")
        return (refs[0].new_ones(refs[0].shape),)
    _, v = _as_tuple(v, "v", fn_name)
    v = _fresh(v, create_graph, False)
    _check_v(v, refs, is_tuple)
    return v


_NO_GRAD = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs "
               "must be computed in a differentiable manner from the input when running in "
               "strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
}


def _check_requires_grad(tensors, kind, strict):
    """strict mode: every one of `tensors` (outputs, first gradients, a Jacobian) must depend
    on the inputs, or the next derivative would silently be zero."""
    if strict:
        for i, t in enumerate(tensors):
            if t is None:
                raise RuntimeError(f"The output of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode.")
            if not t.requires_grad:
                raise RuntimeError(_NO_GRAD[kind].format(i=i))


def _grads(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    """autograd.grad over the outputs that have history; None for inputs they do not reach."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return engine.grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                       retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


# strict mode's refusals of a missing gradient, by the stage that computed it
_UNUSED = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    """Zeros where an input was not reached; strict mode refuses that, and with create_graph
    a result that does not depend on the inputs (its derivative would be silently zero)."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_UNUSED[stage].format(i=i))
            g = ref.new_zeros(ref.shape)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


def _call(func, inputs, fn_name, strict):
    is_out, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_out, outputs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with enable_grad():
        is_in, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, True)
        is_out, outputs = _call(func, inputs, "vjp", strict)
        v = _vector(v, outputs, is_out, create_graph, "vjp",
                    "the user-provided function returns a single Tensor with a single element")
        grads = _grads(outputs, inputs, v, create_graph)
        res = _zeros_for_none(grads, inputs, strict, create_graph, "back")
    return _unpack(_finish(outputs, create_graph), is_out), _unpack(_finish(res, create_graph),
                                                                    is_in)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    with enable_grad():
        is_in, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, True)
        v = _vector(v, inputs, is_in, create_graph, "jvp", _SCALAR_INPUT)
        is_out, outputs = _call(func, inputs, "jvp", strict)
        # NOTE [double backward]: g -> J^T g is linear in g; differentiating it with respect
        # to g along v gives J v
        dummies = tuple(o.new_zeros(o.shape).requires_grad_(True) for o in outputs)
        grad_in = _grads(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_in, "grad_inputs", strict)
        res = _grads(grad_in, dummies, v, create_graph)
        res = _zeros_for_none(res, outputs, strict, create_graph, "back_trick")
    return _unpack(_finish(outputs, create_graph), is_out), _unpack(_finish(res, create_graph),
                                                                    is_out)


def _basis_rows(tensors):
    """One-hot vectors for every element of every tensor, batched along dim 0: row r of the
    k-th result is the r-th basis vector restricted to tensor k."""
    total = sum(t.numel() for t in tensors)
    rows, start = [], 0
    for t in tensors:
        n = t.numel()
        block = t.new_zeros((total, n))
        block[start:start + n] = eye(n, dtype=t.dtype)
        rows.append(block.reshape((total,) + tuple(t.shape)))
        start += n
    return tuple(rows)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: shape output.shape + input.shape per pair."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: '
                         'If your function has more outputs than inputs, "forward-mode" tends to '
                         'be more performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      'and `strategy="forward-mode"` are not supported together '
                                      "(yet). Please either set `create_graph=False` or "
                                      '`strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        is_in, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, True)
        is_out, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please either "
                                   "set `strict=False` or `vectorize=False`.")
            table = _jacobian_vectorized(outputs, inputs, create_graph)
        else:
            table = _jacobian_rows(outputs, inputs, create_graph, strict)
    return _unpack(_finish(table, create_graph), (is_out, is_in))


def _jacobian_rows(outputs, inputs, create_graph, strict):
    """One backward per output element (torch's non-vectorized strategy)."""
    table = []
    for i, out in enumerate(outputs):
        flat = out.reshape(-1)
        rows = [[] for _ in inputs]
        for j in range(flat.numel()):
            grads = (engine.grad(flat[j], inputs, retain_graph=True, create_graph=create_graph,
                                 allow_unused=True) if out.requires_grad else (None,) * len(inputs))
            for k, (g, x) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {k}. This is not allowed in "
                                           "strict mode.")
                    g = x.new_zeros(x.shape)
                elif strict and create_graph and not g.requires_grad:
                    # (torch names the output's index here)
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {i}. This is not allowed in "
                                       "strict mode when create_graph=True.")
                rows[k].append(g)
        table.append(tuple(_stack_rows(r, out, x) for r, x in zip(rows, inputs)))
    return tuple(table)


def _stack_rows(rows, out, x):
    if not rows:
        return x.new_zeros(tuple(out.shape) + tuple(x.shape))
    return stack(rows).reshape(tuple(out.shape) + tuple(x.shape))


def _jacobian_vectorized(outputs, inputs, create_graph):
    """All rows in one batched backward (`is_grads_batched`)."""
    total = sum(o.numel() for o in outputs)
    if total == 0:
        return tuple(tuple(x.new_zeros(tuple(o.shape) + tuple(x.shape)) for x in inputs)
                     for o in outputs)
    basis = _basis_rows(outputs)
    grads = _grads_batched(outputs, inputs, basis, create_graph)
    table, start = [], 0
    for o in outputs:
        n = o.numel()
        table.append(tuple(g[start:start + n].reshape(tuple(o.shape) + tuple(x.shape))
                           for g, x in zip(grads, inputs)))
        start += n
    return tuple(table)


def _grads_batched(outputs, inputs, basis, create_graph):
    pairs = [(o, g) for o, g in zip(outputs, basis) if o.requires_grad]
    total = basis[0].shape[0]
    if not pairs:
        return tuple(x.new_zeros((total,) + tuple(x.shape)) for x in inputs)
    res = batched_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                       create_graph=create_graph, allow_unused=True, is_grads_batched=True)
    return tuple(x.new_zeros((total,) + tuple(x.shape)) if g is None else g
                 for g, x in zip(res, inputs))


def _jacobian_forward(func, inputs, strict, vectorize):
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian is only implemented for `vectorize=True`.")
    from ..func import vmap     # func (L5) imports autograd: vmap is reached at call time
    is_in, inputs = _as_tuple(inputs, "inputs", "jacobian")
    numels = [x.numel() for x in inputs]
    basis = _basis_rows(inputs)     # one-hot tangents, batched along dim 0
    seen = {}

    def column(*tangents):
        with forward_ad.dual_level():
            duals = tuple(forward_ad.make_dual(x, t) for x, t in zip(inputs, tangents))
            is_out, outs = _as_tuple(func(*duals), "outputs of the user-provided function",
                                     "jacobian")
            seen["is_out"] = is_out
            seen["shapes"] = [tuple(o.shape) for o in outs]
            res = []
            for o in outs:
                primal, tangent = forward_ad.unpack_dual(o)
                res.append(primal.new_zeros(primal.shape) if tangent is None else tangent)
            return tuple(res)
    cols = vmap(column)(*basis)
    table = []      # lists, not tuples: torch's forward-mode jacobian returns lists
    for c, shape in zip(cols, seen["shapes"]):
        row, start = [], 0
        for x, n in zip(inputs, numels):
            part = c[start:start + n]       # (n_in, *out_shape): inputs along dim 0
            part = part.permute(*range(1, part.ndim), 0).reshape(shape + tuple(x.shape))
            row.append(part)
            start += n
        table.append(row)
    return _unpack(table, (seen["is_out"], is_in))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar `func` at `inputs`: input.shape + input.shape per pair."""
    is_in, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*inp):
        out = func(*inp)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if is_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar, inp, create_graph=True)
        _check_requires_grad(jac if isinstance(jac, tuple) else (jac,), "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(res, (is_in, is_in))


def _scalar_output(func, inputs, fn_name, strict):
    is_out, outputs = _call(func, inputs, fn_name, strict)
    if is_out or not isinstance(outputs[0], _t.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar `func`."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar `func`, by the double-backward trick as torch."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, fn_name):
    with enable_grad():
        is_in, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _fresh(inputs, create_graph, True)
        v = _vector(v, inputs, is_in, create_graph, fn_name, _SCALAR_INPUT)
        outputs = _scalar_output(func, inputs, fn_name, strict)
        jac = _grads(outputs, inputs, (outputs[0].new_ones(outputs[0].shape),), True)
        _check_requires_grad(jac, "jacobian", strict)
        if fn_name == "vhp":
            res = _grads(jac, inputs, v, create_graph)
            stage = "double_back"
        else:
            dummies = tuple(x.new_zeros(x.shape).requires_grad_(True) for x in inputs)
            back = _grads(jac, inputs, dummies, create_graph=True)
            res = _grads(back, dummies, v, create_graph)
            stage = "double_back_trick"
        res = _zeros_for_none(res, inputs, strict, create_graph, stage)
    return (_finish(outputs[0], create_graph), _unpack(_finish(res, create_graph), is_in))
