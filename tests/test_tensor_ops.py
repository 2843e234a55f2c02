"""Tensor methods and creation functions: random fills, reductions into indices, strided views.

Values, gradients, jvp and vmap of every op here are also checked by the catalogue
(tests/op_db.py); these tests cover what it cannot: view semantics and memory layout, random
streams, errors, vmap against torch.func.vmap, and the cases where torch is no oracle.
"""
import warnings

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.func import vmap

from conftest import assert_close


def _raises_like(torch, fn):
    """fn(arraygrad) raises the exception type torch's fn(torch) raises, with its message."""
    with pytest.raises(Exception) as t_err:
        fn(torch)
    with pytest.raises(type(t_err.value)) as a_err:
        fn(ag)
    return str(a_err.value), str(t_err.value)


def _fd_grad(f, x, eps=1e-6):
    """Central finite differences of sum(f(x) * w) for a fixed w: (gradient, w)."""
    w = np.random.default_rng(3).standard_normal(f(x).shape)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = ((f(x + d) - f(x - d)) * w).sum() / (2 * eps)
    return g, w


# ----------------------------------------------------------------- random fills
FILLS = [("exponential_", (2.0,)), ("cauchy_", (1.0, 0.5)), ("log_normal_", (0.5, 0.25)),
         ("geometric_", (0.3,)), ("random_", ()), ("random_", (7,)), ("random_", (-3, 4))]


@pytest.mark.parametrize("name,args", FILLS)
def test_random_fills_follow_a_generator(name, args):
    g = ag.Generator().manual_seed(5)
    a = getattr(ag.empty(50, dtype=ag.float64), name)(*args, generator=g)
    g.manual_seed(5)
    b = getattr(ag.empty(50, dtype=ag.float64), name)(*args, generator=g)
    assert ag.equal(a, b)
    ag.manual_seed(5)
    c = getattr(ag.empty(50, dtype=ag.float64), name)(*args)
    ag.manual_seed(5)
    assert ag.equal(c, getattr(ag.empty(50, dtype=ag.float64), name)(*args))


def test_random_fills_have_their_distributions():
    n = 40000
    x = ag.empty(n, dtype=ag.float64)
    assert abs(float(x.exponential_(4.0).mean()) - 0.25) < 0.01
    assert abs(float(x.geometric_(0.25).mean()) - 4.0) < 0.1 and float(x.min()) >= 1
    assert abs(float(x.log_normal_(0.5, 0.25).log().mean()) - 0.5) < 0.01
    assert abs(float(x.cauchy_(2.0, 0.5).median()) - 2.0) < 0.03
    r = ag.empty(n, dtype=ag.int64).random_(-3, 4)
    assert set(r.unique().tolist()) == set(range(-3, 4))
    assert float(ag.empty(n).random_().max()) <= 2 ** 24        # float32: exact integers only
    assert set(ag.empty(n, dtype=ag.bool).random_().unique().tolist()) == {False, True}
    assert ag.empty(5, dtype=ag.uint8).random_().dtype is ag.uint8


DRAWS = FILLS[:5] + [("uniform_", (-1.0, 1.0)), ("normal_", (0.0, 2.0)), ("bernoulli_", (0.3,))]


def test_random_fills_record_a_zero_gradient_node(torch):
    for name, args in DRAWS:
        a = ag.ones(3, requires_grad=True) * 2
        t = torch.ones(3, requires_grad=True) * 2
        getattr(a, name)(*args)
        getattr(t, name)(*args)
        assert a.grad_fn.name() == type(t.grad_fn).__name__
        x = a.grad_fn.next_functions[0][0]
        assert x is not None
    a = ag.ones(3, requires_grad=True)
    b = a * 2
    b.exponential_()
    b.sum().backward()
    assert ag.equal(a.grad, ag.zeros(3))
    for name, args in DRAWS:
        leaf = ag.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            getattr(leaf, name)(*args)
        with ag.no_grad():      # as nn.init does
            getattr(leaf, name)(*args)


