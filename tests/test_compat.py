"""torch-namespace compatibility: the global generator, legacy constructors, Variable,
the functorch API and module paths, each against torch (types, dtypes, errors)."""
import importlib
import warnings

import numpy as np
import pytest

import arraygrad as ag


# ----------------------------------------------------------------- generators
# (name, call taking the library and a generator): every random function with generator=
RANDOM_CALLS = [
    ("rand", lambda L, g: L.rand(2, 3, generator=g)),
    ("randn", lambda L, g: L.randn((4,), generator=g, dtype=L.float64)),
    ("randint", lambda L, g: L.randint(0, 7, (5,), generator=g)),
    ("randint_high", lambda L, g: L.randint(7, (5,), generator=g)),
    ("randperm", lambda L, g: L.randperm(6, generator=g)),
    ("rand_like", lambda L, g: L.rand_like(L.zeros(3, dtype=L.float64), generator=g)),
    ("randn_like", lambda L, g: L.randn_like(L.zeros(2, 2), generator=g)),
    ("randint_like", lambda L, g: L.randint_like(L.zeros(4), 3, generator=g)),
    ("normal_size", lambda L, g: L.normal(0.0, 2.0, (3,), generator=g)),
    ("normal_tensor", lambda L, g: L.normal(L.zeros(3), L.ones(3), generator=g)),
    ("uniform_", lambda L, g: L.zeros(3).uniform_(-1, 1, generator=g)),
    ("normal_", lambda L, g: L.zeros(3).normal_(2.0, 0.5, generator=g)),
    ("bernoulli", lambda L, g: L.bernoulli(L.full((40,), 0.5, dtype=L.float64), generator=g)),
    ("bernoulli_p", lambda L, g: L.bernoulli(L.zeros(40), 0.5, generator=g)),
    ("bernoulli_", lambda L, g: L.zeros(40).bernoulli_(0.5, generator=g)),
    ("multinomial", lambda L, g: L.multinomial(L.ones(3, 10), 10, generator=g)),
    ("multinomial_repl", lambda L, g: L.multinomial(L.ones(10), 30, True, generator=g)),
]


@pytest.mark.parametrize("name,call", RANDOM_CALLS, ids=[n for n, _ in RANDOM_CALLS])
def test_generator_is_honoured_and_leaves_the_global_stream_alone(torch, name, call):
    ag.manual_seed(0)
    before = ag.get_rng_state()
    a = call(ag, ag.Generator().manual_seed(5))
    b = call(ag, ag.Generator().manual_seed(5))
    assert ag.equal(ag.get_rng_state(), before), "a generator= draw moved the global stream"
    assert ag.equal(a, b)
    c = call(ag, ag.Generator().manual_seed(6))
    assert not ag.equal(a, c)
    ref = call(torch, torch.Generator().manual_seed(5))
    assert tuple(a.shape) == tuple(ref.shape) and str(a.dtype) == str(ref.dtype).replace(
        "torch.", "arraygrad.")


def test_default_generator_is_the_global_stream(torch):
    assert type(ag.default_generator) is ag.Generator
    assert ag.manual_seed(3) is ag.default_generator
    assert torch.manual_seed(3) is torch.default_generator
    assert ag.initial_seed() == 3 == ag.default_generator.initial_seed()
    a = ag.rand(4)
    ag.default_generator.manual_seed(3)
    assert ag.equal(ag.rand(4), a)
    # get_rng_state and the generator's get_state are the same state, either restores
    assert ag.equal(ag.default_generator.get_state(), ag.get_rng_state())
    state = ag.default_generator.get_state()
    x = ag.randn(3)
    ag.set_rng_state(state)
    assert ag.equal(ag.randn(3), x)
    ag.default_generator.set_state(state)
    assert ag.equal(ag.randn(3), x)
    # the global stream feeds nn.init and samplers too
    ag.manual_seed(9)
    w1 = ag.nn.init.normal_(ag.empty(3))
    ag.manual_seed(9)
    assert ag.equal(ag.nn.init.normal_(ag.empty(3)), w1)


