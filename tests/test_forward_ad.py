"""Forward-mode AD: every primitive's jvp rule, and the forward_ad API.

The op table runs each op under func.jvp and under forward_ad, comparing the
tangent with torch.func.jvp and with central finite differences (float64).
"""
import importlib
import pkgutil

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import forward_ad as fwAD
from arraygrad.core.dispatch import Primitive
from arraygrad.func import jvp
from arraygrad.func.jvp_level import JvpInterpreter

from conftest import reference_torch

torch = reference_torch()

# torch.func.jvp loads torch's jvp decompositions, which warn about torch.jit.script
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")


def _np(t):
    return np.array(t.detach().numpy(force=True))    # force: torch's zero tensors


def _close(a, e, rtol=1e-8, atol=1e-10, what=""):
    assert tuple(a.shape) == tuple(e.shape), f"{what}: shape {tuple(a.shape)} != {tuple(e.shape)}"
    assert str(a.dtype).split(".")[-1] == str(e.dtype).split(".")[-1], f"{what}: dtype"
    np.testing.assert_allclose(_np(a), _np(e), rtol=rtol, atol=atol, err_msg=what)


# ----------------------------------------------------------------- the op table
def pos(shape):
    return lambda r: r.uniform(0.5, 2.0, shape)


def normal(shape):
    return lambda r: r.standard_normal(shape)


def unit(shape):
    return lambda r: r.uniform(-0.9, 0.9, shape)


def away0(shape):
    """Normal values kept away from 0 (for kinks at 0)."""
    return lambda r: np.where(r.random(shape) < 0.5, -1, 1) * r.uniform(0.2, 2.0, shape)


def distinct(shape):
    """A permutation of spread values: no ties for max/min/sort-like ops."""
    return lambda r: r.permutation(np.prod(shape, dtype=int)).reshape(shape) * 0.37 + 0.1


def ints(high, shape):
    return lambda r: r.integers(0, high, shape)


IDX = np.array([2, 0, 2])
GIDX = np.array([[0, 1, 1, 0], [2, 2, 0, 1]])