@pytest.mark.parametrize("case", [
    lambda lib: lib.zeros(3).exponential_(0),
    lambda lib: lib.zeros(3, dtype=lib.int64).exponential_(),
    lambda lib: lib.zeros(3, dtype=lib.int64).cauchy_(),
    lambda lib: lib.zeros(3).cauchy_(sigma=0),
    lambda lib: lib.zeros(3).log_normal_(std=-1),
    lambda lib: lib.zeros(3).geometric_(1),
    lambda lib: lib.zeros(3).geometric_(0),
    lambda lib: lib.zeros(3).random_(5, 2),
    lambda lib: lib.zeros(3, dtype=lib.uint8).random_(300),
    lambda lib: lib.zeros(3, dtype=lib.uint8).random_(-1, 3),
    lambda lib: lib.zeros(3).random_(None),
    lambda lib: lib.zeros(3).exponential_(generator=5),
    lambda lib: lib.zeros(3).uniform_(generator="seed"),
    lambda lib: lib.rand(3, generator=1),
    lambda lib: lib.poisson(lib.tensor([1.0]), generator=3),
    lambda lib: lib.poisson(lib.tensor([-1.0])),
    lambda lib: lib.poisson(lib.tensor([1])),
])
def test_random_fill_errors_like_torch(torch, case):
    _raises_like(torch, case)


def test_poisson_draws_have_zero_gradient(torch):
    x = ag.tensor([2.0, 30.0], requires_grad=True)
    draws = ag.poisson(x.expand(20000, 2))
    assert abs(draws.mean(0) - x).max().item() < 1.0
    draws.sum().backward()
    assert ag.equal(x.grad, ag.zeros(2))


def test_random_fills_under_vmap():
    x = ag.zeros(4, 3)
    same = vmap(lambda r: r.clone().exponential_(), randomness="same")(x)
    assert ag.equal(same[0], same[3]) and not ag.equal(same[0, 0], same[0, 1])
    diff = vmap(lambda r: r.clone().random_(0, 1000), randomness="different")(x)
    assert not ag.equal(diff[0], diff[1])
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda r: r.clone().geometric_(0.5))(x)


GENERATOR_CALLS = [
    lambda g: ag.rand(3, generator=g), lambda g: ag.randn(3, generator=g),
    lambda g: ag.randint(0, 9, (3,), generator=g), lambda g: ag.randperm(5, generator=g),
    lambda g: ag.rand_like(ag.zeros(3), generator=g),
    lambda g: ag.randn_like(ag.zeros(3), generator=g),
    lambda g: ag.randint_like(ag.zeros(3), 9, generator=g),
    lambda g: ag.normal(ag.zeros(3), 1.0, generator=g),
    lambda g: ag.bernoulli(ag.full((5,), 0.5), generator=g),
    lambda g: ag.poisson(ag.full((5,), 3.0), generator=g),
    lambda g: ag.multinomial(ag.ones(4), 2, generator=g),
    lambda g: ag.zeros(3).uniform_(generator=g), lambda g: ag.zeros(3).normal_(generator=g),
    lambda g: ag.zeros(5).bernoulli_(0.5, generator=g),
    lambda g: ag.nn.init.uniform_(ag.zeros(3), generator=g),
    lambda g: ag.nn.init.kaiming_normal_(ag.zeros(3, 2), generator=g),
    lambda g: ag.nn.init.orthogonal_(ag.zeros(3, 2), generator=g),
    lambda g: ag.tensor([list(s) for s in ag.utils.data.random_split(range(6), [3, 3],
                                                                      generator=g)]),
    lambda g: ag.tensor(list(ag.utils.data.RandomSampler(range(6), generator=g))),
] + [lambda g, name=name, args=args: getattr(ag.zeros(4), name)(*args, generator=g)
     for name, args in FILLS]


@pytest.mark.parametrize("call", GENERATOR_CALLS)
def test_generators_are_accepted_where_torch_takes_one(call):
    g = ag.Generator()
    a = call(g.manual_seed(11))
    b = call(g.manual_seed(11))
    assert ag.equal(a, b)