def test_seed_and_initial_seed(torch):
    s = ag.seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 64
    assert ag.initial_seed() == s
    a = ag.rand(3)
    ag.manual_seed(s)
    assert ag.equal(ag.rand(3), a)
    assert ag.Generator().initial_seed() == torch.Generator().initial_seed()


def test_generator_errors_as_torch(torch):
    for L in (ag, torch):
        with pytest.raises(TypeError, match="generator"):
            L.rand(2, generator=3)
        with pytest.raises(TypeError):
            L.set_rng_state(3)
        with pytest.raises(ValueError):
            L.manual_seed("a")
    with pytest.raises(TypeError, match="size"):
        ag.normal(0.0, 1.0)
    with pytest.raises(RuntimeError, match="get_rng_state"):
        ag.set_rng_state(ag.tensor([1, 2, 3], dtype=ag.uint8))


def test_multinomial_and_bernoulli_frequencies_match_torch(torch):
    w = [1.0, 2.0, 0.0, 5.0]
    n = 40000

    def freqs(L, replacement):
        g = L.Generator().manual_seed(3)
        if replacement:
            s = L.multinomial(L.tensor(w, dtype=L.float64), n, True, generator=g)
        else:
            s = L.multinomial(L.tensor([w] * n, dtype=L.float64), 2, generator=g)
            assert (s[:, 0] != s[:, 1]).all()              # no category twice in a row
            s = s[:, 0]
        return np.bincount(s.numpy(), minlength=4) / n
    for replacement in (True, False):
        got, want = freqs(ag, replacement), freqs(torch, replacement)
        assert got[2] == 0 == want[2]
        np.testing.assert_allclose(got, want, atol=0.015)
    p = np.linspace(0, 1, 11)
    draws = ag.bernoulli(ag.tensor(np.tile(p, (4000, 1))), generator=ag.Generator().manual_seed(0))
    np.testing.assert_allclose(draws.mean(0).numpy(), p, atol=0.03)
    assert set(np.unique(draws.numpy())) <= {0.0, 1.0}
    assert draws[:, 0].sum().item() == 0 and draws[:, -1].sum().item() == 4000


RANDOM_ERRORS = [
    ("bernoulli_range", lambda L: L.bernoulli(L.tensor([2.0])), RuntimeError),
    ("bernoulli_ints", lambda L: L.bernoulli(L.tensor([1, 0])), NotImplementedError),
    ("multinomial_negative", lambda L: L.multinomial(L.tensor([-1.0, 2.0]), 1), RuntimeError),
    ("multinomial_inf", lambda L: L.multinomial(L.tensor([1.0, float("inf")]), 1),
     RuntimeError),
    ("multinomial_zero_sum", lambda L: L.multinomial(L.zeros(2), 1), RuntimeError),
    ("multinomial_3d", lambda L: L.multinomial(L.ones(2, 3, 4), 2), RuntimeError),
    ("multinomial_none", lambda L: L.multinomial(L.ones(3), 0), RuntimeError),
    ("multinomial_too_many", lambda L: L.multinomial(L.ones(3), 4), RuntimeError),
    ("multinomial_ints", lambda L: L.multinomial(L.tensor([1, 2]), 1), RuntimeError),
]


@pytest.mark.parametrize("name,call,exc", RANDOM_ERRORS, ids=[e[0] for e in RANDOM_ERRORS])
def test_random_errors_as_torch(torch, name, call, exc):
    for L in (ag, torch):
        with pytest.raises(exc):
            call(L)


def test_random_module_and_fork_rng(torch):
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
                 "default_generator", "Generator"):
        assert getattr(ag.random, name) is getattr(ag, name)
    for L in (ag, torch):
        L.manual_seed(4)
        before = L.get_rng_state()
        with L.random.fork_rng():
            L.manual_seed(0)
            a = L.rand(3)
        assert L.equal(L.get_rng_state(), before)
        with L.random.fork_rng(devices=[]):
            L.manual_seed(0)
            assert L.equal(L.rand(3), a)
        with L.random.fork_rng(enabled=False):
            L.rand(2)
        assert not L.equal(L.get_rng_state(), before)
        with pytest.raises(ValueError):     # the state comes back after an error too
            with L.random.fork_rng():
                L.rand(4)
                raise ValueError
    state = ag.get_rng_state()
    with pytest.raises(ValueError):
        with ag.random.fork_rng():
            ag.rand(4)
            raise ValueError
    assert ag.equal(ag.get_rng_state(), state)
    with pytest.raises(RuntimeError, match="GPU"):
        with ag.random.fork_rng(devices=[0]):
            pass