# (name, f(lib, *tensors), input makers, options). `lib` is arraygrad or torch;
# index inputs (integer makers) are passed as constants, not differentiated.
OPS = [
    ("exp", lambda L, x: L.exp(x), [normal((3, 4))]),
    ("log", lambda L, x: L.log(x), [pos((5,))]),
    ("sqrt", lambda L, x: L.sqrt(x), [pos((5,))]),
    ("rsqrt", lambda L, x: L.rsqrt(x), [pos((5,))]),
    ("abs", lambda L, x: L.abs(x), [away0((5,))]),
    ("sign", lambda L, x: L.sign(x) * x, [away0((5,))]),
    ("tanh", lambda L, x: L.tanh(x), [normal((5,))]),
    ("sigmoid", lambda L, x: L.sigmoid(x), [normal((5,))]),
    ("relu", lambda L, x: L.relu(x), [away0((2, 3))]),
    ("sin", lambda L, x: L.sin(x), [normal((5,))]),
    ("cos", lambda L, x: L.cos(x), [normal((5,))]),
    ("tan", lambda L, x: L.tan(x), [unit((5,))]),
    ("log1p", lambda L, x: L.log1p(x), [pos((5,))]),
    ("expm1", lambda L, x: L.expm1(x), [normal((5,))]),
    ("log2", lambda L, x: L.log2(x), [pos((5,))]),
    ("log10", lambda L, x: L.log10(x), [pos((5,))]),
    ("asin", lambda L, x: L.asin(x), [unit((5,))]),
    ("acos", lambda L, x: L.acos(x), [unit((5,))]),
    ("atan", lambda L, x: L.atan(x), [normal((5,))]),
    ("sinh", lambda L, x: L.sinh(x), [normal((5,))]),
    ("cosh", lambda L, x: L.cosh(x), [normal((5,))]),
    ("erf", lambda L, x: L.erf(x), [normal((5,))]),
    ("floor", lambda L, x: L.floor(x) + x, [normal((5,))]),
    ("ceil", lambda L, x: L.ceil(x) * x, [normal((5,))]),
    ("round", lambda L, x: L.round(x) + x, [normal((5,))]),
    ("trunc", lambda L, x: L.trunc(x) + x, [normal((5,))]),
    ("neg", lambda L, x: -x, [normal((5,))]),
    ("reciprocal", lambda L, x: L.reciprocal(x), [pos((5,))]),
    ("square", lambda L, x: L.square(x), [normal((5,))]),
    ("convert", lambda L, x: x.to(L.float32).to(L.float64) * x, [normal((5,))],
     {"rtol": 1e-6, "fd": False}),
    ("add", lambda L, x, y: x + y, [normal((3, 1)), normal((4,))]),
    ("add_alpha", lambda L, x, y: L.add(x, y, alpha=2.5), [normal((3,)), normal((3,))]),
    ("sub", lambda L, x, y: x - y, [normal((2, 3)), normal((3,))]),
    ("mul", lambda L, x, y: x * y, [normal((2, 3)), normal((2, 1))]),
    ("mul_scalar", lambda L, x: x * 3.0, [normal((4,))]),
    ("div", lambda L, x, y: x / y, [normal((2, 3)), pos((3,))]),
    ("rdiv", lambda L, x: 2.0 / x, [pos((3,))]),
    ("pow", lambda L, x, y: x ** y, [pos((4,)), normal((4,))]),
    ("pow_scalar", lambda L, x: x ** 3, [normal((4,))]),
    ("rpow", lambda L, x: 2.0 ** x, [normal((4,))]),
    ("remainder", lambda L, x, y: L.remainder(x, y), [pos((4,)), pos((4,))]),
    ("maximum", lambda L, x, y: L.maximum(x, y), [distinct((4,)), normal((4,))]),
    ("atan2", lambda L, x, y: L.atan2(x, y), [normal((4,)), away0((4,))]),
    ("xlogy", lambda L, x, y: L.xlogy(x, y), [normal((4,)), pos((4,))]),
    ("fmod", lambda L, x, y: L.fmod(x, y), [normal((4,)), pos((4,))]),
    ("cumprod", lambda L, x: L.cumprod(x, 0), [normal((4,))]),
    ("minimum", lambda L, x, y: L.minimum(x, y), [distinct((4,)), normal((4,))]),
    ("clamp", lambda L, x: L.clamp(x, -0.5, 0.5), [away0((6,))]),
    ("clamp_min", lambda L, x: L.clamp(x, min=0.1), [away0((6,))]),
    ("where", lambda L, x, y: L.where(x > 0, x, y), [away0((5,)), normal((5,))]),
    ("sum", lambda L, x: x.sum(), [normal((3, 4))]),
    ("sum_dim", lambda L, x: x.sum(1, keepdim=True), [normal((3, 4))]),
    ("mean", lambda L, x: x.mean(0), [normal((3, 4))]),
    ("prod", lambda L, x: x.prod(), [normal((4,))]),
    ("prod_dim", lambda L, x: x.prod(1), [normal((2, 3))]),
    ("amax", lambda L, x: L.amax(x, 1), [distinct((3, 4))]),
    ("amin", lambda L, x: L.amin(x), [distinct((3, 4))]),
    ("aminmax", lambda L, x: L.stack(tuple(L.aminmax(x, dim=0))), [distinct((3, 4))]),
    ("max_all", lambda L, x: x.max(), [distinct((3, 4))]),
    ("min_all", lambda L, x: x.min(), [distinct((3, 4))]),
    ("max_dim", lambda L, x: x.max(1).values, [distinct((3, 4))]),
    ("min_dim", lambda L, x: x.min(0, keepdim=True)[0], [distinct((3, 4))]),
    ("logsumexp", lambda L, x: L.logsumexp(x, 1), [normal((3, 4))]),
    ("softmax", lambda L, x: L.softmax(x, 1), [normal((3, 4))]),
    ("log_softmax", lambda L, x: L.log_softmax(x, 0), [normal((3, 4))]),
    ("cumsum", lambda L, x: L.cumsum(x, 1), [normal((3, 4))]),
    ("var", lambda L, x: x.var(1), [normal((3, 4))]),
    ("std", lambda L, x: x.std(), [normal((3, 4))]),
    ("norm", lambda L, x: x.norm(), [normal((3, 4))]),
    ("reshape", lambda L, x: x.reshape(4, 3), [normal((3, 4))]),
    ("flatten", lambda L, x: x.flatten(), [normal((2, 3, 2))]),
    ("transpose", lambda L, x: x.transpose(0, 2), [normal((2, 3, 4))]),
    ("permute", lambda L, x: x.permute(2, 0, 1), [normal((2, 3, 4))]),
    ("movedim", lambda L, x: x.movedim(0, -1), [normal((2, 3, 4))]),
    ("unsqueeze", lambda L, x: x.unsqueeze(1), [normal((3, 4))]),
    ("squeeze", lambda L, x: x.squeeze(1), [normal((3, 1, 4))]),
    ("expand", lambda L, x: x.expand(2, 3, 4), [normal((3, 1))]),
    ("repeat", lambda L, x: x.repeat(2, 3), [normal((2, 2))]),
    ("clone", lambda L, x: x.clone(), [normal((3,))]),
    ("flip", lambda L, x: x.flip(0), [normal((3, 2))]),
    ("roll", lambda L, x: x.roll(1, 0), [normal((3, 2))]),
    ("cat", lambda L, x, y: L.cat([x, y], 1), [normal((2, 3)), normal((2, 2))]),
    ("stack", lambda L, x, y: L.stack([x, y], -1), [normal((2, 3)), normal((2, 3))]),
    ("split", lambda L, x: x.split(2, 1)[1], [normal((2, 5))]),
    ("narrow", lambda L, x: x.narrow(0, 1, 2), [normal((4, 2))]),
    ("diagonal", lambda L, x: L.diagonal(x, 1), [normal((3, 4))]),
    ("trace", lambda L, x: L.trace(x), [normal((3, 3))]),
    ("diag_embed", lambda L, x: L.diag(x), [normal((3,))]),
    ("getitem_basic", lambda L, x: x[1:, ::2], [normal((3, 4))]),
    ("getitem_int", lambda L, x: x[1], [normal((3, 4))]),
    ("getitem_adv", lambda L, x, i: x[i], [normal((4, 2)), ints(4, (5,))]),
    ("getitem_bool", lambda L, x: x[x > 0], [away0((6,))]),
    ("index_select", lambda L, x, i: L.index_select(x, 1, i), [normal((2, 4)), ints(4, (3,))]),
    ("take", lambda L, x, i: L.take(x, i), [normal((2, 3)), ints(6, (4,))]),
    ("gather", lambda L, x, i: L.gather(x, 1, i), [normal((2, 3)), ints(3, (2, 4))]),
    ("scatter_add", lambda L, x, i, s: L.scatter_add(x, 1, i, s),
     [normal((2, 3)), ints(3, (2, 4)), normal((2, 4))]),
    ("masked_fill", lambda L, x: x.masked_fill(x > 0, 0.5), [away0((6,))]),
    ("setitem", lambda L, x, v: _setitem(x, v), [normal((4, 3)), normal((3,))]),
    ("index_put_acc", lambda L, x, v: x.index_put((L.tensor([0, 2, 0]),), v, accumulate=True),
     [normal((4, 3)), normal((3, 3))]),
    ("index_add_zeros", lambda L, x: _index_add_zeros(L, x), [normal((3, 3))]),
    ("matmul", lambda L, x, y: x @ y, [normal((3, 4)), normal((4, 2))]),
    ("matmul_batched", lambda L, x, y: L.matmul(x, y), [normal((2, 3, 4)), normal((4, 2))]),
    ("mv", lambda L, x, y: L.mv(x, y), [normal((3, 4)), normal((4,))]),
    ("dot", lambda L, x, y: L.dot(x, y), [normal((4,)), normal((4,))]),
    ("outer", lambda L, x, y: L.outer(x, y), [normal((3,)), normal((2,))]),
    ("einsum", lambda L, x, y: L.einsum("ij,jk->ik", x, y), [normal((3, 4)), normal((4, 2))]),
]