# ----------------------------------------------------------------- isclose, tril on bool
def test_isclose_refuses_mixed_dtypes_as_torch(torch):
    for case in (lambda lib: lib.isclose(lib.tensor([1.0]), lib.tensor([1])),
                 lambda lib: lib.allclose(lib.tensor([1.0]), lib.tensor([1.0]).double()),
                 lambda lib: lib.tensor([1]).isclose(lib.tensor([1]).int()),
                 lambda lib: lib.isclose(lib.tensor([1.0]), 1.0),
                 lambda lib: lib.isclose(lib.tensor([1.0]), lib.tensor([1.0]), rtol=-1)):
        a, t = _raises_like(torch, case)
        assert a == t
    big = [2 ** 60 + 1, 10]
    for lib in (ag, torch):      # integers compare in the default float dtype, as torch
        got = lib.tensor(big).isclose(lib.tensor([2 ** 60, 5]), rtol=0, atol=5).tolist()
        assert got == [True, True]


def test_tril_triu_keep_bool(torch):
    m = np.random.default_rng(0).uniform(size=(3, 4)) > 0.3
    for name in ("tril", "triu"):
        a = getattr(ag.tensor(m), name)(1)
        assert a.dtype is ag.bool
        assert_close(a, getattr(torch.tensor(m), name)(1))
        t = ag.tensor(m)
        getattr(t, name + "_")(-1)
        assert t.dtype is ag.bool and ag.equal(t, getattr(ag.tensor(m), name)(-1))


def test_bfloat16(torch):
    """bfloat16 (NumPy kind 'V' through ml-dtypes) is a float everywhere here."""
    pytest.importorskip("ml_dtypes")
    for lib in (ag, torch):
        z = lib.zeros(3, dtype=lib.bfloat16)
        third = lib.full((2,), 1 / 3, dtype=lib.bfloat16)
        mean = z.scatter_reduce(0, lib.tensor([0, 0]), third, "mean")
        amax = z.scatter_reduce(0, lib.tensor([0, 0]), -third, "amax", include_self=False)
        close = lib.tensor([1.0, float("nan")], dtype=lib.bfloat16).isclose(
            lib.tensor([1.004, float("nan")], dtype=lib.bfloat16), 0, 0.001, True)
        top = lib.empty(20000, dtype=lib.bfloat16).random_().max()
        got = [mean.float().tolist(), amax.float().tolist(), close.tolist(), top.item()]
        if lib is ag:
            mine = got
    assert mine == got


def test_cumsum_of_bools_and_integers_is_int64(torch):
    for v in ([True, False, True], [1, 2, 3]):
        assert_close(ag.tensor(v).cumsum(0), torch.tensor(v).cumsum(0))


# ----------------------------------------------------------------- scatter_reduce, index_reduce
def test_scatter_reduce_amax_excluded_input_takes_no_share():
    """torch gives an excluded input equal to the result a share of the gradient (so src's
    gradient is halved); ours is the derivative (finite differences)."""
    x = np.array([3.0, 5.0])
    src = np.array([3.0, 1.0])
    index = ag.tensor([0, 0])

    def f(s):
        return ag.tensor(x).scatter_reduce(0, index, ag.tensor(s), "amax",
                                           include_self=False).numpy()
    fd, w = _fd_grad(f, src)
    s = ag.tensor(src, requires_grad=True)
    ag.tensor(x).scatter_reduce(0, index, s, "amax", include_self=False).backward(ag.tensor(w))
    np.testing.assert_allclose(s.grad.numpy(), fd, atol=1e-8)


def test_scatter_reduce_prod_two_zeros_double_backward_raises_like_torch(torch):
    def f(lib):
        x = lib.tensor([2.0, 3.0], requires_grad=True)
        s = lib.tensor([0.0, 0.0, 4.0], requires_grad=True)
        out = x.scatter_reduce(0, lib.tensor([0, 0, 1]), s, "prod")
        g, = lib.autograd.grad(out.sum(), s, create_graph=True)
        lib.autograd.grad(g.sum(), s)
    a, t = _raises_like(torch, f)
    assert a == t


def test_scatter_reduce_prod_two_zeros_forward_over_reverse_raises():
    x, s = ag.tensor([2.0, 3.0]), ag.tensor([0.0, 0.0, 4.0])

    def grad_s(s):
        return ag.func.grad(lambda s: x.scatter_reduce(0, ag.tensor([0, 0, 1]), s,
                                                       "prod").sum())(s)
    with pytest.raises(RuntimeError, match="Double backward is unsupported"):
        ag.func.jvp(grad_s, (s,), (ag.ones(3),))
    ok = ag.tensor([0.0, 5.0, 4.0])       # one zero per position: differentiable twice
    _, t = ag.func.jvp(grad_s, (ok,), (ag.ones(3),))
    assert t.tolist() == [2.0, 2.0, 0.0]     # d(2 s1, 2 s0, 3) along (1, 1, 1)


