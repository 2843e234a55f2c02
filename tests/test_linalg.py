"""torch.linalg's solvers, factorisations and norms beyond the op catalogue (tests/op_db.py's
linalg block checks values, gradients, jvp and vmap): failures and their errors, singular
matrices, the info codes, the older top-level spellings, and the derivatives where torch is no
oracle (checked against finite differences)."""
import warnings

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import gradcheck, gradgradcheck
from conftest import assert_close, to_numpy

F64 = ag.float64
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def _both(torch, fn, *arrays):
    """fn(lib, *tensors) in both libraries, errors included: (arraygrad's, torch's)."""
    out = []
    for lib in (ag, torch):
        try:
            out.append(fn(lib, *(lib.tensor(a) for a in arrays)))
        except Exception as e:   # noqa: BLE001 - the error is the result compared
            out.append(e)
    return out


# ----------------------------------------------------------------- errors
ERRORS = {
    "inv_singular": (lambda L, a: L.linalg.inv(a), [SINGULAR]),
    "inv_batch": (lambda L, a: L.linalg.inv(L.stack([L.eye(2, dtype=a.dtype), a])), [SINGULAR]),
    "inv_not_square": (lambda L, a: L.linalg.inv(a), [np.ones((2, 3))]),
    "inv_1d": (lambda L, a: L.linalg.inv(a), [np.ones(3)]),
    "inv_int": (lambda L, a: L.linalg.inv(a.long()), [np.ones((2, 2))]),
    "det_not_square": (lambda L, a: L.linalg.det(a), [np.ones((2, 3))]),
    "solve_singular": (lambda L, a: L.linalg.solve(a, a[0]), [SINGULAR]),
    "solve_shapes": (lambda L, a: L.linalg.solve(a, L.ones(3, dtype=a.dtype)), [SINGULAR]),
    "solve_dtypes": (lambda L, a: L.linalg.solve(a, a.float()), [SINGULAR]),
    "solve_triangular_1d": (lambda L, a: L.linalg.solve_triangular(a, a[0], upper=True),
                            [SINGULAR]),
    "solve_triangular_right_shapes": (lambda L, a: L.linalg.solve_triangular(
        a, L.ones(2, 3, dtype=a.dtype), upper=True, left=False), [SINGULAR]),
    "cholesky_not_pd": (lambda L, a: L.linalg.cholesky(a), [SINGULAR]),
    "cholesky_batch": (lambda L, a: L.linalg.cholesky(L.stack([L.eye(2, dtype=a.dtype), -a])),
                       [np.eye(2)]),
    "cholesky_ex_check": (lambda L, a: L.linalg.cholesky_ex(a, check_errors=True), [SINGULAR]),
    "lu_factor_zero_pivot": (lambda L, a: L.linalg.lu_factor(a * 0), [SINGULAR]),
    "matrix_power_singular": (lambda L, a: L.linalg.matrix_power(a, -1), [SINGULAR]),
    "matrix_exp_not_square": (lambda L, a: L.linalg.matrix_exp(a), [np.ones((2, 3))]),
    "cross_size": (lambda L, a: L.linalg.cross(a, a), [SINGULAR]),
    "multi_dot_one": (lambda L, a: L.linalg.multi_dot([a]), [SINGULAR]),
    "multi_dot_3d": (lambda L, a: L.linalg.multi_dot([a[None], a]), [SINGULAR]),
    "multi_dot_shapes": (lambda L, a: L.linalg.multi_dot([a, a[:1]]), [SINGULAR]),
    "multi_dot_dtypes": (lambda L, a: L.linalg.multi_dot([a, a.float()]), [SINGULAR]),
    "cross_dtypes": (lambda L, a: L.linalg.cross(a, a.float()), [np.ones((2, 3))]),
    "vecdot_sizes": (lambda L, a: L.linalg.vecdot(a, a[:, :2]), [np.ones((2, 3))]),
    "vecdot_vector_sizes": (lambda L, a: L.linalg.vecdot(a[0], a[0, :2]), [np.ones((2, 3))]),
    "matrix_power_float": (lambda L, a: L.linalg.matrix_power(a, 2.0), [SINGULAR]),
    "vector_norm_int": (lambda L, a: L.linalg.vector_norm(a.long()), [SINGULAR]),
    "vector_norm_inf_empty": (lambda L, a: L.linalg.vector_norm(a[:0], float("inf")), [SINGULAR]),
    "matrix_norm_1d": (lambda L, a: L.linalg.matrix_norm(a[0]), [SINGULAR]),
    "matrix_norm_order": (lambda L, a: L.linalg.matrix_norm(a, 3), [SINGULAR]),
    "norm_3d_with_ord": (lambda L, a: L.linalg.norm(a[None], 2), [SINGULAR]),
    "logdet_not_square": (lambda L, a: L.logdet(a), [np.ones((2, 3))]),
    "cholesky_solve_sizes": (lambda L, a: L.cholesky_solve(L.ones(3, 1, dtype=a.dtype), a),
                             [np.eye(2)]),
    "lu_1d": (lambda L, a: L.linalg.lu(a[0]), [SINGULAR]),
    "lu_factor_1d": (lambda L, a: L.linalg.lu_factor_ex(a[0]), [SINGULAR]),
    "lu_factor_int": (lambda L, a: L.linalg.lu_factor(a.long()), [SINGULAR]),
    "lu_no_pivot": (lambda L, a: L.linalg.lu(a, pivot=False), [SINGULAR]),
    "solve_right_shapes": (lambda L, a: L.linalg.solve(a, L.ones(3, dtype=a.dtype), left=False),
                           [SINGULAR]),
    "solve_right_matrix_shapes": (lambda L, a: L.linalg.solve(a, L.ones(3, 1, dtype=a.dtype),
                                                              left=False), [SINGULAR]),
    "inv_half": (lambda L, a: L.linalg.inv(a.half()), [np.eye(2)]),
    "slogdet_half": (lambda L, a: L.linalg.slogdet(a.half()), [np.eye(2)]),
    "det_half": (lambda L, a: L.linalg.det(a.half()), [np.eye(2)]),
    "cholesky_half": (lambda L, a: L.linalg.cholesky_ex(a.half()), [np.eye(2)]),
    "solve_triangular_half": (lambda L, a: L.linalg.solve_triangular(a.half(), a.half(),
                                                                     upper=True), [np.eye(2)]),
    "lu_solve_half": (lambda L, a: L.linalg.lu_solve(a.half(), L.ones(2, dtype=L.int32),
                                                     a.half()), [np.eye(2)]),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(torch, name):
    fn, arrays = ERRORS[name]
    ours, theirs = _both(torch, fn, *arrays)
    assert isinstance(theirs, Exception), f"torch raised nothing: {theirs}"
    assert isinstance(ours, Exception), f"arraygrad raised nothing: {ours}"
    assert str(ours).startswith(str(theirs))     # broadcasting errors add the op and shapes
    linalg_error = isinstance(theirs, torch.linalg.LinAlgError)
    assert isinstance(ours, ag.linalg.LinAlgError) == linalg_error
    assert isinstance(ours, RuntimeError) == isinstance(theirs, RuntimeError)


def test_linalg_errors_inside_transforms_name_the_physical_batch_element(torch):
    stack = np.stack([np.eye(2), np.zeros((2, 2))])
    for fn in (lambda L, a: L.func.vmap(L.linalg.inv)(a),
               lambda L, a: L.func.vmap(L.linalg.cholesky)(a),
               lambda L, a: L.func.grad(lambda x: L.linalg.inv(x).sum())(a[1])):
        ours, theirs = _both(torch, fn, stack)
        assert isinstance(ours, ag.linalg.LinAlgError) and str(ours) == str(theirs)


# ----------------------------------------------------------------- info codes and failures
def test_info_codes_and_partial_results_match_torch(torch):
    stack = np.stack([np.eye(3), np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]]),
                      np.array([[4.0, 2, 0], [2, 1, 0], [0, 0, 1]])])
    for fn in (lambda L, a: L.linalg.inv_ex(a), lambda L, a: L.linalg.cholesky_ex(a),
               lambda L, a: L.linalg.solve_ex(a, a[..., :1]),
               lambda L, a: L.linalg.lu_factor_ex(a)):
        ours, theirs = _both(torch, fn, stack)
        assert_close(ours[1 if len(ours) == 2 else 2], theirs[-1])
        assert ours[-1].dtype is ag.int32
    L_ours, L_theirs = _both(torch, lambda L, a: L.linalg.cholesky_ex(a).L, stack)
    assert_close(L_ours, L_theirs)      # LAPACK's partial factor where it stopped


