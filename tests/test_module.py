"""Module completeness (hooks, state dicts, dtype moves), containers, nn.utils and nn.init,
compared with torch."""
import math
import random
import warnings

import numpy as np
import pytest

import arraygrad as ag
from arraygrad import nn
from arraygrad.nn import init
from arraygrad.nn.utils import parametrize as P
from conftest import assert_close


def _linear_pair(torch, n_in=3, n_out=2, seed=0):
    rng = np.random.default_rng(seed)
    w, b = rng.standard_normal((n_out, n_in)), rng.standard_normal(n_out)
    mods = []
    for lib in (ag, torch):
        m = lib.nn.Linear(n_in, n_out).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
            m.bias.copy_(lib.tensor(b))
        mods.append(m)
    return mods


def _values(x):
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return [_values(v) for v in x]
    return np.round(x.detach().numpy(), 12).tolist()


def test_forward_hooks_match_torch(torch):
    logs = []
    for lib, m in zip((ag, torch), _linear_pair(torch)):
        log = []
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre", _values(args))))
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,), prepend=False)
        m.register_forward_pre_hook(lambda mod, args, kw: log.append(("first", kw)) or None,
                                    prepend=True, with_kwargs=True)
        h = m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_forward_hook(lambda mod, args, kw, out: log.append(("post", _values(out))),
                                with_kwargs=True)
        x = lib.ones(1, 3, dtype=lib.float64)
        log.append(_values(m(x)))
        h.remove()
        log.append(_values(m(x)))
        logs.append(log)
    assert logs[0] == logs[1]


def test_full_backward_hooks_match_torch(torch):
    logs = []
    for lib, m in zip((ag, torch), _linear_pair(torch, seed=1)):
        log = []
        m.register_full_backward_pre_hook(
            lambda mod, go: log.append(("pre", _values(go))) or (go[0] * 3,))
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append(("full", _values(gi), _values(go)))
            or (None if gi[0] is None else (gi[0] + 1,)))
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        (m(x) ** 2).sum().backward()
        log += [_values(x.grad), _values(m.weight.grad)]
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            m(lib.ones(1, 3, dtype=lib.float64)).sum().backward()
        logs.append(log)
    assert logs[0] == logs[1]


def test_hook_errors(torch):
    m = nn.Linear(2, 2)
    m.register_forward_pre_hook(lambda mod, a, k: "bad", with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(ag.ones(2))
    m2 = nn.Linear(2, 2)
    m2.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        m2(ag.ones(2, requires_grad=True)).sum().backward()
    seen = []
    m3 = nn.Linear(2, 2)
    m3.forward = lambda x: 1 / 0
    m3.register_forward_hook(lambda mod, a, out: seen.append(out), always_call=True)
    with pytest.raises(ZeroDivisionError):
        m3(ag.ones(2))
    assert seen == [None]


class _Net:
    @staticmethod
    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
                self.heads = lib.nn.ModuleDict({"a": lib.nn.Linear(3, 1), "b": lib.nn.Linear(3, 2)})
                self.scales = lib.nn.ParameterList([lib.ones(2), lib.nn.Parameter(lib.zeros(3))])
                self.extra = lib.nn.ParameterDict({"t": lib.ones(1)})
                self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
                self.register_buffer("scratch", lib.zeros(2), persistent=False)

            def extra_repr(self):
                return "custom=1"
        return Net()


def test_structure_state_dict_and_buffers_match_torch(torch):
    ours, theirs = _Net.make(ag), _Net.make(torch)
    for prefix, keep in (("", False), ("model.", True)):
        sd = ours.state_dict(prefix=prefix, keep_vars=keep)
        tsd = theirs.state_dict(prefix=prefix, keep_vars=keep)
        assert list(sd) == list(tsd)
        assert [tuple(v.shape) for v in sd.values()] == [tuple(v.shape) for v in tsd.values()]
        assert [v.requires_grad for v in sd.values()] == [v.requires_grad for v in tsd.values()]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert ours.get_submodule("heads.b") is ours.heads["b"]
    with pytest.raises(AttributeError, match="has no attribute `c`"):
        ours.get_submodule("heads.c")
    assert repr(ours).splitlines()[1] == repr(theirs).splitlines()[1] == "  custom=1"
    assert "(0): Parameter containing: [torch.float32 of size 2]" in repr(ours.scales)
    assert ours.requires_grad_(False) is ours
    assert not any(p.requires_grad for p in ours.parameters())
    ours.double()
    assert ours.scales[0].dtype == ag.float64 and ours.steps.dtype == ag.int64
    ours.half()
    assert ours.heads["a"].weight.dtype == ag.float16
    ours.float()
    assert ours.extra["t"].dtype == ag.float32


def test_load_state_dict_strict_and_assign(torch):
    ours, theirs = _Net.make(ag), _Net.make(torch)
    sd = {k: ag.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    assert repr(ours.load_state_dict(sd)) == "<All keys matched successfully>"
    for (n, p), (_, tp) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert_close(p, tp, what=n)
    del sd["heads.a.bias"]
    sd["unknown"] = ag.ones(1)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "heads.a.bias"'):
        ours.load_state_dict(sd)
    res = ours.load_state_dict(sd, strict=False)
    tres = theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in sd.items()},
                                  strict=False)
    assert res.missing_keys == tres.missing_keys and res.unexpected_keys == tres.unexpected_keys
    new_w = ag.full((3, 2), 7.0)
    old = ours.body[0].weight
    ours.load_state_dict({"body.0.weight": new_w}, strict=False, assign=True)
    assert ours.body[0].weight is not old and ours.body[0].weight.tolist() == new_w.tolist()
    assert isinstance(ours.body[0].weight, nn.Parameter)