@pytest.mark.parametrize("case", [
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "maximum"),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]).to(lib.int16), lib.ones(1), "sum"),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1).double(), "sum"),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([5]), lib.ones(1), "sum"),
    lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([[0]]), lib.ones(1, 1), "sum"),
    lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0]), lib.ones(1), "sum"),
    lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([[0]]), lib.ones(1), "prod"),
    lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0, 1]), lib.ones(3), "prod"),
    lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0, 3]), lib.ones(2), "prod"),
    lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0.0]), lib.ones(1), "prod"),
    lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0]), lib.ones(1).double(), "prod"),
    lambda lib: lib.zeros(2, 3).index_reduce(1, lib.tensor([0, 1, 1]), lib.ones(3, 3), "mean"),
    lambda lib: lib.zeros(2, 3).scatter(0, lib.tensor([[0, 1, 0]]), 2.0, reduce="mean"),
])
def test_scatter_and_index_reduce_errors_like_torch(torch, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # torch: index_reduce is beta
        a, t = _raises_like(torch, case)
    assert a == t


def test_scatter_reduce_integers_floor_their_mean(torch):
    for lib in (ag, torch):
        out = lib.tensor([0, 0, 5]).scatter_reduce(0, lib.tensor([0, 0, 1, 1]),
                                                   lib.tensor([-1, 0, -3, 0]), "mean",
                                                   include_self=False)
        assert out.tolist() == [-1, -2, 5]


def test_scatter_with_reduce_warns_for_a_tensor_src_as_torch(torch):
    for lib in (ag, torch):
        with pytest.warns(UserWarning, match="deprecated"):
            lib.zeros(2, 3).scatter(0, lib.tensor([[0, 1, 0]]), lib.ones(1, 3), reduce="add")


# ----------------------------------------------------------------- vmap against torch.func.vmap
VMAP_CASES = [
    ("scatter_reduce_amax", lambda lib, x, s: x.scatter_reduce(
        1, lib.tensor([[0, 1, 0, 2]]), s, "amax", include_self=False), ((1, 3), (1, 4))),
    ("scatter_reduce_mean", lambda lib, x, s: lib.scatter_reduce(
        x, 0, lib.tensor([0, 0, 2, 1]), s, "mean"), ((3,), (4,))),
    ("index_reduce_prod", lambda lib, x, s: x.index_reduce(
        0, lib.tensor([1, 0, 1]), s, "prod"), ((2, 2), (3, 2))),
    ("masked_scatter", lambda lib, x, s: x.masked_scatter(x > 0, s), ((2, 3), (6,))),
    ("put", lambda lib, x, s: x.put(lib.tensor([4, 0, 2]), s, accumulate=True), ((2, 3), (3,))),
    ("as_strided", lambda lib, x, s: x.reshape(-1).clone().as_strided((2, 2), (1, 2), 1) * s[:2],
     ((2, 3), (3,))),
    ("unfold", lambda lib, x, s: x.unfold(1, 2, 1) * s[0], ((2, 3), (3,))),
    ("block_diag", lambda lib, x, s: lib.block_diag(x, s), ((2, 3), (3,))),
    ("combinations", lambda lib, x, s: lib.combinations(s) * x[0, 0], ((2, 3), (3,))),
    ("cartesian_prod", lambda lib, x, s: lib.cartesian_prod(x[0], s), ((2, 3), (3,))),
]


@pytest.mark.parametrize("name,f,shapes", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
@pytest.mark.parametrize("in_dims", [(0, 0), (1, None), (None, -1)])
def test_vmap_matches_torch_func_vmap(torch, name, f, shapes, in_dims):
    rng = np.random.default_rng(4)
    args = []
    for shape, d in zip(shapes, in_dims):
        a = rng.standard_normal(shape)
        if d is not None:
            a = np.stack([a * (1 + k) for k in range(3)], axis=d % (len(shape) + 1))
        args.append(a)
    got = vmap(lambda *xs: f(ag, *xs), in_dims=in_dims)(*(ag.tensor(a) for a in args))
    with warnings.catch_warnings():     # torch: no batching rule for some, a slower loop
        warnings.filterwarnings("ignore", "There is a performance drop", UserWarning)
        want = torch.func.vmap(lambda *xs: f(torch, *xs), in_dims=in_dims)(
            *(torch.tensor(a) for a in args))
    assert_close(got, want)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_with_a_batched_index(torch, reduce):
    """One index per example: vmap against torch.func.vmap, per-example gradients against a
    loop (torch's vmap cannot take the gradient of a product: its backward calls .item())."""
    rng = np.random.default_rng(9)
    x, s = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 2, 5))
    i = rng.integers(0, 4, (3, 2, 5))

    def f(lib, x, s, i):
        return x.scatter_reduce(1, i, s, reduce, include_self=reduce != "mean")
    got = vmap(lambda x, i: f(ag, x, ag.tensor(s[0]), i), in_dims=(None, 0))(
        ag.tensor(x[0]), ag.tensor(i))
    want = torch.func.vmap(lambda x, i: f(torch, x, torch.tensor(s[0]), i), in_dims=(None, 0))(
        torch.tensor(x[0]), torch.tensor(i))
    assert_close(got, want)
    grad = ag.func.grad(lambda x, s, i: f(ag, x, s, i).sin().sum(), argnums=(0, 1))
    per_example = vmap(grad)(ag.tensor(x), ag.tensor(s), ag.tensor(i))
    for b in range(3):
        one = grad(ag.tensor(x[b]), ag.tensor(s[b]), ag.tensor(i[b]))
        for got_b, want_b in zip(per_example, one):
            np.testing.assert_allclose(got_b[b].numpy(), want_b.numpy(), rtol=1e-12, atol=1e-12)


