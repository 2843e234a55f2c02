"""Tensor basics vs torch: creation, dtypes and promotion, metadata, conversions, repr."""
import itertools
import pickle
import copy

import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close, dtype_name, reference_torch

torch = reference_torch()

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]


def both(name):
    return getattr(ag, name), getattr(torch, name)


# ----------------------------------------------------------------- creation
@pytest.mark.parametrize("data", [
    [1, 2, 3], [1.0, 2.5], [True, False], [[1, 2], [3, 4]], [1, 2.5], [True, 2], 3, 3.5, True,
    [], [[]], [[1.0], [2.0]], np.array([1, 2], dtype=np.int32), np.array([1.5], dtype=np.float64),
    np.array([1.5], dtype=np.float32), np.array(2.0), np.float64(2.0),
])
def test_tensor_from_data(data):
    a, t = ag.tensor(data), torch.tensor(data)
    assert_close(a, t)
    assert a.is_leaf and not a.requires_grad


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_with_dtype(dtype):
    a = ag.tensor([0, 1, 2], dtype=getattr(ag, dtype))
    t = torch.tensor([0, 1, 2], dtype=getattr(torch, dtype))
    assert_close(a, t)


def test_tensor_copies_and_as_tensor_from_numpy_share():
    arr = np.array([1.0, 2.0])
    a = ag.tensor(arr)
    arr[0] = 5.0
    assert a.tolist() == [1.0, 2.0]
    f = ag.from_numpy(arr)
    arr[1] = 7.0
    assert f.tolist() == [5.0, 7.0] and f.dtype is ag.float64
    f.add_(1)
    assert arr.tolist() == [6.0, 8.0]
    assert ag.as_tensor(f) is f
    with pytest.raises(TypeError):
        ag.from_numpy([1.0])


def test_tensor_requires_grad_only_for_floats():
    assert ag.tensor([1.0], requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require "
                                           "gradients"):
        ag.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ag.tensor([1, 2]).requires_grad_()


@pytest.mark.parametrize("call", [
    lambda m: m.zeros(2, 3), lambda m: m.zeros((2, 3)), lambda m: m.zeros([0]),
    lambda m: m.ones(3, dtype=m.int64), lambda m: m.ones(()), lambda m: m.full((2,), 3),
    lambda m: m.full((2,), 2.5), lambda m: m.full((2, 1), True), lambda m: m.full((2,), 1.5, dtype=m.float64),
    lambda m: m.arange(5), lambda m: m.arange(1, 4), lambda m: m.arange(0, 1, 0.25),
    lambda m: m.arange(0.0, 3), lambda m: m.arange(5, dtype=m.float64), lambda m: m.arange(10, 0, -3),
    lambda m: m.linspace(0, 1, 5), lambda m: m.linspace(-1, 1, 1), lambda m: m.eye(3),
    lambda m: m.eye(2, 3, dtype=m.int64), lambda m: m.empty(2, 3).shape,
    lambda m: m.zeros_like(m.ones(2, dtype=m.int32)), lambda m: m.ones_like(m.zeros(2, 3)),
    lambda m: m.full_like(m.zeros(2, dtype=m.float64), 7), lambda m: m.zeros_like(m.ones(2), dtype=m.int64),
    lambda m: m.empty_like(m.ones(2, 2)).shape, lambda m: m.rand(2, 3).shape,
    lambda m: m.randn(4).dtype, lambda m: m.rand(2, dtype=m.float64).dtype,
    lambda m: m.randint(0, 5, (3,)).dtype, lambda m: m.randint(3, (2, 2)).shape,
    lambda m: m.randn_like(m.zeros(2, dtype=m.float64)).dtype, lambda m: m.rand_like(m.zeros(3)).shape,
])
def test_creation_functions(call):
    a, t = call(ag), call(torch)
    if isinstance(t, torch.Tensor):
        assert_close(a, t)
    elif isinstance(t, torch.dtype):
        assert dtype_name(a) == dtype_name(t)
    else:
        assert tuple(a) == tuple(t)