def _setitem(x, v):
    y = x.clone()
    y[1] = v
    y[2:, 0] = v[:2] * 2
    return y


def _index_add_zeros(L, x):
    """zeros((4, 3)) with rows of x added at rows 0, 2, 0 (the transpose of indexing)."""
    rows = np.array([0, 2, 0])
    if L is ag:
        from arraygrad.ops.index import index_add_zeros
        return index_add_zeros(x, (4, 3), (rows,))
    return L.zeros(4, 3, dtype=x.dtype).index_put((L.tensor(rows),), x, accumulate=True)


def _inputs(makers, lib, seed):
    r = np.random.default_rng(seed)
    arrays = [m(r) for m in makers]
    return [lib.tensor(a) for a in arrays]


def _is_diff(a):
    return a.dtype.is_floating_point


def _call(fn, lib, diff, consts, args):
    """fn(lib, *inputs) with the differentiable inputs taken from `args`."""
    it = iter(args)
    full = [next(it) if d else c for d, c in zip(diff, consts)]
    return fn(lib, *full)


def _case(entry, seed=0):
    name, fn, makers = entry[:3]
    opts = entry[3] if len(entry) > 3 else {}
    xs = _inputs(makers, ag, seed)
    ts = _inputs(makers, torch, seed)
    diff = [_is_diff(x) for x in xs]
    r = np.random.default_rng(seed + 1)
    tangents = [r.standard_normal(tuple(x.shape)) for x, d in zip(xs, diff) if d]
    return name, fn, opts, xs, ts, diff, tangents


