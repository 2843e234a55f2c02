"""Complex dtypes: promotion, creation, printing, the complex ops, and torch's conjugate-
Wirtinger gradients (x.grad = dL/dRe + i dL/dIm) against torch in float64/complex128."""
import random

import numpy as np
import pytest

import arraygrad as ag

RNG = np.random.default_rng(14)
Z = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))


def _np(t):
    return t.detach().resolve_conj().numpy() if hasattr(t, "resolve_conj") else t.numpy()


@pytest.mark.parametrize("a,b,want", [
    ("float32", "complex64", "complex64"), ("float64", "complex64", "complex128"),
    ("int64", "complex64", "complex64"), ("bool", "complex128", "complex128"),
    ("complex64", "complex128", "complex128")])
def test_promotion(torch, a, b, want):
    x, y = ag.ones(2, dtype=getattr(ag, a)), ag.ones(2, dtype=getattr(ag, b))
    assert (x + y).dtype is getattr(ag, want)
    assert str((torch.ones(2, dtype=getattr(torch, a)) + torch.ones(2, dtype=getattr(torch, b))
                ).dtype) == "torch." + want


def test_weak_complex_scalars_and_zero_dim():
    assert (ag.ones(2) * 1j).dtype is ag.complex64
    assert (ag.ones(2, dtype=ag.float64) * 1j).dtype is ag.complex128
    assert (ag.ones(2, dtype=ag.int32) * 1j).dtype is ag.complex64
    assert (ag.ones(2) + ag.tensor(1j, dtype=ag.complex128)).dtype is ag.complex64
    assert ag.tensor([1 + 2j]).dtype is ag.complex64 and ag.tensor(Z).dtype is ag.complex128
    assert ag.tensor(Z).is_complex() and not ag.ones(1).is_complex()


def test_printing(torch):
    for v in ([1 + 2j, -1j], [1.5 + 2j, 3 - 0.25j], [[1 + 2j, 3], [4, 5j]], 1 + 2j):
        assert repr(ag.tensor(v)) == repr(torch.tensor(v))
    assert repr(ag.tensor([1j], dtype=ag.complex128)).endswith("dtype=arraygrad.complex128)")


def test_scalar_conversions_and_casts():
    with pytest.raises(RuntimeError, match="without overflow"):
        float(ag.tensor(1 + 1j))
    assert complex(ag.tensor(1 + 1j)) == 1 + 1j
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        r = ag.tensor([1 + 1j]).float()
    assert r.dtype is ag.float32 and r.tolist() == [1.0]
    assert ag.tensor([1.0]).to(ag.complex64).dtype is ag.complex64