def test_index_reduce_with_a_batched_index(torch):
    rng = np.random.default_rng(10)
    x, s = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 5, 2))
    i = rng.integers(0, 4, (3, 5))
    got = vmap(lambda x, s, i: x.index_reduce(0, i, s, "amin"))(
        ag.tensor(x), ag.tensor(s), ag.tensor(i))
    with warnings.catch_warnings():     # torch: no batching rule for index_reduce, a loop
        warnings.filterwarnings("ignore", "There is a performance drop", UserWarning)
        want = torch.func.vmap(lambda x, s, i: x.index_reduce(0, i, s, "amin"))(
            torch.tensor(x), torch.tensor(s), torch.tensor(i))
    assert_close(got, want)


def test_masked_scatter_with_a_batched_mask_matches_a_loop():
    rng = np.random.default_rng(5)
    x, s = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    m = rng.uniform(size=(4, 5)) > 0.5
    got = vmap(lambda x, m, s: x.masked_scatter(m, s))(ag.tensor(x), ag.tensor(m), ag.tensor(s))
    for b in range(4):
        want = ag.tensor(x[b]).masked_scatter(ag.tensor(m[b]), ag.tensor(s[b]))
        assert ag.equal(got[b], want)


# ----------------------------------------------------------------- masked_scatter, put
@pytest.mark.parametrize("case", [
    lambda lib: lib.zeros(2, 3).masked_scatter(lib.ones(2, 3, dtype=lib.int64), lib.ones(6)),
    lambda lib: lib.zeros(2, 3).masked_scatter(lib.ones(2, 3, dtype=lib.bool),
                                               lib.ones(6).double()),
    lambda lib: lib.zeros(2, 3).masked_scatter(lib.ones(2, 3, dtype=lib.bool), lib.ones(5)),
    lambda lib: lib.zeros(3).masked_scatter_(lib.ones(2, 3, dtype=lib.bool), lib.ones(6)),
    lambda lib: lib.zeros(2, 3).put(lib.tensor([0, 7]), lib.ones(2)),
    lambda lib: lib.zeros(2, 3).put(lib.tensor([0, 1]), lib.ones(3)),
    lambda lib: lib.zeros(2, 3).put(lib.tensor([0, 1]).int(), lib.ones(2)),
    lambda lib: lib.zeros(2, 3).put(lib.tensor([0, 1]), lib.ones(2).double()),
    lambda lib: lib.zeros(2, 3).take(lib.tensor([-7])),
])
def test_masked_scatter_and_put_errors_like_torch(torch, case):
    _raises_like(torch, case)


