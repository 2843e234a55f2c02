"""nn: Module bookkeeping, Parameter, layers, functional and init, against torch.nn."""
import copy
import math
import pickle

import numpy as np
import pytest

import arraygrad as ag
import arraygrad.nn.functional as F
from arraygrad import nn
from conftest import assert_close, pair, reference_torch

torch = reference_torch()


def copy_weights(ours, theirs):
    """Give `ours` the parameter values of the torch module `theirs` (same structure)."""
    mine = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        mine[name].data = ag.tensor(p.detach().numpy().copy())


def build(self, lib):
    self.fc1 = lib.Linear(4, 6)
    self.act = lib.Tanh()
    self.blocks = lib.ModuleList([lib.Linear(6, 6), lib.Linear(6, 6, bias=False)])
    self.head = lib.Sequential(lib.ReLU(), lib.Linear(6, 3), lib.Sigmoid())


def run(self, x):
    x = self.act(self.fc1(x))
    for b in self.blocks:
        x = x + b(x)
    return self.head(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        build(self, nn)

    forward = run


def TorchNet():
    """The same network built with torch.nn (class made on use: torch may be absent)."""
    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            build(self, torch.nn)

        forward = run
    return TorchNet()


# ----------------------------------------------------------------- Parameter
def test_parameter_is_a_tensor_that_registers():
    src = ag.randn(2, 3)
    p = nn.Parameter(src)
    # a real subclass, as torch's (issue 9): its type's name and repr say Parameter
    assert type(p).__name__ == "Parameter" and isinstance(p, nn.Parameter)
    assert isinstance(p, ag.Tensor) and repr(p).startswith("Parameter containing:\ntensor(")
    assert type(p * 2) is ag.Tensor and type(p.detach()) is ag.Tensor
    assert not isinstance(src, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    p.data.mul_(2)                       # shares memory with the source, like torch
    np.testing.assert_array_equal(p.detach().numpy(), src.numpy())
    assert not nn.Parameter(ag.ones(2), requires_grad=False).requires_grad
    assert tuple(nn.Parameter().shape) == (0,)
    (p * p).sum().backward()             # usable wherever a tensor is
    assert_close(p.grad, torch.tensor(2 * src.numpy()))
    with pytest.raises(TypeError, match="expected a Tensor"):
        nn.Parameter([1.0, 2.0])
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(ag.tensor([1, 2]))


def test_parameter_survives_deepcopy_and_pickle():
    m = nn.Linear(3, 2)
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert [n for n, _ in clone.named_parameters()] == ["weight", "bias"]
        assert all(isinstance(p, nn.Parameter) for p in clone.parameters())
        assert clone.weight is not m.weight
        assert_close(clone.weight, torch.tensor(m.weight.detach().numpy()))


# ----------------------------------------------------------------- Module bookkeeping
def test_registration_order_names_and_repr_match_torch():
    ours, theirs = Net(), TorchNet()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs).replace("TorchNet", "Net", 1)
    assert [tuple(p.shape) for p in ours.parameters()] == \
        [tuple(p.shape) for p in theirs.parameters()]
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    for kw in (dict(prefix="net"), dict(recurse=False)):
        assert [n for n, _ in ours.head.named_parameters(**kw)] == \
            [n for n, _ in theirs.head.named_parameters(**kw)]
    assert ours.get_parameter("blocks.1.weight") is ours.blocks[1].weight
    assert ours.get_submodule("head.1") is ours.head[1]


def test_shared_modules_and_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert len(list(seq.children())) == 2


def test_forward_and_backward_match_torch():
    ours, theirs = Net().double(), TorchNet().double()
    copy_weights(ours, theirs)
    x, tx = pair(torch, np.random.default_rng(1).standard_normal((5, 4)))
    out, tout = ours(x), theirs(tx)
    assert_close(out, tout)
    w = np.random.default_rng(2).standard_normal((5, 3))
    out.backward(ag.tensor(w))
    tout.backward(torch.tensor(w))
    assert_close(x.grad, tx.grad)
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, tp[name].grad, what=name + ": ")