def test_real_imag_are_writable_views():
    z = ag.tensor([1 + 2j, 3 - 1j])
    z.real[0] = 5
    z.imag.mul_(2)
    assert z.tolist() == [5 + 4j, 3 - 2j]
    r = ag.view_as_real(z)
    r[1, 0] = 0
    assert z.tolist() == [5 + 4j, -2j]
    c = ag.view_as_complex(ag.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert c.tolist() == [1 + 2j, 3 + 4j]
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        ag.ones(2).imag
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        ag.view_as_complex(ag.ones(3))


_FUNCS = {
    "mul": lambda m, z, w: z * z.conj() * 2 + z * (1 + 2j),
    "div": lambda m, z, w: (z + 3) / (z * z + 1j) + 1 / (z + 4),
    "pow": lambda m, z, w: z ** 2 + (z + 3) ** (0.5 + 0.25j) + z ** z.abs(),
    "exp_log": lambda m, z, w: m.exp(z) * m.log(z) + m.sqrt(z),
    "trig": lambda m, z, w: m.sin(z) + m.cos(z) + m.tan(z * 0.2) + m.sinh(z) + m.cosh(z),
    "tanh_sigmoid": lambda m, z, w: m.tanh(z) + m.sigmoid(z) + z.reciprocal(),
    "abs_angle_sgn": lambda m, z, w: m.complex(z.abs(), z.angle()) * z.sgn(),
    "real_imag": lambda m, z, w: m.complex(z.real * z.imag, z.imag ** 2),
    "reductions": lambda m, z, w: (z.sum(0) * z.mean(1, keepdim=True) * z.prod(0)),
    "matmul": lambda m, z, w: (z @ w) @ w.mT.conj() + m.einsum("ij,jk->ik", z, w).sum(),
    "vdot_dot": lambda m, z, w: m.vdot(z[0], z[1]) * m.dot(z[2], z[0]),
    "shape": lambda m, z, w: m.cat([z.t(), z.t().flip(0)], 0).reshape(-1)[::3]
    * m.stack([z[0], z[1]]).sum(),
    "where_index": lambda m, z, w: m.where(z.real > 0, z, z * 2j)[[0, 2]],
    "polar": lambda m, z, w: m.polar(z.abs(), z.angle() * 2),
}


@pytest.mark.parametrize("name", sorted(_FUNCS))
def test_values_and_grads_vs_torch(torch, name):
    f = _FUNCS[name]
    za, wa = ag.tensor(Z, requires_grad=True), ag.tensor(W, requires_grad=True)
    zt, wt = torch.tensor(Z, requires_grad=True), torch.tensor(W, requires_grad=True)
    ya, yt = f(ag, za, wa), f(torch, zt, wt)
    np.testing.assert_allclose(_np(ya), _np(yt), rtol=1e-10, atol=1e-12)
    # two real losses: |y| and a weighted view_as_real
    for loss in (lambda m, y: y.abs().sum(),
                 lambda m, y: (m.view_as_real(y.resolve_conj()) * m.arange(2.0,
                               dtype=m.float64)).sum() + y.real.sum() - y.imag.sum()):
        ga = ag.autograd.grad(loss(ag, ya), (za, wa), allow_unused=True, retain_graph=True)
        gt = torch.autograd.grad(loss(torch, yt), (zt, wt), allow_unused=True,
                                 retain_graph=True)
        for a, t in zip(ga, gt):
            assert (a is None) == (t is None)
            if a is not None:
                np.testing.assert_allclose(_np(a), _np(t), rtol=1e-9, atol=1e-12)


def test_real_input_gets_real_gradient(torch):
    x = RNG.standard_normal(4)
    xa, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (xa * (1 + 2j)).abs().sum().backward()
    (xt * (1 + 2j)).abs().sum().backward()
    assert xa.grad.dtype is ag.float64
    np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["mul", "div", "exp_log", "abs_angle_sgn", "matmul", "polar"])
def test_jvp_vs_torch(torch, name):
    f = _FUNCS[name]
    t = RNG.standard_normal(Z.shape) + 1j * RNG.standard_normal(Z.shape)
    _, ja = ag.func.jvp(lambda z: f(ag, z, ag.tensor(W)), (ag.tensor(Z),), (ag.tensor(t),))
    _, jt = torch.func.jvp(lambda z: f(torch, z, torch.tensor(W)), (torch.tensor(Z),),
                           (torch.tensor(t),))
    np.testing.assert_allclose(_np(ja), _np(jt), rtol=1e-9, atol=1e-12)


def test_vmap_matches_loop():
    def f(z):
        return (z * z.conj()).real + ag.view_as_real(z.exp())[..., 1] + z.angle()
    za = ag.tensor(Z)
    out = ag.vmap(f)(za)
    np.testing.assert_allclose(out.numpy(), np.stack([f(za[i]).numpy() for i in range(3)]))
    g = ag.vmap(ag.func.grad(lambda z: (z * z).abs().sum()))(za)
    loop = [ag.func.grad(lambda z: (z * z).abs().sum())(za[i]) for i in range(3)]
    np.testing.assert_allclose(g.numpy(), np.stack([v.numpy() for v in loop]))


def test_unverified_op_raises_for_complex():
    """A complex input to a primitive not verified for complex raises for the value too (no
    grad needed), for one input (erf) or two (xlogy)."""
    for z in (ag.tensor(Z, requires_grad=True), ag.tensor(Z)):
        with pytest.raises(NotImplementedError, match="xlogy: complex inputs are not"):
            ag.xlogy(z, z)
        with pytest.raises(NotImplementedError, match="erf: complex inputs are not"):
            ag.special.erf(z)
    with pytest.raises(NotImplementedError, match="xlogy: complex inputs are not"):
        ag.func.jvp(lambda v: ag.xlogy(v, v), (ag.tensor(Z),), (ag.tensor(Z),))
    with pytest.raises(NotImplementedError, match="xlogy: complex inputs are not"):
        ag.vmap(lambda v: ag.xlogy(v, v))(ag.tensor(Z))