def test_seeded_dataloader_workers_draw_from_their_seed():
    """A worker seeds the global stream (torch's worker does torch.manual_seed(seed))."""
    from arraygrad.utils.data import DataLoader

    class Noise(ag.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return ag.rand(1)

    def run():
        loader = DataLoader(Noise(), batch_size=2, num_workers=2,
                            generator=ag.Generator().manual_seed(1))
        return ag.cat(list(loader))

    assert ag.equal(run(), run())


# ----------------------------------------------------------------- legacy constructors
LEGACY_CALLS = [
    ("empty", lambda L: L.Tensor()),
    ("sizes", lambda L: L.Tensor(2, 3).zero_()),
    ("size_obj", lambda L: L.Tensor(L.Size([2, 3])).zero_()),
    ("floats", lambda L: L.Tensor([1.5, 2.0])),
    ("ints", lambda L: L.Tensor([[1, 2], [3, 4]])),
    ("tuple_is_data", lambda L: L.Tensor((2, 3))),
    ("bools", lambda L: L.Tensor([True, False])),
    ("numpy", lambda L: L.Tensor(np.array([1, 2]))),
    ("tensors", lambda L: L.Tensor([L.tensor(1.0), L.tensor(2.0)])),
    ("device", lambda L: L.Tensor(2, device="cpu").zero_()),
    ("float", lambda L: L.FloatTensor([1, 2])),
    ("double", lambda L: L.DoubleTensor(np.array([1, 2]))),
    ("long_truncates", lambda L: L.LongTensor([1.7, -2.2])),
    ("long_sizes", lambda L: L.LongTensor(3).zero_()),
    ("int", lambda L: L.IntTensor([[1], [2]])),
    ("bool", lambda L: L.BoolTensor([1, 0])),
    ("byte", lambda L: L.ByteTensor([1, 255])),
    ("half", lambda L: L.HalfTensor([0.1])),
    ("char_short", lambda L: L.CharTensor([1]) + L.ShortTensor([2])),
    ("alias_any_dtype", lambda L: L.Tensor(L.zeros(2, dtype=L.float64))),
    ("new_sizes", lambda L: L.zeros(2, dtype=L.int64).new(3).zero_()),
    ("new_data", lambda L: L.zeros(2, dtype=L.int64).new([1.5, 2])),
    ("type_convert", lambda L: L.ones(2).type(L.DoubleTensor)),
    ("type_name", lambda L: L.ones(2).type("torch.IntTensor")),
    ("type_dtype", lambda L: L.ones(2).type(L.float16)),
]


@pytest.mark.parametrize("name,call", LEGACY_CALLS, ids=[n for n, _ in LEGACY_CALLS])
def test_legacy_constructors_match_torch(torch, name, call):
    got, want = call(ag), call(torch)
    assert type(got) is ag.Tensor
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_legacy_constructor_follows_the_default_dtype(torch):
    for L in (ag, torch):
        L.set_default_dtype(L.float64)
        try:
            assert L.Tensor(2).dtype is L.float64 and L.Tensor([1]).dtype is L.float64
            assert L.FloatTensor([1]).dtype is L.float32
        finally:
            L.set_default_dtype(L.float32)


def test_set_default_tensor_type_as_torch(torch):
    with pytest.warns(UserWarning, match="deprecated"):      # torch warns once per process
        ag.set_default_tensor_type(ag.FloatTensor)
    for L in (ag, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                L.set_default_tensor_type(L.DoubleTensor)
                assert L.get_default_dtype() is L.float64 and L.Tensor(1).dtype is L.float64
                L.set_default_tensor_type("torch.FloatTensor")
                assert L.get_default_dtype() is L.float32
                for bad in (L.LongTensor, L.float64):
                    with pytest.raises(TypeError, match="floating"):
                        L.set_default_tensor_type(bad)
        finally:
            L.set_default_dtype(L.float32)


def test_legacy_tensor_aliases_its_argument():
    x = ag.zeros(3)
    y = ag.Tensor(x)
    y[0] = 5.0
    assert x[0].item() == 5.0


def test_legacy_types_isinstance_and_names(torch):
    for L in (ag, torch):
        kinds = [L.FloatTensor, L.DoubleTensor, L.LongTensor, L.IntTensor, L.BoolTensor,
                 L.HalfTensor, L.ByteTensor, L.CharTensor, L.ShortTensor]
        for dtype, kind in [(L.float32, L.FloatTensor), (L.float64, L.DoubleTensor),
                            (L.int64, L.LongTensor), (L.int32, L.IntTensor),
                            (L.bool, L.BoolTensor)]:
            x = L.zeros(2, dtype=dtype)
            assert [isinstance(x, k) for k in kinds] == [k is kind for k in kinds]
            assert isinstance(x, L.Tensor)
        assert not issubclass(L.FloatTensor, L.Tensor)
        assert isinstance(L.nn.Parameter(L.zeros(2)), L.FloatTensor)
        assert L.FloatTensor.dtype is L.float32
        x = L.zeros(2)
        assert x.type(L.FloatTensor) is x and x.type(L.float32) is x
    for dtype in ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                  "bool"):
        assert ag.zeros(1, dtype=getattr(ag, dtype)).type() == \
            torch.zeros(1, dtype=getattr(torch, dtype)).type()
    assert repr(ag.FloatTensor) == "<class 'arraygrad.FloatTensor'>"


LEGACY_ERRORS = [
    ("scalar_data", lambda L: L.Tensor(2.5), TypeError),
    ("str_data", lambda L: L.Tensor("a"), TypeError),
    ("negative_size", lambda L: L.Tensor(-1), RuntimeError),
    ("ragged", lambda L: L.Tensor([[1, 2], [3]]), ValueError),
    ("requires_grad_kw", lambda L: L.Tensor(2, 3, requires_grad=True), TypeError),
    ("typed_other_dtype", lambda L: L.IntTensor(L.zeros(2)), TypeError),
    ("type_bad_name", lambda L: L.zeros(2).type("foo"), ValueError),
    ("type_bad_kind", lambda L: L.zeros(2).type(3), TypeError),
    ("cuda_device", lambda L: L.Tensor(2, device="cuda"), (AssertionError, RuntimeError)),
]


@pytest.mark.parametrize("name,call,exc", LEGACY_ERRORS, ids=[n for n, _, _ in LEGACY_ERRORS])
def test_legacy_errors_as_torch(torch, name, call, exc):
    for L in (ag, torch):
        with pytest.raises(exc):
            call(L)


# ----------------------------------------------------------------- Variable
def test_variable_is_a_detached_tensor_as_torch(torch):
    for L in (ag, torch):
        from_mod = importlib.import_module(L.__name__ + ".autograd.variable").Variable
        Variable = L.autograd.Variable
        assert from_mod is Variable
        x = L.zeros(2)
        v = Variable(x, requires_grad=True)
        assert type(v) is L.Tensor and v is not x and v.requires_grad and v.is_leaf
        assert not x.requires_grad
        with L.no_grad():
            v[0] = 3.0
        assert x[0].item() == 3.0                       # shares memory
        y = L.ones(2, requires_grad=True) * 2
        w = Variable(y)
        assert w.grad_fn is None and not w.requires_grad
        assert isinstance(x, Variable) and not isinstance(3, Variable)
        assert tuple(Variable().shape) == (0,)
        (v * 2).sum().backward()
        assert v.grad.tolist() == [2.0, 2.0]
        with pytest.raises(TypeError, match="Variable data has to be a tensor"):
            Variable([1.0])
        with pytest.warns(UserWarning, match="volatile"):
            Variable(x, volatile=True)


# ----------------------------------------------------------------- functorch
def _twin_models(torch, make):
    """The same model in both libraries, float64, with arraygrad's initial weights."""
    ours, theirs = make(ag).double(), make(torch).double()
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in ours.state_dict().items()})
    return ours, theirs


