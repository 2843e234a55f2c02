"""Shared test helpers: torch as the oracle, conversions, comparisons.

Tests get `torch` from `pytest.importorskip` (per module, or the `torch`
fixture), so the suite skips cleanly where torch is not installed.
"""
import numpy as np
import pytest

import arraygrad as ag


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def to_numpy(t):
    """A NumPy copy of an arraygrad or torch tensor (None stays None)."""
    if t is None:
        return None
    return np.array(t.detach().numpy(force=True))


def dtype_name(d):
    """'float64' for both arraygrad.float64 and torch.float64."""
    return str(d).split(".")[-1]


def assert_close(actual, expected, rtol=1e-10, atol=1e-12, check_dtype=True, what=""):
    """Compare an arraygrad tensor with a torch tensor: shape, dtype and values."""
    a, e = to_numpy(actual), to_numpy(expected)
    assert tuple(actual.shape) == tuple(expected.shape), \
        f"{what}shape {tuple(actual.shape)} != torch's {tuple(expected.shape)}"
    if check_dtype:
        assert dtype_name(actual.dtype) == dtype_name(expected.dtype), \
            f"{what}dtype {actual.dtype} != torch's {expected.dtype}"
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, e, err_msg=what)


def pair(torch, array, requires_grad=None):
    """The same values as an arraygrad tensor and a torch tensor."""
    array = np.asarray(array)
    if requires_grad is None:
        requires_grad = array.dtype.kind == "f"
    a = ag.tensor(array.copy(), requires_grad=requires_grad)
    t = torch.tensor(array.copy(), requires_grad=requires_grad)
    return a, t