def test_singular_inputs_give_infs_as_torch(torch):
    ours, theirs = _both(torch, lambda L, a: (L.linalg.inv_ex(a).inverse, L.linalg.slogdet(a),
                                              L.linalg.det(a)), SINGULAR)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1].sign, theirs[1].sign)
    assert_close(ours[1].logabsdet, theirs[1].logabsdet)
    assert_close(ours[2], theirs[2], atol=1e-15)


# ----------------------------------------------------------------- singular determinants
SINGULARS = [SINGULAR, np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]]), np.zeros((3, 3)),
             np.array([[2.0, 0, 0], [0, 0, 0], [0, 0, 3]])]


@pytest.mark.parametrize("a", SINGULARS)
def test_det_of_a_singular_matrix_matches_finite_differences(a):
    x = ag.tensor(a, requires_grad=True)
    assert gradcheck(ag.linalg.det, (x,), check_forward_ad=True)
    assert gradgradcheck(ag.linalg.det, (x,))


@pytest.mark.parametrize("a", SINGULARS)
def test_det_of_a_singular_matrix_has_its_true_gradient(torch, a):
    """The gradient of det is the cofactor matrix, also where A is singular: torch's
    second-order path (create_graph) gives it; its first-order path gives 0 at an exactly
    zero pivot, which is not the derivative (finite differences agree with ours)."""
    x = ag.tensor(a, requires_grad=True)
    g, = ag.autograd.grad(ag.linalg.det(x), x, create_graph=True)
    t = torch.tensor(a, requires_grad=True)
    tg, = torch.autograd.grad(torch.linalg.det(t), t, create_graph=True)
    assert_close(g, tg, atol=1e-12)
    w = np.arange(a.size, dtype=float).reshape(a.shape)
    gg, = ag.autograd.grad((g * ag.tensor(w)).sum(), x)
    tgg, = torch.autograd.grad((tg * torch.tensor(w)).sum(), t)
    if np.isfinite(to_numpy(tgg)).all():    # torch's SVD path gives nan at A = 0
        assert_close(gg, tgg, atol=1e-12)
    g_first, = ag.autograd.grad(ag.linalg.det(x), x)
    assert_close(g_first, tg.detach(), atol=1e-12)