def test_creation_requires_grad_flag():
    for x in (ag.zeros(2, requires_grad=True), ag.ones(2, 2, requires_grad=True),
              ag.randn(3, requires_grad=True), ag.full((2,), 1.0, requires_grad=True),
              ag.arange(3.0, requires_grad=True)):
        assert x.requires_grad and x.is_leaf


def test_random_values_and_seed():
    ag.manual_seed(0)
    a = ag.rand(1000)
    ag.manual_seed(0)
    assert ag.rand(1000).tolist() == a.tolist()
    assert 0 <= a.min().item() and a.max().item() < 1
    n = ag.randn(20000, dtype=ag.float64)
    assert abs(n.mean().item()) < 0.05 and abs(n.std().item() - 1) < 0.05
    r = ag.randint(2, 5, (1000,))
    assert set(r.tolist()) == {2, 3, 4}


def test_default_dtype():
    assert ag.get_default_dtype() is ag.float32
    ag.set_default_dtype(ag.float64)
    try:
        assert ag.tensor([1.0]).dtype is ag.float64 and ag.zeros(1).dtype is ag.float64
        assert (ag.tensor([1]) * 0.5).dtype is ag.float64
    finally:
        ag.set_default_dtype(ag.float32)
    assert ag.tensor([1.0]).dtype is ag.float32
    with pytest.raises(TypeError):
        ag.set_default_dtype(ag.int64)


# ----------------------------------------------------------------- dtypes and promotion
def _operand(lib, kind, dtype):
    if kind == "tensor":
        return lib.tensor([1, 0, 1], dtype=getattr(lib, dtype))
    if kind == "zero_dim":
        return lib.tensor(1, dtype=getattr(lib, dtype))
    return {"bool": True, "int64": 2, "float32": 2.5}[dtype]   # weak Python scalars


OPERANDS = ([("tensor", d) for d in DTYPES] + [("zero_dim", d) for d in DTYPES] +
            [("scalar", d) for d in ("bool", "int64", "float32")])
PAIRS = [(x, y) for x, y in itertools.product(OPERANDS, OPERANDS)
         if "scalar" not in (x[0], y[0]) or x[0] != y[0]]


