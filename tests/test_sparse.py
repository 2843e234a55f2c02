"""Sparse COO tensors (issue 14): values, gradients and errors as torch's."""
import warnings

import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close

INDICES = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]      # (0, 2) stored twice: uncoalesced
VALUES = [3., 4., 5., 1., -2.]
DENSE = [[0.5, -1.], [2., 0.3], [1.5, 0.7]]


def _make(M, values=VALUES, requires_grad=False, size=(3, 3)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch: "Sparse invariant checks are implicitly disabled"
        if not isinstance(values, M.Tensor):
            values = M.tensor(values, dtype=M.float64)
        return M.sparse_coo_tensor(M.tensor(INDICES), values, size, requires_grad=requires_grad)


def _both(torch, prog):
    """prog(M) gives the same tensors (sparse ones compared as dense) for both modules."""
    ours, theirs = prog(ag), prog(torch)
    for a, e in zip(ours, theirs):
        if isinstance(e, torch.Tensor) and e.is_sparse:
            assert a.is_sparse, "expected a sparse result"
            assert a.is_coalesced() == e.is_coalesced()
            assert tuple(a.shape) == tuple(e.shape)
            a, e = a.to_dense(), e.to_dense()
        if isinstance(e, torch.Tensor):
            assert_close(a, e)
        else:
            assert a == e


def test_metadata_and_coalesce(torch):
    def prog(M):
        s = _make(M)
        c = s.coalesce()
        return (s.is_coalesced(), s._nnz(), s.sparse_dim(), s.dense_dim(), s.is_sparse,
                str(s.layout).split(".")[-1], c._nnz(), c.indices(), c.values(), c,
                s.to_dense(), s.shape == (3, 3))
    _both(torch, prog)


PROGRAMS = {
    "to_dense": lambda M, s, d: s.to_dense() * M.arange(9.).reshape(3, 3).double(),
    "sparse_mm": lambda M, s, d: M.sparse.mm(s, d),
    "mm": lambda M, s, d: M.mm(s, d),
    "matmul_vector": lambda M, s, d: s @ d[:, 0],
    "dense_at_sparse": lambda M, s, d: d.t() @ s,
    "addmm": lambda M, s, d: M.sparse.addmm(d[:, :1].expand(3, 2), s, d, beta=0.5, alpha=2.),
    "sum_all": lambda M, s, d: M.sparse.sum(s) * d.sum(),
    "sum_dim": lambda M, s, d: M.sparse.sum(s, dim=1).to_dense() * d[:, 0],
    "method_sum_dim": lambda M, s, d: s.sum(0).to_dense() * d[:, 1],
    "mul_dense": lambda M, s, d: (s * (d @ d.t())).to_dense(),
    "mul_scalar_add": lambda M, s, d: (s * 2. + s).to_dense() - (s - s * 0.5).to_dense(),
    "dense_plus_sparse": lambda M, s, d: d @ d.t() + s,
    "transpose": lambda M, s, d: M.sparse.mm(s.t(), d),
    "sqrt_after_coalesce": lambda M, s, d: (s * s).sqrt().to_dense() * (d @ d.t()),
    "tanh_pow": lambda M, s, d: (s.tanh() ** 2).to_dense(),
}


# torch has no sparse backward kernel for these (tanh_backward, expand, sparse division):
# their gradients are checked against finite differences instead
TORCH_CANNOT_DIFFERENTIATE = {"method_sum_dim", "sqrt_after_coalesce", "tanh_pow"}


def _program(M, name):
    def f(v, d):
        out = PROGRAMS[name](M, _make(M, v), d)
        return out * M.arange(out.numel(), dtype=M.float64).reshape(out.shape).cos()
    v = M.tensor([abs(x) for x in VALUES], dtype=M.float64, requires_grad=True)
    return f, v, M.tensor(DENSE, dtype=M.float64, requires_grad=True)


@pytest.mark.parametrize("name", PROGRAMS)
def test_values_and_gradients(torch, name):
    """Gradients reach the values and the dense operand, as torch's."""
    def prog(M):
        f, v, d = _program(M, name)
        out = f(v, d)
        if name in TORCH_CANNOT_DIFFERENTIATE:
            return out,
        gv, gd = M.autograd.grad(out.sum(), (v, d), allow_unused=True)
        return out, M.zeros(5, dtype=M.float64) if gv is None else gv, \
            M.zeros(3, 2, dtype=M.float64) if gd is None else gd
    _both(torch, prog)
    if name in TORCH_CANNOT_DIFFERENTIATE:
        f, v, d = _program(ag, name)
        assert ag.autograd.gradcheck(f, (v, d))


def test_leaf_sparse_gradient_is_sparse_at_its_indices(torch):
    def prog(M):
        s = _make(M, requires_grad=True)
        d = M.tensor(DENSE, dtype=M.float64)
        M.sparse.mm(s, d).pow(2).sum().backward()
        return s.grad, s.is_leaf, s.requires_grad
    _both(torch, prog)


def test_to_sparse_is_differentiable(torch):
    def prog(M):
        x = M.tensor([[0., 2., 0.], [3., 0., -1.]], dtype=M.float64, requires_grad=True)
        s = x.to_sparse()
        (M.sparse.mm(s, M.ones(3, 2, dtype=M.float64)) ** 2).sum().backward()
        return s, s.is_coalesced(), x.grad
    _both(torch, prog)


def test_hybrid_tensor_with_dense_dims(torch):
    def prog(M):
        v = M.tensor([[1., 2.], [3., 4.], [5., 6.]], dtype=M.float64, requires_grad=True)
        s = M.sparse_coo_tensor(M.tensor([[0, 1, 0]]), v, (3, 2))
        out = M.sparse.sum(s, dim=1)
        (s.to_dense() * M.tensor([[1.], [2.], [3.]], dtype=M.float64)).sum().backward()
        return s.to_dense(), out.to_dense() if out.is_sparse else out, v.grad, s.dense_dim()
    _both(torch, prog)


BAD = {
    "no_sparse_kernel": lambda M, s: s.exp(),
    "sparse_plus_dense": lambda M, s: s + M.ones(3, 3, dtype=M.float64),
    "indices_uncoalesced": lambda M, s: s.indices(),
    "values_uncoalesced": lambda M, s: s.values(),
    "nnz_mismatch": lambda M, s: M.sparse_coo_tensor(M.tensor(INDICES), M.ones(4), (3, 3)),
    "negative_index": lambda M, s: M.sparse_coo_tensor(M.tensor([[0, -1]]), M.ones(2)),
    "size_rank": lambda M, s: M.sparse_coo_tensor(M.tensor(INDICES), M.ones(5), (3, 3, 4)),
    "indices_not_2d": lambda M, s: M.sparse_coo_tensor(M.tensor([0, 1]), M.ones(2), (3,)),
    "mm_shapes": lambda M, s: M.sparse.mm(s, M.ones(2, 2, dtype=M.float64)),
}


@pytest.mark.parametrize("name", BAD)
def test_errors_have_torchs_types(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            BAD[name](torch, _make(torch))
    with pytest.raises(theirs.type):
        BAD[name](ag, _make(ag))


def test_out_of_range_index_raises_where_torch_does_not_check():
    """torch checks indices against the size only with check_invariants (else it may crash
    later); arraygrad always checks."""
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        ag.sparse_coo_tensor(ag.tensor([[0, 3]]), ag.ones(2), (3,))


def test_gradcheck_through_sparse_mm():
    """Finite differences agree with the gradient to the values and the dense operand."""
    idx = ag.tensor(INDICES)

    def f(v, d):
        return ag.sparse.mm(ag.sparse_coo_tensor(idx, v, (3, 3)), d).tanh()
    v = ag.tensor(VALUES, dtype=ag.float64, requires_grad=True)
    d = ag.tensor(DENSE, dtype=ag.float64, requires_grad=True)
    assert ag.autograd.gradcheck(f, (v, d))
    assert ag.autograd.gradgradcheck(f, (v, d))


def test_to_dense_sums_repeated_indices():
    s = _make(ag)
    expected = np.zeros((3, 3))
    np.add.at(expected, tuple(np.array(INDICES)), VALUES)
    np.testing.assert_array_equal(s.to_dense().numpy(), expected)
    assert s.layout is ag.sparse_coo and ag.ones(1).layout is ag.strided
    assert "layout=arraygrad.sparse_coo" in repr(s)


def test_spmm_and_dense_to_dense(torch):
    def prog(M):
        s = _make(M)
        d = M.tensor(DENSE, dtype=M.float64)
        return M.spmm(s, d), d.to_dense(), d.to_dense(M.float32)
    _both(torch, prog)