def test_det_gradient_of_batched_mix_and_under_vmap():
    a = np.stack([SINGULAR, np.array([[2.0, 1.0], [0.5, 3.0]])])
    x = ag.tensor(a, requires_grad=True)
    g, = ag.autograd.grad(ag.linalg.det(x).sum(), x)
    cof = np.stack([[[m[1, 1], -m[1, 0]], [-m[0, 1], m[0, 0]]] for m in a])
    np.testing.assert_allclose(g.numpy(), cof, atol=1e-14)
    vg = ag.func.vmap(ag.func.grad(ag.linalg.det))(ag.tensor(a))
    np.testing.assert_allclose(vg.numpy(), cof, atol=1e-14)


# ----------------------------------------------------------------- where torch is no oracle
def _fd_jvp_of_jvp(f, a, t, eps=1e-5):
    def jvp(x):
        return ag.func.jvp(f, (x,), (ag.tensor(t),))[1].numpy()
    return (jvp(ag.tensor(a + eps * t)) - jvp(ag.tensor(a - eps * t))) / (2 * eps)


@pytest.mark.parametrize("name,fn", [
    ("det", lambda x: ag.linalg.det(x)),
    ("slogdet", lambda x: ag.linalg.slogdet(x).logabsdet),
    ("solve", lambda x: ag.linalg.solve(x, x[..., :1] + 1)),
    ("inv", lambda x: ag.linalg.inv(x)),
    ("cholesky_inverse", lambda x: ag.cholesky_inverse(x.tril() + 3 * ag.eye(3, dtype=x.dtype))),
    ("matrix_exp", lambda x: ag.linalg.matrix_exp(x)),
    ("lu_factor", lambda x: ag.linalg.lu_factor(x).LU),
])
def test_forward_over_forward_matches_finite_differences(name, fn):
    rng = np.random.default_rng(3)
    a, t = rng.standard_normal((3, 3)) + 2 * np.eye(3), rng.standard_normal((3, 3))

    def jvp(x):
        return ag.func.jvp(fn, (x,), (ag.tensor(t),))[1]
    second = ag.func.jvp(jvp, (ag.tensor(a),), (ag.tensor(t),))[1].numpy()
    np.testing.assert_allclose(second, _fd_jvp_of_jvp(fn, a, t), rtol=1e-6, atol=1e-7)