def _ag_jvp(fn, xs, diff, tangents):
    primals = tuple(x for x, d in zip(xs, diff) if d)
    ts = tuple(ag.tensor(t) for t in tangents)
    return jvp(lambda *a: _call(fn, ag, diff, xs, a), primals, ts)


@pytest.mark.parametrize("entry", OPS, ids=[e[0] for e in OPS])
def test_jvp_matches_torch_and_finite_differences(entry):
    name, fn, opts, xs, ts, diff, tangents = _case(entry)
    rtol = opts.get("rtol", 1e-8)
    out, tan = _ag_jvp(fn, xs, diff, tangents)
    t_primals = tuple(t for t, d in zip(ts, diff) if d)
    t_out, t_tan = torch.func.jvp(lambda *a: _call(fn, torch, diff, ts, a), t_primals,
                                  tuple(torch.tensor(t) for t in tangents))
    _close(out, t_out, rtol=rtol, what=f"{name} value")
    _close(tan, t_tan, rtol=rtol, atol=1e-9, what=f"{name} tangent")
    if not opts.get("fd", True):
        return
    # central differences along the tangent
    eps = 1e-6
    diff_xs = [_np(x) for x, d in zip(xs, diff) if d]
    plus = [ag.tensor(x + eps * t) for x, t in zip(diff_xs, tangents)]
    minus = [ag.tensor(x - eps * t) for x, t in zip(diff_xs, tangents)]
    fd = (_np(_call(fn, ag, diff, xs, plus)) - _np(_call(fn, ag, diff, xs, minus))) / (2 * eps)
    np.testing.assert_allclose(_np(tan), fd, rtol=max(rtol, 1e-5), atol=1e-6,
                               err_msg=f"{name} vs finite differences")