def test_containers_behave_as_torch(torch):
    for lib in (ag, torch):
        d = lib.nn.ModuleDict([("x", lib.nn.ReLU())])
        d["y"] = lib.nn.Tanh()
        d.update({"z": lib.nn.Identity()})
        assert list(d) == ["x", "y", "z"] and len(d) == 3 and "y" in d
        assert type(d.pop("y")).__name__ == "Tanh" and list(d.keys()) == ["x", "z"]
        pl = lib.nn.ParameterList([lib.ones(2)])
        pl.append(lib.zeros(3))
        pl += [lib.nn.Parameter(lib.ones(1))]
        assert len(pl) == 3 and [tuple(p.shape) for p in pl] == [(2,), (3,), (1,)]
        assert isinstance(pl[-1], lib.nn.Parameter) and len(pl[1:]) == 2
        assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
        pd = lib.nn.ParameterDict({"a": lib.ones(1)})
        pd["b"] = lib.zeros(2)
        assert list(pd.keys()) == ["a", "b"] and isinstance(pd["b"], lib.nn.Parameter)
        assert pd.pop("a").shape == (1,) and list(pd) == ["b"]
        with pytest.raises(ValueError, match="element #0 has length 1; 2 is required"):
            lib.nn.ModuleDict([("only",)])
        with pytest.raises(IndexError):
            pl[5]


def test_clip_grad_matches_torch(torch):
    for norm_type in (2.0, 1, math.inf, 3.5):
        grads = []
        for lib in (ag, torch):
            ps = [lib.tensor(np.arange(6.0).reshape(2, 3) - 2, requires_grad=True),
                  lib.tensor([0.5, -8.0], requires_grad=True),
                  lib.tensor([1.0], requires_grad=True)]
            (ps[0] ** 2).sum().mul(0.5).add((ps[1] ** 3).sum()).backward()
            total = lib.nn.utils.clip_grad_norm_(ps, max_norm=2.0, norm_type=norm_type)
            grads.append([total] + [p.grad for p in ps[:2]] + [ps[2].grad])
        assert grads[0][3] is None and grads[1][3] is None
        for a, t in zip(grads[0][:3], grads[1][:3]):
            assert_close(a, t, rtol=1e-12)
    for lib in (ag, torch):
        p = lib.tensor([math.inf, 1.0], requires_grad=True)
        (p * 1.0).sum().backward()
        p.grad = lib.tensor([math.nan, 1.0])
        with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
            lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        q = lib.tensor([1.0, -1.0], requires_grad=True)
        (q * lib.tensor([3.0, -0.25])).sum().backward()
        lib.nn.utils.clip_grad_value_(q, 0.5)
        assert q.grad.tolist() == [0.5, -0.25]
    assert nn.utils.clip_grad_norm_([ag.ones(1, requires_grad=True)], 1.0).item() == 0.0


def test_parameters_vector_round_trip(torch):
    m, tm = _linear_pair(torch)
    v = nn.utils.parameters_to_vector(m.parameters())
    tv = torch.nn.utils.parameters_to_vector(tm.parameters())
    assert_close(v, tv)
    v.sum().backward()                                     # differentiable
    assert m.weight.grad.tolist() == [[1.0] * 3] * 2
    nn.utils.vector_to_parameters(ag.arange(8.0, dtype=ag.float64), m.parameters())
    assert m.bias.tolist() == [6.0, 7.0] and m.weight.is_leaf
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], m.parameters())


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
    return Symmetric()


