"""The forward_ad API: dual levels, make/unpack_dual, views and in-place ops on duals.

Every op's jvp rule is checked by the op catalogue: against torch in test_ops.py, against finite
differences in test_op_fd.py and through vmap in test_op_transforms.py.
"""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import forward_ad as fwAD

from conftest import reference_torch

torch = reference_torch()


def _np(t):
    return np.array(t.detach().numpy(force=True))    # force: torch's zero tensors


def _close(a, e, rtol=1e-8, atol=1e-10, what=""):
    assert tuple(a.shape) == tuple(e.shape), f"{what}: shape {tuple(a.shape)} != {tuple(e.shape)}"
    assert str(a.dtype).split(".")[-1] == str(e.dtype).split(".")[-1], f"{what}: dtype"
    np.testing.assert_allclose(_np(a), _np(e), rtol=rtol, atol=atol, err_msg=what)


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