@pytest.mark.parametrize("entry", OPS[::7], ids=[e[0] for e in OPS[::7]])
def test_dual_level_matches_torch_forward_ad(entry):
    name, fn, opts, xs, ts, diff, tangents = _case(entry, seed=3)
    with fwAD.dual_level():
        it = iter(tangents)
        duals = [fwAD.make_dual(x, ag.tensor(next(it))) if d else x for x, d in zip(xs, diff)]
        p, t = fwAD.unpack_dual(fn(ag, *duals))
    with torch.autograd.forward_ad.dual_level():
        it = iter(tangents)
        duals = [torch.autograd.forward_ad.make_dual(x, torch.tensor(next(it))) if d else x for x, d in zip(ts, diff)]
        tp, tt = torch.autograd.forward_ad.unpack_dual(fn(torch, *duals))
    _close(p, tp, what=f"{name} primal")
    _close(t, tt, rtol=opts.get("rtol", 1e-8), atol=1e-9, what=f"{name} tangent")


def _primitives():
    import arraygrad.ops as ops
    seen = {}
    for m in pkgutil.iter_modules(ops.__path__):
        mod = importlib.import_module("arraygrad.ops." + m.name)
        for v in vars(mod).values():
            p = v if isinstance(v, Primitive) else getattr(v, "prim", None)
            if isinstance(p, Primitive) and p.differentiable:
                seen[p.name] = p
    return seen


def test_every_differentiable_primitive_has_a_jvp_rule():
    missing = sorted(n for n, p in _primitives().items() if p.jvp is None)
    assert not missing, f"primitives without a jvp rule: {missing}"


def test_op_table_covers_every_differentiable_primitive(monkeypatch):
    used = set()
    original = JvpInterpreter.process

    def spy(self, prim, *a):
        used.add(prim.name)
        return original(self, prim, *a)
    monkeypatch.setattr(JvpInterpreter, "process", spy)
    for entry in OPS:
        _, fn, _, xs, _, diff, tangents = _case(entry)
        _ag_jvp(fn, xs, diff, tangents)
    for param in _catalogue_cases():       # the op catalogue's jvp test covers a primitive too
        op, sample = param.values
        arrays = _float_arrays(sample)
        if arrays:
            _catalogue_jvp(ag, ag.func, op, sample, [np.ones(a.shape) for a in arrays])
    # an identity whose derivatives raise (torch's DelayedError): test_tensor_ops checks it
    refused = {"once_differentiable"}
    missing = sorted(set(_primitives()) - used - refused)
    assert not missing, f"add these primitives to the op catalogue (tests/op_db.py): {missing}"


def test_primitive_without_jvp_rule_names_itself():
    p = Primitive("my_op", lambda xp, x: x * 2, vjp=(lambda ctx, g: g * 2,))
    with pytest.raises(NotImplementedError, match="my_op"):
        jvp(p, (ag.ones(2),), (ag.ones(2),))


# ----------------------------------------------------------------- forward_ad API
def test_make_unpack_dual_and_level_exit():
    x, v = ag.tensor([1.0, 2.0, 3.0]), ag.tensor([1.0, 0.5, -1.0])
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        d = fwAD.make_dual(x, v)
        assert d.shape == x.shape and d.dtype == x.dtype
        u = fwAD.unpack_dual(d)
        # as torch: the primal is a view of x (not x itself), the tangent is v itself
        assert isinstance(u, fwAD.UnpackedDualTensor) and u.primal is not x and u.tangent is v
        assert u.primal._base is x
        y = d * d
        primal, tangent = fwAD.unpack_dual(y)
        np.testing.assert_allclose(_np(tangent), 2 * _np(x) * _np(v))
        assert fwAD.unpack_dual(x).tangent is None
    after = fwAD.unpack_dual(y)
    assert after.tangent is None
    np.testing.assert_allclose(_np(after.primal), _np(x) ** 2)
    np.testing.assert_allclose(_np(y + 1), _np(x) ** 2 + 1)     # usable after the level


def test_dual_tensor_prints_like_torch():
    for L, F in ((ag, fwAD), (torch, torch.autograd.forward_ad)):
        with F.dual_level():
            d = F.make_dual(L.tensor([1.0, 2.0]), L.tensor([0.5, 0.0])) * 2
            inside = repr(d)
        outside = repr(d)
        if L is ag:
            got = (inside, outside)
    assert got == (inside.replace("torch", "arraygrad"), outside)
    assert got[0] == "tensor([2., 4.], tangent=tensor([1., 0.]))"