# ----------------------------------------------------------------- the older spellings
def test_deprecated_spellings_warn_and_match_torch(torch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3))
    spd = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3, 2))
    cases = [
        ("cholesky", lambda L, s, b: L.cholesky(s, upper=True)),
        ("lu", lambda L, s, b: L.lu(s, get_infos=True)),
        ("lu_solve", lambda L, s, b: L.lu_solve(b, *L.linalg.lu_factor(s))),
        ("triangular_solve", lambda L, s, b: L.triangular_solve(b, s, upper=False,
                                                                transpose=True)),
    ]
    for name, fn in cases:
        results = []
        for lib in (ag, torch):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                results.append(fn(lib, lib.tensor(spd), lib.tensor(b)))
            # torch warns once per process; arraygrad at every call site, as Python does
            assert lib is torch or any(f"torch.{name} is deprecated" in str(w.message)
                                       for w in caught), name
        ours, theirs = results
        for o, t in zip(ours if isinstance(ours, tuple) else (ours,),
                        theirs if isinstance(theirs, tuple) else (theirs,)):
            assert_close(o, t)


def test_tensor_methods_and_top_level_names(torch):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    spd = a @ a.T
    for fn in (lambda L, x: x.inverse(), lambda L, x: x.det(), lambda L, x: x.logdet(),
               lambda L, x: x.slogdet(), lambda L, x: x.matrix_power(3),
               lambda L, x: x.matrix_exp(), lambda L, x: L.inverse(x),
               lambda L, x: L.matrix_power(x, -1), lambda L, x: L.matrix_exp(x),
               lambda L, x: (x @ x.mT).cholesky_inverse(),
               lambda L, x: x.cholesky_solve(L.linalg.cholesky(x @ x.mT)),
               lambda L, x: L.lu_unpack(*L.linalg.lu_factor(x)),
               lambda L, x: L.linalg.diagonal(x, offset=1)):
        ours, theirs = _both(torch, fn, spd)
        for o, t in zip(ours if isinstance(ours, tuple) else (ours,),
                        theirs if isinstance(theirs, tuple) else (theirs,)):
            assert_close(o, t, rtol=1e-9, atol=1e-10)


# ----------------------------------------------------------------- values
def test_float32_and_empty_stacks(torch):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((2, 4, 4)) + 4 * np.eye(4)).astype(np.float32)
    for fn in (lambda L, x: L.linalg.inv(x), lambda L, x: L.linalg.det(x),
               lambda L, x: L.linalg.solve(x, x[..., :1]), lambda L, x: L.linalg.matrix_exp(x / 4),
               lambda L, x: L.linalg.cholesky(x @ x.mT), lambda L, x: L.linalg.lu_factor(x),
               lambda L, x: L.linalg.matrix_norm(x, 1), lambda L, x: L.linalg.vector_norm(x, 3)):
        ours, theirs = _both(torch, fn, a)
        for o, t in zip(ours if isinstance(ours, tuple) else (ours,),
                        theirs if isinstance(theirs, tuple) else (theirs,)):
            assert_close(o, t, rtol=2e-5, atol=1e-5)
        for shape in ((0, 3, 3), (2, 0, 0)):
            ours, theirs = _both(torch, fn, np.zeros(shape, np.float32))
            assert not isinstance(ours, Exception), (fn, shape, ours)
            for o, t in zip(ours if isinstance(ours, tuple) else (ours,),
                            theirs if isinstance(theirs, tuple) else (theirs,)):
                assert_close(o, t)


