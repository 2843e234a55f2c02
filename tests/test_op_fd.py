"""Every differentiable op of the catalogue against finite differences, without torch.

The torch comparisons in test_ops.py skip where torch is absent; these keep every derivative rule
(backward, forward AD, second order) under test on a bare install.
"""
import pytest

import arraygrad as ag
from arraygrad.autograd import gradcheck, gradgradcheck
from op_db import OPS, as_function, cases, run

# float64 central differences are good to ~1e-9: tighter than gradcheck's defaults, so that a
# rule off by a small factor fails
RTOL, ATOL = 1e-6, 1e-7


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
    assert gradcheck(as_function(ag, op, sample), leaves, check_forward_ad=True, rtol=RTOL,
                     atol=ATOL, check_undefined_grad=False)


@pytest.mark.parametrize("op,sample", cases(OPS, lambda op: op.grad and op.gradgrad))
def test_second_derivatives_vs_finite_differences(op, sample):
    leaves = _checkable(op, sample)
    assert gradgradcheck(as_function(ag, op, sample), leaves, rtol=RTOL, atol=ATOL)
