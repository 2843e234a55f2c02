"""Devices beyond the cpu, through the registry of device types (`_device.register`).

No GPU is here, so a real stand-in serves "cuda": array_api_strict's extra devices, which refuse
to mix with arrays of another device as a GPU's memory does. Everything a "cuda" device does in
arraygrad goes through the same code as CuPy's ("cuda:0" is array_api_strict's device1, "cuda:1"
its device2): creation with `device=`, `.to`/`.cuda`/`.cpu`, gradients on their device and across
a move, transforms, modules and optimizers, torch's errors.
"""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad import _device, backends
from op_db import OPS, cases, run
from test_backend_catalogue import _Lib, _same, _grads

xp = pytest.importorskip("array_api_strict")
GPU0, GPU1 = xp.Device("device1"), xp.Device("device2")
MIXED = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 " \
        "and cpu!"


@pytest.fixture
def gpu():
    """"cuda" served by array_api_strict's device1 and device2 for the test."""
    from arraygrad.backends.array_api_backend import ArrayApiDevices
    previous = _device.register("cuda", ArrayApiDevices(xp, "cuda", [GPU0, GPU1]))
    try:
        yield
    finally:
        _device.register("cuda", previous)
        ag.set_default_device(None)


def _on(t, library_device):
    return isinstance(t._data, type(xp.asarray(0))) and t._data.device == library_device


def test_queries_and_creation_with_device(gpu):
    assert ag.cuda.is_available() and ag.cuda.device_count() == 2
    assert ag.cuda.current_device() == 0 and "device2" in ag.cuda.get_device_name(1)
    ag.cuda.synchronize()
    assert ag.accelerator.current_accelerator() == ag.device("cuda")
    made = [ag.zeros(2, 3, device="cuda"), ag.ones(2, device="cuda:0"),
            ag.full((2,), 1.5, device=ag.device("cuda", 0)), ag.tensor([[1.0, 2.0]], device="cuda"),
            ag.arange(4, device="cuda"), ag.linspace(0, 1, 5, device="cuda"),
            ag.eye(3, device="cuda"), ag.randn(3, device="cuda"), ag.randint(0, 5, (3,), device="cuda")]
    for t in made:
        assert t.device == ag.device("cuda", 0) and _on(t, GPU0) and not t.requires_grad
        assert t.is_cuda and "device='cuda:0'" in repr(t)
    like = [ag.zeros_like(made[0]), ag.ones_like(made[1]), ag.rand_like(made[2]),
            ag.full_like(made[0], 2.0, device="cuda:1")]
    assert [t.device.index for t in like] == [0, 0, 0, 1] and _on(like[3], GPU1)
    np.testing.assert_array_equal(made[6].cpu().numpy(), np.eye(3, dtype=np.float32))
    ag.manual_seed(0)
    a = ag.randn(4, device="cuda")
    ag.manual_seed(0)
    assert ag.equal(a.cpu(), ag.randn(4))       # drawn on the cpu, then moved
    ag.set_default_device("cuda")
    assert ag.zeros(1).device == ag.device("cuda:0") and ag.tensor([1.0]).is_cuda
    assert ag.get_default_device() == ag.device("cuda", 0)


def test_moving_between_devices(gpu):
    x = ag.tensor([[1.0, -2.0], [3.0, 4.0]], dtype=ag.float64)
    y = x.to("cuda")
    assert y.device == ag.device("cuda:0") and y.dtype is ag.float64 and _on(y, GPU0)
    assert x.cuda().device == y.device and x.cuda(1).device == ag.device("cuda:1")
    assert y.to(x).device == ag.device("cpu") and x.to(y) .device == y.device
    assert y.to("cuda:0") is y and y.cuda() is y and x.cpu() is x
    z = y.to("cuda:1", ag.float32)
    assert z.device.index == 1 and z.dtype is ag.float32 and _on(z, GPU1)
    assert y.to("cuda", copy=True) is not y
    back = y.cpu()
    assert back.device == ag.device("cpu") and isinstance(back._data, np.ndarray)
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    x.add_(1)                                   # the move copied: no alias between devices
    assert ag.equal(y.cpu() + 1, x)
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        y.numpy()
    assert y.tolist() == [[1.0, -2.0], [3.0, 4.0]] and y[0, 1].item() == -2.0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ag.zeros(1, device="cuda:2")
    with pytest.raises(RuntimeError, match="must be cuda device"):
        x.cuda("cpu")


def test_move_is_dlpack_or_host_copy(gpu):
    a = np.arange(3.0)
    on_gpu = backends.move(a, _device.backend(ag.device("cuda:1")))
    assert on_gpu.device == GPU1                # DLPack: both live in host memory
    a[0] = 7.0
    assert float(on_gpu[0]) == 0.0              # a copy, as torch's .to(device)
    lazy = pytest.importorskip("dask.array").ones(4, chunks=2)
    moved = ag.tensor(lazy).to("cuda")          # Dask arrays come through NumPy
    assert moved.device == ag.device("cuda:0") and ag.equal(moved.cpu(), ag.ones(4, dtype=ag.float64))
    assert ag.tensor(lazy).to("cpu")._data is lazy      # already on the cpu: stays lazy