@pytest.mark.parametrize("call,exc,msg", [
    (lambda z: z < 1, NotImplementedError, '"lt_cpu" not implemented'),
    (lambda z: z.max(), NotImplementedError, "not implemented for 'ComplexDouble'"),
    (lambda z: z.clamp(0, 1), NotImplementedError, "clamp is not supported"),
    (lambda z: z.relu(), NotImplementedError, "clamp is not supported"),
    (lambda z: z.floor(), NotImplementedError, "floor is not supported"),
    (lambda z: z.sign(), NotImplementedError, "torch.sgn instead"),
    (lambda z: (ag if isinstance(z, ag.Tensor) else __import__("torch")).maximum(z, z), RuntimeError, "maximum not implemented"),
    (lambda z: z.sort(), RuntimeError, "Sort does not support complex"),
    (lambda z: z.argmax(), RuntimeError, "does not support complex"),
])
def test_torch_refusals(torch, call, exc, msg):
    with pytest.raises(exc, match=msg):
        call(ag.tensor(Z))
    with pytest.raises(exc, match=msg):
        call(torch.tensor(Z))


def test_conj_is_free_for_real():
    x = ag.ones(3)
    assert x.conj() is x and x.real is x and not x.is_conj()


def _square(lib, conj):
    """z -> z * z as a custom Function whose backward conjugates its derivative (right, as
    torch's convention asks) or not (wrong: gradcheck must catch it)."""
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            z, = ctx.saved_tensors
            return g * 2 * (z.conj() if conj else z)
    return Square.apply


@pytest.mark.parametrize("name,fn", [
    ("holomorphic", lambda lib, z, w: z * z.exp() + w),
    ("real_output", lambda lib, z, w: (z * w).abs()),
    ("fft", lambda lib, z, w: lib.fft.fft(z) * w),
    ("irfft", lambda lib, z, w: lib.fft.irfft(z, n=4)),
    ("function_conj", lambda lib, z, w: _square(lib, True)(z)),
    ("function_no_conj", lambda lib, z, w: _square(lib, False)(z))])
def test_gradcheck_complex_as_torch(torch, name, fn):
    """gradcheck/gradgradcheck perturb real and imaginary parts: same verdict as torch's."""
    w = RNG.standard_normal(3)

    def verdicts(lib):
        z = lib.tensor(Z[0, :3], requires_grad=True)
        x = lib.tensor(w, requires_grad=True)
        f = lambda z, x: fn(lib, z, x)      # noqa: E731
        return (lib.autograd.gradcheck(f, (z, x), raise_exception=False),
                lib.autograd.gradgradcheck(f, (z, x), raise_exception=False)
                if name.startswith(("holo", "fft")) else None)
    want = verdicts(torch)
    assert verdicts(ag) == want
    assert want[0] == (name != "function_no_conj")


@pytest.mark.parametrize("name,fn", [
    ("var", lambda lib, z: z.var()), ("var_dim", lambda lib, z: z.var(dim=1, correction=0)),
    ("std", lambda lib, z: z.std(dim=0, keepdim=True)),
    ("std_mean", lambda lib, z: lib.std_mean(z, dim=1)[0]),
    ("norm", lambda lib, z: z.norm()), ("norm_dim", lambda lib, z: z.norm(dim=1)),
    ("norm_p1", lambda lib, z: z.norm(p=1, dim=0)), ("norm_p3", lambda lib, z: z.norm(p=3)),
    ("norm_inf", lambda lib, z: z.norm(p=float("inf"))),
    ("vector_norm", lambda lib, z: lib.linalg.vector_norm(z, ord=3, dim=0)),
    ("vector_norm_2", lambda lib, z: lib.linalg.vector_norm(z)),
    ("matrix_norm", lambda lib, z: lib.linalg.matrix_norm(z, ord=1)),
    ("matrix_norm_fro_inf", lambda lib, z: lib.linalg.matrix_norm(z) * lib.linalg.matrix_norm(
        z, ord=float("inf"))),
    ("linalg_norm", lambda lib, z: lib.linalg.norm(z, dim=1)),
    ("vecdot", lambda lib, z: lib.linalg.vecdot(z, z.exp()).abs()),
    ("sum_dtype", lambda lib, z: z.sum(dtype=lib.complex64).abs()),
    ("mean_dtype", lambda lib, z: z.mean(dim=0, dtype=lib.complex64).abs())])