def test_forward_ad_errors_match_torch():
    x = ag.ones(2)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    assert fwAD.unpack_dual(x) == (x, None)
    with fwAD.dual_level():
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(ag.tensor([1, 2]), x)
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, ag.ones(3))
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level"):
            fwAD.make_dual(fwAD.make_dual(x, x), x)
        with pytest.raises(RuntimeError, match="not the last one"):
            fwAD.exit_dual_level(level=5)


def test_enter_exit_dual_level_functions():
    lvl = fwAD.enter_dual_level()
    try:
        d = fwAD.make_dual(ag.tensor([2.0]), ag.tensor([1.0]))
        assert _np(fwAD.unpack_dual(ag.exp(d)).tangent) == pytest.approx(np.exp(2.0))
    finally:
        fwAD.exit_dual_level(level=lvl)
    assert fwAD.unpack_dual(d).tangent is None


def test_dual_level_as_decorator():
    @fwAD.dual_level()
    def f(x):
        return fwAD.unpack_dual(fwAD.make_dual(x, ag.ones_like(x)) ** 3).tangent
    np.testing.assert_allclose(_np(f(ag.tensor([1.0, 2.0]))), [3.0, 12.0])


def test_backward_through_forward_ad_matches_torch():
    """A tangent computed with forward AD is differentiable by ordinary backward."""
    a = np.array([0.3, -1.2, 2.0])
    outs = []
    for L, F in ((ag, fwAD), (torch, torch.autograd.forward_ad)):
        x = L.tensor(a, requires_grad=True)
        with F.dual_level():
            d = F.make_dual(x, L.ones(3, dtype=L.float64))
            t = F.unpack_dual(L.sin(d) * d).tangent
        t.sum().backward()
        outs.append(x.grad)
    _close(outs[0], outs[1])


def test_nested_dual_levels_give_second_derivatives():
    """Beyond PyTorch (it refuses nesting): each dual level is its own level."""
    x0 = ag.tensor([0.5, 1.5], dtype=ag.float64)
    with fwAD.dual_level():
        x = fwAD.make_dual(x0, ag.ones(2, dtype=ag.float64))
        with fwAD.dual_level() as inner:
            assert inner == 1
            y = fwAD.make_dual(x, ag.ones(2, dtype=ag.float64))
            z = ag.sin(y) * y
            primal, t_inner = fwAD.unpack_dual(z)
            # the outer level's tangent seen through the inner dual
            both = fwAD.unpack_dual(t_inner, level=0)
            outer_p, outer_t = fwAD.unpack_dual(z, level=0)
        d1, d2 = fwAD.unpack_dual(t_inner)
    xs = _np(x0)
    f1 = np.sin(xs) + xs * np.cos(xs)
    f2 = 2 * np.cos(xs) - xs * np.sin(xs)
    np.testing.assert_allclose(_np(d1), f1)
    np.testing.assert_allclose(_np(d2), f2)
    np.testing.assert_allclose(_np(fwAD.unpack_dual(both.primal).primal), f1)
    np.testing.assert_allclose(_np(fwAD.unpack_dual(both.tangent).primal), f2)
    np.testing.assert_allclose(_np(fwAD.unpack_dual(outer_t).primal), f1)


def test_inplace_on_dual_tensor_matches_torch():
    a, v = np.array([1.0, -2.0, 3.0, 0.5]), np.array([0.1, 0.2, -0.3, 1.0])
    res = []
    for L, F in ((ag, fwAD), (torch, torch.autograd.forward_ad)):
        with F.dual_level():
            x = F.make_dual(L.tensor(a), L.tensor(v)).clone()
            x.mul_(F.make_dual(L.tensor(v), L.tensor(a)))
            x[1:3].exp_()                   # through a view: the base's tangent changes too
            x[0] = 2.0                      # constant written: zero tangent there
            res.append(F.unpack_dual(x))
    _close(res[0].primal, res[1].primal)
    _close(res[0].tangent, res[1].tangent)