@pytest.mark.parametrize("x,y", PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_type_promotion_matches_torch(x, y):
    ax, ay = _operand(ag, *x), _operand(ag, *y)
    tx, ty = _operand(torch, *x), _operand(torch, *y)
    for op in (lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a / b,
               lambda a, b: a == b, lambda a, b: a < b, lambda m: None):
        try:
            expected = op(tx, ty)
        except (RuntimeError, TypeError) as e:
            with pytest.raises(type(e)):
                op(ax, ay)
            continue
        if expected is None:
            continue
        got = op(ax, ay)
        assert dtype_name(got.dtype) == dtype_name(expected.dtype), f"{x} {y}"
        assert tuple(got.shape) == tuple(expected.shape)
    if "tensor" in (x[0], y[0]) or x[0] == y[0] == "zero_dim":
        if isinstance(ax, ag.Tensor) and isinstance(ay, ag.Tensor):
            assert dtype_name(ag.result_type(ax, ay)) == dtype_name(torch.result_type(tx, ty))
        assert dtype_name(ag.maximum(*_as_tensors(ag, ax, ay)).dtype) == \
            dtype_name(torch.maximum(*_as_tensors(torch, tx, ty)).dtype)


def _as_tensors(lib, a, b):
    return [v if isinstance(v, lib.Tensor) else lib.tensor(v) for v in (a, b)]


def test_promote_types_and_dtype_objects():
    assert ag.promote_types(ag.int32, ag.float16) is ag.float16
    assert ag.promote_types(ag.uint8, ag.int32) is ag.int32
    assert ag.promote_types(ag.bool, ag.uint8) is ag.uint8
    assert ag.float is ag.float32 and ag.double is ag.float64 and ag.long is ag.int64
    assert ag.half is ag.float16 and ag.int is ag.int32
    assert repr(ag.float64) == "arraygrad.float64"
    assert ag.float32.is_floating_point and not ag.int64.is_floating_point
    assert pickle.loads(pickle.dumps(ag.float64)) is ag.float64


def test_integer_ops_keep_torch_dtypes():
    i = ag.tensor([1, 2, 3])
    assert (i / 2).dtype is ag.float32 and (i // 2).dtype is ag.int64
    assert i.sum().dtype is ag.int64 and ag.tensor([True, True]).sum().dtype is ag.int64
    assert (i ** 2).dtype is ag.int64 and (i ** 0.5).dtype is ag.float32
    assert i.exp().dtype is ag.float32 and i.sqrt().dtype is ag.float32
    assert (i > 1).dtype is ag.bool
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        i.mean()


# ----------------------------------------------------------------- metadata
def test_metadata():
    a = ag.zeros(2, 3, 4)
    assert a.shape == (2, 3, 4) and isinstance(a.shape, ag.Size)
    assert a.size() == (2, 3, 4) and a.size(1) == 3 and a.size(-1) == 4
    assert a.dim() == a.ndim == 3 and a.numel() == 24 and len(a) == 2
    assert a.T.shape == (4, 3, 2)
    assert a.device == ag.device("cpu") and str(a.device) == "cpu" and a.device.type == "cpu" and not a.is_cuda
    assert repr(a.shape) == "arraygrad.Size([2, 3, 4])"
    assert a.shape.numel() == 24
    assert ag.tensor(1.0).shape == () and ag.tensor(1.0).dim() == 0
    with pytest.raises(IndexError, match="Dimension out of range"):
        a.size(3)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ag.tensor(1.0))
    assert a.is_floating_point() and a.element_size() == 4 and ag.is_tensor(a)
    assert not ag.is_tensor([1])


# ----------------------------------------------------------------- conversions
def test_item_tolist_numpy():
    a = ag.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert a.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert a[0, 1].item() == 2.0 and isinstance(a[0, 1].item(), float)
    assert isinstance(ag.tensor(3).item(), int) and isinstance(ag.tensor(True).item(), bool)
    assert ag.tensor([7]).item() == 7 and ag.tensor(2.5).tolist() == 2.5
    with pytest.raises(RuntimeError, match="a Tensor with 4 elements cannot be converted to Scalar"):
        a.item()
    n = a.numpy()
    assert isinstance(n, np.ndarray) and n.dtype == np.float32
    n[0, 0] = 9.0
    assert a[0, 0].item() == 9.0, "numpy() shares memory"
    assert np.asarray(a).shape == (2, 2) and np.asarray(a, dtype=np.float64).dtype == np.float64
    assert float(ag.tensor(2.5)) == 2.5 and int(ag.tensor(3)) == 3 and bool(ag.tensor([1.0]))
    assert [1, 2, 3][ag.tensor(1)] == 2
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is "
                                           "ambiguous"):
        bool(a)


def test_numpy_requires_grad_error_and_array():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 2.0]
    assert np.asarray(x).tolist() == [1.0, 2.0]
    assert x.tolist() == [1.0, 2.0] and (x * 2).sum().item() == 6.0


@pytest.mark.parametrize("conv", ["float", "double", "long", "int", "bool", "half"])
def test_dtype_conversion_methods(conv):
    a, t = ag.tensor([0.0, 1.5, -2.7]), torch.tensor([0.0, 1.5, -2.7])
    assert_close(getattr(a, conv)(), getattr(t, conv)(), rtol=1e-3)


def test_to():
    a = ag.tensor([1.0, 2.0])
    assert a.to(ag.float32) is a and a.float() is a
    assert a.to(ag.float64).dtype is ag.float64 and a.to(dtype=ag.int64).dtype is ag.int64
    assert a.to("cpu") is a and a.to(ag.zeros(1, dtype=ag.float64)).dtype is ag.float64
    assert a.to("cpu", ag.float64).dtype is ag.float64
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype is ag.float32 and x.grad.tolist() == [2.0, 4.0]


