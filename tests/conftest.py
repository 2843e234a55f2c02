"""Shared test helpers: torch as the oracle, conversions, comparisons.

Tests get torch from the `torch` fixture (the test skips where torch is absent) or from
`reference_torch()` as a module-level name (a test skips at its first use of torch). Without torch
only the tests that need it skip; the rest of a module still runs, and the summary says how many
skipped for lack of torch.
`ARRAYGRAD_TESTS_HIDE_TORCH=1` runs the suite as if torch were absent.
"""
import os
import sys

import numpy as np
import pytest

import arraygrad as ag

NO_TORCH = "torch is not installed (the reference this test compares with)"

class _HideTorch:
    """An import hook under which `import torch` fails as on a machine without torch."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch.") or name == "functorch":
            raise ModuleNotFoundError(f"No module named '{name}' (hidden by "
                                      "ARRAYGRAD_TESTS_HIDE_TORCH)", name=name)
        return None


if os.environ.get("ARRAYGRAD_TESTS_HIDE_TORCH"):
    sys.meta_path.insert(0, _HideTorch())


class _MissingTorch:
    """Stands for torch where it is absent: touching it skips the test that does."""

    def __getattr__(self, name):
        if name.startswith("__"):      # pytest's collection looks at module attributes
            raise AttributeError(name)
        pytest.skip(NO_TORCH, allow_module_level=True)


def reference_torch():
    try:
        import torch
    except ImportError:
        return _MissingTorch()
    return torch


@pytest.fixture
def torch():
    """torch for a test that compares with it; the test skips where torch is absent."""
    t = reference_torch()
    if isinstance(t, _MissingTorch):
        pytest.skip(NO_TORCH)
    return t


def pytest_terminal_summary(terminalreporter):
    missing = [r for r in terminalreporter.stats.get("skipped", ())
               if NO_TORCH in str(getattr(r, "longrepr", ""))]
    if missing:
        terminalreporter.write_line(f"{len(missing)} tests skipped for lack of torch")


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
