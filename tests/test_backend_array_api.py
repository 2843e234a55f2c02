"""The op catalogue on array_api_strict arrays: values and gradients equal NumPy's.

array_api_strict implements the Python array API standard and nothing more, so an impl that
calls a NumPy-only function (or returns a NumPy array) fails here: the seam's contract is the
standard plus the backend object's extras.
"""
import numpy as np
import pytest

import arraygrad as ag
from op_db import OPS, cases, run

xp = pytest.importorskip("array_api_strict")


class _Strict:
    """`arraygrad` as op_db's `lib`, with `tensor` placing NumPy data in array_api_strict."""

    def __getattr__(self, name):
        return getattr(ag, name)

    @staticmethod
    def tensor(data, **kwargs):
        if isinstance(data, np.ndarray):
            data = xp.asarray(data)
        return ag.tensor(data, **kwargs)


STRICT = _Strict()


def _grads(lib, leaves, outs):
    rng = np.random.default_rng(1)
    pairs = [(o, lib.tensor(rng.standard_normal(tuple(o.shape)))) for o in outs
             if o.requires_grad]
    if not pairs or not leaves:
        return []
    return list(ag.autograd.grad([o for o, _ in pairs], leaves, [c for _, c in pairs],
                                 allow_unused=True))


def _same(strict, ref, what):
    if ref is None:
        assert strict is None or not np.any(strict.detach().numpy()), what
        return
    assert isinstance(strict._data, type(xp.asarray(0))), f"{what}: a {type(strict._data).__name__}"
    assert strict.dtype is ref.dtype and strict.shape == ref.shape, what
    np.testing.assert_allclose(strict.detach().numpy(), ref.detach().numpy(), rtol=1e-12,
                               atol=1e-14, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("op,sample", cases(OPS))
def test_catalogue_on_array_api_strict(op, sample):
    leaves, outs = run(ag, op, sample)
    s_leaves, s_outs = run(STRICT, op, sample)
    assert len(s_outs) == len(outs)
    for i, (s, r) in enumerate(zip(s_outs, outs)):
        _same(s, r, f"{op.name}{sample} output {i}")
    if op.grad:
        for i, (s, r) in enumerate(zip(_grads(STRICT, s_leaves, s_outs), _grads(ag, leaves, outs))):
            _same(s, r, f"{op.name}{sample} grad of input {i}")