def test_inplace_through_views_of_views_matches_torch():
    a, v = np.arange(6.0).reshape(2, 3), np.full((2, 3), 0.5)
    res = []
    for L, F in ((ag, fwAD), (torch, torch.autograd.forward_ad)):
        with F.dual_level():
            x = F.make_dual(L.tensor(a), L.tensor(v)).clone()
            x.t()[1:][0].mul_(3)
            x.reshape(6)[4:].sin_()
            res.append(F.unpack_dual(x))
    _close(res[0].primal, res[1].primal)
    _close(res[0].tangent, res[1].tangent)


def test_views_see_writes_into_their_base_like_torch():
    """Views share the base's tangent (torch: shared storage); detach() shares neither."""
    a, v = np.arange(6.0).reshape(2, 3), np.full((2, 3), 0.5)
    res = []
    for L, F in ((ag, fwAD), (torch, torch.autograd.forward_ad)):
        with F.dual_level():
            x = F.make_dual(L.tensor(a), L.tensor(v)).clone()
            row, xt, d = x[1], x.t(), x.detach()
            x.mul_(x.detach() + 1)
            d.mul_(2)
            res.append([F.unpack_dual(t) for t in (row, xt, x, d)])
    for (p, t), (tp, tt) in zip(*res):
        _close(p, tp)
        assert (t is None) == (tt is None)
        if t is not None:
            _close(t, tt)


def test_inplace_with_itself():
    """x.mul_(x) on a dual: tangent 2 x t (torch 2.13 gives aliasing-dependent values here)."""
    with fwAD.dual_level():
        x = fwAD.make_dual(ag.tensor([1.0, -2.0]), ag.tensor([0.5, 3.0])).clone()
        x.mul_(x)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(x).tangent), [1.0, -12.0])


def test_setitem_dual_into_dual_with_zero_tangent():
    a, v = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0])
    res = []
    for L, F in ((ag, fwAD), (torch, torch.autograd.forward_ad)):
        with F.dual_level():
            d = F.make_dual(L.tensor(a[:2]), L.tensor(v[:2]))
            y = F.make_dual(L.zeros(3, dtype=L.float64), L.zeros(3, dtype=L.float64))
            y[1:] = d * 3
            res.append(F.unpack_dual(y))
    _close(res[0].tangent, res[1].tangent)


# ----------------------------------------------------------------- the shared op catalogue
def _catalogue_cases():
    import zlib
    from op_db import OPS as CATALOGUE
    cases = []
    for op in CATALOGUE:
        if op.grad:
            rng = np.random.default_rng(zlib.crc32(op.name.encode()))
            cases.extend(pytest.param(op, s, id=f"{op.name}-{i}")
                         for i, s in enumerate(op.samples(rng)))
    return cases


def _rebuild(lib, v, it):
    """Sample value -> lib's value, float arrays taken from the iterator of primals."""
    if isinstance(v, np.ndarray):
        return next(it) if v.dtype.kind == "f" else lib.tensor(v)
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return [_rebuild(lib, a, it) for a in v]
    return v


def _float_arrays(sample):
    out = []
    for v in list(sample.args) + list(sample.kwargs.values()):
        for a in (v if isinstance(v, list) else [v]):
            if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                out.append(a)
    return out


def _catalogue_jvp(lib, F, op, sample, tangents):
    def f(*ps):
        it = iter(ps)
        args = [_rebuild(lib, a, it) for a in sample.args]
        kwargs = {k: _rebuild(lib, v, it) for k, v in sample.kwargs.items()}
        out = op.fn(lib, *args, **kwargs)
        return tuple(out) if isinstance(out, (tuple, list)) else out
    primals = tuple(lib.tensor(a) for a in _float_arrays(sample))
    return F.jvp(f, primals, tuple(lib.tensor(t) for t in tangents))