def test_buffers_state_dict_and_load():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 3)
            self.register_buffer("running", ag.zeros(3))
            self.register_buffer("scratch", ag.ones(1), persistent=False)

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    sd = m.state_dict()
    assert list(sd) == ["running", "lin.weight", "lin.bias"]     # own state first, as torch
    assert not sd["lin.weight"].requires_grad and not isinstance(sd["lin.weight"], nn.Parameter)
    assert isinstance(m.state_dict(keep_vars=True)["lin.weight"], nn.Parameter)

    other = M()
    weight = other.lin.weight
    result = other.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    assert other.lin.weight is weight             # copied in place, same object
    assert_close(other.lin.weight, torch.tensor(m.lin.weight.detach().numpy()))

    bad = dict(sd)
    del bad["running"]
    bad["extra"] = ag.zeros(1)
    with pytest.raises(RuntimeError) as e:
        other.load_state_dict(bad)
    assert str(e.value) == ('Error(s) in loading state_dict for M:\n\tMissing key(s) in '
                            'state_dict: "running". \n\tUnexpected key(s) in state_dict: "extra". ')
    keys = other.load_state_dict(bad, strict=False)
    assert keys.missing_keys == ["running"] and keys.unexpected_keys == ["extra"]
    with pytest.raises(RuntimeError, match=r"size mismatch for lin.bias: copying a param with "
                       r"shape torch.Size\(\[4\]\) from checkpoint, the shape in current model "
                       r"is torch.Size\(\[3\]\)"):
        other.load_state_dict({**sd, "lin.bias": ag.zeros(4)})


def test_load_state_dict_from_torch_and_back():
    theirs = TorchNet().double()
    ours = Net().double()
    ours.load_state_dict({k: ag.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((2, 4))
    assert_close(ours(ag.tensor(x)), theirs(torch.tensor(x)))
    back = TorchNet().double()
    back.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    assert_close(ours(ag.tensor(x)), back(torch.tensor(x)))


def test_attribute_rules_match_torch():
    for lib in (nn, torch.nn):
        m = lib.Linear(2, 2)
        with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter "
                           "'weight' \\(torch.nn.Parameter or None expected\\)"):
            m.weight = (ag if lib is nn else torch).zeros(2, 2)
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
            m.nope
        m.bias = None
        assert [n for n, _ in m.named_parameters()] == ["weight"]
        del m.weight
        assert list(m.parameters()) == []
        with pytest.raises(KeyError, match="attribute 'in_features' already exists"):
            m.register_parameter("in_features", None)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ag.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_train_eval_zero_grad_requires_grad():
    m = Net()
    assert all(mod.training for mod in m.modules())
    assert m.eval() is m and not any(mod.training for mod in m.modules())
    m.train()
    assert m.head[1].training
    m(ag.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_to_double_float_keep_parameter_objects():
    m = nn.Sequential(nn.Linear(2, 2))
    m.register_buffer("steps", ag.tensor([3]))
    w = m[0].weight
    m(ag.randn(1, 2)).sum().backward()
    assert m.double() is m
    assert m[0].weight is w and w.dtype is ag.float64 and w.grad.dtype is ag.float64
    assert isinstance(m[0].weight, nn.Parameter) and w.requires_grad and w.is_leaf
    assert m.steps.dtype is ag.int64                 # only floating tensors change dtype
    assert m(ag.randn(1, 2, dtype=ag.float64)).dtype is ag.float64
    assert m.to(ag.float32) is m and w.dtype is ag.float32
    assert m.float().to("cpu")[0].weight.dtype is ag.float32


def test_forward_hooks():
    m = nn.Linear(2, 2)
    seen = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape) or out + 1)
    out = m(ag.ones(1, 2))
    assert_close(out, torch.tensor(m.bias.detach().numpy()[None] + 1))
    assert seen == [(1, 2)]
    h1.remove()
    h2.remove()
    assert_close(m(ag.zeros(1, 2)), torch.tensor(m.bias.detach().numpy()[None]))


