"""Impls written with the array API standard, for libraries other than NumPy, agree with
NumPy's own rules and functions at the cases the op catalogue's samples do not reach: every
kind of index (get and set, repeated indices), and fmod, heaviside, nan_to_num at signed
zeros, infinities and NaN. They run on array_api_strict, which refuses anything outside the
standard."""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.ops import _indexing

xs = pytest.importorskip("array_api_strict")

X = np.arange(4 * 5 * 6, dtype=np.float64).reshape(4, 5, 6)
INDICES = {
    "array": (np.array([0, 3, -1]),),
    "slice, 2-d array": (slice(1, None), np.array([[2, 1], [0, 4]])),
    "arrays apart": (np.array([0, 3]), slice(None), np.array([1, 0])),
    "arrays together": (slice(None), np.array([1, 0]), np.array([[2], [3]])),
    "int with array": (1, slice(None), np.array([1, 2])),
    "0-d array with array": (np.array(1), slice(None), np.array([1, 1])),
    "mask": (np.array([True, False, True, True]),),
    "2-d mask": (slice(None), X[0] % 3 == 0),
    "None and ellipsis": (None, np.array([1, 2]), Ellipsis, np.array([0, 5])),
    "None between arrays": (np.array([1]), None, np.array([2])),
    "empty array": (slice(None), slice(1, 3), np.array([], dtype=np.int64)),
    "bool scalar": (True,),
    "ints only": (1, None, slice(2, 4)),
    "repeated": (np.array([0, 2, 0, 0]), 1),
}


def _strict(index):
    return tuple(xs.asarray(i) if isinstance(i, np.ndarray) else i for i in index)


@pytest.mark.parametrize("index", INDICES.values(), ids=INDICES.keys())
def test_getitem_and_setitem_follow_numpy(index):
    ref = X[index]
    got = np.asarray(_indexing.getitem(xs, xs.asarray(X), _strict(index)))
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)
    rng = np.random.default_rng(0)
    for values in (rng.standard_normal(ref.shape), rng.standard_normal(ref.shape[-1:])):
        want = X.copy()
        want[index] = values        # NumPy: the last write wins where an index repeats
        out = _indexing.setitem(xs, xs.asarray(X), _strict(index), xs.asarray(values))
        np.testing.assert_array_equal(np.asarray(out), want)


def test_indexing_a_library_tensor_with_a_list_and_tensors():
    x = ag.tensor(xs.asarray(X))
    assert isinstance(x[[0, 2], :, ag.tensor(xs.asarray([1, 1]))]._data, type(xs.asarray(0)))
    np.testing.assert_array_equal(x[[0, 2], 1:3].numpy(), X[[0, 2], 1:3])
    y = x.clone()
    y[ag.tensor(xs.asarray([3, 0])), 2] = 7.0
    want = X.copy()
    want[[3, 0], 2] = 7.0
    np.testing.assert_array_equal(y.numpy(), want)


EDGE = np.array([-0.0, 0.0, -3.5, 3.5, 7.0, -7.0, np.inf, -np.inf, np.nan, 1e300, -1e-300])


@pytest.mark.parametrize("name,fn", [
    ("fmod", lambda lib, x, y: lib.fmod(x, y)),
    ("heaviside", lambda lib, x, y: lib.heaviside(x, y)),
    ("nan_to_num", lambda lib, x, y: lib.nan_to_num(x)),
    ("nan_to_num given", lambda lib, x, y: lib.nan_to_num(x, nan=1.5, posinf=2.0, neginf=-2.0)),
])
def test_standard_compositions_match_numpy_at_edges(name, fn):
    x = np.repeat(EDGE, EDGE.size)
    y = np.tile(EDGE, EDGE.size)
    ref = fn(ag, ag.tensor(x), ag.tensor(y)).numpy()
    got = fn(ag, ag.tensor(xs.asarray(x)), ag.tensor(xs.asarray(y)))
    assert isinstance(got._data, type(xs.asarray(0)))
    np.testing.assert_array_equal(got.numpy(), ref)
    signed = ~np.isnan(ref)             # a NaN's sign bit means nothing
    np.testing.assert_array_equal(np.signbit(got.numpy())[signed], np.signbit(ref)[signed])


def test_integer_fmod_takes_the_sign_of_the_dividend():
    x, y = np.array([-7, 7, -7, 7, 0]), np.array([3, -3, -3, 3, 5])
    got = ag.fmod(ag.tensor(xs.asarray(x)), ag.tensor(xs.asarray(y)))
    np.testing.assert_array_equal(got.numpy(), np.fmod(x, y))


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_rows_on_the_standard_match_numpy(dim):
    a = np.array([[2, 1, 2], [1, 5, 1], [2, 1, 2], [0, 9, 0]])
    ref = ag.unique(ag.tensor(a), return_inverse=True, return_counts=True, dim=dim)
    got = ag.unique(ag.tensor(xs.asarray(a)), return_inverse=True, return_counts=True, dim=dim)
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g.numpy(), r.numpy())


def test_round_with_decimals(torch):
    x = np.array([1.2345, -2.5551, 1250.0, 1350.0, 0.125])
    for d in (2, -2, 0):
        np.testing.assert_array_equal(ag.round(ag.tensor(x), decimals=d).numpy(),
                                      torch.round(torch.tensor(x), decimals=d).numpy())
    with pytest.raises(NotImplementedError, match="round"):
        ag.round(ag.tensor([15, 26]), decimals=-1)


def test_nonzero_of_a_0d_tensor(torch):
    for v in (3.0, 0.0):
        assert tuple(ag.nonzero(ag.tensor(v)).shape) == tuple(torch.nonzero(torch.tensor(v)).shape)
        assert [t.tolist() for t in ag.nonzero(ag.tensor(v), as_tuple=True)] == \
            [t.tolist() for t in torch.nonzero(torch.tensor(v), as_tuple=True)]
