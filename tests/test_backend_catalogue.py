"""The op catalogue on other array libraries: values and gradients equal NumPy's.

array_api_strict implements the Python array API standard and nothing more, so an impl that
calls a NumPy-only function (or returns a NumPy array) fails here: the seam's contract is the
standard plus the backend object's extras. On Dask every op and every gradient builds a lazy,
chunked graph whose computed values must be NumPy's.
"""
import numpy as np
import pytest

import arraygrad as ag
from op_db import OPS, cases, run


class _Lib:
    """`arraygrad` as op_db's `lib`, with `tensor` placing NumPy data in another library."""

    def __init__(self, place):
        self.place = place

    def __getattr__(self, name):
        return getattr(ag, name)

    def tensor(self, data, **kwargs):
        if isinstance(data, np.ndarray):
            data = self.place(data)
        return ag.tensor(data, **kwargs)


def _strict():
    xp = pytest.importorskip("array_api_strict")
    return _Lib(xp.asarray), type(xp.asarray(0))


def _dask():
    da = pytest.importorskip("dask.array")
    # two chunks along every dimension that has two elements or more
    return _Lib(lambda a: da.from_array(a, chunks=tuple(max(1, (s + 1) // 2) for s in a.shape))), \
        da.Array


LIBS = {"array_api_strict": _strict, "dask": _dask}


def _grads(lib, leaves, outs):
    rng = np.random.default_rng(1)
    pairs = [(o, lib.tensor(rng.standard_normal(tuple(o.shape)))) for o in outs
             if o.requires_grad]
    if not pairs or not leaves:
        return []
    return list(ag.autograd.grad([o for o, _ in pairs], leaves, [c for _, c in pairs],
                                 allow_unused=True))


def _same(got, ref, array_type, what):
    if ref is None:
        assert got is None or not np.any(got.detach().numpy()), what
        return
    assert isinstance(got._data, array_type), f"{what}: a {type(got._data).__name__}"
    assert got.dtype is ref.dtype and got.shape == ref.shape, what
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-12,
                               atol=1e-14, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("library", LIBS)
@pytest.mark.parametrize("op,sample", cases(OPS))
def test_catalogue(library, op, sample):
    lib, array_type = LIBS[library]()
    leaves, outs = run(ag, op, sample)
    l_leaves, l_outs = run(lib, op, sample)
    assert len(l_outs) == len(outs)
    for i, (s, r) in enumerate(zip(l_outs, outs)):
        _same(s, r, array_type, f"{op.name}{sample} output {i}")
    if op.grad:
        for i, (s, r) in enumerate(zip(_grads(lib, l_leaves, l_outs), _grads(ag, leaves, outs))):
            _same(s, r, array_type, f"{op.name}{sample} grad of input {i}")