def test_detach_clone_and_requires_grad_changes():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    d[0] = 5.0
    assert x[0].item() == 5.0, "detach shares memory"
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0"
    c.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                                           "variables."):
        y.requires_grad_(False)
    y.detach_()
    assert not y.requires_grad and y.grad_fn is None
    z = ag.tensor([1.0])
    assert z.requires_grad_() is z and z.requires_grad


def test_pickle_and_deepcopy():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == [1.0, 2.0] and y.requires_grad and y is not x
    z = copy.deepcopy(x)
    assert z.tolist() == [1.0, 2.0] and z.requires_grad and z.is_leaf


# ----------------------------------------------------------------- repr
REPRS = [
    lambda m: m.tensor([1.5, 2.0]), lambda m: m.tensor([1, 2, 3]), lambda m: m.tensor([True, False]),
    lambda m: m.tensor(3.0), lambda m: m.tensor(3), lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
    lambda m: m.tensor([1, 2], dtype=m.int32), lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]]),
    lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
    lambda m: m.tensor([1.0, 2.0], requires_grad=True).sum(),
    lambda m: m.tensor([[1.0, 2.0]], dtype=m.float64, requires_grad=True).exp(),
    lambda m: m.zeros(0), lambda m: m.zeros(2, 0), lambda m: m.zeros(0, dtype=m.int64),
    lambda m: m.tensor([1e-5, 1.0]), lambda m: m.tensor([1e10, 1.0]), lambda m: m.tensor([0.1, 0.25]),
    lambda m: m.tensor([float("nan"), float("inf"), -float("inf"), 1.0]),
    lambda m: m.tensor([-1.0, 2.0, 100.0]), lambda m: m.tensor(-0.5, dtype=m.float64),
    lambda m: m.arange(12.0).reshape(3, 4), lambda m: m.tensor([1, 2], dtype=m.float16),
    lambda m: m.arange(2000.0).reshape(40, 50), lambda m: m.arange(2000),
    lambda m: m.arange(24.0).reshape(2, 3, 4), lambda m: m.arange(30.0) / 7,
]


@pytest.mark.parametrize("make", REPRS)
def test_repr_like_torch(make):
    expected = repr(make(torch)).replace("torch.", "arraygrad.")
    assert repr(make(ag)) == expected
    assert str(make(ag)) == expected


def test_numpy_scalars_are_weak_like_python_scalars():
    x = ag.ones(2)
    for s in (np.float64(2.0), np.float32(2.0), np.int64(3), np.bool_(True)):
        for r in (x * s, s * x, x + s, x / s):
            assert r.dtype is ag.float32
    assert (ag.tensor([1, 2]) * np.int32(3)).dtype is ag.int64
    assert (x ** np.float64(2)).dtype is ag.float32 and (ag.tensor([2]) ** np.int64(2)).dtype is ag.int64


def test_python_interop_like_torch():
    x = ag.ones(2)
    assert (x == None) is False and (x != None) is True  # noqa: E711
    assert x in [None, x]
    for other in ("mean", b"ab", [1.0], (1.0,), object()):   # torch: NotImplemented, then identity
        assert (x == other) is False and (x != other) is True
    assert "mean" not in [x] and x in ["mean", x]
    assert ag.where(ag.tensor([True, False]), 1.0, 0).dtype is ag.float32
    assert ag.where(ag.tensor([True, False]), 1, 0).dtype is ag.int64
    assert ag.where(ag.tensor([True, False]), 1.0, 0).tolist() == [1.0, 0.0]


def test_format_like_torch():
    for make in (lambda m: m.tensor(2.5), lambda m: m.tensor(3), lambda m: m.tensor([1.0, 2.0])):
        for spec in ("", ".3f", ">30"):
            try:
                expected = format(make(torch), spec).replace("torch.", "arraygrad.")
            except TypeError:
                with pytest.raises(TypeError):
                    format(make(ag), spec)
                continue
            assert format(make(ag), spec) == expected


