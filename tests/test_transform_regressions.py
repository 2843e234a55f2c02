"""Issue 7: transforms, levels and in-place writes, each case run by arraygrad and torch.

Each program takes the module (`arraygrad` or `torch`) and returns tensors;
`_same` runs it with both and compares in float64.
"""
import math
import zlib

import numpy as np
import pytest

import arraygrad as ag
import function_db
import op_db
import transform_fuzz
from conftest import assert_close


def _f64(M, v):
    return M.tensor(v, dtype=M.float64)


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in _flat(v)]
    return [r]


def _same(torch, prog, *args):
    """prog gives the same results with both modules, or raises the same exception type."""
    try:
        theirs = _flat(prog(torch, *args))
    except Exception as e:     # noqa: BLE001 - whatever torch raises, we must raise too
        with pytest.raises(type(e)):
            prog(ag, *args)
        return
    ours = _flat(prog(ag, *args))
    assert len(ours) == len(theirs)
    for i, (a, e) in enumerate(zip(ours, theirs)):
        if isinstance(e, torch.Tensor):
            assert_close(a, e, what=f"result {i}: ")
        else:
            assert a == e, f"result {i}: {a!r} != torch's {e!r}"


# ----------------------------------------------------------------- no_grad at every level
def test_no_grad_inside_nested_grads(torch):
    """Item 4: a value computed under no_grad() is constant to every reverse level."""
    def prog(M):
        def f(x):
            with M.no_grad():
                c = x.sin()
            return (x * c).sum()
        x = _f64(M, [0.5, -1.0])
        g2 = M.func.grad(lambda z: M.func.grad(f)(z).sum())(x)
        g3 = M.func.grad(lambda z: M.func.grad(lambda w: M.func.grad(f)(w).pow(2).sum())(z).sum())(x)
        h = M.func.hessian(f)(x)
        return g2, g3, h
    _same(torch, prog)


# ----------------------------------------------------------------- version counter, *_like
def test_version_is_an_int_shared_with_views(torch):
    def prog(M):
        x = _f64(M, [1.0, 2.0, 3.0])
        v = x[1:]
        v.mul_(2)
        x.add_(1)
        return [type(x._version).__name__, x._version, v._version, x.detach()._version]
    _same(torch, prog)


@pytest.mark.parametrize("transform", ["vmap", "grad", "jvp", "vmap_grad"])
def test_like_inside_transforms_is_a_real_fill(torch, transform):
    """zeros_like/ones_like/full_like inside transforms: exact fills (no NaN from inf inputs),
    batched like their input, so they can be written in place per example."""
    def prog(M):
        x = _f64(M, [[math.inf, 1.0, -2.0], [0.5, -math.inf, math.nan]])

        def f(z):
            a = M.zeros_like(z)
            a.copy_(z.exp() * 0.5)          # per-example write into the fill
            b = M.ones_like(z) * 2 + M.full_like(z, 3.0)
            return a + b + M.zeros_like(z, dtype=M.float32).double()

        finite = M.where(x.isfinite(), x, M.zeros_like(x))
        if transform == "vmap":
            return M.func.vmap(f)(x)
        if transform == "grad":
            return M.func.grad(lambda z: f(z).sum())(finite)
        if transform == "jvp":
            return M.func.jvp(f, (finite,), (M.ones_like(finite),))
        return M.func.vmap(M.func.grad(lambda z: f(z).sum()))(finite)
    _same(torch, prog)


# ----------------------------------------------------------------- in-place under grad levels
def _inplace_programs(M):
    """In-place writes on intermediates, clones and views, as functions of (x, y)."""
    def through_select(x, y):           # item 2
        t = x * 1.0
        t[0].mul_(y[0])
        return (t * x).sum()

    def through_transpose(x, y):        # item 2, a transposed view written twice
        t = (x * 1.0).reshape(1, 2)
        v = t.t()
        v[1].mul_(y[1])
        v.add_(y.reshape(2, 1))
        return (t * t).sum()

    def on_intermediate(x, y):          # item 3
        t = x * 1.0
        t.mul_(x)
        return t.sum() + (t * y).sum()

    def on_clone(x, y):                 # item 7: mul_ must not save the value it overwrites
        t = x.clone()
        t.mul_(y)
        return (t * t).sum()

    def setitem(x, y):
        t = x * y
        t[1] = x[0] * 3
        return (t * t.sin()).sum()

    def fill_view(x, y):
        t = x * 2
        t[0].fill_(3.0)
        return (t * t * y).sum()

    def sibling_views(x, y):            # a write through one view is seen through another
        t = (x * y).reshape(2, 1)
        a, b = t[0], t[:, 0]
        a.mul_(x[1])
        return (b * b).sum() + t.sum()

    def sin_chain(x, y):
        t = x.sin()
        t.sub_(y).div_(x * x + 1)
        t[0].tanh_()
        return (t * y).sum()

    def saved_output_overwritten(x, y):     # exp saves its result: torch refuses, so must we
        t = x.exp()
        t.sub_(y)
        return (t * y).sum()
    return [through_select, through_transpose, on_intermediate, on_clone, setitem, fill_view,
            sibling_views, sin_chain, saved_output_overwritten]