def test_mixing_devices_raises_torch_error(gpu):
    g, c = ag.ones(2, device="cuda"), ag.ones(2)
    for op in (lambda: g + c, lambda: c * g, lambda: ag.matmul(g, c), lambda: ag.cat([g, c])):
        with pytest.raises(RuntimeError) as e:
            op()
        assert str(e.value).startswith(MIXED.replace("cuda:0 and cpu", "cpu and cuda:0")) or \
            str(e.value).startswith(MIXED)
    with pytest.raises(RuntimeError, match="^" + MIXED):
        g + c
    assert (g + ag.tensor(2.0)).device == g.device     # a 0-dim cpu tensor joins, as torch


def test_gradients_stay_on_their_device(gpu, torch):
    w0 = np.random.default_rng(0).standard_normal((3, 2))
    w = ag.tensor(w0, device="cuda", requires_grad=True)
    x = ag.tensor([[1.0, 2.0, 3.0]], dtype=ag.float64, device="cuda")
    loss = (x @ w).tanh().sum()
    loss.backward()
    assert w.grad.device == w.device and _on(w.grad, GPU0) and loss.device == w.device
    tw = torch.tensor(w0, requires_grad=True)
    (torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64) @ tw).tanh().sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), tw.grad.numpy(), rtol=1e-12)


def test_backward_across_a_move_returns_to_the_source(gpu, torch):
    x0 = np.array([0.5, -1.0, 2.0])
    x = ag.tensor(x0, requires_grad=True)
    y = x.to("cuda")
    assert y.grad_fn is not None and y.grad_fn.next_functions[0][0] is not None
    (y.sin() * y).sum().backward()
    assert x.grad.device == ag.device("cpu") and isinstance(x.grad._data, np.ndarray)
    tx = torch.tensor(x0, requires_grad=True)
    (tx.sin() * tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    # higher order, and the other direction (cuda leaf, loss on the cpu)
    g, = ag.autograd.grad((x.to("cuda") ** 3).sum(), x, create_graph=True)
    h, = ag.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x0, rtol=1e-12)
    w = ag.tensor(x0, device="cuda:1", requires_grad=True)
    (w.cpu() ** 2).sum().backward()
    assert w.grad.device == ag.device("cuda:1")
    np.testing.assert_allclose(w.grad.cpu().numpy(), 2 * x0, rtol=1e-12)


def test_transforms_through_a_move(gpu):
    x = ag.tensor([1.0, 2.0, 3.0], dtype=ag.float64)
    g = ag.func.grad(lambda a: (a.to("cuda") ** 2).sum())(x)
    assert g.device == x.device and ag.allclose(g, 2 * x)
    v = ag.func.vmap(lambda a: a.cuda() * 2)(ag.ones(4, 3))
    assert v.shape == (4, 3) and v.device == ag.device("cuda:0")
    out, tangent = ag.func.jvp(lambda a: a.to("cuda").exp(), (x,), (ag.ones(3, dtype=ag.float64),))
    assert tangent.device == ag.device("cuda:0") and ag.allclose(tangent.cpu(), x.exp())


def _fit(model, opt, x, y, steps=3):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ag.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("make_opt", [
    lambda p: ag.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    lambda p: ag.optim.Adam(p, lr=0.05)], ids=["sgd", "adam"])
def test_module_to_device_trains_as_on_the_cpu(gpu, make_opt):
    ag.manual_seed(0)
    cpu_model = ag.nn.Sequential(ag.nn.Linear(4, 8), ag.nn.ReLU(), ag.nn.Linear(8, 1)).double()
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(4, 8), ag.nn.ReLU(), ag.nn.Linear(8, 1)).double()
    weight = model[0].weight
    assert model.to("cuda") is model and model[0].weight is weight    # same Parameter objects
    assert all(p.device == ag.device("cuda:0") for p in model.parameters())
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((16, 4)), rng.standard_normal((16, 1))
    ref = _fit(cpu_model, make_opt(cpu_model.parameters()), ag.tensor(x), ag.tensor(y))
    opt = make_opt(model.parameters())
    got = _fit(model, opt, ag.tensor(x, device="cuda"), ag.tensor(y).cuda())
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    assert all(p.grad.device == ag.device("cuda:0") for p in model.parameters())
    assert all(_on(s, GPU0) for st in opt.state.values() for s in st.values()
               if isinstance(s, ag.Tensor) and s.dim() > 0)
    model.cpu()
    assert model[0].weight.device == ag.device("cpu") and model[0].weight.grad.device.type == "cpu"