@pytest.mark.parametrize("data,dtype", [([-1], "uint8"), (-1, "uint8"), ([300], "uint8"),
                                        ([200], "int8"), ([2 ** 70], "int64"),
                                        ([1.5, -1], "uint8"), ([2 ** 63], "uint8"),
                                        ([-128, 255], "uint8"), ([-129], "uint8"),
                                        ([-256], "uint8"), ([-40000], "int16")])
def test_integers_out_of_a_dtypes_range_as_torch(torch, data, dtype):
    """torch wraps negatives into an unsigned type, refuses other overflows (RuntimeError) and
    numbers beyond int64 (ValueError); NumPy's OverflowError leaked before."""
    try:
        want = torch.tensor(data, dtype=getattr(torch, dtype)).tolist()
    except Exception as e:     # noqa: BLE001 - the same type from us
        with pytest.raises(type(e)):
            ag.tensor(data, dtype=getattr(ag, dtype))
        return
    assert ag.tensor(data, dtype=getattr(ag, dtype)).tolist() == want


def test_integer_power_to_negative_tensor_exponents_as_torch(torch):
    """1 -> 1, -1 -> +-1 by parity, anything else -> 0 (was NumPy's refusal); a negative
    Python int exponent is refused in both."""
    def run(M):
        b = M.tensor([0, 1, -1, 2, -2, 3])
        return (M.pow(b, M.tensor([-1, -1, -3, -1, -3, -2])).tolist(),
                M.pow(b, M.tensor(-2)).tolist(),
                M.pow(M.tensor([0, 1, -1, 2], dtype=M.int8), M.tensor([-1, -2, -3, 2])).tolist())
    assert run(ag) == run(torch)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        ag.tensor([2]) ** -1


def test_resize_as_torch(torch):
    def run(M):
        a = M.arange(6.0)
        first = a.resize_(2, 2).tolist()
        b = M.arange(4.0).resize_as_(M.ones(2, 2)).tolist()
        grown = a.resize_(3, 2)
        return first, b, tuple(grown.shape), grown[:2].tolist(), a._version
    assert run(ag) == run(torch)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ag.ones(2, requires_grad=True).resize_(3)


def test_gcd_lcm_check_the_promoted_dtype_as_torch(torch):
    """bool with an int is an int (torch computes); bool with bool, or a float, is refused."""
    for a, b in [([True, False], [4, 6]), ([4, 6], [True, False]), ([True], [True]), ([1.5], [2])]:
        for op in ("gcd", "lcm"):
            try:
                want = getattr(torch, op)(torch.tensor(a), torch.tensor(b)).tolist()
            except NotImplementedError:
                with pytest.raises(NotImplementedError, match=f"{op}_cpu"):
                    getattr(ag, op)(ag.tensor(a), ag.tensor(b))
                continue
            assert getattr(ag, op)(ag.tensor(a), ag.tensor(b)).tolist() == want


@pytest.mark.parametrize("case", [
    "z = lib.arange(4).reshape(2, 2); z.t().apply_(lambda v: v * 10); out = z",
    "z = lib.arange(4.0); z.map_(lib.tensor(2.0), lambda a, b: a * b); out = z",
    "z = lib.arange(4); z.apply_(lambda v: v / 3); out = z",
    "z = lib.tensor([True, False]); z.apply_(lambda v: not v); out = z",
    "out = lib.arange(4.0).map_(lib.ones(3), lambda a, b: a * b)",
    "out = lib.arange(4.0).apply_(lambda v: 'x')",
    "out = lib.arange(4.0, requires_grad=True).apply_(lambda v: v)",
    "out = lib.arange(4.0).map_(lib.ones(4, requires_grad=True), lambda a, b: a)",
])
def test_apply_and_map_match_torch(torch, case):
    """Python callables on each element, in place, with torch's refusals."""
    results = []
    for lib in (torch, ag):
        env = {"lib": lib}
        try:
            exec(case, env)
            results.append((env["out"].tolist(), str(env["out"].dtype).split(".")[-1]))
        except (RuntimeError, TypeError) as e:
            results.append((type(e).__name__, str(e)))
    assert results[1] == results[0]