_PROGRAMS = [f.__name__ for f in _inplace_programs(ag)]


def _under(M, transform, f, x, y):
    fn = M.func
    if transform == "grad":
        return fn.grad(f, argnums=(0, 1))(x, y)
    if transform == "vjp":
        out, vjp_fn = fn.vjp(lambda a, b: f(a, b) * a, x, y)
        return out, vjp_fn(M.ones_like(out) * 0.5)
    if transform == "hessian":
        return fn.hessian(f, argnums=(0, 1))(x, y)
    if transform == "jacrev_jacrev":
        return fn.jacrev(fn.jacrev(f))(x, y)
    if transform == "vmap_grad":
        xs, ys = M.stack([x, x * 2, -x]), M.stack([y, y + 1, y * y])
        return fn.vmap(fn.grad(f, argnums=(0, 1)))(xs, ys)
    if transform == "grad_vmap":
        xs = M.stack([x, x * 2, -x])
        return fn.grad(lambda a: fn.vmap(f, in_dims=(0, None))(a, y).sum())(xs)
    if transform == "jvp_grad":
        return fn.jvp(fn.grad(f), (x, y), (y * 0.5, x - 1))
    if transform == "grad_jvp":
        if M is not ag:
            # torch's forward AD refuses some writes through views here (a version-counter
            # artifact); reverse over reverse computes the same derivative
            def jvp_of(a):
                ga, gy = fn.grad(f, argnums=(0, 1))(a, y)
                return ga.sum() + (gy * a).sum()
            return fn.grad(jvp_of)(x)
        return fn.grad(lambda a: fn.jvp(f, (a, y), (M.ones_like(a), a))[1])(x)
    raise AssertionError(transform)


@pytest.mark.parametrize("transform", ["grad", "vjp", "hessian", "jacrev_jacrev", "vmap_grad",
                                       "grad_vmap", "jvp_grad", "grad_jvp"])
@pytest.mark.parametrize("prog", _PROGRAMS)
def test_inplace_under_transforms(torch, transform, prog):
    """Items 2, 3, 7: in-place through views, on intermediates and on clones, under reverse
    transforms and their compositions, as torch.func computes them."""
    def run(M):
        f = dict(zip(_PROGRAMS, _inplace_programs(M)))[prog]
        x, y = _f64(M, [0.5, -1.0]), _f64(M, [2.0, 3.0])
        return _under(M, transform, f, x, y)
    _same(torch, run)


def test_inplace_on_grad_inputs_is_refused_as_torch(torch):
    for M in (ag, torch):
        x = _f64(M, [0.5, -1.0])
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            M.func.grad(lambda z: z.mul_(2).sum())(x)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            M.func.grad(lambda z: z[0].mul_(2).sum())(x)


# ----------------------------------------------------------------- writes into tensors made inside
def _made_inside_programs(M, x):
    """f(y) writing values of the transform into tensors created inside it from the untracked
    outer tensor `x` (item 8), by in-place ops, views, __setitem__ and factories."""
    def clone_mul(y):
        return x.clone().mul_(y)

    def zeros_copy(y):
        return M.zeros(2, dtype=M.float64).copy_(y) * y

    def setitem(y):
        t = x.clone()
        t[0] = y[1] * y[0]
        return t * t

    def zeros_like_setitem(y):
        t = M.zeros_like(x)
        t[1:] = y[:1].exp()
        return t + y

    def view_of_clone(y):
        t = x.clone()
        t[0].mul_(y[1])
        return t * y

    def view_made_before(y):             # a view taken before its base joined the level
        t = x * 2
        v = t[1:]
        t.add_(y)
        return v * y + t

    def tensor_factory(y):
        t = M.tensor([1.0, 2.0], dtype=M.float64)
        t.mul_(y).add_(x)
        return t.sin()
    return [clone_mul, zeros_copy, setitem, zeros_like_setitem, view_of_clone,
            view_made_before, tensor_factory]


_MADE_INSIDE = [f.__name__ for f in _made_inside_programs(ag, None)]


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
                                       "dual", "vmap_grad"])
