"""torch.fft vs torch: values, dtypes, gradients of real losses (rfft/irfft's Hermitian
halving/doubling included), jvp and vmap."""
import numpy as np
import pytest

import arraygrad as ag

RNG = np.random.default_rng(3)
XR = RNG.standard_normal((3, 6))
XC = XR + 1j * RNG.standard_normal((3, 6))
XO = RNG.standard_normal((2, 5)) + 1j * RNG.standard_normal((2, 5))


def _np(t):
    return t.detach().resolve_conj().numpy() if hasattr(t, "resolve_conj") else t.numpy()


def _check(torch, name, x, **kw):
    fa, ft = getattr(ag.fft, name), getattr(torch.fft, name)
    xa, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yt = fa(xa, **kw), ft(xt, **kw)
    assert ya.dtype.name == str(yt.dtype).split(".")[1]
    np.testing.assert_allclose(_np(ya), _np(yt), atol=1e-12)
    w = RNG.standard_normal(tuple(yt.shape) + ((2,) if yt.is_complex() else ()))
    la = ag.view_as_real(ya) if ya.is_complex() else ya
    lt = torch.view_as_real(yt.resolve_conj()) if yt.is_complex() else yt
    (la * ag.tensor(w)).sum().backward()
    (lt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(_np(xa.grad), _np(xt.grad), atol=1e-11)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft"])
@pytest.mark.parametrize("n", [None, 4, 9])
def test_one_dim_forward(torch, name, n, norm):
    _check(torch, name, XR if name in ("rfft", "ihfft") else XC, n=n, norm=norm)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name", ["irfft", "hfft"])
@pytest.mark.parametrize("n", [None, 4, 7, 12])
def test_one_dim_to_real(torch, name, n, norm):
    for x in (XC, XO):
        _check(torch, name, x, n=n, norm=norm)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn", "irfft2",
                                  "irfftn"])
@pytest.mark.parametrize("s", [None, (4, 5)])
def test_multi_dim(torch, name, s, norm):
    _check(torch, name, XR if name.startswith("rfft") else XC, s=s, norm=norm)


def test_real_input_to_complex_transform(torch):
    _check(torch, "fft", XR)
    _check(torch, "fftn", XR, dim=(0,))


def test_freqs_and_shifts(torch):
    for n, d in ((5, 1.0), (6, 0.5)):
        np.testing.assert_allclose(ag.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        np.testing.assert_allclose(ag.fft.rfftfreq(n, d).numpy(),
                                   torch.fft.rfftfreq(n, d).numpy())
    x = np.arange(15.0).reshape(3, 5)
    for name in ("fftshift", "ifftshift"):
        for dim in (None, 1, (0, 1)):
            np.testing.assert_array_equal(
                getattr(ag.fft, name)(ag.tensor(x), dim=dim).numpy(),
                getattr(torch.fft, name)(torch.tensor(x), dim=dim).numpy())


@pytest.mark.parametrize("name,x", [("fft", XC), ("rfft", XR), ("irfft", XO), ("rfft2", XR)])
def test_jvp_and_vmap(torch, name, x):
    t = RNG.standard_normal(x.shape) + (1j * RNG.standard_normal(x.shape) if x.dtype.kind == "c"
                                        else 0)
    f = getattr(ag.fft, name)
    _, ja = ag.func.jvp(f, (ag.tensor(x),), (ag.tensor(t),))
    _, jt = torch.func.jvp(getattr(torch.fft, name), (torch.tensor(x),), (torch.tensor(t),))
    np.testing.assert_allclose(_np(ja), _np(jt), atol=1e-12)
    if name != "rfft2":
        xa = ag.tensor(x)
        np.testing.assert_allclose(_np(ag.vmap(f)(xa)),
                                   np.stack([_np(f(xa[i])) for i in range(x.shape[0])]),
                                   atol=1e-12)
        np.testing.assert_allclose(_np(ag.vmap(f, in_dims=1, out_dims=1)(xa.t().contiguous().t())),
                                   _np(f(xa.t().contiguous().t(), dim=0)), atol=1e-12)


def test_bad_norm_and_real_only():
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        ag.fft.fft(ag.tensor(XC), norm="bad")
    with pytest.raises(RuntimeError, match="expects a real input"):
        ag.fft.rfft(ag.tensor(XC))