def test_matrix_exp_in_half_precision():
    """float16 is computed in float32 (torch 2.13's half kernel overflows to inf here)."""
    a = np.array([[0.5, -1.0], [0.25, 0.75]])
    ours = ag.linalg.matrix_exp(ag.tensor(a).half())
    assert ours.dtype is ag.float16
    exact = ag.linalg.matrix_exp(ag.tensor(a)).numpy()
    np.testing.assert_allclose(ours.numpy().astype(float), exact, rtol=2e-3, atol=2e-3)


def test_matrix_exp_of_large_and_nilpotent_matrices(torch):
    rng = np.random.default_rng(4)
    cases = [rng.standard_normal((2, 5, 5)) * 10, np.triu(np.ones((4, 4)), 1),
             np.array([[0.0, 40.0], [-40.0, 0.0]])]
    for a in cases:
        ours, theirs = _both(torch, lambda L, x: L.linalg.matrix_exp(x), a)
        scale = np.abs(to_numpy(theirs)).max()
        np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), atol=1e-12 * scale)


def test_multi_dot_matches_torch_in_any_chain(torch):
    rng = np.random.default_rng(5)
    shapes = [(7,), (7, 40), (40, 2), (2, 30), (30, 5)]
    arrays = [rng.standard_normal(s) for s in shapes]
    ours, theirs = _both(torch, lambda L, *xs: L.linalg.multi_dot(list(xs)), *arrays)
    assert_close(ours, theirs, rtol=1e-12)


def test_vmap_of_solve_over_matrix_and_rhs_dims():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 4, 4)) + 4 * np.eye(4)
    b = rng.standard_normal((4, 3))
    out = ag.func.vmap(ag.linalg.solve, in_dims=(0, 1))(ag.tensor(a), ag.tensor(b))
    expected = np.stack([np.linalg.solve(a[i], b[:, i]) for i in range(3)])
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


# ----------------------------------------------------------------- low precision and autocast
AUTOCAST_CASES = {
    "linalg.inv": lambda L, a, b: L.linalg.inv(a),
    "linalg.det": lambda L, a, b: L.linalg.det(a),
    "linalg.slogdet": lambda L, a, b: L.linalg.slogdet(a).logabsdet,
    "linalg.solve": lambda L, a, b: L.linalg.solve(a, b),
    "linalg.solve_ex": lambda L, a, b: L.linalg.solve_ex(a, b).result,
    "linalg.solve_triangular": lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
    "linalg.cholesky_ex": lambda L, a, b: L.linalg.cholesky_ex(a).L,
    "linalg.lu_factor": lambda L, a, b: L.linalg.lu_factor(a).LU,
    "linalg.matrix_power": lambda L, a, b: L.linalg.matrix_power(a, -1),
    "linalg.matrix_exp": lambda L, a, b: L.linalg.matrix_exp(a),
    "linalg.matrix_norm": lambda L, a, b: L.linalg.matrix_norm(a, 1),
    "cholesky_solve": lambda L, a, b: L.cholesky_solve(b, a),
    "cholesky_inverse": lambda L, a, b: L.cholesky_inverse(a),
    "logdet": lambda L, a, b: L.logdet(a),
}