@pytest.mark.parametrize("prog", _MADE_INSIDE)
def test_inplace_into_tensors_made_inside(torch, transform, prog):
    def run(M):
        x, y = _f64(M, [0.5, -1.0]), _f64(M, [2.0, 3.0])
        f = dict(zip(_MADE_INSIDE, _made_inside_programs(M, x)))[prog]
        fn = M.func
        if transform == "grad":
            return fn.grad(lambda a: f(a).sum())(y)
        if transform == "vjp":
            out, vjp_fn = fn.vjp(f, y)
            return out, vjp_fn(y * 0.5)
        if transform == "jvp":
            return fn.jvp(f, (y,), (x + 2,))
        if transform == "jacrev":
            return fn.jacrev(f)(y)
        if transform == "jacfwd":
            return fn.jacfwd(f)(y)
        if transform == "hessian":
            return fn.hessian(lambda a: f(a).sum())(y)
        if transform == "dual":
            fwAD = M.autograd.forward_ad
            with fwAD.dual_level():
                p, t = fwAD.unpack_dual(f(fwAD.make_dual(y, x + 2)))
                return p, t
        return fn.vmap(fn.grad(lambda a: f(a).sum()))(M.stack([y, y * 2]))
    _same(torch, run)


def test_inplace_into_captured_tensors_is_refused(torch):
    """As torch: a transform may not write into tensors it captured from outside."""
    for M in (ag, torch):
        x, y = _f64(M, [0.5, -1.0]), _f64(M, [2.0, 3.0])
        for f in (lambda a: x.mul_(a), lambda a: x[0].mul_(a[0]),
                  lambda a: x.__setitem__(0, a[0])):
            with pytest.raises(RuntimeError, match="captured Tensor"):
                M.func.grad(lambda a: (f(a), a.sum())[1])(y)
            with pytest.raises(RuntimeError, match="captured Tensor"):
                M.func.jvp(lambda a: (f(a), a * 1)[1], (y,), (y,))
        with pytest.raises(RuntimeError, match="vmap"):
            M.func.vmap(lambda a: x.clone().mul_(a))(M.stack([y, y]))
        assert x.tolist() == [0.5, -1.0]


# ----------------------------------------------------------------- reverse mode over dual tensors
def _dual_programs(M):
    fwAD = M.autograd.forward_ad

    def grad_of_dual(f):                 # item 6: autograd.grad on a dual, create_graph
        yy = _f64(M, [0.3, 1.0]).requires_grad_()
        with fwAD.dual_level():
            d = fwAD.make_dual(yy, _f64(M, [1.0, 2.0]))
            g, = M.autograd.grad(f(d).sum(), d, create_graph=True)
            p, t = fwAD.unpack_dual(g)
            g2, = M.autograd.grad((p * t).sum(), yy)
            return [d.requires_grad, p, t, g2]

    def requires_grad_on_dual(f):        # the dual itself made to require grad, then viewed
        x = _f64(M, [0.3, 1.0])
        with fwAD.dual_level():
            d = fwAD.make_dual(x, _f64(M, [1.0, 2.0]))
            d.requires_grad_(True)
            v = d.view_as(d)
            g, = M.autograd.grad(f(v).sum(), v, create_graph=True)
            return [x.requires_grad, d.requires_grad] + list(fwAD.unpack_dual(g))

    def backward_on_dual(f):             # .backward() reaches the leaf under the dual
        yy = _f64(M, [0.3, 1.0]).requires_grad_()
        with fwAD.dual_level():
            d = fwAD.make_dual(yy, _f64(M, [1.0, 2.0]))
            f(d).sum().backward()
        return yy.grad

    def intermediate_and_dual_cotangent(f):
        yy = _f64(M, [0.3, 1.0]).requires_grad_()
        with fwAD.dual_level():
            d = fwAD.make_dual(yy, _f64(M, [1.0, 2.0]))
            e = d.exp()
            out = f(e) * d
            v = fwAD.make_dual(_f64(M, [1.0, -1.0]), _f64(M, [0.5, 2.0]))
            ge, gd = M.autograd.grad(out, (e, d), v)
            return list(fwAD.unpack_dual(ge)) + list(fwAD.unpack_dual(gd))

    def graph_used_after_the_level(f):   # saved duals read as primals once the level ended
        yy = _f64(M, [0.3, 1.0]).requires_grad_()
        with fwAD.dual_level():
            out = f(fwAD.make_dual(yy, _f64(M, [1.0, 2.0]))).sum()
            p = fwAD.unpack_dual(out).primal
        g, = M.autograd.grad(p, yy)
        return g
    return [grad_of_dual, requires_grad_on_dual, backward_on_dual,
            intermediate_and_dual_cotangent, graph_used_after_the_level]


