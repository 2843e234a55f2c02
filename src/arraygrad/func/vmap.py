"""vmap: run a function on every example of a batch at once (see NOTE [batch level])."""
import functools

from .. import _tensor as _t
from ..backends import default_backend
from ..ops.shape import cat, narrow
from ..utils._pytree import LEAF, _children, tree_flatten, tree_unflatten
from .batch_level import BatchInterpreter, move_bdim

Tensor = _t.Tensor


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def broadcast_to_and_flatten(prefix, spec):
    """Leaves of `prefix` repeated over the subtrees of `spec` they stand for (None: mismatch)."""
    out = []

    def go(p, s):
        kids = _children(p)
        if kids is None:
            out.extend([p] * s.num_leaves)
            return True
        if s.kind is None:
            return False
        kind, meta, children = kids
        if kind is not s.kind or len(children) != len(s.children):
            return False
        if meta is not None:
            if set(meta) != set(s.meta):
                return False
            children = [p[k] for k in s.meta]
        return all(go(c, cs) for c, cs in zip(children, s.children))
    return out if go(prefix, spec) else None


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    for d in tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must "
                             "be an int, None or a python collection of ints representing where in "
                             "the outputs the vmapped dimension should appear.")


def _process_inputs(in_dims, args, func):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to "
                         "be int or a (potentially nested) tuple matching the structure of inputs, "
                         f"got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, "
                         "or you are trying to vmap over a function with no inputs. The latter is "
                         "unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_to_and_flatten(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         "compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims)):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                             "an input but in_dim must be either an integer dimension or None.")
        if d is not None and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                             f"an input but the input is of type {type(arg)}. We cannot vmap over "
                             "non-Tensor arguments, please use None as the respective in_dim")
        if d is not None:
            n = arg.dim()
            if not -n <= d < n:
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got "
                                 f"in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {n} so expected in_dim to satisfy -{n} <= "
                                 f"in_dim < {n}.")
            flat_dims[i] = d % n
    sizes = [a.shape[d] for a, d in zip(flat_args, flat_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _remove_batch_dim(name, level, out, out_dim):
    out = _t.lower(out)
    if out_dim is None:
        if isinstance(out, Tensor) and out._lvl is level:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                             "out_dim is None")
        return out
    if not isinstance(out, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(out)}. Did you mean to set out_dims= to None for output?")
    value, bdim = level.unwrap(out)
    d = _t._wrap_dim(out_dim, value.ndim + (bdim is None))
    if bdim is None:
        # the same for every example: broadcast, as torch (a view, not a copy)
        value = value.unsqueeze(d)
        shape = list(value.shape)
        shape[d] = level.batch_size
        return value.expand(shape)
    return move_bdim(value, bdim, d)


def _unwrap_outputs(outputs, out_dims, level, func):
    flat, spec = tree_flatten(outputs)

    def incompatible():
        return ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                          "is not compatible with the structure of `outputs`. out_dims has "
                          f"structure {tree_flatten(out_dims)[1]} but outputs has structure "
                          f"{spec}.")
    if spec is LEAF:
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_dims = list(out_dims)
        elif out_dims is None or isinstance(out_dims, int):
            flat_dims = [out_dims]
        else:
            raise incompatible()
    else:
        flat_dims = broadcast_to_and_flatten(out_dims, spec)
        if flat_dims is None:
            raise incompatible()
    name = _get_name(func)
    return tree_unflatten([_remove_batch_dim(name, level, o, d) for o, d in zip(flat, flat_dims)],
                          spec)


def _flat_vmap(func, batch_size, flat_dims, flat_args, spec, out_dims, randomness, kwargs):
    with BatchInterpreter(batch_size, randomness) as level:
        batched = [a if d is None else level.wrap(a, d) for a, d in zip(flat_args, flat_dims)]
        outputs = func(*tree_unflatten(batched, spec), **kwargs)
        return _unwrap_outputs(outputs, out_dims, level, func)


def _chunked_vmap(func, chunk_size, batch_size, flat_dims, flat_args, spec, out_dims, randomness,
                  kwargs):
    # randomness='same': every chunk replays the same draws
    rng = default_backend().random().bit_generator
    state = rng.state if randomness == "same" else None
    results = []
    for start in range(0, batch_size, chunk_size):
        n = min(chunk_size, batch_size - start)
        chunk = [a if d is None else narrow(a, d, start, n) for a, d in zip(flat_args, flat_dims)]
        if state is not None:
            rng.state = state
        results.append(_flat_vmap(func, n, flat_dims, chunk, spec, out_dims, randomness, kwargs))
    flats = [tree_flatten(r)[0] for r in results]
    out_spec = tree_flatten(results[0])[1]
    flat_out_dims = ([out_dims] if out_spec is LEAF and not isinstance(out_dims, tuple) else
                     list(out_dims) if out_spec is LEAF else
                     broadcast_to_and_flatten(out_dims, out_spec))
    merged = []
    for i, d in enumerate(flat_out_dims):
        parts = [f[i] for f in flats]
        merged.append(parts[0] if d is None else cat(parts, d))
    return tree_unflatten(merged, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """`func` mapped over a batch dim of its inputs, computed with whole-batch ops.

        >>> from arraygrad.func import vmap
        >>> vmap(arraygrad.dot)(arraygrad.ones(5, 3), arraygrad.ones(5, 3))
        tensor([3., 3., 3., 3., 3.])

    in_dims/out_dims: an int (the batch dim of every input/output), None (not
    batched) or a pytree matching the inputs/outputs. randomness: 'error' (random
    ops raise), 'different' (each example draws its own) or 'same' (one draw for
    all). chunk_size: compute that many examples at a time.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if chunk_size is not None and chunk_size < batch_size:
            return _chunked_vmap(func, chunk_size, batch_size, flat_dims, flat_args, spec,
                                 out_dims, randomness, kwargs)
        return _flat_vmap(func, batch_size, flat_dims, flat_args, spec, out_dims, randomness,
                          kwargs)
    return wrapped