@pytest.mark.parametrize("autocast", [False, True])
def test_bfloat16_inputs_and_autocast_follow_torch(torch, autocast):
    """torch's CPU autocast runs inv, solve, cholesky... in float32 and leaves det, lu and
    solve_triangular to refuse bfloat16, as they do outside autocast."""
    pytest.importorskip("ml_dtypes")
    for name, fn in AUTOCAST_CASES.items():
        results = []
        for lib in (ag, torch):
            a = (lib.eye(3) * 2 + 0.1).to(lib.bfloat16)
            b = lib.ones(3, 2).to(lib.bfloat16)
            try:
                if autocast:
                    with lib.autocast("cpu", dtype=lib.bfloat16):
                        results.append(str(fn(lib, a, b).dtype).split(".")[-1])
                else:
                    results.append(str(fn(lib, a, b).dtype).split(".")[-1])
            except (RuntimeError, NotImplementedError) as e:
                results.append(f"{type(e).__name__}: {e}")
        assert results[0] == results[1], name


# matmul.py NOTE [column-major operands]: (transposed?, shape) of mat1 and mat2
_LAYOUTS = [((False, (5, 4)), (True, (4, 3))), ((True, (5, 4)), (False, (4, 3))),
            ((True, (5, 4)), (True, (4, 3))), ((False, (5, 4)), (False, (4, 3))),
            ((True, (1, 4)), (True, (4, 1))), ((True, (2, 5, 4)), (True, (2, 4, 3)))]


def _operand(lib, a, transposed):
    t = lib.tensor(a.swapaxes(-1, -2).copy() if transposed else a, dtype=lib.float64,
                   requires_grad=True)
    return t, (t.transpose(-1, -2) if transposed else t * 1)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("layouts", _LAYOUTS)
def test_matmul_gradients_have_torchs_layout(torch, layouts, create_graph):
    """A column-major matrix operand (a transposed one) gets its gradient column-major, as
    torch's mm backward gives it (not a stack of them: bmm's), on the array-level and the
    composite path; its values are torch's."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for _, s in layouts]
    seen = {}
    for lib in (ag, torch):
        leaves, ops = zip(*[_operand(lib, a, tr) for a, (tr, _) in zip(arrays, layouts)])
        for k, o in enumerate(ops):
            o.register_hook(lambda g, k=k, lib=lib: seen.setdefault(lib, {}).update({k: g}))
        y = ops[0] @ ops[1]
        grads = lib.autograd.grad((y * y).sum(), leaves, create_graph=create_graph)
        seen.setdefault(lib, {})["leaves"] = grads
    for k in (0, 1):
        assert seen[ag][k].stride() == seen[torch][k].stride(), k
        assert_close(seen[ag][k], seen[torch][k])
    for g, t in zip(seen[ag]["leaves"], seen[torch]["leaves"]):
        assert_close(g, t)


def test_matmul_reads_an_operands_strides_not_its_values(torch):
    """The gradient of mat1 needs only mat2's values and mat1's layout: an in-place write to
    mat1 after the product raises nothing (as torch), on both paths."""
    rng = np.random.default_rng(1)
    a, w, m = rng.standard_normal((5, 4)), rng.standard_normal((3, 4)), rng.standard_normal((5, 3))
    for create_graph in (False, True):
        got = []
        for lib in (ag, torch):
            x0 = lib.tensor(a, requires_grad=True)
            x = x0.T * 1       # row-major
            xt = (x0 * 1).T    # column-major
            y = (xt @ lib.tensor(m)).sum() + (lib.tensor(w) @ x).sum()
            x.add_(1)
            xt.mul_(2)
            got.append(lib.autograd.grad(y, x0, create_graph=create_graph)[0])
        assert_close(got[0], got[1])


def test_per_example_linear_gradients_have_torchs_layout(torch):
    """vmap(grad) of `x @ w.T`: the per-example gradients of w, with torch's strides."""
    rng = np.random.default_rng(2)
    w0, x0 = rng.standard_normal((3, 6)), rng.standard_normal((8, 1, 6))
    out = []
    for lib in (ag, torch):
        def loss(w, xi):
            return lib.tanh(xi @ w.T).sum()
        out.append(lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(lib.tensor(w0),
                                                                          lib.tensor(x0)))
    assert out[0].stride() == out[1].stride()
    assert_close(out[0], out[1])