def test_containers_index_like_torch():
    for lib in (nn, torch.nn):
        seq = lib.Sequential(lib.Linear(1, 2), lib.ReLU(), lib.Linear(2, 3))
        assert len(seq) == 3 and isinstance(seq[-1], lib.Linear)
        assert isinstance(seq[1:], lib.Sequential) and len(seq[1:]) == 2
        del seq[0]
        assert [n for n, _ in seq.named_children()] == ["0", "1"]
        with pytest.raises(IndexError):
            seq[5]
        ml = lib.ModuleList([lib.ReLU()])
        ml.append(lib.Tanh())
        ml.extend([lib.Sigmoid()])
        ml.insert(0, lib.Linear(1, 1))
        assert [type(x).__name__ for x in ml] == ["Linear", "ReLU", "Tanh", "Sigmoid"]
        assert [n for n, _ in ml.named_parameters()] == ["0.weight", "0.bias"]


# ----------------------------------------------------------------- Linear and init
def test_linear_default_init_matches_torch_bounds():
    for bias in (True, False):
        ours, theirs = nn.Linear(50, 7, bias=bias), torch.nn.Linear(50, 7, bias=bias)
        assert repr(ours) == repr(theirs).replace("TorchNet", "Net", 1)
        for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n == tn and tuple(p.shape) == tuple(tp.shape) and p.dtype is ag.float32
            bound = 1 / math.sqrt(50)
            assert float(p.abs().max()) <= bound and float(p.abs().max()) > 0.5 * bound
    assert nn.Linear(2, 3, dtype=ag.float64).weight.dtype is ag.float64


def test_init_functions():
    w = ag.empty(300, 200)
    assert nn.init.kaiming_uniform_(w, a=math.sqrt(5)) is w
    assert abs(float(w.abs().max()) - 1 / math.sqrt(200)) < 1e-3
    nn.init.xavier_uniform_(w, gain=2.0)
    assert abs(float(w.abs().max()) - 2 * math.sqrt(6 / 500)) < 1e-3
    nn.init.normal_(w, 1.0, 0.5)
    assert abs(float(w.mean()) - 1.0) < 0.01 and abs(float(w.std()) - 0.5) < 0.01
    nn.init.uniform_(w, -3, -2)
    assert -3 <= float(w.min()) and float(w.max()) <= -2
    assert float(nn.init.zeros_(w).abs().sum()) == 0
    assert float(nn.init.ones_(w).sum()) == w.numel()
    p = nn.Parameter(ag.empty(3, 3))
    nn.init.kaiming_uniform_(p)                     # in place on a leaf that requires grad
    assert p.is_leaf and p.grad_fn is None
    for name in ("linear", "sigmoid", "tanh", "relu", "leaky_relu", "selu"):
        assert nn.init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))
    assert nn.init.calculate_gain("leaky_relu", 0.2) == \
        pytest.approx(torch.nn.init.calculate_gain("leaky_relu", 0.2))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(ag.empty(3))


# ----------------------------------------------------------------- functional
ACTIVATIONS = [
    ("relu", lambda F, x: F.relu(x)),
    ("tanh", lambda F, x: F.tanh(x)),
    ("sigmoid", lambda F, x: F.sigmoid(x)),
    ("softmax", lambda F, x: F.softmax(x, dim=1)),
    ("softmax_last", lambda F, x: F.softmax(x, -1)),
    ("log_softmax", lambda F, x: F.log_softmax(x, dim=0)),
]