@pytest.mark.parametrize("op,sample", _catalogue_cases())
def test_catalogue_jvp_matches_torch(op, sample):
    if "jvp" in op.torch_not_oracle:
        pytest.skip(op.torch_not_oracle["jvp"])
    arrays = _float_arrays(sample)
    if not arrays:
        pytest.skip("no float input")
    r = np.random.default_rng(7)
    tangents = [r.standard_normal(a.shape) for a in arrays]
    out, tan = _catalogue_jvp(ag, ag.func, op, sample, tangents)
    t_out, t_tan = _catalogue_jvp(torch, torch.func, op, sample, tangents)
    outs, t_outs = (out, t_out) if isinstance(out, tuple) else ((out,), (t_out,))
    tans, t_tans = (tan, t_tan) if isinstance(tan, tuple) else ((tan,), (t_tan,))
    assert len(outs) == len(t_outs)
    empty = min(x.size for x in arrays) == 0
    for i, (a, e) in enumerate(zip(tans, t_tans)):
        if empty and np.isnan(_np(e)).any() and not np.isnan(_np(a)).any():
            continue    # torch's tangent of a reduction over an empty dim is nan; ours is 0
        _close(a, e, rtol=max(op.rtol, 1e-9), atol=max(op.atol, 1e-10),
               what=f"{op.name}{sample} tangent {i}")


def _first_samples():
    import zlib
    from op_db import OPS as CATALOGUE
    cases = []
    for op in CATALOGUE:
        if op.grad and op.gradgrad:
            rng = np.random.default_rng(zlib.crc32(op.name.encode()))
            s = next((s for s in op.samples(rng)
                      if _float_arrays(s) and min(a.size for a in _float_arrays(s)) > 0), None)
            if s is not None and _has_float_output(op, s):
                cases.append(pytest.param(op, s, id=op.name))
    return cases


def _has_float_output(op, sample):
    it = iter(ag.tensor(a) for a in _float_arrays(sample))
    out = op.fn(ag, *[_rebuild(ag, a, it) for a in sample.args],
                **{k: _rebuild(ag, v, it) for k, v in sample.kwargs.items()})
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return any(o.dtype.is_floating_point for o in outs)


@pytest.mark.parametrize("op,sample", _first_samples())
def test_catalogue_forward_over_reverse_and_forward_over_forward(op, sample):
    """jvp of the vjp (the jvp rules of every vjp rule's ops) and jvp of jvp, vs torch."""
    for check in ("jvp", "forward_over"):
        if check in op.torch_not_oracle:
            pytest.skip(op.torch_not_oracle[check])
    arrays = _float_arrays(sample)
    r = np.random.default_rng(11)
    tangents = [r.standard_normal(a.shape) for a in arrays]
    res, ct_arrays = [], []
    for L, F in ((ag, ag.func), (torch, torch.func)):
        def f(*ps, L=L):
            it = iter(ps)
            args = [_rebuild(L, a, it) for a in sample.args]
            kwargs = {k: _rebuild(L, v, it) for k, v in sample.kwargs.items()}
            out = op.fn(L, *args, **kwargs)
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            return tuple(o for o in outs if o.dtype.is_floating_point)
        primals = tuple(L.tensor(a) for a in arrays)
        ts = tuple(L.tensor(t) for t in tangents)
        outs = f(*primals)
        ct_arrays = ct_arrays or [r.standard_normal(tuple(o.shape)) for o in outs]
        cts = tuple(L.tensor(c) for c in ct_arrays)

        def vjp_of(*ps, F=F, f=f, cts=cts):
            return F.vjp(f, *ps)[1](cts)

        def jvp_of(*ps, F=F, f=f, ts=ts):
            return F.jvp(f, ps, ts)[1]
        res.append((F.jvp(vjp_of, primals, ts)[1], F.jvp(jvp_of, primals, ts)[1]))
    (a_rev, a_fwd), (e_rev, e_fwd) = res
    for a, e in zip(a_rev + a_fwd, e_rev + e_fwd):
        _close(a, e, rtol=max(op.rtol, 1e-8), atol=max(op.atol, 1e-9), what=op.name)