_DUAL_PROGRAMS = [f.__name__ for f in _dual_programs(ag)]
def _sin_function(M):
    class Sin(M.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return t * x.cos()
    return Sin.apply


_DUAL_FUNCS = {
    "sin_mul": lambda M, d: d.sin() * d,
    "tanh_chain": lambda M, d: (d.tanh() * 2).exp() / (d * d + 1),
    "view_sqrt": lambda M, d: d.reshape(2, 1).sigmoid()[:, 0] * d.sqrt() + d.t().expand(2, 2)[0],
    "function": lambda M, d: _sin_function(M)(d * d) * d,
}


@pytest.mark.parametrize("func", list(_DUAL_FUNCS))
@pytest.mark.parametrize("prog", _DUAL_PROGRAMS)
def test_reverse_mode_over_duals(torch, prog, func):
    """Item 6: eager autograd on dual tensors gives gradients with tangents (forward over
    reverse), as torch."""
    _same(torch, lambda M: dict(zip(_DUAL_PROGRAMS, _dual_programs(M)))[prog](
        lambda d: _DUAL_FUNCS[func](M, d)))


# ----------------------------------------------------------------- generated vmap rules, nested
def _cube(M, with_jvp=True):
    class Cube(M.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, y):
            return x ** 3 * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 3 * x ** 2 * y, g * x ** 3

        if with_jvp:
            @staticmethod
            def jvp(ctx, tx, ty):
                x, y = ctx.saved_for_forward
                return tx * 3 * x ** 2 * y + ty * x ** 3
    return Cube.apply


_NESTED_VMAP_CASES = {
    "jvp_vmap_vmap": lambda M, f, X, Y: M.func.jvp(
        M.func.vmap(M.func.vmap(f)), (X, Y), (M.ones_like(X), X)),
    "jvp_vmap_vmap_dims": lambda M, f, X, Y: M.func.jvp(
        M.func.vmap(M.func.vmap(f, in_dims=(0, None)), in_dims=(1, 0)), (X, Y[0]),
        (M.ones_like(X), Y[1])),
    "jacfwd_vmap": lambda M, f, X, Y: M.func.jacfwd(M.func.vmap(f))(X, Y),
    "hessian_vmap": lambda M, f, X, Y: M.func.hessian(
        lambda a: M.func.vmap(f, in_dims=(1, 1))(a, Y).sum())(X),
    "vjp_vmap_vmap_dims": lambda M, f, X, Y: M.func.vjp(
        M.func.vmap(M.func.vmap(f, in_dims=(None, 0)), in_dims=(1, 0)), X[0], Y)[1](X.t()),
    "vmap_vmap_jvp": lambda M, f, X, Y: M.func.vmap(M.func.vmap(
        lambda a, b: M.func.jvp(f, (a, b), (b, a))))(X, Y),
    "jacrev_vmap_vmap": lambda M, f, X, Y: M.func.jacrev(M.func.vmap(M.func.vmap(f)),
                                                         argnums=(0, 1))(X, Y),
}


@pytest.mark.parametrize("with_jvp", [True, False], ids=["jvp", "jvp_from_backward"])
@pytest.mark.parametrize("case", list(_NESTED_VMAP_CASES))
def test_generated_vmap_rule_under_forward_mode(torch, case, with_jvp):
    """Item 9: a Function with generate_vmap_rule=True under jvp/jacfwd of nested vmaps (each
    nested generated level keeps its own saved bdims). torch refuses these, so its oracle is
    the same composition of the plain function."""
    def run(M):
        X = M.arange(6, dtype=M.float64).reshape(2, 3) / 5 + 0.1
        Y = M.arange(6, dtype=M.float64).reshape(3, 2).t() / 7 - 0.2
        f = _cube(M, with_jvp) if M is ag else (lambda x, y: x ** 3 * y)
        return _NESTED_VMAP_CASES[case](M, f, X, Y)
    _same(torch, run)


# ----------------------------------------------------------------- derivatives stay in the graph
_DERIVATIVES = {
    "hessian_const": lambda M, z: M.func.hessian(lambda a: (a * a).sum())(z),
    "hessian_cubic": lambda M, z: M.func.hessian(lambda a: (a ** 3).sum())(z),
    "jacfwd_linear": lambda M, z: M.func.jacfwd(lambda a: 2 * a)(z),
    "jacfwd_sin": lambda M, z: M.func.jacfwd(M.sin)(z),
    "jvp_linear": lambda M, z: M.func.jvp(lambda a: 2 * a, (z,), (M.ones_like(z),))[1],
    "jvp_independent": lambda M, z: M.func.jvp(lambda a: M.ones_like(a) * 3, (z,),
                                               (M.ones_like(z),))[1],
    "jacrev_linear": lambda M, z: M.func.jacrev(lambda a: 2 * a)(z),
    "vmap_hessian_const": lambda M, z: M.func.vmap(M.func.hessian(lambda a: (a * a).sum()))(
        z.reshape(2, 1)),
    "dual_linear": lambda M, z: _dual_tangent(M, lambda d: 2 * d + 1, z),
    "dual_given": lambda M, z: _dual_tangent(M, lambda d: d, z),
}


def _dual_tangent(M, f, z):
    fwAD = M.autograd.forward_ad
    with fwAD.dual_level():
        return fwAD.unpack_dual(f(fwAD.make_dual(z, M.ones_like(z) * 2))).tangent


@pytest.mark.parametrize("case", list(_DERIVATIVES))
def test_derivatives_at_inputs_that_require_grad(torch, case):
    """Item 10: jvp/jacfwd/hessian at an input that requires grad give derivatives that can be
    differentiated again (zeros where they are constant), as torch; where torch's result does
    not require grad, neither does ours (and autograd.grad refuses alike)."""
    def run(M):
        z = _f64(M, [0.5, -1.0]).requires_grad_()
        d = _DERIVATIVES[case](M, z)
        return [d, d.requires_grad, M.autograd.grad((d * d).sum(), z)[0]]
    _same(torch, run)


# ----------------------------------------------------------------- which tangents require grad
# Composites of arraygrad whose torch op is one native forward formula (so torch's tangent reads
# primals ours does not, or the reverse), and torch overloads that decide it by argument.
_TANGENT_RG_DIFFERS = {
    "composite": {"lerp", "addcmul", "addcdiv", "index_add",
                  "hardtanh", "relu6", "threshold", "hardshrink", "softshrink", "batch_norm_train",
                  "batch_norm_eval", "instance_norm", "layer_norm", "group_norm",
                  "multi_head_attention_forward", "conv1d", "conv2d", "conv3d",
                  "conv_transpose1d", "conv_transpose2d", "avg_pool1d", "avg_pool2d",
                  "adaptive_avg_pool1d", "adaptive_avg_pool2d", "interpolate_bilinear", "median",
                  "nanmedian", "cat", "deg2rad_rad2deg", "addmv", "addr", "max_pool2d_vjp",
                  "trapezoid", "cumulative_trapezoid", "gradient", "gradient_coordinates"},
    "overload": {"pow_zero_exponent", "xlogy", "prod", "copysign", "copysign_method"},
    "not yet matched (ops merged late)": {"scatter_reduce_prod", "interpolate_antialias",
                                          "interpolate_bicubic",
                                          "linalg.slogdet"},
}


def _tangent_requires_grad(M, op, sample, with_grad, with_tangent):
    """requires_grad of each floating output's tangent, where float input `i` of `n` requires
    grad if `with_grad(i, n)` and carries a tangent if `with_tangent(i, n)`."""
    fwAD = M.autograd.forward_ad
    leaves = []
    args = [op_db.convert(M, a, np.float64, leaves) for a in sample.args]
    kwargs = {k: op_db.convert(M, v, np.float64, leaves) for k, v in sample.kwargs.items()}
    n = len(leaves)
    with fwAD.dual_level():
        new = {}
        for i, leaf in enumerate(leaves):
            p = leaf if with_grad(i, n) else leaf.detach()
            new[id(leaf)] = fwAD.make_dual(p, M.ones_like(p)) if with_tangent(i, n) else p

        def sub(v):
            return [sub(a) for a in v] if isinstance(v, list) else new.get(id(v), v)
        out = op.fn(M, *map(sub, args), **{k: sub(v) for k, v in kwargs.items()})
        tangents = [fwAD.unpack_dual(o).tangent for o in (out if isinstance(out, (tuple, list))
                                                          else [out])
                    if isinstance(o, M.Tensor) and o.dtype.is_floating_point]
        return [t is not None and t.requires_grad for t in tangents]


def test_tangents_require_grad_as_torchs(torch):
    """A tangent requires grad where torch's forward formula reads a primal that requires grad,
    also one whose own tangent is zero (`2 * a`, `a * b`), and not for linear ops (sum, cat,
    gather), nor for ops that read primals only to compare (where, clamp, maximum, amax, max):
    NOTE [tangents that require grad]. Checked over the op catalogue, with the tangent on every
    input, on the first only, and on the last with only the first requiring grad."""
    skip = set().union(*_TANGENT_RG_DIFFERS.values())
    modes = [(lambda i, n: True, lambda i, n: True), (lambda i, n: True, lambda i, n: i == 0),
             (lambda i, n: i == 0, lambda i, n: i == n - 1)]
    wrong, checked = [], 0
    for op in op_db.OPS:
        if not op.grad or op.name in skip:
            continue
        sample = next(op.samples(np.random.default_rng(zlib.crc32(op.name.encode()))))
        values = [a for v in sample.args + tuple(sample.kwargs.values())
                  for a in (v if isinstance(v, list) else [v])]
        n_float = sum(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in values)
        for k, (with_grad, with_tangent) in enumerate(modes[:1] if n_float == 1 else modes):
            try:
                theirs = _tangent_requires_grad(torch, op, sample, with_grad, with_tangent)
            except Exception:   # noqa: BLE001 - torch lacks forward AD for some ops
                continue
            ours = _tangent_requires_grad(ag, op, sample, with_grad, with_tangent)
            checked += 1
            if ours != theirs:
                wrong.append((op.name, k, ours, theirs))
    assert checked > 250 and not wrong, wrong


_TANGENT_PROGRAMS = {   # fuzz cases 787, 4322, 3393, 3117, 2303 (requires_grad was True)
    "where_masked_fill": lambda M, x, y: M.where(y > x, y * 2, x).masked_fill(x > 0.3, 0.0),
    "where_sum": lambda M, x, y: M.where(y > x, y * 2, x).sum(0),
    "maximum_clamp": lambda M, x, y: M.maximum(y, x).clamp(-0.5, 0.8),
    "amax": lambda M, x, y: M.amax(x, 0, keepdim=True),
    "copy_into_clone": lambda M, x, y: (x + y).clone().copy_(x),
    "mul_by_number": lambda M, x, y: 2 * x - y * 0.5,     # torch: True (wrapped numbers)
}


@pytest.mark.parametrize("transform", ["jvp", "jacfwd", "vmap_jvp", "dual"])
@pytest.mark.parametrize("prog", list(_TANGENT_PROGRAMS))
def test_tangents_of_programs_require_grad_as_torchs(torch, prog, transform):
    def run(M):
        f = _TANGENT_PROGRAMS[prog]
        x = _f64(M, [0.28, -0.5, 1.1]).requires_grad_()
        y = _f64(M, [0.9, -1.2, 0.3])
        t = M.ones_like(x)
        if transform == "jvp":
            d = M.func.jvp(lambda a: f(M, a, y), (x,), (t,))[1]
        elif transform == "jacfwd":
            d = M.func.jacfwd(lambda a: f(M, a, y))(x)
        elif transform == "vmap_jvp":
            d = M.func.vmap(lambda a, b: M.func.jvp(lambda u: f(M, u, b), (a,), (a,))[1])(
                x.reshape(3, 1), y.reshape(3, 1))
        else:
            d = _dual_tangent(M, lambda a: f(M, a, y), x)
        return [d, d.requires_grad]
    _same(torch, run)


_NESTED_FORWARD = {   # fuzz case 1439: jvp of hessian raised in autograd.grad
    "jacfwd_linear": lambda M, u: M.func.jacfwd(lambda a: 2 * a)(u),
    "jacfwd_where": lambda M, u: M.func.jacfwd(lambda a: M.where(a > 0, a, 2 * a))(u),
    "jacfwd_sum": lambda M, u: M.func.jacfwd(lambda a: a.sum())(u),
    "hessian": lambda M, u: M.func.hessian(lambda a: (a * a).sum() / 2 + a.sum())(u),
    "jacrev_linear": lambda M, u: M.func.jacrev(lambda a: 2 * a)(u),
}


@pytest.mark.parametrize("case", list(_NESTED_FORWARD))
def test_tangents_through_nested_forward_levels_require_grad_as_torchs(torch, case):
    """The zero-tangent term of an inner jvp level is a product with the primal, as torch's,
    so the level below sees the primal read: jvp of jacfwd/hessian at an input that requires
    grad gives a tangent that requires grad exactly where torch's does."""
    def run(M):
        y = _f64(M, [-0.6, -0.7, 1.31]).requires_grad_()
        o, t = M.func.jvp(lambda u: _NESTED_FORWARD[case](M, u), (y,), (_f64(M, [0.5, 1, 2]),))
        out = [t, t.requires_grad]
        if t.requires_grad:
            out.append(M.autograd.grad((t * t).sum(), y, allow_unused=True)[0])
        return out
    _same(torch, run)


def test_nested_forward_levels_over_autograd_grad_inside():
    """jvp of jvp (and of jacfwd) of a function that calls autograd.grad(create_graph=True)
    inside: each dual level saves its duals in the eager node in turn, so the backward sees
    both perturbations (fuzz cases 2748, 2756 gave zeros). torch refuses nested forward AD:
    compared with the exact derivative of the gradient g * cos(y)."""
    g = ag.tensor([-1.23, 0.74], dtype=ag.float64)

    def grad_of_sin(y):
        with ag.enable_grad():
            yr = y.clone().requires_grad_()
            return ag.autograd.grad(yr.sin(), yr, g, create_graph=True)[0]
    y, t = ag.tensor([0.71, -0.49], dtype=ag.float64), ag.tensor([1.0, 2.0], dtype=ag.float64)
    second = ag.func.jvp(lambda u: ag.func.jvp(grad_of_sin, (u,), (t,))[1], (y,), (t,))[1]
    assert_close(second, -g * y.cos() * t * t)
    jac = ag.func.jvp(ag.func.jacfwd(grad_of_sin), (y,), (t,))[1]
    assert_close(jac, ag.diag(-g * y.cos() * t))


# ----------------------------------------------------------------- make_dual inside vmap
@pytest.mark.parametrize("in_dims", [(0, 0), (1, 0), (None, 0), (0, None)])
def test_make_dual_inside_vmap_inside_dual_level(torch, in_dims):
    """make_dual on the examples of a vmap entered inside a dual level (torch has no batching
    rule for it): the same as vmap of func.jvp, which torch computes."""
    P = np.linspace(-1.0, 2.0, 6).reshape(2, 3)
    Tn = np.linspace(0.5, -0.5, 6).reshape(2, 3)

    def args(M):
        p, t = M.tensor(P, dtype=M.float64), M.tensor(Tn, dtype=M.float64)
        if in_dims[0] == 1:
            p = p.t().contiguous()
        return (p[0] if in_dims[0] is None else p), (t[0] if in_dims[1] is None else t)

    def f(M, x):
        return (x.sin() * x).cumsum(0) + x.exp().sum()

    def ours():
        fwAD = ag.autograd.forward_ad
        with fwAD.dual_level():
            out = ag.func.vmap(lambda p, t: fwAD.unpack_dual(f(ag, fwAD.make_dual(p, t))),
                               in_dims=in_dims)(*args(ag))
        return list(out)
    expected = torch.func.vmap(lambda p, t: torch.func.jvp(lambda x: f(torch, x), (p,), (t,)),
                               in_dims=in_dims)(*args(torch))
    for a, e in zip(ours(), expected):
        assert_close(a, e)


def test_requires_grad_inside_a_grad_transform_is_refused_as_torch(torch):
    # eager autograd inside func.vjp would record on a tape the transform never sees: silently
    # zero derivatives (fuzz case 357) where torch refuses
    for T in (ag, torch):
        def inner(y):
            yr = y.clone().requires_grad_()
            g, = T.autograd.grad(yr @ yr, yr, create_graph=True)
            return g
        y = T.tensor([-1.09, -0.97, 0.26], dtype=T.float64)
        with pytest.raises(RuntimeError, match="requires_grad_\\(\\)"):
            T.func.vjp(inner, y)


# ----------------------------------------------------------------- views of the batch level
VIEW_WRITES = {
    "select": lambda v: v[0],
    "slice": lambda v: v[:, 1:],
    "transpose": lambda v: v.t(),
    "view_of_view": lambda v: v[1:][0],
}


@pytest.mark.parametrize("view", VIEW_WRITES, ids=list(VIEW_WRITES))
@pytest.mark.parametrize("in_dims", [(0, 0), (None, 0), (1, 0)])
def test_write_into_a_view_of_a_batched_clone_under_vmap_grad(torch, view, in_dims):
    """A view taken at the batch level knows its base, so a grad level above that writes into
    it rewrites the base's history (fuzz cases 1107, 1202, 1740, 4932: zeros before)."""
    def prog(M):
        def f(x, y):
            v0 = y.clone()
            VIEW_WRITES[view](v0).mul_(x.mean())
            return (v0 * v0).sum()
        x = _f64(M, [[1.15, 0.86], [-1.01, 1.32]])
        y = _f64(M, [[[-1.16, -0.73], [0.4, 2.0]], [[-1.21, 1.11], [0.3, -0.2]]])
        if in_dims[0] is None:
            x = x[0]
        return M.func.vmap(M.func.grad(f, argnums=(0, 1)), in_dims=in_dims)(x, y)
    _same(torch, prog)


@pytest.mark.parametrize("transform", ["grad", "jacrev", "hessian", "jacfwd"])
@pytest.mark.parametrize("src", ["unbatched", "batched_outer", "lower_dtype"])
def test_broadcasting_write_under_nested_vmap_inside_a_grad_level(torch, transform, src):
    """A write whose value broadcasts into the written tensor is broadcast at the outermost
    level, so the grad level records a value of the written shape (fuzz case 5236 raised
    NumPy's "cannot reshape array of size 18 into shape (1,2,3)")."""
    def prog(M):
        def f(x, y):
            v0 = x.clone()
            v0.copy_(y)
            return v0
        inner = M.func.vmap(f, in_dims=(-1, None), out_dims=-2)
        outer = M.func.vmap(inner, in_dims=(-3, 0 if src == "batched_outer" else None), out_dims=-3)
        x = M.tensor(np.linspace(-2, 2.25, 18).reshape(2, 3, 3), dtype=M.float64)
        y = _f64(M, [1.5, 0.25] if src == "batched_outer" else 0.75)    # exact in float32
        if src == "lower_dtype":
            y = y.to(M.float32)

        def loss(y):
            o = outer(x, y)
            return (o * o).sum() / 2 + o.sum()
        t = getattr(M.func, transform)
        return t(loss)(y)
    _same(torch, prog)


@pytest.mark.parametrize("name", list(function_db.DB))
def test_nested_dual_levels_over_autograd_grad_through_custom_functions(name):
    """Two dual levels over a function that calls autograd.grad(create_graph=True) on a custom
    Function: the eager node saves the duals of both levels (fuzz case 5660 gave zeros).
    torch refuses nested forward AD: compared with three reverse passes."""
    fwAD = ag.autograd.forward_ad
    fn, make = function_db.DB[name]
    x = make()[0].detach()
    rest = [a.detach() for a in make()[1:]]
    w = ag.tensor(np.linspace(-1.2, 0.9, fn(x, *rest).numel()), dtype=ag.float64)
    t1, t2 = (ag.tensor(np.linspace(a, b, x.numel()), dtype=ag.float64).reshape(x.shape)
              for a, b in ((-0.9, 0.7), (1.1, -0.4)))

    def grad_of(u):
        with ag.enable_grad():
            ur = u.clone().requires_grad_()
            out = fn(ur, *rest)
            return ag.autograd.grad(out, ur, w.reshape(out.shape), create_graph=True)[0]

    def along(f, t):
        def g(u):
            with fwAD.dual_level():
                _, tangent = fwAD.unpack_dual(f(fwAD.make_dual(u, t)))
                return ag.zeros_like(u) if tangent is None else tangent
        return g
    def directional(g, t, xr):
        s = (g * t).sum()
        d = ag.autograd.grad(s, xr, create_graph=True, allow_unused=True)[0] \
            if s.requires_grad else None
        return ag.zeros_like(xr) if d is None else d
    xr = x.clone().requires_grad_()
    expected = directional(directional(grad_of(xr), t1, xr), t2, xr)
    assert_close(along(along(grad_of, t1), t2)(x), expected)


def test_a_function_writing_its_tangent_in_place_leaves_the_cloned_tangent_alone(torch):
    """A mark_dirty Function's jvp writes its tangent in place (as torch asks); the tangent of a
    clone is its own copy, so the tangent of the tensor cloned stays (fuzz case 743: doubled)."""
    def prog(M):
        ns = {"T": M}
        exec(transform_fuzz.PREAMBLE, ns)     # the fuzzer's Functions, for either library
        Scale_ = ns["Scale_"]

        def f(y):
            v = y.clone()
            Scale_.apply(v)
            return y.clone(), v
        y = _f64(M, [-0.71, 1.35])
        return M.func.jvp(f, (y,), (_f64(M, [1.34, -0.28]),))
    _same(torch, prog)


def test_vjp_of_a_view_written_through_its_base(torch):
    """A returned view whose base was written in place (or an in-place view op's result) is
    brought up to date while vjp's level runs; vjp_fn, run after it, gave zero cotangents
    (fuzz cases 208 and 512)."""
    def written(M, x):
        v = x * 1.0
        w = v[0]
        v.mul_(2)
        return w

    def transposed(M, x):
        v = x * 1.0
        v.t_()
        return v

    def prog(M, f):
        x = _f64(M, [[-0.43, 1.44, -0.25], [-0.5, -0.46, -0.53]])
        out, fn = M.func.vjp(lambda x: f(M, x), x)
        return out, fn(M.ones_like(out)), M.func.jacrev(lambda x: f(M, x))(x)
    _same(torch, prog, written)
    _same(torch, prog, transposed)