def test_put_in_place_writes_through_a_view(torch):
    for lib in (ag, torch):
        base = lib.zeros(3, 4)
        view = base[1:]
        view.put_(lib.tensor([0, 5, -1]), lib.tensor([1.0, 2.0, 3.0]))
        assert base.sum().item() == 6.0 and base[1, 0].item() == 1.0 and base[2, 3].item() == 3.0


# ----------------------------------------------------------------- memory layout and strided views
def _views(lib):
    x = lib.arange(24.0).reshape(4, 6)
    return {
        "contiguous": x, "transpose": x.t(), "slice": x[1:, 2:5], "step": x[::2, 1::3],
        "expand": lib.arange(3.0).expand(4, 3), "unsqueeze": x[1].unsqueeze(0),
        "diagonal": x.diagonal(), "select": x[:, 2], "narrow": x.narrow(1, 2, 3),
        "permute": x.reshape(2, 2, 6).permute(2, 0, 1), "size1": lib.zeros(3, 1),
        "empty": lib.zeros(0, 3), "expand_size1": lib.zeros(3, 1).expand(3, 4),
        "as_strided": x.as_strided((2, 2), (1, 6), 3), "as_strided_of_view": x[1:].as_strided(
            (2, 3), (2, 1)), "unfold": x.unfold(1, 2, 2), "unfold_of_slice": x[1:].unfold(0, 2, 1),
        "view": x.view(2, 12), "detach_of_slice": x[2:].detach(),
    }


def test_strides_offsets_and_contiguity_match_torch(torch):
    mine, theirs = _views(ag), _views(torch)
    for name in mine:
        a, t = mine[name], theirs[name]
        assert (a.stride(), a.storage_offset(), a.is_contiguous()) == \
               (t.stride(), t.storage_offset(), t.is_contiguous()), name
        assert a.stride(-1) == t.stride(-1), name
        assert_close(a, t)


def test_strides_inside_vmap_are_per_example():
    x = ag.zeros(3, 4, 5)
    seen = []
    for d in (1, 0):
        vmap(lambda e: seen.append((e.stride(), e.storage_offset(), e.is_contiguous())) or e,
             in_dims=d)(x)
    assert seen == [((20, 1), 0, False), ((5, 1), 0, True)]     # x[:, i] and x[i]


def test_as_strided_and_unfold_are_views_that_write_through(torch):
    for lib in (ag, torch):
        x = lib.arange(12.0)
        v = x.as_strided((2, 3), (1, 4), 2)
        assert v._base is x
        v.mul_(10)
        u = x.unfold(0, 3, 3)
        u[1].zero_()
        assert x.tolist() == [0, 1, 20, 0, 0, 0, 60, 70, 8, 9, 100, 110]
        assert x._version == v._version == u._version == 2


def test_overlapping_views_refuse_in_place_writes():
    """torch writes element by element (each write seen by the next reads); we raise."""
    for view in (ag.arange(6.0).unfold(0, 3, 1), ag.arange(6.0).as_strided((2, 2), (1, 1))):
        with pytest.raises(RuntimeError, match="single memory location"):
            view.mul_(2)


def _grad_pair(lib, f, x, w):
    t = lib.tensor(x, requires_grad=True)
    out = f(lib, t)
    g, = lib.autograd.grad(out, t, lib.tensor(w), create_graph=True)
    gg = lib.autograd.grad((g * g).sum(), t)[0] if g.requires_grad else None
    return out, g, gg


STRIDED_GRADS = [
    ("overlapping output", lambda lib, x: (x * 1).as_strided((3, 2), (1, 1)), (6,)),
    ("overlapping input", lambda lib, x: x.expand(3, 4).as_strided((2, 2), (1, 1), 1), (4,)),
    ("transposed input", lambda lib, x: x.t().as_strided((2, 2), (2, 1), 1) ** 3, (2, 3)),
    ("written through", lambda lib, x: _write_through(lib, x), (6,)),
    ("overlapping windows", lambda lib, x: x.unfold(1, 3, 1).sin(), (2, 5)),
    ("windows written", lambda lib, x: _windows_written(lib, x), (6,)),
]


