"""The CuPy backend on a real GPU: runs only where CuPy is installed and sees a GPU (it is
skipped elsewhere; the device machinery itself is tested on every machine in test_devices.py
with a stand-in device).

It runs the op catalogue's first samples on "cuda" (values and gradients equal NumPy's), moves
data both ways, and trains a small MLP on the GPU against the same steps on the cpu.
"""
import numpy as np
import pytest

import arraygrad as ag
from op_db import OPS, cases, run
from test_backend_catalogue import _Lib, _REASON, _grads

cupy = pytest.importorskip("cupy")
if not ag.cuda.is_available():
    pytest.skip("CuPy sees no GPU", allow_module_level=True)


def test_queries_and_moves():
    assert ag.cuda.device_count() >= 1 and isinstance(ag.cuda.get_device_name(), str)
    x = ag.randn(3, 4, dtype=ag.float64)
    g = x.cuda()
    assert isinstance(g._data, cupy.ndarray) and g.device == ag.device("cuda", 0)
    ag.cuda.synchronize()
    np.testing.assert_array_equal(g.cpu().numpy(), x.numpy())
    assert ag.zeros(2, device="cuda").is_cuda and ag.tensor(cupy.ones(2)).device.type == "cuda"
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        g + x


def test_mlp_steps_match_the_cpu():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((64, 8)), rng.standard_normal((64, 1))
    losses = {}
    for dev in ("cpu", "cuda"):
        ag.manual_seed(0)
        model = ag.nn.Sequential(ag.nn.Linear(8, 16), ag.nn.Tanh(), ag.nn.Linear(16, 1))
        model = model.double().to(dev)
        opt = ag.optim.Adam(model.parameters(), lr=1e-2)
        Xt, yt = ag.tensor(X, device=dev), ag.tensor(y, device=dev)
        losses[dev] = []
        for _ in range(5):
            opt.zero_grad()
            loss = ag.nn.functional.mse_loss(model(Xt), yt)
            loss.backward()
            opt.step()
            losses[dev].append(loss.item())
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=1e-10)


def _close(got, ref, what):
    """GPU libraries round differently in the last bits (fused kernels, cuBLAS sums)."""
    if ref is None:
        assert got is None or not np.any(got.detach().cpu().numpy()), what
        return
    assert got.device.type == "cuda", f"{what} is on {got.device}"
    assert got.dtype is ref.dtype and got.shape == ref.shape, what
    np.testing.assert_allclose(got.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-9,
                               atol=1e-12, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("op,sample", [p for p in cases(OPS) if p.id.endswith("-0")])
def test_catalogue_on_the_gpu(op, sample):
    if op.name in _REASON["array_api_strict"]:
        pytest.xfail(_REASON["array_api_strict"][op.name])   # not standard yet (may pass on CuPy)
    lib = _Lib(lambda a: ag.tensor(a).cuda()._data)
    leaves, outs = run(ag, op, sample)
    g_leaves, g_outs = run(lib, op, sample)
    for i, (g, r) in enumerate(zip(g_outs, outs)):
        _close(g, r, f"{op.name} output {i}")
    if op.grad:
        for i, (g, r) in enumerate(zip(_grads(lib, g_leaves, g_outs), _grads(ag, leaves, outs))):
            _close(g, r, f"{op.name} grad {i}")
