"""Forward-mode transforms: jvp, linearize, jacfwd, hessian."""
import functools

from .. import _tensor as _t
from ..ops import creation
from ..utils._pytree import tree_flatten, tree_unflatten, tree_map
from .jacobian import jacrev, real_only, reshaped, standard_basis
from .jvp_level import JvpInterpreter
from .reverse import _argnums_tuple
from .vmap import vmap

_JVP = "jvp(f, primals, tangents)"


def _check_tensors(flat, api, argname):
    if not flat:
        raise RuntimeError(f"{api}: Expected {argname} to contain at least one Tensor.")
    for x in flat:
        if not isinstance(x, _t.Tensor):
            raise RuntimeError(f"{api}: Expected {argname} to only contain Tensors, got {type(x)}")


def _jvp(func, primals, tangents, argnums, has_aux, strict=False):
    """jvp of `func` at `primals` along `tangents` (for the arguments `argnums`, None: all)."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    diff = primals if argnums is None else tuple(primals[a] for a in argnums)
    flat_p, spec_p = tree_flatten(diff)
    flat_t, spec_t = tree_flatten(tangents)
    if spec_p != spec_t:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {spec_p} and tangents with "
                           f"structure {spec_t}")
    _check_tensors(flat_p, _JVP, "primals")
    _check_tensors(flat_t, _JVP, "tangents")
    for i, (p, t) in enumerate(zip(flat_p, flat_t)):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{_JVP}: tangent:{i} with shape {list(t.shape)} in flattened "
                               f"pytree doesn't match the shape {list(p.shape)} of the "
                               "corresponding primal.")
        for kind, v in (("primal", p), ("tangent", t)):
            if not v.dtype.is_differentiable:       # torch's ValueError
                raise ValueError(f"{_JVP}: Expected {kind} to be floating point or complex, but "
                                 f"got: {v.dtype} (at {kind}:{i})")
    with JvpInterpreter() as level:
        duals = [level.wrap(p, t if t.dtype is p.dtype else t.to(p.dtype))
                 for p, t in zip(flat_p, flat_t)]
        duals = tree_unflatten(duals, spec_p)
        if argnums is None:
            args = duals
        else:
            args = list(primals)
            for a, d in zip(argnums, duals):
                args[a] = d
        out = func(*args)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{_JVP}: output of function f should be a tuple: (output, "
                                   "aux) if has_aux is True")
            out, aux = out
            aux = tree_map(lambda x: level.unwrap(_t.lower(x))[0]
                           if isinstance(x, _t.Tensor) else x, aux)
        flat_o, spec_o = tree_flatten(out)
        if not flat_o or (len(flat_o) == 1 and flat_o[0] is None):
            raise RuntimeError(f"{_JVP}: Expected f to be a function that has non-empty output "
                               f"(got output = {flat_o})")
        for o in flat_o:
            if not isinstance(o, _t.Tensor):
                raise RuntimeError(f"{_JVP}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
        prim_out, tan_out = [], []
        for o in flat_o:
            p, t = level.unwrap(_t.lower(o))
            if t is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f "
                                       "is independent of the inputs. This is not allowed with "
                                       "strict=True.")
                t = creation.zeros(tuple(p.shape), dtype=p.dtype)
            prim_out.append(p)
            tan_out.append(t)
    result = (tree_unflatten(prim_out, spec_o), tree_unflatten(tan_out, spec_o))
    return result + (aux,) if has_aux else result


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J @ tangents): the Jacobian-vector product, by forward mode.

        >>> from arraygrad.func import jvp
        >>> x = arraygrad.tensor([1., 2.])
        >>> jvp(lambda x: x ** 2, (x,), (arraygrad.ones(2),))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    return _jvp(func, primals, tangents, None, has_aux, strict)


def linearize(func, *primals):
    """(func(*primals), jvp_fn) where jvp_fn(*tangents) gives the jvp at `primals`.

    Each jvp_fn call reruns `func` under forward mode (arraygrad records no
    trace to replay), so it costs about one forward-mode evaluation; a `func`
    that draws random numbers sees fresh ones on each call.
    """
    out = func(*primals)
    flat_p, spec_p = tree_flatten(primals)
    _check_tensors(flat_p, "linearize", "primals")

    def jvp_fn(*tangents):
        _, spec_t = tree_flatten(tangents)
        if spec_t != spec_p:
            raise RuntimeError(f"Expected the tangents {spec_t} to have the same argspec as the "
                               f"primals {spec_p}")
        return _jvp(func, primals, tangents, None, False)[1]
    return out, jvp_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of `func` with respect to argument(s) `argnums`, by forward mode.

    One jvp per input element, batched with vmap; the result has shape
    `output.shape + input.shape` for each output and input.

        >>> from arraygrad.func import jacfwd
        >>> jacfwd(arraygrad.sin)(arraygrad.tensor([0., 1.]))
        tensor([[1.0000, 0.0000],
                [0.0000, 0.5403]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        flat_p, spec_p = tree_flatten(tuple(args[a] for a in nums))
        _check_tensors(flat_p, "jacfwd", "primals")
        real_only(flat_p, "jacfwd", "inputs")
        numels = [p.numel() for p in flat_p]
        basis = standard_basis(flat_p, numels)

        def push_jvp(*flat_t):
            out = _jvp(func, args, tree_unflatten(list(flat_t), spec_p), nums, has_aux)
            return (out[1], out[2]) if has_aux else out[1]

        results = vmap(push_jvp, randomness=randomness)(*basis)
        aux = None
        if has_aux:
            results, aux = results
            aux = tree_map(lambda a: a[0] if isinstance(a, _t.Tensor) else a, aux)
        flat_jac, spec_o = tree_flatten(results)
        real_only(flat_jac, "jacfwd", "outputs")
        per_out = []
        for j in flat_jac:
            j = j.movedim(0, -1)
            pieces, start = [], 0
            for p, n in zip(flat_p, numels):
                piece = j if n == j.shape[-1] else j.narrow(-1, start, n)
                start += n
                pieces.append(reshaped(piece, tuple(j.shape[:-1]) + tuple(p.shape)))
            jac_in = tree_unflatten(pieces, spec_p)
            per_out.append(jac_in[0] if isinstance(argnums, int) else jac_in)
        jac = tree_unflatten(per_out, spec_o)
        return (jac, aux) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of scalar `func` with respect to `argnums`: jacfwd(jacrev(func)).

        >>> from arraygrad.func import hessian
        >>> hessian(lambda x: (x ** 3).sum())(arraygrad.tensor([1., 2.]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