def _write_through(lib, x):
    b = x * 1
    b.as_strided((2, 2), (1, 3), 1).mul_(x[:2].unsqueeze(0))
    return b ** 2


def _windows_written(lib, x):
    b = x * 1
    b.unfold(0, 2, 2).mul_(3)
    return b.exp()


@pytest.mark.parametrize("name,f,shape", STRIDED_GRADS, ids=[c[0] for c in STRIDED_GRADS])
def test_strided_view_gradients_match_torch(torch, name, f, shape):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(tuple(f(torch, torch.tensor(x)).shape))
    for a, t in zip(_grad_pair(ag, f, x, w), _grad_pair(torch, f, x, w)):
        if t is None:
            assert a is None or not a.any()
        else:
            assert_close(a, t)


def _write_through_views(lib, x):
    b = x * 1
    b.as_strided((2, 2), (1, 3), b.storage_offset() + 1).mul_(2)
    b.unfold(0, 2, 2)[0].add_(1)
    return (b ** 2).sum()


@pytest.mark.parametrize("transform", ["grad", "vmap_grad", "jacfwd_grad", "jacrev", "vmap"])
def test_writes_through_strided_views_under_transforms(torch, transform):
    xs = np.random.default_rng(11).standard_normal((3, 6))

    def run(lib):
        f = lambda x: _write_through_views(lib, x)    # noqa: E731
        fn = lib.func
        t = {"grad": lambda: fn.grad(f)(lib.tensor(xs[0])),
             "vmap_grad": lambda: fn.vmap(fn.grad(f))(lib.tensor(xs)),
             "jacfwd_grad": lambda: fn.jacfwd(fn.grad(f))(lib.tensor(xs[0])),
             "jacrev": lambda: fn.jacrev(lambda x: x * 1 + _write_through_views(lib, x))(
                 lib.tensor(xs[0])),
             "vmap": lambda: fn.vmap(f)(lib.tensor(xs))}
        return t[transform]()
    assert_close(run(ag), run(torch))


def test_as_strided_past_its_input_is_made_from_the_base():
    """A view of `b[1:]` reaching b[0]: its gradient reaches x[0] too (finite differences;
    torch's plain backward drops it)."""
    def f(x):
        return (ag.tensor(x) * 1)[1:].as_strided((2,), (2,), 0).numpy() ** 2
    x = np.arange(1.0, 7.0)
    fd, w = _fd_grad(f, x)
    t = ag.tensor(x, requires_grad=True)
    ((t * 1)[1:].as_strided((2,), (2,), 0) ** 2).backward(ag.tensor(w))
    np.testing.assert_allclose(t.grad.numpy(), fd, atol=1e-6)


def test_as_strided_jvp_matches_torch(torch):
    import torch.autograd.forward_ad as fwAD
    rng = np.random.default_rng(7)
    x, tx = rng.standard_normal(6), rng.standard_normal(6)
    for f in (lambda x: x.as_strided((2, 2), (1, 2), 1),
              lambda x: (x * 2).as_strided((3, 2), (1, 1)), lambda x: x.unfold(0, 3, 2)):
        with fwAD.dual_level():
            want = fwAD.unpack_dual(f(fwAD.make_dual(torch.tensor(x), torch.tensor(tx)))).tangent
        _, got = ag.func.jvp(f, (ag.tensor(x),), (ag.tensor(tx),))
        assert_close(got, want)


def test_as_strided_under_vmap_views_each_example_in_place(torch):
    """Each example's view starts at its own storage offset, as a loop over views does."""
    x = np.arange(12.0).reshape(4, 3)
    for in_dims in (0, 1):
        got = vmap(lambda e: e.as_strided((2,), (1,)), in_dims=in_dims)(ag.tensor(x))
        want = torch.func.vmap(lambda e: e.as_strided((2,), (1,)), in_dims=in_dims)(
            torch.tensor(x))
        assert_close(got, want)
        rows = ag.tensor(x).movedim(in_dims, 0)
        assert ag.equal(got, ag.stack([r.as_strided((2,), (1,)) for r in rows]))


