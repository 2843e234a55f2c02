"""gradcheck / gradgradcheck: pass on right Functions, fail readably on wrong ones (as torch)."""
import importlib
import warnings

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import gradcheck, gradgradcheck, GradcheckError

from conftest import reference_torch

torch = reference_torch()


def _torch_gradcheck_error():
    torch.autograd      # skips the test where torch is absent
    return importlib.import_module("torch.autograd.gradcheck").GradcheckError


def _x(M, *shape, seed=0, dtype=None, requires_grad=True):
    a = np.random.default_rng(seed).uniform(0.5, 1.5, shape)
    return M.tensor(a, dtype=dtype or M.float64, requires_grad=requires_grad)


def _product(M, wrong=None):
    """f(x, y, z) = (x * y * exp(z), x + z); `wrong` breaks one part of backward."""
    class Prod(M.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            ctx.save_for_backward(x, y, z)
            return x * y * z.exp(), x + z

        @staticmethod
        def backward(ctx, g, h):
            x, y, z = ctx.saved_tensors
            e = z.exp()
            gx = g * y * e + h
            gy = g * x * e
            gz = g * x * y * e + h
            if wrong == "sign":
                gx = -gx
            elif wrong == "factor":
                gy = 2 * gy
            elif wrong == "one_input":
                gz = g * x * e + h
            return gx, gy, gz
    return Prod


def _inputs(M, n=4):
    return tuple(_x(M, n, seed=s) for s in range(3))


def test_passes_on_correct_function_like_torch():
    assert torch.autograd.gradcheck(_product(torch).apply, _inputs(torch))
    assert gradcheck(_product(ag).apply, _inputs(ag))
    assert gradgradcheck(_product(ag).apply, _inputs(ag))


@pytest.mark.parametrize("wrong,input_index,hint", [
    ("sign", 0, "sign error"), ("factor", 1, "constant factor"), ("one_input", 2, None)])
def test_fails_readably_on_wrong_backward(wrong, input_index, hint):
    with pytest.raises(_torch_gradcheck_error()):
        torch.autograd.gradcheck(_product(torch, wrong).apply, _inputs(torch))
    with pytest.raises(GradcheckError) as info:
        gradcheck(_product(ag, wrong).apply, _inputs(ag))
    msg = str(info.value)
    assert f"Jacobian mismatch for output 0 with respect to input {input_index}" in msg
    assert "worst entries" in msg and "numerical" in msg and "analytical" in msg
    assert f"input {input_index}[" in msg and "-> output 0[" in msg
    if hint:
        assert hint in msg
    assert not gradcheck(_product(ag, wrong).apply, _inputs(ag), raise_exception=False)


def test_report_for_large_inputs_is_short():
    class Wrong(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            bad = ag.zeros(x.shape, dtype=x.dtype)
            bad[3, 4] = 1.0                 # one wrong entry among 400 x 400
            return g * x.cos() + bad * g
    x = _x(ag, 20, 20)
    with pytest.raises(GradcheckError) as info:
        gradcheck(Wrong.apply, (x,))
    msg = str(info.value)
    assert len(msg.splitlines()) < 15
    assert "1 of 160000 entries" in msg
    assert "input 0[3, 4] -> output 0[3, 4]" in msg


def test_error_type_and_import_paths():
    from arraygrad.autograd.gradcheck import GradcheckError as from_module
    assert from_module is GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    assert ag.autograd.gradcheck is gradcheck


def test_warns_for_single_precision_and_needs_an_input_requiring_grad():
    x = _x(ag, 3, dtype=ag.float32)
    with pytest.warns(UserWarning, match="not a double precision"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda t: t * 2, (_x(ag, 3, requires_grad=False),))


def _intermediate_saved(M):
    """First derivative right, second wrong: backward reads an intermediate with no history."""
    class Sq(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(2 * x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            two_x, = ctx.saved_tensors
            return g * two_x
    return Sq


def test_gradgradcheck_catches_a_wrong_second_derivative_like_torch():
    x_t = _x(torch, 3)
    assert torch.autograd.gradcheck(_intermediate_saved(torch).apply, (x_t,))
    with pytest.raises(_torch_gradcheck_error()):
        torch.autograd.gradgradcheck(_intermediate_saved(torch).apply, (x_t,))
    x = _x(ag, 3)
    assert gradcheck(_intermediate_saved(ag).apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradgradcheck(_intermediate_saved(ag).apply, (x,))


def _undefined_grad_breaks(M):
    class Two(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Two


def test_check_undefined_grad_like_torch():
    # backward gets None for the undefined grad and fails on it, in both libraries
    with pytest.raises(TypeError):
        torch.autograd.gradcheck(_undefined_grad_breaks(torch).apply, (_x(torch, 3),))
    with pytest.raises(TypeError):
        gradcheck(_undefined_grad_breaks(ag).apply, (_x(ag, 3),))
    assert gradcheck(_undefined_grad_breaks(ag).apply, (_x(ag, 3),), check_undefined_grad=False)


def test_nondeterministic_backward_is_caught():
    class Noisy(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 + ag.randn(g.shape, dtype=g.dtype) * 1e-7
    opts = dict(check_undefined_grad=False)
    with pytest.raises(GradcheckError, match="not reentrant"):
        gradcheck(Noisy.apply, (_x(ag, 3),), **opts)
    assert gradcheck(Noisy.apply, (_x(ag, 3),), nondet_tol=1e-5, **opts)


def _with_jvp(M, wrong=False):
    class Sin(M.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return t * x.cos() * (3 if wrong else 1)
    return Sin


def test_check_forward_ad_like_torch():
    opts = dict(check_forward_ad=True)
    assert torch.autograd.gradcheck(_with_jvp(torch).apply, (_x(torch, 4),), **opts)
    assert gradcheck(_with_jvp(ag).apply, (_x(ag, 4),), **opts)
    with pytest.raises(_torch_gradcheck_error()):
        torch.autograd.gradcheck(_with_jvp(torch, True).apply, (_x(torch, 4),), **opts)
    with pytest.raises(GradcheckError, match="forward AD"):
        gradcheck(_with_jvp(ag, True).apply, (_x(ag, 4),), **opts)
    assert gradcheck(_with_jvp(ag).apply, (_x(ag, 4),), check_forward_ad=True,
                     check_backward_ad=False, check_batched_forward_grad=True)


def test_check_batched_grad():
    assert gradcheck(_product(ag).apply, _inputs(ag), check_batched_grad=True)
    assert gradcheck(lambda x: (x.exp() * x).sum(0), (_x(ag, 3, 2),), check_batched_grad=True)


def test_fast_mode():
    assert gradcheck(_product(ag).apply, _inputs(ag), fast_mode=True)
    with pytest.raises(GradcheckError, match="fast mode"):
        gradcheck(_product(ag, "factor").apply, _inputs(ag), fast_mode=True)


def test_seed_usage_with_keyword_options():
    x = _x(ag, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradcheck(lambda t: 1 / (1 + ag.exp(-t)), (x,), eps=1e-6, atol=1e-4)


def test_fwd_over_rev_checks_the_function_jvp_in_backward():
    # the Function's backward calls cos, whose forward rule fwd-over-rev checks; its own
    # (wrong) jvp is what gradcheck(check_forward_ad=True) sees, not gradgradcheck
    inputs = (_x(ag, 3),)
    assert gradgradcheck(_with_jvp(ag).apply, inputs, check_fwd_over_rev=True)
    assert gradgradcheck(_with_jvp(ag, wrong=True).apply, inputs, check_fwd_over_rev=True)


def test_gradgradcheck_batched_with_an_unused_input():
    # d(x * y)/dx = y does not depend on x: its batched grad must come back as None
    x, y = _x(ag, 3), _x(ag, 3, seed=1)
    assert gradgradcheck(lambda a, b: a * b, (x, y), check_batched_grad=True)


# ---------------------------------------------------------------- wrong Functions, every mode
BUGS = ["none_", "scale", "swap", "missing", "shape", "extra", "few", "dtype", "nan"]


def _function_with(lib, bug):
    """x * sin(y) as a custom Function whose backward has `bug` (none_: correct)."""
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y.sin()

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            gx, gy = g * y.sin(), g * x * y.cos()
            if bug == "scale":
                gx = gx * 1.01      # off by 1%: fast mode must see it too
            elif bug == "swap":
                gx, gy = gy, gx
            elif bug == "missing":
                gy = None
            elif bug == "shape":
                gx = gx.sum()
            elif bug == "dtype":
                gx = gx.float()
            elif bug == "nan":
                gx = gx * float("nan")
            elif bug == "extra":
                return gx, gy, None
            elif bug == "few":
                return gx
            return gx, gy
    return F


@pytest.mark.parametrize("bug", BUGS)
@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_wrong_functions_caught_as_by_torch(torch, bug, check, fast_mode):
    outcomes = []
    rng = np.random.default_rng(0)
    x0, y0 = rng.standard_normal(3), rng.standard_normal(3)
    for lib in (torch, ag):
        f = _function_with(lib, bug).apply
        ins = (lib.tensor(x0, requires_grad=True), lib.tensor(y0, requires_grad=True))
        try:
            outcomes.append(getattr(lib.autograd, check)(f, ins, fast_mode=fast_mode))
        except RuntimeError:        # GradcheckError is one in both
            outcomes.append("RuntimeError")
        except Exception as e:
            outcomes.append(type(e).__name__)
    assert outcomes[1] == outcomes[0]