def _positive(lib):
    class Positive(lib.nn.Module):
        def forward(self, X):
            return X.exp()

        def right_inverse(self, Y):
            return Y.log()
    return Positive()


def test_parametrize_matches_torch(torch):
    runs = []
    for lib, m in zip((ag, torch), _linear_pair(torch, 3, 3, seed=2)):
        PP = lib.nn.utils.parametrize
        PP.register_parametrization(m, "weight", _symmetric(lib))
        w = m.weight
        x = lib.tensor(np.linspace(0, 1, 6).reshape(2, 3))
        m(x).pow(2).sum().backward()
        runs.append(dict(name=type(m).__name__, keys=list(m.state_dict()), w=_values(w),
                         grad=_values(m.parametrizations.weight.original.grad),
                         is_p=(PP.is_parametrized(m), PP.is_parametrized(m, "bias"))))
        with PP.cached():
            assert m.weight is m.weight
        PP.remove_parametrizations(m, "weight")
        runs[-1].update(after=type(m).__name__, after_keys=list(m.state_dict()),
                        after_w=_values(m.weight))
    assert runs[0] == runs[1]


def test_parametrize_right_inverse_and_errors(torch):
    m = nn.Linear(2, 2)
    with ag.no_grad():
        m.bias.copy_(ag.tensor([1.0, 2.0]))
    P.register_parametrization(m, "bias", _positive(ag))
    assert_close(m.parametrizations.bias.original, ag.log(ag.tensor([1.0, 2.0])))
    m.bias = ag.tensor([3.0, 4.0])                         # right_inverse on assignment
    assert np.allclose(m.bias.detach().numpy(), [3.0, 4.0])
    P.remove_parametrizations(m, "bias", leave_parametrized=False)
    assert type(m) is nn.Linear and np.allclose(m.bias.detach().numpy(), np.log([3.0, 4.0]))
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized"):
        P.register_parametrization(m, "nope", _positive(ag))
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m, "weight")

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:1]
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Shrink())
    assert type(m) is nn.Linear


