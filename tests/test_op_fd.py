"""Every differentiable op of the catalogue against finite differences, without torch.

The torch comparisons in test_ops.py skip where torch is absent; these keep every derivative rule
(backward, forward AD, second order) under test on a bare install.
"""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import gradcheck, gradgradcheck
from op_db import OPS, cases, run

# float64 central differences are good to ~1e-9: tighter than gradcheck's defaults, so that a
# rule off by a small factor fails
RTOL, ATOL = 1e-6, 1e-7


def _function(op, sample):
    """`op` as a function of its float leaves, the other sample values fixed."""
    def f(*leaves):
        it = iter(leaves)

        def put(v):
            if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                return next(it)
            if isinstance(v, np.ndarray):
                return ag.tensor(v)
            if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
                return [put(a) for a in v]
            return v
        args = [put(a) for a in sample.args]
        kwargs = {k: put(v) for k, v in sample.kwargs.items()}
        out = op.fn(ag, *args, **kwargs)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return tuple(o for o in outs if o.dtype.is_floating_point)
    return f


def _checkable(op, sample):
    if not sample.smooth:
        pytest.skip("a kink or tie: torch's convention, checked against torch in test_ops")
    leaves, outs = run(ag, op, sample)
    if not leaves or not any(o.requires_grad for o in outs):
        pytest.skip("no differentiable output")
    return leaves


@pytest.mark.parametrize("op,sample", cases(OPS, lambda op: op.grad))
def test_grad_and_forward_ad_vs_finite_differences(op, sample):
    leaves = _checkable(op, sample)
    assert gradcheck(_function(op, sample), leaves, check_forward_ad=True, rtol=RTOL, atol=ATOL,
                     check_undefined_grad=False)


@pytest.mark.parametrize("op,sample", cases(OPS, lambda op: op.grad and op.gradgrad))
def test_second_derivatives_vs_finite_differences(op, sample):
    leaves = _checkable(op, sample)
    assert gradgradcheck(_function(op, sample), leaves, rtol=RTOL, atol=ATOL)