def test_data_made_for_a_tensor_lands_on_its_device(gpu):
    g = ag.ones(2, 3, device="cuda:1")
    made = [g.new_zeros(2), g.new_ones(1), g.new_full((2,), 3.0), g.new_empty(2), g.new_tensor([1.0]),
            ag.tensor(g), ag.nn.functional.dropout(g, 0.5), ag.bernoulli(g * 0.5),
            ag.normal(g, 1.0), g.clone().uniform_(), g.clone().fill_(2.0), g.clone().zero_(),
            g.clone().copy_(ag.zeros(2, 3))]
    assert all(t.device == ag.device("cuda:1") and _on(t, GPU1) for t in made)
    assert ag.equal(made[-1].cpu(), ag.zeros(2, 3)) and made[0].dtype is g.dtype
    src = ag.zeros(2, 3, dtype=ag.float64, requires_grad=True)
    dst = ag.ones(2, 3, dtype=ag.float64, device="cuda")
    dst.copy_(src * 2)                      # copy_ across devices, as torch: differentiable
    dst.sum().backward()
    assert src.grad.device == ag.device("cpu") and ag.equal(src.grad, ag.full((2, 3), 2.0,
                                                                              dtype=ag.float64))
    assert ag.tensor(g, device="cpu").device == ag.device("cpu")


def test_saving_tensors_of_a_device(gpu, tmp_path):
    model = ag.nn.Linear(3, 2, device="cuda")
    ag.save(model.state_dict(), tmp_path / "m.pt")
    loaded = ag.load(tmp_path / "m.pt")          # values come back on the cpu
    assert loaded["weight"].device == ag.device("cpu")
    assert ag.equal(loaded["weight"], model.weight.detach().cpu())
    ag.safetensors.save_file({"w": model.weight.detach()}, tmp_path / "m.safetensors")
    back = ag.safetensors.load_file(tmp_path / "m.safetensors", device="cuda")
    assert back["w"].device == ag.device("cuda:0") and ag.equal(back["w"].cpu(),
                                                                  model.weight.detach().cpu())


def test_modules_take_device(gpu):
    ag.manual_seed(0)
    ref = ag.nn.Linear(3, 2)
    ag.manual_seed(0)
    layers = [ag.nn.Linear(3, 2, device="cuda"), ag.nn.BatchNorm1d(3, device="cuda"),
              ag.nn.Embedding(4, 2, device="cuda:1"), ag.nn.LSTM(2, 3, device="cuda")]
    for m in layers:
        tensors = list(m.parameters()) + list(m.buffers())
        assert tensors and all(t.device.type == "cuda" for t in tensors), type(m).__name__
    assert ag.equal(layers[0].weight.cpu(), ref.weight)     # the cpu's values for the seed
    x = ag.randn(5, 3, device="cuda")
    assert layers[1](x).device == x.device and layers[1].running_mean.device == x.device


# ops whose impls create arrays of their own (xp.zeros, arange, full...): the device namespace
# must put those on the inputs' device, or the op mixes devices
_CREATING = {"logsumexp", "softmax", "log_softmax", "cumsum", "flip", "sort", "argsort",
             "topk", "max_dim", "amax_ties", "var", "norm", "where", "gather", "scatter_add",
             "roll", "layer_norm", "batch_norm_train", "cross_entropy_probs",
             "binary_cross_entropy_with_logits", "linalg.vector_norm_at_zero", "clamp"}


@pytest.mark.parametrize("op,sample", [p for p in cases(OPS, lambda op: op.name in _CREATING)
                                       if p.id.endswith("-0")])
def test_catalogue_samples_on_another_device(gpu, op, sample):
    lib = _Lib(lambda a: xp.asarray(a, device=GPU0))
    leaves, outs = run(ag, op, sample)
    d_leaves, d_outs = run(lib, op, sample)
    for i, (d, r) in enumerate(zip(d_outs, outs)):
        if isinstance(d, ag.Tensor):
            assert _on(d, GPU0), f"{op.name} output {i} is not on the device"
            _same(d.detach().cpu(), r, np.ndarray, f"{op.name} output {i}")
    if op.grad:
        for i, (d, r) in enumerate(zip(_grads(lib, d_leaves, d_outs), _grads(ag, leaves, outs))):
            assert d is None or _on(d, GPU0), f"{op.name} grad {i} is not on the device"
            _same(None if d is None else d.cpu(), r, np.ndarray, f"{op.name} grad {i}")


def test_unregistered_types_and_registry_errors():
    if _device.devices_of("cuda") is None:      # no CuPy
        with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
            ag.zeros(1, device="cuda")
    with pytest.raises(NotImplementedError, match="no backend places data on device 'xpu'"):
        ag.zeros(1, device="xpu")
    with pytest.raises(ValueError, match="not a device type other than cpu"):
        _device.register("cpu", None)
    stray = xp.asarray([1.0], device=GPU1)
    with pytest.raises(RuntimeError, match="have no arraygrad device"):
        ag.tensor(stray)
