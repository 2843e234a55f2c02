"""jacrev (vmap over a vjp) and functional_call."""
import functools

from ..ops import creation
from ..ops.creation import eye
from ..ops.shape import stack
from ..utils._pytree import tree_flatten, tree_unflatten
from .reverse import _argnums_tuple, vjp
from .vmap import vmap


def standard_basis(flat, numels):
    """One batch per leaf of `flat` (of `numels` entries each): row i of every batch is the
    i-th unit vector of all the leaves together (tangents for jacfwd, cotangents for jacrev)."""
    total = sum(numels)
    basis, start = [], 0
    for x, n in zip(flat, numels):
        rows = eye(total, dtype=x.dtype)
        basis.append(reshaped(rows if n == total else rows[:, start:start + n],
                              (total,) + tuple(x.shape)))
        start += n
    return basis


def real_only(flat, api, what):
    """torch's refusal of complex inputs or outputs of a Jacobian (a real basis would give
    only the derivative along the real parts)."""
    for i, x in enumerate(flat):
        if x.dtype.is_complex:
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def reshaped(x, shape):
    """`x.reshape(shape)`, or `x` when it has that shape: one primitive less at every level
    of the transforms that a Jacobian runs under."""
    return x if tuple(x.shape) == shape else x.reshape(shape)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """Jacobian of `func` w.r.t. argument(s) `argnums`, by reverse mode (one vjp per output entry,
    vectorized with vmap).

        >>> from arraygrad.func import jacrev
        >>> jacrev(arraygrad.sin)(arraygrad.zeros(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums_tuple(argnums, len(args), "jacrev")
        real_only(tree_flatten(tuple(args[i] for i in nums))[0], "jacrev", "inputs")

        def with_primals(*primals):
            full = list(args)
            for i, p in zip(nums, primals):
                full[i] = p
            return func(*full)
        res = vjp(with_primals, *(args[i] for i in nums), has_aux=has_aux)
        output, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(output)
        real_only(flat_out, "jacrev", "outputs")
        primals = tuple(args[i] for i in nums)
        flat_primals, primals_spec = tree_flatten(primals)
        numels = [o.numel() for o in flat_out]
        if numels == [1]:
            # one output of one entry: a single vjp along ones (the basis' one row), without a
            # vmap level around it; each cotangent is its block, shaped out.shape + in.shape
            o = flat_out[0]
            cotangents = vjp_fn(tree_unflatten([creation.ones(tuple(o.shape), dtype=o.dtype)],
                                               out_spec))
            per_input = [[reshaped(c, tuple(o.shape) + tuple(p.shape))]
                         for c, p in zip(tree_flatten(cotangents)[0], flat_primals)]
        else:
            basis = standard_basis(flat_out, numels)
            cotangents = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(basis, out_spec))
            # per input: split the stacked rows by output, each block out.shape + in.shape
            per_input = []
            for j, p in zip(tree_flatten(cotangents)[0], flat_primals):
                blocks, start = [], 0
                for o, n in zip(flat_out, numels):
                    rows = j if n == j.shape[0] else j[start:start + n]
                    blocks.append(reshaped(rows, tuple(o.shape) + tuple(p.shape)))
                    start += n
                per_input.append(blocks)
        per_output = []
        for k in range(len(flat_out)):
            tree = tree_unflatten([blocks[k] for blocks in per_input], primals_spec)
            per_output.append(tree[0] if isinstance(argnums, int) else tree)
        jac = tree_unflatten(per_output, out_spec)
        return (jac, res[2]) if has_aux else jac
    return wrapper


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call `module` with some parameters/buffers replaced by the given tensors.

        >>> functional_call(model, {"weight": w, "bias": b}, (x,))   # model(x) with w, b

    `parameter_and_buffer_dicts`: a dict of dotted names to tensors (or a tuple of
    such dicts). The module's own tensors are put back afterwards.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        values = {}
        for d in parameter_and_buffer_dicts:
            dup = set(values) & set(d)
            if dup:
                raise ValueError(f"{sorted(dup)} appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
            values.update(d)
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if strict:
        known = _names(module)
        missing = sorted(known - set(values))
        unexpected = sorted(set(values) - known)
        if missing or unexpected:
            msg = f"Error(s) in reparametrizing for {type(module).__name__}:"
            if unexpected:
                msg += "\n\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + "."
            if missing:
                msg += "\n\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + "."
            raise RuntimeError(msg)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    saved = []
    try:
        for name, value in values.items():
            saved.append((name, _swap(module, name, value)))
        return module(*args, **(kwargs or {}))
    finally:
        for name, old in reversed(saved):
            _swap(module, name, old)


def _names(module):
    names = set()
    for attr in ("named_parameters", "named_buffers"):
        fn = getattr(module, attr, None)
        if fn is not None:
            names.update(n for n, _ in fn())
    return names


_MISSING = object()


def _swap(module, dotted, value):
    """Put `value` at `module.<dotted>` (in its _parameters/_buffers dict when it has one);
    return what was there."""
    *path, name = dotted.split(".")
    owner = module
    for p in path:
        owner = getattr(owner, p)
    for store in ("_parameters", "_buffers"):
        d = getattr(owner, store, None)
        if isinstance(d, dict) and name in d:
            old = d[name]
            d[name] = value
            return old
    old = owner.__dict__.get(name, _MISSING)
    if value is _MISSING:
        del owner.__dict__[name]
    else:
        object.__setattr__(owner, name, value)
    return old


def stack_module_state(models):
    """(params, buffers): the models' tensors stacked by name, for ensembling with vmap.

        >>> params, buffers = stack_module_state(models)
        >>> vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)), (0, 0, None))(
        ...     params, buffers, data)
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        per_model = [dict(named(m)) for m in models]
        return {k: _stacked_leaf([d[k] for d in per_model], k) for k in per_model[0]}
    return (stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers()))


def _stacked_leaf(tensors, name):
    grads = {t.requires_grad for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack([t.detach() for t in tensors])
    return out.requires_grad_() if grads == {True} else out