@pytest.mark.parametrize("name,fn", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activations_values_grads_and_second_grads(name, fn):
    x, tx = pair(torch, np.random.default_rng(4).standard_normal((3, 5)))
    g = np.random.default_rng(5).standard_normal((3, 5))
    out, tout = fn(F, x), fn(torch.nn.functional, tx)
    assert_close(out, tout)
    gx, = ag.autograd.grad(out, x, ag.tensor(g), create_graph=True)
    tgx, = torch.autograd.grad(tout, tx, torch.tensor(g), create_graph=True)
    assert_close(gx, tgx)
    if name != "relu":
        assert_close(ag.autograd.grad((gx * gx).sum(), x)[0],
                     torch.autograd.grad((tgx * tgx).sum(), tx)[0])


def test_linear_functional_shapes():
    rng = np.random.default_rng(6)
    for xs in [(4,), (2, 4), (3, 2, 4)]:
        x, tx = pair(torch, rng.standard_normal(xs))
        w, tw = pair(torch, rng.standard_normal((5, 4)))
        b, tb = pair(torch, rng.standard_normal(5))
        assert_close(F.linear(x, w, b), torch.nn.functional.linear(tx, tw, tb))
        F.linear(x, w).sum().backward()
        torch.nn.functional.linear(tx, tw).sum().backward()
        assert_close(w.grad, tw.grad)
        assert_close(x.grad, tx.grad)


def _loss_cases():
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((6, 4))
    target = np.array([0, 3, 1, 1, 2, 3])
    spatial = rng.standard_normal((2, 4, 3))
    spatial_t = np.array([[0, 1, 3], [2, 2, 0]])
    probs = rng.dirichlet(np.ones(4), size=6)
    weight = np.array([0.5, 2.0, 1.0, 3.0])
    ignored = np.array([0, -100, 1, 1, -100, 3])
    cases = []
    for red in ("mean", "sum", "none"):
        cases += [
            (f"ce-{red}", "cross_entropy", logits, target, dict(reduction=red)),
            (f"ce-weight-{red}", "cross_entropy", logits, target,
             dict(weight=weight, reduction=red)),
            (f"ce-ignore-{red}", "cross_entropy", logits, ignored, dict(reduction=red)),
            (f"ce-smooth-{red}", "cross_entropy", logits, ignored,
             dict(weight=weight, label_smoothing=0.2, reduction=red)),
            (f"ce-probs-{red}", "cross_entropy", logits, probs,
             dict(weight=weight, label_smoothing=0.1, reduction=red)),
            (f"ce-spatial-{red}", "cross_entropy", spatial, spatial_t, dict(reduction=red)),
            (f"ce-unbatched-{red}", "cross_entropy", logits[0], np.array(2), dict(reduction=red)),
            (f"nll-{red}", "nll_loss", logits, ignored, dict(weight=weight, reduction=red)),
            (f"mse-{red}", "mse_loss", logits, probs, dict(reduction=red)),
            (f"l1-{red}", "l1_loss", logits, probs, dict(reduction=red)),
            (f"smoothl1-{red}", "smooth_l1_loss", logits, probs, dict(reduction=red, beta=0.7)),
        ]
    cases.append(("smoothl1-beta0", "smooth_l1_loss", logits, probs, dict(beta=0.0)))
    cases.append(("mse-weight", "mse_loss", logits, probs, dict(weight=probs[::-1].copy())))
    cases.append(("l1-weight", "l1_loss", logits, probs, dict(weight=probs * 2, reduction="sum")))
    return cases


@pytest.mark.parametrize("name,fn,x,target,kw", _loss_cases(), ids=[c[0] for c in _loss_cases()])
def test_losses_match_torch(name, fn, x, target, kw):
    a, t = pair(torch, x)
    kw_ours = {k: ag.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    kw_torch = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    out = getattr(F, fn)(a, ag.tensor(target), **kw_ours)
    tout = getattr(torch.nn.functional, fn)(t, torch.tensor(target), **kw_torch)
    assert_close(out, tout)
    g = np.random.default_rng(8).standard_normal(tuple(tout.shape))
    ga, = ag.autograd.grad(out, a, ag.tensor(g), create_graph=True)
    gt, = torch.autograd.grad(tout, t, torch.tensor(g), create_graph=True)
    assert_close(ga, gt)
    if not fn.startswith(("l1", "smooth", "nll")):     # piecewise linear or linear in x
        assert_close(ag.autograd.grad((ga * ga).sum(), a)[0],
                     torch.autograd.grad((gt * gt).sum(), t)[0])


def test_loss_modules_and_errors():
    x, tx = pair(torch, np.random.default_rng(9).standard_normal((3, 4)))
    y = np.array([1, 0, 3])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    assert_close(nn.CrossEntropyLoss(weight=ag.tensor(w), label_smoothing=0.1)(x, ag.tensor(y)),
                 torch.nn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.1)(
                     tx, torch.tensor(y)))
    assert_close(nn.MSELoss(reduction="sum")(x, x * 0),
                 torch.nn.MSELoss(reduction="sum")(tx, tx * 0))
    assert_close(nn.NLLLoss()(x, ag.tensor(y)), torch.nn.NLLLoss()(tx, torch.tensor(y)))
    assert_close(nn.SmoothL1Loss(beta=2.0)(x, x * 0), torch.nn.SmoothL1Loss(beta=2.0)(tx, tx * 0))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="bad")
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(x, ag.tensor([1, 7, 0]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.nll_loss(x, ag.tensor([1.0, 0.0, 2.0], dtype=ag.float32))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                       r"batch_size \(2\)"):
        F.cross_entropy(x, ag.tensor([1, 0]))


def test_one_hot():
    idx = np.array([[0, 2], [1, 4]])
    assert_close(F.one_hot(ag.tensor(idx)), torch.nn.functional.one_hot(torch.tensor(idx)))
    assert_close(F.one_hot(ag.tensor(idx), 6), torch.nn.functional.one_hot(torch.tensor(idx), 6))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(ag.tensor([3]), 2)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(ag.tensor([-1]))
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(ag.tensor([1.0]))


def test_relu_inplace_module():
    x = ag.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x) is x
    assert x.tolist() == [0.0, 2.0]
    assert repr(nn.ReLU(inplace=True)) == repr(torch.nn.ReLU(inplace=True))