def test_reductions_with_real_results_vs_torch(torch, name, fn):
    """var/std/norm of complex inputs are real (torch's values and gradients)."""
    got, want = (fn(lib, lib.tensor(Z, requires_grad=True)) for lib in (ag, torch))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6)
    leaves = [lib.tensor(Z, requires_grad=True) for lib in (ag, torch)]
    g, = ag.autograd.grad(fn(ag, leaves[0]).sum(), leaves[0])
    t, = torch.autograd.grad(fn(torch, leaves[1]).sum(), leaves[1])
    np.testing.assert_allclose(_np(g), _np(t), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- views of complex tensors and
# in-place writes through them (real, imag, view_as_real, slices, transposes, unsqueeze_)
def _complex_view_program(lib, seed):
    r, rng = random.Random(seed), np.random.default_rng(seed)
    z = lib.tensor(rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)), requires_grad=True)
    pool, iview = [z * 1], False
    for _ in range(r.randint(1, 5)):
        t = pool[r.randrange(len(pool))]
        k = r.choice(["real", "imag", "as_real", "write", "write_complex", "t", "slice", "unsqueeze_"])
        if k in ("real", "imag", "as_real") and t.is_complex():
            pool.append({"real": lambda: t.real, "imag": lambda: t.imag,
                         "as_real": lambda: lib.view_as_real(t)}[k]())
        elif k == "t":
            pool.append(t.transpose(0, -1))
        elif k == "slice":
            pool.append(t[1:] if t.shape[0] > 1 else t[:])
        elif k == "unsqueeze_":
            t.unsqueeze_(0)
            iview = True
        elif k == "write":
            t.mul_(lib.linspace(0.5, 1.5, t.numel(), dtype=lib.float64).reshape(t.shape))
        elif k == "write_complex" and t.is_complex():
            t.mul_(1 + 0.5j)
    loss = sum(((p.abs() ** 2).sum() if p.is_complex() else (p ** 2).sum()) * (i + 1)
               for i, p in enumerate(pool))
    loss.backward()
    return [z.grad.numpy()] + [p.detach().numpy() for p in pool], iview


def test_writes_through_complex_views_match_torch(torch):
    """A write through `x.real` of a complex tensor changes only the real parts: the
    imaginary parts keep their gradient (they were lost)."""
    torch_refused = 0
    for seed in range(300):
        a, _ = _complex_view_program(ag, seed)
        try:
            t, _ = _complex_view_program(torch, seed)
        except RuntimeError:
            # torch's regenerated views after `unsqueeze_` give gradients of the old shape
            assert _complex_view_program(ag, seed)[1], seed
            torch_refused += 1
            continue
        for x, y in zip(a, t):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, err_msg=f"seed {seed}")
    assert torch_refused < 15


@pytest.mark.parametrize("api", ["jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("where", ["input", "output"])
def test_jacobians_refuse_complex_as_torch(torch, api, where):
    """A real basis would give only the derivative along the real parts: torch refuses
    complex inputs and outputs of its Jacobians, and so does arraygrad (jacfwd returned the
    real-direction half of the answer)."""
    messages = []
    for lib in (torch, ag):
        if where == "input":
            f, x = (lambda z: (z.abs() ** 2).sum()), lib.tensor([1 + 2j, 3 - 1j])
        else:
            f, x = (lambda x: lib.complex(x, x * 2)), lib.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError) as e:
            getattr(lib.func, api)(f)(x)
        messages.append(str(e.value))
    assert messages[1] == messages[0]
