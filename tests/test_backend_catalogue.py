"""The op catalogue on other array libraries: values and gradients equal NumPy's.

array_api_strict implements the Python array API standard and nothing more, so an impl that
calls a NumPy-only function (or returns a NumPy array) fails here: the seam's contract is the
standard plus the backend object's extras. On Dask every op and every gradient builds a lazy,
chunked graph whose computed values must be NumPy's.

CI runs each op's first sample on both libraries (about 20 s for Dask on two cores);
`ARRAYGRAD_TESTS_BACKENDS=full` runs every sample (about 5 minutes). Ops that cannot pass yet
are listed in NOT_YET with the reason: CI does not run them, the full run expects them to fail
(its passing samples show as XPASS), and a new op that fails fails CI.
"""
import os

import numpy as np
import pytest

import arraygrad as ag
from op_db import OPS, cases, run


class _Lib:
    """`arraygrad` as op_db's `lib`, with `tensor` placing NumPy data (and sequences) in another
    library, and the creation functions that samples call giving tensors of that library (as
    torch's would with `device=`)."""

    _CREATION = ("eye", "ones", "zeros", "tril_indices", "triu_indices")

    def __init__(self, place):
        self.place = place

    def __getattr__(self, name):
        fn = getattr(ag, name)
        if name not in self._CREATION:
            return fn
        return lambda *args, **kwargs: self._placed(fn(*args, **kwargs))

    def _placed(self, t):
        return ag.tensor(self.place(t.detach().numpy()), requires_grad=t.requires_grad)

    def tensor(self, data, **kwargs):
        if isinstance(data, np.ndarray):
            return ag.tensor(self.place(data), **kwargs)
        if isinstance(data, (list, tuple)):
            return self._placed(ag.tensor(data, **kwargs))
        return ag.tensor(data, **kwargs)


def _strict():
    xp = pytest.importorskip("array_api_strict")
    return _Lib(xp.asarray), type(xp.asarray(0))


def _dask():
    da = pytest.importorskip("dask.array")
    # two chunks along every dimension that has two elements or more
    return _Lib(lambda a: da.from_array(a, chunks=tuple(max(1, (s + 1) // 2) for s in a.shape))), \
        da.Array


FULL = os.environ.get("ARRAYGRAD_TESTS_BACKENDS") == "full"
LIBS = {"array_api_strict": _strict, "dask": _dask}

NOT_YET = {
    'array_api_strict': {},
    'dask': {},
}
_REASON = {lib: {op: why for why, ops in by.items() for op in ops} for lib, by in NOT_YET.items()}


def _params():
    out = []
    for p in cases(OPS):
        op, sample = p.values
        if not FULL and not p.id.endswith("-0"):
            continue
        for lib in LIBS:
            why = _REASON[lib].get(op.name)
            marks = [pytest.mark.xfail(reason=why, strict=not FULL, run=FULL)] if why else []
            out.append(pytest.param(lib, op, sample, id=f"{p.id}-{lib}", marks=marks))
    return out


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


@pytest.mark.parametrize("library,op,sample", _params())
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


def test_strict_scalars_and_slices_beyond_the_size():
    xp = pytest.importorskip("array_api_strict")
    x = ag.tensor(xp.asarray(np.arange(6.0).reshape(2, 3)))
    assert (x + True).numpy().tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert x[5:10].shape == (0, 3) and x[:, 1:9].numpy().tolist() == [[1.0, 2.0], [4.0, 5.0]]


@pytest.mark.parametrize("library", sorted(LIBS))
def test_new_tensors_stay_in_the_library(library):
    """new_zeros, new_tensor & co keep the tensor's array library (as torch keeps its device),
    its dtype unless given, and honour requires_grad."""
    lib, array_type = LIBS[library]()
    x = lib.tensor(np.ones((2, 3), dtype=np.float32))
    made = {"new_zeros": (x.new_zeros(2, 3), 0.0), "new_ones": (x.new_ones((4,)), 1.0),
            "new_full": (x.new_full((2,), 7), 7.0), "new_empty": (x.new_empty(3), None)}
    for name, (t, value) in made.items():
        assert isinstance(t._data, array_type) and t.dtype is ag.float32, name
        assert value is None or (t.numpy() == value).all(), name
    t = x.new_zeros(2, dtype=ag.int64, requires_grad=False)
    assert isinstance(t._data, array_type) and t.dtype is ag.int64
    assert x.new_ones(3, dtype=ag.float64, requires_grad=True).requires_grad
    assert isinstance(x.new_zeros(2, device="cpu")._data, array_type)     # its own device
    t = x.new_tensor([[1, 2]])
    assert isinstance(t._data, array_type) and t.dtype is ag.float32
    assert t.numpy().tolist() == [[1.0, 2.0]] and not t.requires_grad
    assert x.new_tensor(np.arange(2.0), dtype=ag.float64, requires_grad=True).requires_grad
    x.requires_grad_()
    g, = ag.autograd.grad((x * 2).sum(), [x], [1.0])       # a number as grad_output
    assert isinstance(g._data, array_type)