def _mlp(L):
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2))


def test_make_functional_matches_functorch(torch):
    functorch = pytest.importorskip("functorch")
    import arraygrad.functorch as ag_functorch
    ours, theirs = _twin_models(torch, _mlp)
    with pytest.warns(FutureWarning, match="make_functional"):
        fm, params = ag_functorch.make_functional(ours)
    with pytest.warns(FutureWarning):
        tfm, tparams = functorch.make_functional(theirs)
    assert isinstance(fm, ag.nn.Module) and fm.param_names == tfm.param_names
    assert all(p is not q for p, q in zip(params, ours.parameters()))      # copies, as torch
    assert all(p.requires_grad and p.is_leaf for p in params)
    x = np.random.default_rng(0).standard_normal((5, 3))
    np.testing.assert_allclose(fm(params, ag.tensor(x)).detach().numpy(),
                               tfm(tparams, torch.tensor(x)).detach().numpy(), rtol=1e-12)
    with pytest.warns(FutureWarning, match="functorch.grad"):
        g = ag_functorch.grad(lambda p: fm(p, ag.tensor(x)).pow(2).sum())(params)
    with pytest.warns(FutureWarning):
        tg = functorch.grad(lambda p: tfm(p, torch.tensor(x)).pow(2).sum())(tparams)
    for a, b in zip(g, tg):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10)
    # new parameters change the result; the original model is untouched
    shifted = tuple(p.detach() + 1 for p in params)
    assert not ag.allclose(fm(shifted, ag.tensor(x)), fm(params, ag.tensor(x)))
    np.testing.assert_allclose(ours(ag.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    with pytest.warns(FutureWarning):
        _, frozen = ag_functorch.make_functional(ours, disable_autograd_tracking=True)
    assert not any(p.requires_grad for p in frozen)


def test_make_functional_with_buffers_updates_buffers_as_functorch(torch):
    functorch = pytest.importorskip("functorch")
    import arraygrad.functorch as ag_functorch
    ours, theirs = _twin_models(torch, lambda L: L.nn.BatchNorm1d(3))
    with pytest.warns(FutureWarning):
        fm, params, buffers = ag_functorch.make_functional_with_buffers(ours)
    with pytest.warns(FutureWarning):
        tfm, tparams, tbuffers = functorch.make_functional_with_buffers(theirs)
    assert (fm.param_names, fm.buffer_names) == (tfm.param_names, tfm.buffer_names)
    x = np.random.default_rng(1).standard_normal((6, 3))
    np.testing.assert_allclose(fm(params, buffers, ag.tensor(x)).detach().numpy(),
                               tfm(tparams, tbuffers, torch.tensor(x)).detach().numpy(),
                               rtol=1e-10)
    for a, b in zip(buffers, tbuffers):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_combine_state_for_ensemble_with_vmap_matches_functorch(torch):
    functorch = pytest.importorskip("functorch")
    import arraygrad.functorch as ag_functorch
    pairs = [_twin_models(torch, _mlp) for _ in range(3)]
    with pytest.warns(FutureWarning, match="combine_state_for_ensemble"):
        fm, params, buffers = ag_functorch.combine_state_for_ensemble([p[0] for p in pairs])
    with pytest.warns(FutureWarning):
        tfm, tparams, tbuffers = functorch.combine_state_for_ensemble([p[1] for p in pairs])
    assert [tuple(p.shape) for p in params] == [tuple(p.shape) for p in tparams]
    assert not any(p.requires_grad for p in params) and buffers == () == tbuffers
    x = np.random.default_rng(2).standard_normal((3, 5, 3))
    got = ag.vmap(fm)(params, buffers, ag.tensor(x))
    want = torch.vmap(tfm)(tparams, tbuffers, torch.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


FUNCTORCH_ERRORS = [
    ("buffers", lambda F, L: F.make_functional(L.nn.BatchNorm1d(3)), "has buffers"),
    ("no_models", lambda F, L: F.combine_state_for_ensemble([]), "at least one model"),
    ("classes", lambda F, L: F.combine_state_for_ensemble([L.nn.Linear(2, 2), L.nn.Tanh()]),
     "same class"),
    ("modes", lambda F, L: F.combine_state_for_ensemble([L.nn.Linear(2, 2),
                                                          L.nn.Linear(2, 2).eval()]),
     "training/eval mode"),
]


@pytest.mark.parametrize("name,call,match", FUNCTORCH_ERRORS, ids=[e[0] for e in FUNCTORCH_ERRORS])
def test_functorch_errors_as_torch(torch, name, call, match):
    functorch = pytest.importorskip("functorch")
    import arraygrad.functorch as ag_functorch
    for F, L in ((ag_functorch, ag), (functorch, torch)):
        with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match=match):
            call(F, L)


def test_functional_module_checks_the_parameter_count():
    import arraygrad.functorch as ag_functorch
    with pytest.warns(FutureWarning):
        fm, params = ag_functorch.make_functional(ag.nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="expected 2 parameters"):
        fm(params[:1], ag.zeros(1, 3))


def test_functorch_transforms_warn_and_delegate(torch):
    functorch = pytest.importorskip("functorch")
    import arraygrad.functorch as ag_functorch
    x = np.linspace(0.1, 1.0, 3)
    calls = {"grad": lambda F, L, t: F.grad(lambda v: v.sin().sum())(t),
             "grad_and_value": lambda F, L, t: F.grad_and_value(lambda v: v.sin().sum())(t)[0],
             "vjp": lambda F, L, t: F.vjp(L.sin, t)[1](L.ones_like(t))[0],
             "jvp": lambda F, L, t: F.jvp(L.sin, (t,), (L.ones_like(t),))[1],
             "jacrev": lambda F, L, t: F.jacrev(L.sin)(t),
             "jacfwd": lambda F, L, t: F.jacfwd(L.sin)(t),
             "hessian": lambda F, L, t: F.hessian(lambda v: v.sin().sum())(t),
             "vmap": lambda F, L, t: F.vmap(L.sin)(t)}
    for name, call in calls.items():
        with pytest.warns(FutureWarning, match=f"functorch.{name}"):
            got = call(ag_functorch, ag, ag.tensor(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = call(functorch, torch, torch.tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, err_msg=name)


# ----------------------------------------------------------------- module paths
MODULE_PATHS = [("nn.modules.module", "Module"), ("nn.modules.linear", "Linear"),
                ("nn.parameter", "Parameter"), ("utils.data.dataloader", "DataLoader"),
                ("autograd.function", "Function"), ("autograd.graph", "Node"),
                ("autograd.variable", "Variable"), ("autograd.profiler", "profile"),
                ("autograd.profiler", "record_function"), ("autograd.functional", "jacobian"),
                ("autograd.forward_ad", "dual_level"), ("utils.checkpoint", "checkpoint"),
                ("autograd.grad_mode", "no_grad"), ("autograd.grad_mode", "inference_mode"),
                ("random", "fork_rng"), ("profiler", "profile"), ("amp", "GradScaler")]


@pytest.mark.parametrize("path,name", MODULE_PATHS, ids=[f"{p}.{n}" for p, n in MODULE_PATHS])
def test_module_paths_resolve_as_in_torch(torch, path, name):
    for L in (ag, torch):
        assert hasattr(importlib.import_module(f"{L.__name__}.{path}"), name)
    obj = ag            # reachable as attributes after `import arraygrad`
    for part in path.split("."):
        obj = getattr(obj, part)
    assert obj is importlib.import_module(f"arraygrad.{path}")


def test_module_path_names_are_the_public_objects():
    from arraygrad.autograd.function import Function
    from arraygrad.autograd.variable import Variable
    from arraygrad.nn.modules.linear import Linear
    from arraygrad.nn.modules.module import Module
    from arraygrad.nn.parameter import Parameter
    from arraygrad.utils.data.dataloader import DataLoader
    assert (Module, Linear, Parameter) == (ag.nn.Module, ag.nn.Linear, ag.nn.Parameter)
    assert (Function, Variable) == (ag.autograd.Function, ag.autograd.Variable)
    assert DataLoader is ag.utils.data.DataLoader
    from arraygrad.autograd.grad_mode import enable_grad, no_grad
    assert (no_grad, enable_grad) == (ag.no_grad, ag.enable_grad)
