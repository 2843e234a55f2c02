"""Every op of the catalogue given complex inputs: torch's value and gradient, or an
exception (torch's type where torch refuses; NotImplementedError naming the op where
arraygrad has not verified it for complex), never a silently different value."""
import warnings

import numpy as np
import pytest

import arraygrad as ag
from op_db import OPS, first_cases, float_arrays


def _complex(sample):
    """The sample with each float array a + i b (b: a shuffled, shrunk copy of a)."""
    rng = np.random.default_rng(0)

    def c(v):
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            with np.errstate(all="ignore"):     # inf samples
                return np.asarray(v + 0.5j * rng.permutation(v.reshape(-1)).reshape(v.shape))
        if isinstance(v, list):
            return [c(a) for a in v]
        return v
    return [c(a) for a in sample.args], {k: c(v) for k, v in sample.kwargs.items()}


def _run(lib, op, args, kwargs):
    """(leaves, outputs, loss) of `op` on complex leaves; the loss is real."""
    leaves = []

    def conv(v):
        if isinstance(v, np.ndarray):
            if v.dtype.kind == "c":
                t = lib.tensor(v, requires_grad=True)
                leaves.append(t)
                return t
            return lib.tensor(v)
        if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
            return [conv(a) for a in v]
        return v
    out = op.fn(lib, *[conv(a) for a in args], **{k: conv(v) for k, v in kwargs.items()})
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
            if isinstance(o, (ag.Tensor, type(leaves[0]))) if leaves]
    loss = sum((o.real * 1.3 + o.imag * 0.7).sum() if o.is_complex() else o.sum()
               for o in outs if o.is_complex() or o.is_floating_point())
    return leaves, outs, loss


def _arr(t):
    t = t.detach()
    return np.asarray((t.resolve_conj() if hasattr(t, "resolve_conj") else t).numpy())


# torch's autograd refuses these for complex outputs; arraygrad's compositions of complex-
# verified primitives give the conjugate-Wirtinger gradient: their values are checked
TORCH_AUTOGRAD_REFUSES = "does not support automatic differentiation for outputs with complex"
CASES = first_cases(OPS, lambda op, s: op.grad and all(a.size for a in float_arrays(s)))


def _family(e):
    """torch's NotImplementedError is a RuntimeError: arraygrad may raise either there."""
    return RuntimeError if isinstance(e, RuntimeError) else type(e)


@pytest.mark.parametrize("op,sample", CASES)
def test_complex_input_matches_torch_or_raises(torch, op, sample):
    args, kwargs = _complex(sample)
    with warnings.catch_warnings(record=True) as t_warned:
        warnings.simplefilter("always")
        try:
            t_leaves, t_outs, t_loss = _run(torch, op, args, kwargs)
            t_exc = None
        except Exception as e:      # torch refuses complex here
            t_exc = e
        if t_exc is not None and TORCH_AUTOGRAD_REFUSES in str(t_exc):
            with torch.no_grad():
                t_leaves, t_outs, t_loss = _run(torch, op, args, kwargs)
            t_exc = None
    with warnings.catch_warnings(record=True) as a_warned:
        warnings.simplefilter("always")
        try:
            a_leaves, a_outs, a_loss = _run(ag, op, args, kwargs)
            a_exc = None
        except Exception as e:
            a_exc = e
    for w in (w for w in a_warned if "complex" in str(w.message)):   # casting to real, as torch
        assert any(str(v.message).startswith(str(w.message)) for v in t_warned), w
    if a_exc is not None:
        if t_exc is not None:
            assert isinstance(a_exc, _family(t_exc)), (a_exc, t_exc)
        else:
            assert isinstance(a_exc, RuntimeError) and "complex" in str(a_exc).lower(), a_exc
        return
    assert t_exc is None, f"torch refuses ({t_exc!r}) but arraygrad computes"
    assert len(a_outs) == len(t_outs)
    for a, t in zip(a_outs, t_outs):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(_arr(a), _arr(t), rtol=1e-9, atol=1e-10, equal_nan=True)
    if not isinstance(t_loss, torch.Tensor) or not t_loss.requires_grad:
        return
    t_grads = torch.autograd.grad(t_loss, t_leaves, allow_unused=True)
    try:
        a_grads = ag.autograd.grad(a_loss, a_leaves, allow_unused=True)
    except NotImplementedError as e:
        assert "complex" in str(e)
        return
    for a, t in zip(a_grads, t_grads):
        assert (a is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(_arr(a), _arr(t), rtol=1e-8, atol=1e-10)