@pytest.mark.parametrize("case", [
    lambda lib: lib.arange(24.0).as_strided((3, 3), (6, 1), 20),
    lambda lib: lib.arange(6.0).as_strided((2,), (-1,)),
    lambda lib: lib.arange(6.0).as_strided((2,), (1,), -1),
    lambda lib: lib.arange(6.0).as_strided((2, 2), (1,)),
    lambda lib: lib.arange(6.0).unfold(0, 7, 1),
    lambda lib: lib.arange(6.0).unfold(0, 2, 0),
    lambda lib: lib.arange(6.0).unfold(1, 2, 1),
])
def test_strided_view_errors_like_torch(torch, case):
    a, t = _raises_like(torch, case)
    assert a == t


# ----------------------------------------------------------------- creation
@pytest.mark.parametrize("case", [
    lambda lib: lib.tril_indices(3, 3, dtype=lib.float32),
    lambda lib: lib.triu_indices(-1, 3),
    lambda lib: lib.tril_indices(3, 2.0),
    lambda lib: lib.block_diag(lib.ones(2, 2, 2)),
    lambda lib: lib.block_diag([lib.ones(2)]),
    lambda lib: lib.combinations(lib.ones(2, 2)),
    lambda lib: lib.combinations(lib.ones(3), -1),
    lambda lib: lib.cartesian_prod(lib.ones(2), lib.ones(2, 2)),
])
def test_creation_errors_like_torch(torch, case):
    _raises_like(torch, case)


def test_block_diag_of_nothing_and_dtypes(torch):
    assert_close(ag.block_diag(), torch.block_diag())
    a = ag.block_diag(ag.tensor([[1, 2]]), ag.tensor([True]), ag.tensor(2.5, dtype=ag.float64))
    t = torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([True]),
                         torch.tensor(2.5, dtype=torch.float64))
    assert_close(a, t)


# ----------------------------------------------------------------- interpolate
def test_antialias_with_an_output_dim_of_one_is_separable(torch):
    """torch's antialiased kernel repeats the first row when the output width is 1; ours is
    its per-dim resampling applied one dim after the other, as everywhere else."""
    F, T = ag.nn.functional, torch.nn.functional
    x = np.random.default_rng(8).standard_normal((1, 2, 8, 3))
    for mode in ("bilinear", "bicubic"):
        got = F.interpolate(ag.tensor(x), size=(4, 1), mode=mode, antialias=True)
        rows = T.interpolate(torch.tensor(x), size=(4, 3), mode=mode, antialias=True)
        assert_close(got, T.interpolate(rows, size=(4, 1), mode=mode, antialias=True))


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), size=2, antialias=True),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4), size=2, mode="linear",
                                              antialias=True),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4), size=2, mode="bicubic"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4), size=2, mode="bicubic",
                                              scale_factor=2),
])
def test_interpolate_errors_like_torch(torch, case):
    _raises_like(torch, case)


@pytest.mark.parametrize("op", ["scatter", "index_copy"])
def test_repeated_targets_keep_the_last_write(torch, op):
    """Several values written to one place: the last in index order stays (torch's CPU
    kernels; its docs leave it undefined) and only it gets a gradient (the others do not reach
    the result: finite differences agree; torch's formula gives every one the gradient)."""
    def run(M, src):
        x = M.zeros(2, 4, dtype=M.float64)
        if op == "scatter":
            return x.scatter(1, M.tensor([[2, 2, 1], [3, 0, 3]]), src)
        return x.index_copy(0, M.tensor([1, 0, 1]), src.reshape(3, 2).repeat(1, 2))
    src = np.arange(1.0, 7.0).reshape(2, 3)
    mine = run(ag, ag.tensor(src, requires_grad=True))
    np.testing.assert_array_equal(mine.detach().numpy(), run(torch, torch.tensor(src)).numpy())
    w = np.arange(8.0).reshape(2, 4)
    s = ag.tensor(src, requires_grad=True)
    g, = ag.autograd.grad((run(ag, s) * ag.tensor(w)).sum(), s)
    fd = np.zeros_like(src)
    for i in np.ndindex(*src.shape):
        e = np.zeros_like(src)
        e[i] = 1e-6
        fd[i] = ((run(ag, ag.tensor(src + e)).numpy() - run(ag, ag.tensor(src - e)).numpy())
                 * w).sum() / 2e-6
    np.testing.assert_allclose(g.numpy(), fd, atol=1e-6)