# ----------------------------------------------------------------- modules under transforms
def test_func_grad_through_functional_layers():
    rng = np.random.default_rng(10)
    x, tx = pair(torch, rng.standard_normal((8, 3)), requires_grad=False)
    y = rng.integers(0, 4, 8)
    w, tw = pair(torch, rng.standard_normal((4, 3)), requires_grad=False)

    def loss(F, w, x, y):
        return F.cross_entropy(F.linear(F.tanh(x), w), y)

    g = ag.func.grad(lambda w: loss(F, w, x, ag.tensor(y)))(w)
    tg = torch.func.grad(lambda w: loss(torch.nn.functional, w, tx, torch.tensor(y)))(tw)
    assert_close(g, tg)


def test_per_example_grads_with_functional_call_and_vmap():
    """torch.func's per-sample-gradients recipe, with a module and a cross-entropy loss."""
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal((6, 4)), rng.integers(0, 3, 6)
    results = []
    for lib, nnlib, Flib in ((torch, torch.nn, torch.nn.functional), (ag, nn, F)):
        model = nnlib.Sequential(nnlib.Linear(4, 5), nnlib.Tanh(), nnlib.Linear(5, 3)).double()
        if lib is ag:
            model.load_state_dict({k: ag.tensor(v) for k, v in results_state.items()})
        else:
            results_state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(params, sample, target):
            out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
            return Flib.cross_entropy(out, target.unsqueeze(0), label_smoothing=0.1)

        results.append(lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(x), lib.tensor(y)))
    theirs, ours = results
    for k in theirs:
        assert_close(ours[k], theirs[k], what=k)


def test_warnings_match_torch():
    for lib, Flib in ((ag, F), (torch, torch.nn.functional)):
        x = lib.ones(3, 1)
        with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[3\]\)\) that is "
                          r"different to the input size \(torch.Size\(\[3, 1\]\)\)"):
            Flib.mse_loss(x, lib.ones(3))
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            Flib.softmax(x)