def test_init_matches_torch(torch):
    for nl, param in (("relu", None), ("leaky_relu", 0.2), ("tanh", None), ("selu", None)):
        assert init.calculate_gain(nl, param) == torch.nn.init.calculate_gain(nl, param)
    for shape, groups in (((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((2, 2, 1, 3, 3), 2)):
        assert init.dirac_(ag.empty(*shape), groups).tolist() == \
            torch.nn.init.dirac_(torch.empty(*shape), groups).tolist()
    assert init.eye_(ag.empty(2, 4)).tolist() == torch.nn.init.eye_(torch.empty(2, 4)).tolist()
    for bad, msg in ((lambda lib: lib.nn.init.eye_(lib.empty(2, 2, 2)), "2 dimensions"),
                     (lambda lib: lib.nn.init.orthogonal_(lib.empty(3)), "2 or more dimensions"),
                     (lambda lib: lib.nn.init.dirac_(lib.empty(3, 3)), "3, 4, or 5 dimensions")):
        for lib in (ag, torch):
            with pytest.raises(ValueError, match=msg):
                bad(lib)


def test_init_random_fills():
    for shape in ((3, 5), (6, 2), (4, 2, 3)):
        w = init.orthogonal_(ag.empty(*shape, dtype=ag.float64), gain=2.0)
        flat = w.reshape(shape[0], -1).numpy()
        small = flat @ flat.T if shape[0] <= flat.shape[1] else flat.T @ flat
        np.testing.assert_allclose(small, 4 * np.eye(len(small)), atol=1e-12)
    t = init.trunc_normal_(ag.empty(5000), mean=1.0, std=2.0, a=0.0, b=1.5)
    assert 0.0 <= t.min().item() and t.max().item() <= 1.5
    s = init.sparse_(ag.empty(10, 4), sparsity=0.25)
    assert (s == 0).sum(0).tolist() == [3, 3, 3, 3]
    g = lambda: ag.Generator().manual_seed(11)
    for fn in (lambda w, g: init.uniform_(w, -1, 1, generator=g),
               lambda w, g: init.normal_(w, generator=g),
               lambda w, g: init.kaiming_normal_(w, generator=g),
               lambda w, g: init.xavier_uniform_(w, generator=g),
               lambda w, g: init.orthogonal_(w, generator=g)):
        assert fn(ag.empty(3, 4), g()).tolist() == fn(ag.empty(3, 4), g()).tolist()


def test_torch_module_paths_exist():
    import importlib
    for path, names in (("arraygrad.nn.modules.module", ["Module"]),
                        ("arraygrad.nn.modules.container", ["ModuleDict", "ParameterList"]),
                        ("arraygrad.nn.parameter", ["Parameter"]),
                        ("arraygrad.nn.utils.parametrize", ["register_parametrization"]),
                        ("arraygrad.autograd.function", ["Function", "once_differentiable"]),
                        ("arraygrad.autograd.graph", ["Node"]),
                        ("arraygrad.utils.data.dataloader", ["DataLoader", "get_worker_info"]),
                        ("arraygrad.utils.data.dataset", ["Dataset", "random_split"]),
                        ("arraygrad.utils.data.sampler", ["BatchSampler"]),
                        ("arraygrad.optim.optimizer", ["Optimizer"]),
                        ("arraygrad.optim.lr_scheduler", ["LRScheduler", "_LRScheduler"])):
        mod = importlib.import_module(path)
        for n in names:
            assert hasattr(mod, n), f"{path}.{n}"
    assert ag.utils.data.DataLoader is importlib.import_module(
        "arraygrad.utils.data.dataloader").DataLoader


# ---------------------------------------------------------------- module hooks, random programs
def _hooked_model(lib, seed):
    """A random stack of layers (some in-place) with random full backward hooks, backward
    pre-hooks (observing or replacing gradients) and forward (pre-)hooks on the model and its
    layers; returns what the hooks saw, the parameters' and the input's gradients."""
    r, rng = random.Random(seed), np.random.default_rng(seed)
    nn = lib.nn
    lib.set_default_dtype(lib.float64)
    try:
        kinds = [r.choice(["linear", "tanh", "relu_inplace", "seq", "identity"])
                 for _ in range(r.randint(1, 3))]
        layers = [{"linear": lambda: nn.Linear(3, 3), "tanh": nn.Tanh,
                   "relu_inplace": lambda: nn.ReLU(inplace=True), "identity": nn.Identity,
                   "seq": lambda: nn.Sequential(nn.Linear(3, 3), nn.Tanh())}[k]() for k in kinds]
        for m in layers:
            for p in m.parameters():
                with lib.no_grad():
                    p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
        model = nn.Sequential(*layers)
        log = []
        sums = lambda gs: [None if g is None else round(float(g.sum()), 8) for g in gs]
        for i, m in enumerate([model] + layers):
            h = r.choice(["none", "bw", "bwpre", "bw_mod", "fwd", "fwdpre", "bwpre_mod"])
            if h == "bw":
                m.register_full_backward_hook(
                    lambda mod, gi, go, i=i: log.append(("bw", i, sums(gi), sums(go))))
            elif h == "bw_mod":
                m.register_full_backward_hook(
                    lambda mod, gi, go: tuple(None if g is None else g * 2 for g in gi))
            elif h == "bwpre":
                m.register_full_backward_pre_hook(
                    lambda mod, go, i=i: log.append(("bwpre", i, sums(go))))
            elif h == "bwpre_mod":
                m.register_full_backward_pre_hook(
                    lambda mod, go: tuple(None if g is None else g * 3 for g in go))
            elif h == "fwd":
                m.register_forward_hook(lambda mod, inp, out: out * 1.5)
            elif h == "fwdpre":
                m.register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,))
        x = lib.tensor(rng.standard_normal((2, 3)), requires_grad=r.random() < 0.7)
        model(x).sum().backward()
        return (log, [None if p.grad is None else p.grad.numpy().round(8).tolist()
                      for p in model.parameters()],
                None if x.grad is None else x.grad.numpy().round(8).tolist())
    finally:
        lib.set_default_dtype(lib.float32)


def _hook_outcome(lib, seed):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            out = "ok", _hooked_model(lib, seed)
        except RuntimeError as e:
            out = "raises", str(e).split(": [")[0]     # (the saved value's description differs)
    return out + ([str(w.message) for w in seen],)


def test_module_hooks_random_programs_match_torch(torch):
    """What every hook sees, the gradients and the warnings, or the error message word for
    word."""
    for seed in range(200):
        assert _hook_outcome(ag, seed) == _hook_outcome(torch, seed), f"seed {seed}"
