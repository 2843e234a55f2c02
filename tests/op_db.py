"""A catalogue of ops with sample inputs, run by every op test (values, grads, double grads).

Each `OpInfo` has one function `fn(lib, *args, **kwargs)` written once for both
libraries (`lib` is `arraygrad` or `torch`), and `samples(rng)` yielding
`Sample`s. In a sample, float NumPy arrays become tensors that require grad,
integer and bool arrays become plain index/mask tensors, lists of arrays become
lists of tensors, and anything else is passed as is. A new op joins the
catalogue and is tested everywhere at once.
"""
import itertools
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.ops.index import index_add_zeros


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    smooth: bool = True     # False at a kink or tie: the derivative is torch's convention, which
                            # finite differences cannot check (test_op_fd skips it)

    def __repr__(self):
        def show(a):
            if isinstance(a, np.ndarray):
                return f"{a.dtype}{list(a.shape)}"
            if isinstance(a, list):
                return "[" + ", ".join(show(v) for v in a) + "]"
            return repr(a)
        kw = "".join(f", {k}={v!r}" for k, v in self.kwargs.items())
        return "(" + ", ".join(show(a) for a in self.args) + kw + ")"


@dataclass
class OpInfo:
    name: str
    fn: object
    samples: object
    grad: bool = True          # differentiable: check first and second derivatives
    gradgrad: bool = True
    rtol: float = 1e-10
    atol: float = 1e-12
    # checks where torch is no oracle ("jvp", "forward_over": jvp of vjp/jvp) -> the reason;
    # test_op_fd and the op's own tests check those against finite differences instead
    torch_not_oracle: dict = field(default_factory=dict)


# ----------------------------------------------------------------- sample makers
UNARY_SHAPES = [(), (0,), (1,), (5,), (2, 3), (2, 1, 3), (0, 3)]
BINARY_SHAPES = [((), ()), ((4,), (4,)), ((2, 3), (2, 3)), ((3, 1), (1, 4)), ((), (2, 3)),
                 ((2, 3), ()), ((2, 1, 4), (3, 1)), ((1,), (5,)), ((2, 0), (1,)), ((0, 3), (3,))]


def uniform(rng, shape, low=-2.0, high=2.0):
    return np.asarray(rng.uniform(low, high, size=shape))


def away_from_zero(rng, shape, low=0.2, high=2.0):
    """Values with |x| in [low, high] and random signs (kinks of abs/relu avoided)."""
    return np.asarray(rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape))


def unary_samples(low=-2.0, high=2.0, avoid_zero=False):
    def gen(rng):
        for s in UNARY_SHAPES:
            x = away_from_zero(rng, s) if avoid_zero else uniform(rng, s, low, high)
            yield Sample((x,))
    return gen


def binary_samples(lx=-2.0, hx=2.0, ly=-2.0, hy=2.0, y_away=False, scalars=(2.5, -3, True)):
    def gen(rng):
        for sx, sy in BINARY_SHAPES:
            y = away_from_zero(rng, sy) if y_away else uniform(rng, sy, ly, hy)
            yield Sample((uniform(rng, sx, lx, hx), y))
        for c in scalars:
            yield Sample((uniform(rng, (2, 3), lx, hx), c))
    return gen


def distinct(rng, shape):
    """Values with no ties (for max/min/sort-like ops, whose gradient picks one entry)."""
    n = int(np.prod(shape))
    return np.asarray((rng.permutation(n) / max(n, 1) + rng.uniform(0, 1e-3, n)).reshape(shape) - 0.5)


def reduce_samples(dims=True, empty=True, gen_x=uniform):
    def gen(rng):
        yield Sample((gen_x(rng, (2, 3, 4)),))
        yield Sample((gen_x(rng, ()),))
        yield Sample((gen_x(rng, (5,)),))
        if dims:
            for dim, keep in itertools.product([0, -1, 1, (0, 2), (-1, 0)], [False, True]):
                yield Sample((gen_x(rng, (2, 3, 4)),), {"dim": dim, "keepdim": keep})
            yield Sample((gen_x(rng, ()),), {"dim": 0})
            yield Sample((gen_x(rng, (3, 1)),), {"dim": 1})
            if empty:
                yield Sample((gen_x(rng, (0, 3)),), {"dim": 1})
                yield Sample((gen_x(rng, (0, 3)),), {"dim": 0})
        if empty:
            yield Sample((gen_x(rng, (0, 3)),))
    return gen


def kink(build):
    """A sample builder at a point where the op is not differentiable (ties, bounds, 0)."""
    def at_kink(rng):
        s = build(rng)
        s.smooth = False
        return s
    return at_kink


def one(*samples):
    """Fixed samples built from rng: each item is a function rng -> Sample."""
    def gen(rng):
        for s in samples:
            yield s(rng)
    return gen


class L:
    """A literal tuple argument (a target shape, dims, an index), not a shape to fill."""

    def __init__(self, *value):
        self.value = value


def S(*shapes_or_values, gen_x=uniform, **kwargs):
    """A sample builder: tuples become random arrays of that shape, L(...) literal tuples,
    callables rng -> value, other values stay."""
    def build(rng):
        args = []
        for v in shapes_or_values:
            if isinstance(v, tuple):
                args.append(gen_x(rng, v))
            elif isinstance(v, L):
                args.append(v.value)
            else:
                args.append(v(rng) if callable(v) else v)
        return Sample(tuple(args), dict(kwargs))
    return build


def _positive(rng, shape):
    return uniform(rng, shape, 0.5, 2.0)


# ----------------------------------------------------------------- running samples
def cases(ops, pred=lambda op: True):
    """pytest params (op, sample) for the ops that satisfy `pred`, each op seeded by its name."""
    out = []
    for op in ops:
        if not pred(op):
            continue
        rng = np.random.default_rng(zlib.crc32(op.name.encode()))
        for i, s in enumerate(op.samples(rng)):
            out.append(pytest.param(op, s, id=f"{op.name}-{i}"))
    return out


def convert(lib, v, float_dtype, leaves):
    """Sample value -> lib's value; float arrays become leaves requiring grad."""
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "f":
            t = lib.tensor(v.astype(float_dtype), requires_grad=True)
            leaves.append(t)
            return t
        return lib.tensor(v)
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return [convert(lib, a, float_dtype, leaves) for a in v]
    return v


def float_arrays(sample):
    """The float arrays of a sample (the inputs that are differentiated), in order."""
    out = []
    for v in list(sample.args) + list(sample.kwargs.values()):
        for a in (v if isinstance(v, list) else [v]):
            if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                out.append(a)
    return out


def as_function(lib, op, sample):
    """`op` as a function of the sample's float inputs (tensors, in `float_arrays` order), the
    other values fixed; it returns the float outputs as a tuple."""
    def put(v, it):
        if isinstance(v, np.ndarray):
            return next(it) if v.dtype.kind == "f" else lib.tensor(v)
        if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
            return [put(a, it) for a in v]
        return v

    def f(*floats):
        it = iter(floats)
        args = [put(a, it) for a in sample.args]
        kwargs = {k: put(v, it) for k, v in sample.kwargs.items()}
        out = op.fn(lib, *args, **kwargs)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return tuple(o for o in outs if o.dtype.is_floating_point)
    return f


def has_float_output(op, sample):
    """Whether the op gives a float output on the sample (something to differentiate)."""
    return bool(as_function(ag, op, sample)(*(ag.tensor(a) for a in float_arrays(sample))))


def first_cases(ops, pred=lambda op, sample: True):
    """pytest params (op, sample): for each op its first sample with non-empty float inputs that
    satisfies `pred` (the transform tests run one sample per op, to stay fast)."""
    out = []
    for op in ops:
        rng = np.random.default_rng(zlib.crc32(op.name.encode()))
        for s in op.samples(rng):
            arrays = float_arrays(s)
            if arrays and min(a.size for a in arrays) > 0 and pred(op, s):
                out.append(pytest.param(op, s, id=op.name))
                break
    return out


def run(lib, op, sample, float_dtype=np.float64):
    """Run one sample in `lib`: (leaves that require grad, list of outputs)."""
    leaves = []
    args = [convert(lib, a, float_dtype, leaves) for a in sample.args]
    kwargs = {k: convert(lib, v, float_dtype, leaves) for k, v in sample.kwargs.items()}
    out = op.fn(lib, *args, **kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return leaves, outs



# ----------------------------------------------------------------- the catalogue
def _unary(name, low=-2.0, high=2.0, avoid_zero=False, method=True, **kw):
    fn = (lambda lib, x: getattr(x, name)()) if method else (lambda lib, x: getattr(lib, name)(x))
    return OpInfo(name, fn, unary_samples(low, high, avoid_zero), **kw)


UNARY = [
    _unary("neg"), _unary("exp"), _unary("log", 0.1, 3.0), _unary("sqrt", 0.1, 3.0),
    _unary("rsqrt", 0.1, 3.0), _unary("abs", avoid_zero=True), _unary("tanh"),
    _unary("sigmoid"), _unary("relu", avoid_zero=True), _unary("sin"), _unary("cos"),
    _unary("tan", -1.0, 1.0), _unary("log1p", -0.5, 2.0), _unary("expm1"),
    _unary("log2", 0.1, 3.0), _unary("log10", 0.1, 3.0), _unary("asin", -0.9, 0.9),
    _unary("acos", -0.9, 0.9), _unary("atan"), _unary("sinh"), _unary("cosh"), _unary("erf"),
    _unary("square"), _unary("reciprocal", avoid_zero=True),
    _unary("sign", avoid_zero=True), _unary("floor"), _unary("ceil"), _unary("trunc"),
    _unary("round"),
    OpInfo("torch.exp", lambda lib, x: lib.exp(x), unary_samples()),
    OpInfo("torch.relu", lambda lib, x: lib.relu(x), unary_samples(avoid_zero=True)),
    OpInfo("abs_op", lambda lib, x: abs(x), unary_samples(avoid_zero=True)),
    OpInfo("pos_neg_op", lambda lib, x: -(+x), unary_samples()),
]

BINARY = [
    OpInfo("add", lambda lib, x, y: lib.add(x, y), binary_samples()),
    OpInfo("add_alpha", lambda lib, x, y: lib.add(x, y, alpha=2), binary_samples(scalars=(2.5,))),
    OpInfo("sub", lambda lib, x, y: lib.sub(x, y), binary_samples(scalars=(2.5, -3))),
    OpInfo("sub_alpha", lambda lib, x, y: x.sub(y, alpha=0.5), binary_samples(scalars=(2,))),
    OpInfo("mul", lambda lib, x, y: lib.mul(x, y), binary_samples()),
    OpInfo("div", lambda lib, x, y: lib.div(x, y), binary_samples(y_away=True, scalars=(2.5, -3))),
    OpInfo("pow", lambda lib, x, y: lib.pow(x, y),
           binary_samples(0.5, 2.0, -2.0, 2.0, scalars=(2, 3, 0.5, -1.5, 0, 1))),
    OpInfo("maximum", lambda lib, x, y: lib.maximum(x, y), binary_samples(scalars=())),
    OpInfo("minimum", lambda lib, x, y: lib.minimum(x, y), binary_samples(scalars=())),
    OpInfo("remainder", lambda lib, x, y: lib.remainder(x, y),
           binary_samples(0.1, 3.0, 0.7, 1.3, scalars=(0.75,)), gradgrad=False),
    OpInfo("op_add", lambda lib, x, y: x + y, binary_samples()),
    OpInfo("op_radd", lambda lib, x, y: y + x, binary_samples()),
    OpInfo("op_rsub", lambda lib, x, y: y - x, binary_samples(scalars=(2.5, -3))),
    OpInfo("op_rmul", lambda lib, x, y: y * x, binary_samples()),
    OpInfo("op_rtruediv", lambda lib, x, y: y / x, one(
        S((2, 3), 2.5, gen_x=away_from_zero), S((3,), -2, gen_x=away_from_zero),
        S((), 1.5, gen_x=away_from_zero))),
    OpInfo("op_truediv", lambda lib, x, y: x / y, binary_samples(y_away=True, scalars=(4, 0.5))),
    OpInfo("op_pow", lambda lib, x, y: x ** y, binary_samples(0.5, 2.0, -1.0, 1.0,
                                                              scalars=(2, 2.5, -1))),
    OpInfo("op_rpow", lambda lib, x, y: y ** x, one(S((2, 3), 2.0), S((3,), 0.5), S((), 3))),
    OpInfo("pow_tensor_int_exp", lambda lib, x: x ** 3, one(S((2, 3)), S((0,)), S(()))),
    OpInfo("pow_at_zero", lambda lib, x: x ** 2, one(lambda rng: Sample((np.array([0.0, 1.0, -2.0]),)))),
]

OTHER_ELEMENTWISE = [
    OpInfo("where", lambda lib, c, x, y: lib.where(c, x, y), one(
        S(lambda rng: rng.random((2, 3)) > 0.5, (2, 3), (2, 3)),
        S(lambda rng: rng.random((3, 1)) > 0.5, (1, 4), (3, 4)),
        S(lambda rng: rng.random((2, 3)) > 0.5, (), (3,)),
        S(lambda rng: rng.random((0, 3)) > 0.5, (0, 3), (3,)))),
    OpInfo("where_scalar", lambda lib, c, x: lib.where(c, x, 0.0), one(
        S(lambda rng: rng.random((2, 3)) > 0.5, (2, 3)))),
    OpInfo("where_method", lambda lib, c, x, y: x.where(c, y), one(
        S(lambda rng: rng.random((2, 3)) > 0.5, (2, 3), (3,)))),
    OpInfo("clamp", lambda lib, x, **kw: lib.clamp(x, **kw), one(
        S((2, 3), min=-0.5), S((2, 3), max=0.3), S((2, 3), min=-0.5, max=0.7), S((0,), min=0.0),
        S((), min=-1.0, max=1.0), S((4,), min=1.0, max=-1.0))),
    OpInfo("clamp_tensor", lambda lib, x, lo, hi: lib.clamp(x, lo, hi), one(
        S((2, 3), (3,), lambda rng: uniform(rng, (2, 1), 0.5, 1.0)))),
    OpInfo("clamp_min", lambda lib, x: x.clamp_min(0.1), unary_samples()),
    OpInfo("clamp_max", lambda lib, x: lib.clamp_max(x, 0.1), unary_samples()),
    OpInfo("clip", lambda lib, x: x.clip(-1, 1), unary_samples()),
]

REDUCE = [
    OpInfo("sum", lambda lib, x, **kw: lib.sum(x, **kw), reduce_samples()),
    OpInfo("sum_method", lambda lib, x, **kw: x.sum(**kw), reduce_samples()),
    OpInfo("mean", lambda lib, x, **kw: lib.mean(x, **kw), reduce_samples(empty=False)),
    OpInfo("prod", lambda lib, x, **kw: lib.prod(x, **kw),
           one(S((2, 3)), S((2, 3), dim=1), S((3, 4), dim=0, keepdim=True), S(()), S((0, 2), dim=0))),
    OpInfo("prod_with_zero", lambda lib, x, *d: lib.prod(x, *d), one(
        lambda rng: Sample((np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [1.0, 2.0, -1.0]]), 1)),
        lambda rng: Sample((np.array([[0.0, 2.0, 3.0], [0.5, 0.0, 1.5]]),)),
        lambda rng: Sample((np.array([[[0.0, 2.0], [3.0, 1.0]], [[0.5, 0.0], [0.0, 1.5]]]),)))),
    OpInfo("amax", lambda lib, x, **kw: lib.amax(x, **kw), reduce_samples(empty=False, gen_x=distinct)),
    OpInfo("amin", lambda lib, x, **kw: lib.amin(x, **kw), reduce_samples(empty=False, gen_x=distinct)),
    OpInfo("amax_ties", lambda lib, x: lib.amax(x, 1),
           one(kink(lambda rng: Sample((np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),))))),
    OpInfo("max_all", lambda lib, x: lib.max(x), one(S((2, 3), gen_x=distinct), S((), gen_x=distinct))),
    OpInfo("min_all", lambda lib, x: x.min(), one(S((2, 3), gen_x=distinct), S((1,), gen_x=distinct))),
    OpInfo("max_all_ties", lambda lib, x: lib.max(x),
           one(kink(lambda rng: Sample((np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),))))),
    OpInfo("max_dim", lambda lib, x, *a, **kw: lib.max(x, *a, **kw), one(
        S((2, 3, 4), 1, gen_x=distinct), S((2, 3, 4), -1, keepdim=True, gen_x=distinct),
        S((5,), 0, gen_x=distinct), S((), 0, gen_x=distinct), S((2, 3), dim=0, gen_x=distinct))),
    OpInfo("min_dim", lambda lib, x, *a, **kw: x.min(*a, **kw), one(
        S((2, 3, 4), 1, gen_x=distinct), S((2, 3, 4), 0, keepdim=True, gen_x=distinct))),
    OpInfo("max_dim_values", lambda lib, x: lib.max(x, 1).values, one(S((3, 4), gen_x=distinct))),
    OpInfo("max_dim_indices", lambda lib, x: x.max(dim=0)[1], one(S((3, 4), gen_x=distinct))),
    OpInfo("max_binary", lambda lib, x, y: lib.max(x, y), one(S((2, 3), (3,)))),
    OpInfo("argmax", lambda lib, x, **kw: lib.argmax(x, **kw), one(
        S((2, 3), gen_x=distinct), S((2, 3), dim=1, gen_x=distinct),
        S((2, 3), dim=0, keepdim=True, gen_x=distinct)), grad=False),
    OpInfo("argmin", lambda lib, x, **kw: x.argmin(**kw), one(
        S((2, 3), gen_x=distinct), S((2, 3), dim=1, gen_x=distinct)), grad=False),
    OpInfo("logsumexp", lambda lib, x, dim, keepdim=False: lib.logsumexp(x, dim, keepdim), one(
        S((2, 3, 4), 1), S((2, 3, 4), L(0, 2), True), S((5,), 0), S((), 0), S((0, 3), 1),
        S((0, 3), 0), S((2, 3), -1, gen_x=lambda rng, s: uniform(rng, s, 100, 200)))),
    OpInfo("softmax", lambda lib, x, dim: lib.softmax(x, dim), one(
        S((2, 3, 4), 1), S((5,), 0), S((2, 3), -1), S((), 0), S((0, 3), 1),
        S((2, 3), 1, gen_x=lambda rng, s: uniform(rng, s, 100, 200)))),
    OpInfo("log_softmax", lambda lib, x, dim: x.log_softmax(dim), one(
        S((2, 3, 4), 1), S((5,), 0), S((2, 3), -1), S((), 0), S((0, 3), 1),
        S((2, 3), 1, gen_x=lambda rng, s: uniform(rng, s, 100, 200)))),
    OpInfo("var", lambda lib, x, *a, **kw: lib.var(x, *a, **kw), one(
        S((2, 3, 4)), S((2, 3, 4), 1), S((2, 3, 4), L(0, 2), keepdim=True), S((5,), correction=0),
        S((3, 4), 0, unbiased=False))),
    OpInfo("std", lambda lib, x, *a, **kw: x.std(*a, **kw), one(
        S((2, 3, 4)), S((2, 3, 4), 1), S((5,), correction=0))),
    OpInfo("norm", lambda lib, x, *a, **kw: lib.norm(x, *a, **kw), one(
        S((2, 3), gen_x=away_from_zero), S((2, 3), 1, gen_x=away_from_zero),
        S((2, 3), 3, gen_x=away_from_zero), S((2, 3), 2, 1, True), S((0, 3), 2, 0),
        S((2, 3), -float("inf"), 1, gen_x=away_from_zero), S((2, 3), -float("inf")))),
    # torch's second derivative at a zero norm is nan; the first is 0 (a subgradient)
    OpInfo("norm_at_zero", lambda lib, x, *a: lib.norm(x, *a), one(
        S(lambda rng: np.zeros((2, 3)), 2, 1), S(lambda rng: np.zeros(3))), gradgrad=False),
    OpInfo("cumsum", lambda lib, x, dim: lib.cumsum(x, dim), one(
        S((2, 3, 4), 1), S((5,), 0), S((2, 3), -1), S((), 0), S((0, 3), 1))),
    OpInfo("all", lambda lib, x, **kw: (x > 0).all(**kw), one(S((2, 3)), S((2, 3), dim=1),
                                                             S((0,)), S(()), S((2, 3), dim=0, keepdim=True)), grad=False),
    OpInfo("any", lambda lib, x, **kw: lib.any(x > 0, **kw), one(S((2, 3)), S((2, 3), dim=1),
                                                                S((0,))), grad=False),
]

LINALG = [
    OpInfo("matmul", lambda lib, x, y: lib.matmul(x, y), one(
        S((3,), (3,)), S((2, 3), (3,)), S((3,), (3, 4)), S((2, 3), (3, 4)), S((5, 2, 3), (3, 4)),
        S((2, 3), (5, 3, 4)), S((2, 1, 2, 3), (4, 3, 2)), S((0, 3), (3, 2)), S((2, 0), (0, 3)),
        S((1, 3), (3, 1)))),
    OpInfo("op_matmul", lambda lib, x, y: x @ y, one(S((2, 3), (3, 4)), S((4,), (2, 4, 3)))),
    OpInfo("mm", lambda lib, x, y: lib.mm(x, y), one(S((2, 3), (3, 4)), S((1, 1), (1, 5)))),
    OpInfo("bmm", lambda lib, x, y: x.bmm(y), one(S((2, 2, 3), (2, 3, 4)))),
    OpInfo("mv", lambda lib, x, y: lib.mv(x, y), one(S((2, 3), (3,)))),
    OpInfo("dot", lambda lib, x, y: lib.dot(x, y), one(S((3,), (3,)), S((0,), (0,)))),
    OpInfo("inner", lambda lib, x, y: lib.inner(x, y), one(
        S((3,), (3,)), S((2, 3), (4, 3)), S((2, 3), (3,)), S((), (2, 3)), S((5, 2, 3), (2, 3)))),
    OpInfo("outer", lambda lib, x, y: lib.outer(x, y), one(S((3,), (4,)))),
    OpInfo("addmm", lambda lib, b, x, y: lib.addmm(b, x, y, beta=0.5, alpha=2), one(
        S((4,), (2, 3), (3, 4)))),
    OpInfo("einsum", lambda lib, eq, *xs: lib.einsum(eq, *xs), one(
        S("ij,jk->ik", (2, 3), (3, 4)), S("bij,bjk->bik", (2, 2, 3), (2, 3, 4)), S("ii->", (3, 3)),
        S("ij->ji", (2, 3)), S("i,j->ij", (2,), (3,)), S("ij,ij->", (2, 3), (2, 3)), S("ij", (2, 3)),
        S("ji", (2, 3)), S("ij,jk", (2, 3), (3, 4)), S("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5)),
        S("...ij,jk", (2, 3, 4), (4, 5)), S("i...->...", (3, 2, 4)), S("...,...->...", (2, 3), (3,)),
        S("b...,b...->b", (2, 3, 4), (2, 3, 4)), S("...ii->...i", (2, 3, 3)))),
]

SHAPE = [
    OpInfo("reshape", lambda lib, x, s: lib.reshape(x, s), one(
        S((2, 3), L(3, 2)), S((2, 3), L(-1)), S((2, 3), L(1, -1, 1)), S((), L(1)), S((1,), L()),
        S((0, 3), L(3, 0)), S((2, 3), L(2, 3)), S((4,), L(2, -1)))),
    OpInfo("reshape_varargs", lambda lib, x: x.reshape(3, -1), one(S((2, 3)))),
    OpInfo("view", lambda lib, x: x.view(-1, 2), one(S((2, 3)), S((4, 1)))),
    OpInfo("view_as", lambda lib, x, y: x.view_as(y), one(S((2, 3), (3, 2)))),
    OpInfo("transpose", lambda lib, x, a, b: lib.transpose(x, a, b), one(
        S((2, 3), 0, 1), S((2, 3, 4), -1, 0), S((2, 3), 1, 1), S((), 0, -1))),
    OpInfo("t", lambda lib, x: x.t(), one(S((2, 3)), S((3,)), S(()))),
    OpInfo("T", lambda lib, x: x.T, one(S((2, 3)), S((2, 3, 4)), S(()))),
    OpInfo("mT", lambda lib, x: x.mT, one(S((2, 3)), S((2, 3, 4)))),
    OpInfo("permute", lambda lib, x, d: lib.permute(x, d), one(
        S((2, 3, 4), L(2, 0, 1)), S((2, 3, 4), L(-1, 1, 0)), S((), L()), S((2, 0), L(1, 0)))),
    OpInfo("permute_varargs", lambda lib, x: x.permute(1, 0), one(S((2, 3)))),
    OpInfo("unsqueeze", lambda lib, x, d: lib.unsqueeze(x, d), one(
        S((2, 3), 0), S((2, 3), -1), S((2, 3), 1), S((), 0), S((), -1), S((0,), 1))),
    OpInfo("squeeze", lambda lib, x, *d: lib.squeeze(x, *d), one(
        S((1, 3, 1)), S((1, 3, 1), 0), S((1, 3, 1), -1), S((1, 3, 1), 1), S((1, 3, 1), L(0, 2)),
        S(()), S((1,)), S((1,), 0), S((), 0))),
    OpInfo("expand", lambda lib, x, s: x.expand(s), one(
        S((3, 1), L(3, 4)), S((3, 1), L(2, 3, 4)), S((1,), L(0)), S((), L(2, 2)),
        S((3, 1), L(-1, 2)), S((2, 3), L(2, 3)))),
    OpInfo("expand_varargs", lambda lib, x: x.expand(2, -1, 3), one(S((4, 1)))),
    OpInfo("expand_as", lambda lib, x, y: x.expand_as(y), one(S((3, 1), (2, 3, 4)))),
    OpInfo("broadcast_to", lambda lib, x, s: lib.broadcast_to(x, s), one(S((3, 1), L(2, 3, 4)))),
    OpInfo("movedim", lambda lib, x, s, d: lib.movedim(x, s, d), one(
        S((2, 3, 4), 0, -1), S((2, 3, 4), L(0, 1), L(2, 0)), S((2, 3, 4), 1, 1), S((), 0, 0))),
    OpInfo("flatten", lambda lib, x, *a: lib.flatten(x, *a), one(
        S((2, 3, 4)), S((2, 3, 4), 1), S((2, 3, 4), 0, 1), S(()), S((0, 2)), S((2, 3, 4), -2, -1))),
    OpInfo("unflatten", lambda lib, x, d, s: x.unflatten(d, s), one(
        S((2, 12), 1, L(3, 4)), S((2, 12), -1, L(-1, 2)))),
    OpInfo("cat", lambda lib, xs, *a: lib.cat(xs, *a), one(
        S(lambda rng: [uniform(rng, (2, 3)), uniform(rng, (1, 3))]),
        S(lambda rng: [uniform(rng, (2, 3)), uniform(rng, (2, 1)), uniform(rng, (2, 0))], 1),
        S(lambda rng: [uniform(rng, (2, 3)), uniform(rng, (0,))], 0),
        S(lambda rng: [uniform(rng, (2, 3))], -1),
        S(lambda rng: [uniform(rng, (2, 3, 2)), uniform(rng, (2, 3, 2))], -1))),
    OpInfo("stack", lambda lib, xs, *a: lib.stack(xs, *a), one(
        S(lambda rng: [uniform(rng, (2, 3)), uniform(rng, (2, 3))]),
        S(lambda rng: [uniform(rng, (2, 3)), uniform(rng, (2, 3)), uniform(rng, (2, 3))], 2),
        S(lambda rng: [uniform(rng, ()), uniform(rng, ())], -1),
        S(lambda rng: [uniform(rng, (0,)), uniform(rng, (0,))], 1))),
    OpInfo("hstack", lambda lib, xs: lib.hstack(xs), one(
        S(lambda rng: [uniform(rng, (2, 3)), uniform(rng, (2, 1))]),
        S(lambda rng: [uniform(rng, (2,)), uniform(rng, (3,))]))),
    OpInfo("vstack", lambda lib, xs: lib.vstack(xs), one(
        S(lambda rng: [uniform(rng, (2, 3)), uniform(rng, (3,))]))),
    OpInfo("clone", lambda lib, x: x.clone(), unary_samples()),
    OpInfo("flip", lambda lib, x, d: lib.flip(x, d), one(S((2, 3), L(0)), S((2, 3, 4), L(0, -1)))),
    OpInfo("roll", lambda lib, x, *a: lib.roll(x, *a), one(
        S((2, 3), 1, 1), S((2, 3), -1, 0), S((2, 3), 2), S((2, 3, 4), L(1, 2), L(0, 2)))),
    OpInfo("narrow", lambda lib, x, d, s, n: x.narrow(d, s, n), one(
        S((4, 3), 0, 1, 2), S((4, 3), -1, 0, 3), S((4, 3), 1, 1, 0))),
    OpInfo("split", lambda lib, x, s, *d: lib.split(x, s, *d), one(
        S((5, 3), 2), S((5, 3), [1, 4]), S((5, 3), 1, 1), S((5, 3), [0, 3], -1))),
    OpInfo("chunk", lambda lib, x, c, *d: x.chunk(c, *d), one(
        S((5, 3), 2), S((6, 3), 3), S((5, 3), 2, 1))),
    OpInfo("unbind", lambda lib, x, *d: lib.unbind(x, *d), one(S((3, 2)), S((3, 2), 1))),
    OpInfo("select", lambda lib, x, d, i: lib.select(x, d, i), one(
        S((3, 2), 0, 1), S((3, 2), -1, -1), S((3, 4, 2), 1, 2))),
    OpInfo("repeat", lambda lib, x, r: x.repeat(r), one(
        S((2, 3), L(2, 1)), S((3,), L(2, 2)), S((2, 3), L(1, 2, 3)), S((), L(3)))),
    OpInfo("tile", lambda lib, x, r: lib.tile(x, r), one(S((2, 3), L(2, 2)))),
    OpInfo("diagonal", lambda lib, x, *a: lib.diagonal(x, *a), one(
        S((3, 3)), S((3, 4), 1), S((3, 4), -1), S((2, 3, 4), 0, 1, 2))),
    OpInfo("trace", lambda lib, x: lib.trace(x), one(S((3, 3)), S((2, 3)))),
    OpInfo("diag", lambda lib, x, *a: lib.diag(x, *a), one(S((3,)), S((3, 3)), S((3,), 1),
                                                          S((3, 4), -1))),
    OpInfo("contiguous", lambda lib, x: x.t().contiguous(), one(S((2, 3)))),
]


def _mask(shape, p=0.5):
    return lambda rng: rng.random(shape) > p


def _ints(high, shape):
    return lambda rng: rng.integers(0, high, shape)


INDEX = [
    OpInfo("getitem", lambda lib, x, i: x[i], one(
        S((4, 3), 1), S((4, 3), -1), S((4, 3), slice(1, 3)), S((4, 3), slice(None, None, 2)),
        S((4, 3), L(slice(None), 2)), S((4, 3), None), S((4, 3), L(None, 1, None)),
        S((2, 3, 4), Ellipsis), S((2, 3, 4), L(Ellipsis, 1)), S((2, 3, 4), L(0, Ellipsis, None)),
        S((4, 3), slice(5, 10)), S((4, 3), L(slice(-3, -1), slice(1, None))),
        S((4, 3), L(1, 2)), S((4,), slice(0, 0)), S((), L()), S((), None), S((), Ellipsis))),
    OpInfo("getitem_bool", lambda lib, x, m: x[m], one(
        S((4, 3), _mask((4, 3))), S((4, 3), _mask((4,))), S((2, 3, 4), _mask((2, 3))),
        S((4,), _mask((4,), 2.0)), S((), lambda rng: np.array(True)))),
    OpInfo("getitem_int_tensor", lambda lib, x, i: x[i], one(
        S((4, 3), _ints(4, (5,))), S((4, 3), _ints(4, (2, 2))), S((4, 3), lambda rng: np.array([0, 0, 3])),
        S((4, 3), lambda rng: np.array(2)), S((4, 3), lambda rng: np.array([-1, 1])),
        S((4, 3), lambda rng: np.zeros((0,), np.int64)))),
    OpInfo("getitem_mixed", lambda lib, x, i, j: x[i, :, j], one(
        S((4, 3, 5), _ints(4, (2,)), _ints(5, (2,))), S((4, 3, 5), 1, _ints(5, (3,))),
        S((4, 3, 5), slice(1, 3), _ints(5, (2,))))),
    OpInfo("getitem_list", lambda lib, x: x[[0, 2, 2]], one(S((4, 3)))),
    OpInfo("getitem_tensor_and_slice", lambda lib, x, i: x[1:, i], one(S((4, 3), _ints(3, (2, 2))))),
    OpInfo("gather", lambda lib, x, d, i: lib.gather(x, d, i), one(
        S((3, 4), 1, _ints(4, (3, 2))), S((3, 4), 0, _ints(3, (2, 4))), S((3, 4), -1, _ints(4, (2, 2))))),
    OpInfo("index_select", lambda lib, x, d, i: lib.index_select(x, d, i), one(
        S((3, 4), 1, lambda rng: np.array([0, 3, 3])), S((3, 4), 0, lambda rng: np.array([2])))),
    OpInfo("masked_fill", lambda lib, x, m: x.masked_fill(m, 0.5), one(
        S((3, 4), _mask((3, 4))), S((3, 4), _mask((4,))))),
    OpInfo("masked_select", lambda lib, x, m: lib.masked_select(x, m), one(
        S((3, 4), _mask((3, 4))), S((3, 4), _mask((4,))))),
    OpInfo("take", lambda lib, x, i: lib.take(x, i), one(S((3, 4), _ints(12, (2, 3))))),
    OpInfo("scatter_add", lambda lib, x, d, i, s: x.scatter_add(d, i, s), one(
        S((3, 4), 1, _ints(4, (3, 2)), (3, 2)), S((3, 4), 0, _ints(3, (2, 4)), (2, 4)))),
]


def _cmp(name, fn):
    return OpInfo(name, fn, binary_samples(scalars=(0.5, 1, True)), grad=False)


COMPARE = [
    _cmp("eq", lambda lib, x, y: lib.eq(x, y)), _cmp("ne", lambda lib, x, y: x != y),
    _cmp("lt", lambda lib, x, y: x < y), _cmp("le", lambda lib, x, y: lib.le(x, y)),
    _cmp("gt", lambda lib, x, y: x > y), _cmp("ge", lambda lib, x, y: x >= y),
    OpInfo("eq_self", lambda lib, x: x == x, unary_samples(), grad=False),
    OpInfo("logical_and", lambda lib, x, y: lib.logical_and(x > 0, y > 0), binary_samples(scalars=()), grad=False),
    OpInfo("bool_ops", lambda lib, x, y: ((x > 0) & (y > 0)) | ~(x > y), binary_samples(scalars=()), grad=False),
    OpInfo("isnan", lambda lib, x: lib.isnan(lib.log(x)), unary_samples(), grad=False),
    OpInfo("isinf", lambda lib, x: lib.isinf(lib.log(x * (x > 0))), unary_samples(), grad=False),
    OpInfo("isclose", lambda lib, x, y: lib.isclose(x, y, rtol=0.1, atol=0.5),
           binary_samples(scalars=()), grad=False),
    OpInfo("logical_or_xor", lambda lib, x, y: (lib.logical_or(x > 0, y > 0),
                                                lib.logical_xor(x > 0, y < 0)),
           binary_samples(scalars=()), grad=False),
    OpInfo("bitwise", lambda lib, x, y: _bitwise((x * 4).long(), (y * 4).long()),
           binary_samples(scalars=()), grad=False),
    # piecewise constant: zero gradients to both inputs, as torch's
    OpInfo("div_rounding", lambda lib, x, y: (
        lib.div(x, y, rounding_mode="trunc"), lib.div(x, y, rounding_mode="floor")),
        binary_samples(y_away=True, scalars=(2.5, -3))),
]


def _bitwise(a, b):
    return a ^ b, ~a, a & b, a | b

MORE = [
    OpInfo("atan2", lambda lib, y, x: lib.atan2(y, x), binary_samples(y_away=True, scalars=())),
    OpInfo("logaddexp", lambda lib, x, y: lib.logaddexp(x, y), binary_samples(scalars=())),
    OpInfo("logaddexp_inf", lambda lib, x, y: lib.logaddexp(x, y), one(
        lambda rng: Sample((np.array([-np.inf, 0.0]), np.array([-np.inf, -np.inf])))), grad=False),
    OpInfo("hypot", lambda lib, x, y: lib.hypot(x, y), binary_samples(scalars=(),
                                                                     y_away=True)),
    OpInfo("lerp", lambda lib, x, y, w: lib.lerp(x, y, w), one(
        S((2, 3), (2, 3), 0.3), S((2, 3), (3,), (2, 1)), S((), (4,), ()))),
    OpInfo("addcmul", lambda lib, x, a, b: lib.addcmul(x, a, b, value=0.5), one(
        S((2, 3), (2, 3), (3,)), S((), (2, 1), (1, 4)))),
    OpInfo("addcdiv", lambda lib, x, a, b: x.addcdiv(a, b, value=-2), one(
        S((2, 3), (2, 3), (3,), gen_x=away_from_zero))),
    OpInfo("xlogy", lambda lib, x, y: lib.xlogy(x, y), one(
        S((2, 3), lambda rng: uniform(rng, (2, 3), 0.5, 2)),
        kink(S(lambda rng: np.array([0.0, 1.0, 2.0]), lambda rng: np.array([0.0, 0.5, 3.0]))),
        S((2, 3), 2.5), kink(S(lambda rng: np.array([0.5, 1.0, 2.0]), lambda rng: np.array(0.0)))),
        gradgrad=False),
    OpInfo("logit", lambda lib, x, *e: lib.logit(x, *e), one(
        S(lambda rng: uniform(rng, (2, 3), 0.1, 0.9)), S(lambda rng: uniform(rng, (4,), 0.01, 0.99), 0.05))),
    OpInfo("tril", lambda lib, x, *d: lib.tril(x, *d), one(S((3, 4)), S((3, 4), 1), S((2, 3, 3), -1))),
    OpInfo("triu", lambda lib, x, *d: x.triu(*d), one(S((3, 4)), S((4, 3), -1), S((2, 3, 3), 2))),
    OpInfo("meshgrid_ij", lambda lib, *xs: lib.meshgrid(*xs, indexing="ij"), one(
        S((3,), (2,)), S((2,), (3,), (4,)), S((3,)))),
    OpInfo("meshgrid_xy", lambda lib, *xs: lib.meshgrid(*xs, indexing="xy"), one(
        S((3,), (2,)), S((2,), (3,), (4,)))),
    OpInfo("ravel", lambda lib, x: x.ravel(), one(S((2, 3)), S(()))),
    OpInfo("sum_to_size", lambda lib, x, *s: x.sum_to_size(*s), one(
        S((2, 3, 4), 3, 1), S((2, 3), L(1, 3)), S((2, 3), 2, 3))),
    OpInfo("sort", lambda lib, x, *a, **k: lib.sort(x, *a, **k), one(
        S((2, 5), gen_x=distinct), S((4, 3), 0, gen_x=distinct),
        S((2, 5), descending=True, gen_x=distinct), S((), gen_x=distinct), S((0,), gen_x=distinct))),
    OpInfo("argsort", lambda lib, x, **k: lib.argsort(x, **k), one(
        S((2, 5), gen_x=distinct), S((4, 3), dim=0, descending=True, gen_x=distinct)), grad=False),
    OpInfo("topk", lambda lib, x, k, *a, **kw: lib.topk(x, k, *a, **kw), one(
        S((2, 5), 2, gen_x=distinct), S((4, 3), 1, 0, gen_x=distinct),
        S((2, 5), 3, largest=False, gen_x=distinct), S((5,), 0, gen_x=distinct))),
    OpInfo("var_mean", lambda lib, x, *a, **k: lib.var_mean(x, *a, **k), one(
        S((2, 3, 4)), S((2, 3, 4), 1, keepdim=True))),
    OpInfo("std_mean", lambda lib, x, *a, **k: lib.std_mean(x, *a, **k), one(S((2, 3, 4), 0))),
    OpInfo("count_nonzero", lambda lib, x, *d: lib.count_nonzero(lib.relu(x), *d), one(
        S((3, 4)), S((3, 4), 1)), grad=False),
    OpInfo("scatter_value", lambda lib, x, i: x.scatter(1, i, 0.5), one(
        S((3, 4), lambda rng: np.array([[0], [3], [1]])),
        S((3, 4), lambda rng: np.array([[0, 0], [3, 1], [1, 1]])))),
    OpInfo("scatter_src", lambda lib, x, i, s: lib.scatter(x, 0, i, s), one(
        S((3, 4), lambda rng: np.array([[0, 1, 2, 0]]), (1, 4)),
        S((3, 4), lambda rng: np.array([[2, 0, 1, 1], [0, 2, 0, 2]]), (2, 4)))),
    OpInfo("index_add", lambda lib, x, i, s: x.index_add(0, i, s, alpha=2), one(
        S((3, 4), lambda rng: np.array([0, 2, 0]), (3, 4)))),
    OpInfo("cumprod", lambda lib, x, d: lib.cumprod(x, d), one(
        S((2, 5), 1), S((4, 3), 0), S((), 0), S((0, 3), 1), S((5,), -1),
        lambda rng: Sample((np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0],
                                      [2.0, 0.5, 1.5, 0.0]]), 1)))),
    OpInfo("fmod", lambda lib, x, y: lib.fmod(x, y), binary_samples(-3.0, 3.0, 0.7, 1.3,
                                                                     scalars=(0.75, -1.5))),
    OpInfo("diff", lambda lib, x, *a, **k: lib.diff(x, *a, **k), one(
        S((2, 5)), S((2, 5), 2), S((4, 3), 1, 0), S((4,), 1, -1, (2,), (1,)), S((1,)))),
    OpInfo("tensordot", lambda lib, a, b, *d: lib.tensordot(a, b, *d), one(
        S((2, 3, 4), (3, 4, 5)), S((2, 3, 4), (4, 5), 1), S((2, 3), (3, 2), L([1, 0], [0, 1])),
        S((2, 3), (2, 3), 0))),
    OpInfo("kron", lambda lib, a, b: lib.kron(a, b), one(S((2, 3), (2, 2)), S((3,), (2, 2)))),
    OpInfo("cross", lambda lib, a, b, *d: lib.cross(a, b, *d), one(
        S((4, 3), (4, 3), 1), S((3, 2), (3, 1), 0))),
    OpInfo("index_fill", lambda lib, x, i: lib.index_fill(x, 1, i, -1.0), one(
        S((3, 4), lambda rng: np.array([0, 2])))),
    # float32 rounding is a step function that finite differences cannot follow: a kink
    OpInfo("to_float32_and_back", lambda lib, x: x.to(lib.float32).to(lib.float64) * x,
           one(kink(S((5,))), kink(S((2, 3)))), rtol=1e-6),
    OpInfo("setitem", lambda lib, x, v: _setitem(x, v), one(S((4, 3), (3,)))),
    OpInfo("index_put_accumulate", lambda lib, x, v: x.index_put(
        (lib.tensor([0, 2, 0]),), v, accumulate=True), one(S((4, 3), (3, 3)), S((4, 3), (3,)))),
    OpInfo("index_add_zeros", lambda lib, x: _index_add_zeros(lib, x), one(S((3, 3)))),
    # an index computed from the input: inside vmap it is batched (the batched-index primitives)
    OpInfo("getitem_argmax_index", lambda lib, x: x[x.argmax(0)], one(S((4, 3), gen_x=distinct))),
    OpInfo("index_put_argmax_index", lambda lib, x, v: x.index_put(
        (x.argmin(0),), v, accumulate=True), one(S((4, 3), (3, 3), gen_x=distinct))),
]


def _setitem(x, v):
    """Writes into a copy of x. The copy depends on v (by zero) so that under vmap it is batched
    wherever v is: torch refuses to write batched values into an unbatched tensor."""
    y = x.clone() + 0 * v[:1]
    y[1] = v
    y[2:, 0] = v[:2] * 2
    return y


def _index_add_zeros(lib, x):
    """zeros((4, 3)) with rows of x added at rows 0, 2, 0: the transpose of indexing (a
    primitive of its own in arraygrad, index_put into zeros in torch)."""
    rows = np.array([0, 2, 0])
    if lib is ag:
        return index_add_zeros(x, (4, 3), (rows,))
    return lib.zeros(4, 3, dtype=x.dtype).index_put((lib.tensor(rows),), x, accumulate=True)

def _fixed(*arrays, **kwargs):
    """A sample at fixed values (boundary points), marked as a kink."""
    return kink(lambda rng: Sample(tuple(np.array(a, dtype=float) for a in arrays), kwargs))


# boundary values: kinks, ties, zeros and infinities, each compared with torch's convention
BOUNDARY = [
    OpInfo("pow_special", lambda lib, x, y: x ** y, one(
        _fixed([0.0, 0.0, 2.0], [0.0, 1.0, 0.0]), _fixed([0.0, 0.0], [-1.0, -2.0]),
        _fixed([0.0, 1.0], [0.5, 3.0])), gradgrad=False),
    OpInfo("pow_zero_exponent", lambda lib, x: x ** 0, one(_fixed([0.0, 1.0]))),
    # torch's second derivative of 0 ** y is nan (0 * log 0); the first is 0 * log 0 := 0
    OpInfo("pow_scalar_base_zero", lambda lib, y: lib.pow(0.0, y), one(_fixed([0.0, 1.0, 2.5])),
           gradgrad=False),
    OpInfo("clamp_at_bounds", lambda lib, x: lib.clamp(x, 0.0, 1.0),
           one(_fixed([0.0, 1.0, 0.5, 2.0, -1.0]))),
    OpInfo("clamp_min_at_bound", lambda lib, x: x.clamp_min(0.0), one(_fixed([0.0, -1.0, 2.0]))),
    OpInfo("relu_at_zero", lambda lib, x: lib.relu(x), one(_fixed([0.0, -0.0, 1.0, -1.0]))),
    OpInfo("abs_at_zero", lambda lib, x: x.abs(), one(_fixed([0.0, 2.0, -1.0]))),
    OpInfo("max_dim_ties", lambda lib, x: lib.max(x, 1), one(_fixed([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]))),
    OpInfo("min_dim_ties", lambda lib, x: lib.min(x, 0), one(_fixed([[1.0, 3.0, 3.0], [1.0, 2.0, 2.0]]))),
    OpInfo("amin_ties", lambda lib, x: lib.amin(x), one(_fixed([[1.0, 3.0, 1.0], [2.0, 1.0, 2.0]]))),
    OpInfo("min_all_ties", lambda lib, x: x.min(), one(_fixed([[1.0, 3.0, 1.0], [2.0, 1.0, 2.0]]))),
    OpInfo("maximum_ties", lambda lib, x, y: lib.maximum(x, y),
           one(_fixed([1.0, 2.0, 3.0], [1.0, 0.0, 3.0]))),
    OpInfo("minimum_ties", lambda lib, x, y: lib.minimum(x, y),
           one(_fixed([1.0, 2.0, 3.0], [1.0, 0.0, 3.0]))),
    OpInfo("aminmax", lambda lib, x, **kw: lib.aminmax(x, **kw), one(
        S((2, 3), gen_x=distinct), S((2, 3), dim=1, gen_x=distinct),
        S((3, 4), dim=0, keepdim=True, gen_x=distinct), S((), dim=0), S((0, 3), dim=1))),
    OpInfo("aminmax_ties", lambda lib, x, **kw: x.aminmax(**kw), one(
        _fixed([[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]]), kink(S(lambda rng: np.array(
            [[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]]), dim=1)), _fixed([[1.0, 3.0, 3.0]], keepdim=True))),
    OpInfo("sqrt_at_zero", lambda lib, x: x.sqrt(), one(_fixed([0.0, 4.0])), gradgrad=False),
    OpInfo("exp_at_infinities", lambda lib, x: x.exp(), one(_fixed([float("-inf"), 0.0]))),
    OpInfo("tanh_at_infinities", lambda lib, x: x.tanh(),
           one(_fixed([float("-inf"), float("inf"), 0.0]))),
    OpInfo("sigmoid_at_infinities", lambda lib, x: x.sigmoid(),
           one(_fixed([float("-inf"), float("inf")]))),
    OpInfo("sign_at_zero", lambda lib, x: x.sign(), one(_fixed([0.0, -2.0]))),
    OpInfo("where_at_zero", lambda lib, x: lib.where(x > 0, x, -x), one(_fixed([0.0, 1.0, -1.0]))),
    OpInfo("sum_empty", lambda lib, x: x.sum(), one(_fixed(np.zeros((0, 3))))),
    OpInfo("mean_0d", lambda lib, x: x.mean(), one(_fixed(np.array(2.0)))),
    # torch's second derivative through the cotangent is nan at a zero std (0/0 inside its
    # masked_fill); arraygrad's is 0, the derivative of its (identically 0) first derivative
    # there: tested against finite differences in test_graph_api.py
    OpInfo("std_constant", lambda lib, x: x.std(0), one(_fixed([[1.0, 2.0], [1.0, 3.0]])),
           gradgrad=False),
    OpInfo("var_constant", lambda lib, x: x.var(0), one(_fixed([[1.0, 2.0], [1.0, 3.0]]))),
]


OPS = BOUNDARY + MORE + UNARY + BINARY + OTHER_ELEMENTWISE + REDUCE + LINALG + SHAPE + INDEX + COMPARE


# ---- nn.functional (nnfunc14)
# gradgrad=False below marks the ops torch has no double backward for (their second derivatives
# are checked against finite differences in test_nn_functional.py).
# Activations, losses, normalisation, distances, embeddings and attention of nn.functional, all
# compositions of primitives: the rows check that each composition is torch's function (values,
# first and second derivatives, jvp) and that its primitives' rules compose under vmap.
def _nnf(name, call, samples, **kw):
    """An nn.functional op: `call(F, lib, *args, **kwargs)` with F the lib's nn.functional."""
    return OpInfo(name, lambda lib, *a, **k: call(lib.nn.functional, lib, *a, **k), samples, **kw)


def _act(name, *args, low=-3.0, high=3.0, **kw):
    return _nnf(name, lambda F, lib, x: getattr(F, name)(x, *args),
                one(S((2, 3), gen_x=lambda rng, s: uniform(rng, s, low, high)), S((0, 2))), **kw)


def _const(lib, array, like):
    """A constant (non-differentiable) tensor of `like`'s dtype: targets torch takes no grad of."""
    return lib.tensor(np.asarray(array)).to(like.dtype)


_SIGNS = np.array([1.0, -1.0, -1.0, 1.0])
_CLASSES = np.array([0, 2, 1, 2])
_BAG_INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 0])
_BAG_OFFSETS = np.array([0, 2, 2, 5])
_RUN_MEAN = np.array([0.3, -0.2, 0.5])
_RUN_VAR = np.array([0.8, 1.5, 0.6])


def _probs(rng, shape):
    return uniform(rng, shape, 0.05, 0.95)


_REDUCTIONS = ("none", "mean", "sum")


def _mha(F, lib, q, k, v, w, b, ow, ob, *padding_mask, **kw):
    """2 heads of size 1 (need_weights=False runs torch's flash kernel: no gradgrad or jvp)."""
    return F.multi_head_attention_forward(q, k, v, 2, 2, w, b, None, None, False, 0.0, ow, ob,
                                          key_padding_mask=(padding_mask or [None])[0], **kw)


_CTC_TARGETS = np.array([[1, 2, 2], [2, 1, 1]])
_NO_BAG_JVP = {"jvp": "torch has no forward AD for _embedding_bag"}
_NORM_FWD = {"forward_over": "torch's jvp of jvp through its fused norm kernels is wrong "
                             "(checked against finite differences in test_nn_functional.py)"}


NN_FUNCTIONAL = [
    _act("gelu"), _nnf("gelu_tanh", lambda F, lib, x: F.gelu(x, approximate="tanh"),
                       one(S((2, 3)), S((4,)))),
    _act("silu"), _act("mish"), _act("elu", 0.7), _act("selu"), _act("celu", 1.5),
    _act("leaky_relu", 0.2), _act("hardtanh", -1.5, 2.0), _act("relu6", low=-2.0, high=8.0),
    _act("hardswish", low=-4.0, high=4.0), _act("softsign"), _act("tanhshrink"),
    _act("threshold", 0.3, -2.0), _act("logsigmoid", low=-30.0, high=30.0),
    _act("softplus", 2.0, 3.0), _act("hardshrink", 0.4), _act("softshrink", 0.4),
    # torch multiplies hardsigmoid's gradient by 1/6 rounded to float32; it has no gradgrad
    _act("hardsigmoid", low=-4.0, high=4.0, rtol=1e-7, gradgrad=False),
    # kinks: the derivative there is torch's convention
    _nnf("activations_at_kinks", lambda F, lib, x: lib.stack([
        F.hardtanh(x, -1.0, 1.0), F.relu6(x + 1.0), F.leaky_relu(x, 0.2), F.hardswish(x * 3),
        F.threshold(x, 1.0, -2.0), F.hardshrink(x, 1.0), F.softshrink(x, 1.0),
        F.relu6(x * 6)]), one(_fixed([-1.0, 0.0, 1.0, 0.5, -0.0]))),
    _nnf("hardsigmoid_at_kinks", lambda F, lib, x: F.hardsigmoid(x), one(_fixed([-3.0, 3.0, 0.0])),
         rtol=1e-7, gradgrad=False),
    _nnf("prelu_at_zero", lambda F, lib, x, w: F.prelu(x, w),
         one(kink(lambda rng: Sample((np.array([0.0, -0.0, 1.0]), np.array([0.3]))))),
         gradgrad=False,     # torch's mixed second derivative there takes the x > 0 side
         torch_not_oracle={"jvp": "torch's prelu jvp at 0 takes slope 1, its backward the weight"
                                  " (ours follows the backward in both modes)"}),
    # torch's second derivative of the elu family at 0 is 0 (its first is alpha): first order
    _nnf("elus_at_zero", lambda F, lib, x: lib.stack([F.elu(x, 0.5), F.selu(x), F.celu(x, 2.0)]),
         one(_fixed([0.0, -0.0, 1.0])), gradgrad=False),
    _nnf("softplus_at_threshold", lambda F, lib, x: F.softplus(x, 2.0, 3.0),
         one(_fixed([1.5, 1.0, 2.0])), gradgrad=False),
    _nnf("rrelu_eval", lambda F, lib, x: F.rrelu(x, 0.1, 0.3), one(S((2, 3)))),
    _nnf("prelu", lambda F, lib, x, w: F.prelu(x, w), one(
        S((2, 3, 4), (3,)), S((2, 3), (1,)), S((4,), (1,)))),
    _nnf("glu", lambda F, lib, x, *d: F.glu(x, *d), one(S((2, 4)), S((4, 3, 2), 0)),
         torch_not_oracle={"forward_over": "torch has no forward AD for glu_jvp"}),
    _nnf("softmin", lambda F, lib, x, d: F.softmin(x, d), one(S((2, 3), 1), S((3, 4), 0))),
    # losses
    _nnf("huber_loss", lambda F, lib, x, y, r: F.huber_loss(x, y, r, delta=0.8), one(
        *(S((3, 4), (3, 4), r) for r in _REDUCTIONS)),
         torch_not_oracle={"forward_over": "torch has no forward AD for huber_loss_backward"}),
    _nnf("smooth_l1_loss", lambda F, lib, x, y: F.smooth_l1_loss(x, y, beta=0.6), one(
        S((3, 4), (3, 4)))),
    _nnf("binary_cross_entropy", lambda F, lib, x, y, r: F.binary_cross_entropy(
        x, y, _const(lib, [0.5, 2.0, 1.0], x), reduction=r), one(
        *(lambda rng, r=r: Sample((_probs(rng, (4, 3)), _probs(rng, (4, 3)), r))
          for r in _REDUCTIONS)), rtol=1e-9),
    _nnf("binary_cross_entropy_with_logits", lambda F, lib, x, y, r: (
        F.binary_cross_entropy_with_logits(x, y, reduction=r,
                                           pos_weight=_const(lib, [1.0, 3.0, 0.5], x))),
        one(*(lambda rng, r=r: Sample((uniform(rng, (4, 3), -6, 6), _probs(rng, (4, 3)), r))
              for r in _REDUCTIONS))),
    _nnf("kl_div", lambda F, lib, x, y: F.kl_div(x, y, reduction="batchmean"), one(
        lambda rng: Sample((uniform(rng, (4, 3)), _probs(rng, (4, 3)))))),
    _nnf("kl_div_log_target", lambda F, lib, x, y: F.kl_div(x, y, reduction="sum",
                                                           log_target=True), one(S((4, 3), (4, 3)))),
    _nnf("poisson_nll_loss", lambda F, lib, x, y, **k: F.poisson_nll_loss(x, y, **k), one(
        S((4, 3), (4, 3), gen_x=_positive),
        S((4, 3), (4, 3), gen_x=_positive, log_input=False, full=True))),
    _nnf("gaussian_nll_loss", lambda F, lib, x, y, v, **k: F.gaussian_nll_loss(x, y, v, **k), one(
        S((4, 3), (4, 3), lambda rng: _positive(rng, (4, 3)), full=True),
        S((4, 3), (4, 3), lambda rng: _positive(rng, (4,)), reduction="sum"))),
    _nnf("margin_ranking_loss", lambda F, lib, a, b: F.margin_ranking_loss(
        a, b, _const(lib, _SIGNS, a), margin=0.1), one(S((4,), (4,)))),
    _nnf("hinge_embedding_loss", lambda F, lib, x: F.hinge_embedding_loss(
        x, _const(lib, _SIGNS, x), margin=0.9, reduction="none"), one(S((4,)))),
    _nnf("soft_margin_loss", lambda F, lib, x: F.soft_margin_loss(x, _const(lib, _SIGNS, x)),
         one(S((4,))), torch_not_oracle={
             "forward_over": "torch has no forward AD for soft_margin_loss_backward"}),
    _nnf("cosine_embedding_loss", lambda F, lib, a, b: F.cosine_embedding_loss(
        a, b, _const(lib, _SIGNS, a), margin=-0.5, reduction="none"), one(S((4, 3), (4, 3)))),
    _nnf("triplet_margin_loss", lambda F, lib, a, b, c, **k: F.triplet_margin_loss(a, b, c, **k),
         one(S((4, 3), (4, 3), (4, 3), margin=2.0),
             S((4, 3), (4, 3), (4, 3), p=1, swap=True, margin=2.0, reduction="sum"))),
    _nnf("multi_margin_loss", lambda F, lib, x, t, **k: F.multi_margin_loss(x, t, **k), one(
        S((4, 3), lambda rng: _CLASSES, margin=3.0),
        S((4, 3), lambda rng: _CLASSES, p=2, margin=3.0, reduction="none")), gradgrad=False,
         torch_not_oracle={"jvp": "torch has no forward AD for multi_margin_loss"}),
    _nnf("multilabel_margin_loss", lambda F, lib, x, t, **k: F.multilabel_margin_loss(x, t, **k),
         one(S((3, 4), lambda rng: np.array([[2, 0, -1, 1], [1, -1, 3, 3], [3, 2, 1, 0]])),
             S((4,), lambda rng: np.array([3, 1, -1, 0]), reduction="sum")), gradgrad=False,
         torch_not_oracle={"jvp": "torch has no forward AD for multilabel_margin_loss"}),
    _nnf("multilabel_soft_margin_loss", lambda F, lib, x, y: F.multilabel_soft_margin_loss(x, y),
         one(lambda rng: Sample((uniform(rng, (4, 3)), _probs(rng, (4, 3)))))),
    _nnf("cross_entropy", lambda F, lib, x, t, **k: F.cross_entropy(x, t, **k), one(
        S((4, 3), lambda rng: _CLASSES),
        S((4, 3), lambda rng: _CLASSES, reduction="sum"),
        S((4, 3), lambda rng: np.array([0, 2, -100, 2]), reduction="none"),
        S((4, 3), lambda rng: _CLASSES, ignore_index=2))),
    # the fused loss's gradient as an op of the input and the cotangent: its own primitive
    # (NOTE [fused cross-entropy]), whose rules give second derivatives
    _nnf("cross_entropy_vjp", lambda F, lib, x, g, t, **k: lib.func.vjp(
        lambda u: F.cross_entropy(u, t, **k), x)[1](g)[0], one(
        S((4, 3), (), lambda rng: _CLASSES),
        S((4, 3), (), lambda rng: _CLASSES, reduction="sum"),
        S((4, 3), (4,), lambda rng: np.array([0, 2, -100, 2]), reduction="none"),
        S((4, 3), (), lambda rng: _CLASSES, ignore_index=2))),
    _nnf("cross_entropy_smoothing", lambda F, lib, x, t: F.cross_entropy(
        x, t, _const(lib, [0.5, 2.0, 1.0], x), ignore_index=1, label_smoothing=0.2),
        one(S((4, 3), lambda rng: _CLASSES))),
    _nnf("cross_entropy_probs", lambda F, lib, x, y: F.cross_entropy(x, y, label_smoothing=0.1),
         one(lambda rng: Sample((uniform(rng, (4, 3)), _probs(rng, (4, 3)))))),
    # normalisation
    _nnf("batch_norm_train", lambda F, lib, x, w, b: F.batch_norm(x, None, None, w, b, True),
         one(S((5, 3), (3,), (3,)), S((4, 3, 2), (3,), (3,))), torch_not_oracle=_NORM_FWD),
    _nnf("batch_norm_eval", lambda F, lib, x, w, b: F.batch_norm(
        x, _const(lib, _RUN_MEAN, x), _const(lib, _RUN_VAR, x), w, b, False), one(
        S((4, 3, 2), (3,), (3,)))),
    _nnf("instance_norm", lambda F, lib, x, w, b: F.instance_norm(x, weight=w, bias=b), one(
        S((2, 3, 4), (3,), (3,))), torch_not_oracle=_NORM_FWD),
    _nnf("layer_norm", lambda F, lib, x, w, b, s: F.layer_norm(x, s, w, b), one(
        S((2, 3, 4), (3, 4), (3, 4), L(3, 4)), S((3, 5), (5,), (5,), L(5))),
         torch_not_oracle=_NORM_FWD),
    _nnf("group_norm", lambda F, lib, x, w, b: F.group_norm(x, 2, w, b), one(
        S((2, 4, 3), (4,), (4,)), S((1, 6, 2, 2), (6,), (6,)))),
    _nnf("local_response_norm", lambda F, lib, x: F.local_response_norm(x, 3, 0.5, 0.75, 1.5),
         one(S((2, 5, 3)), S((1, 4, 2, 3)))),
    _nnf("rms_norm", lambda F, lib, x, w: F.rms_norm(x, (4,), w, 1e-6), one(S((3, 4), (4,)))),
    # distances
    _nnf("pairwise_distance", lambda F, lib, a, b, **k: F.pairwise_distance(a, b, **k), one(
        S((4, 3), (4, 3)), S((4, 3), (3,), p=3.0, keepdim=True))),
    _nnf("cosine_similarity", lambda F, lib, a, b, **k: F.cosine_similarity(a, b, **k), one(
        S((4, 3), (4, 3)), S((2, 4, 3), (4, 3), dim=-1))),
    _nnf("normalize", lambda F, lib, x, **k: F.normalize(x, **k), one(
        S((4, 3)), S((4, 3), p=1.0, dim=0))),
    OpInfo("cdist", lambda lib, a, b, **k: lib.cdist(a, b, **k), one(
        S((4, 3), (5, 3)), S((2, 3, 2), (2, 4, 2), p=1.0)), gradgrad=False,
        torch_not_oracle={"jvp": "torch has no forward AD for _cdist_forward"}),
    # zero distances: torch's gradient there is 0 (a kink)
    OpInfo("cdist_self", lambda lib, x: lib.cdist(x, x, p=3.0), one(kink(S((4, 3)))),
           gradgrad=False, torch_not_oracle={"jvp": "torch has no forward AD for _cdist_forward"}),
    _nnf("pdist", lambda F, lib, x, *p: F.pdist(x, *p), one(S((5, 3)), S((4, 2), 3.0)),
         gradgrad=False, torch_not_oracle={"jvp": "torch has no forward AD for _pdist_forward"}),
    # embeddings, bilinear, attention
    _nnf("embedding", lambda F, lib, w, i, **k: F.embedding(i, w, **k), one(
        S((6, 3), lambda rng: np.array([[0, 2, 5], [2, 2, 1]])),
        # torch's backward gives the padding row no gradient (finite differences see one)
        kink(S((6, 3), lambda rng: np.array([0, 2, 5, 2]), padding_idx=2)))),
    _nnf("embedding_bag", lambda F, lib, w, i, o, **k: F.embedding_bag(i, w, o, **k), one(
        S((6, 3), lambda rng: _BAG_INPUT, lambda rng: _BAG_OFFSETS),
        S((6, 3), lambda rng: _BAG_INPUT, lambda rng: _BAG_OFFSETS, mode="sum",
          padding_idx=4)), gradgrad=False, torch_not_oracle=_NO_BAG_JVP),
    _nnf("embedding_bag_psw", lambda F, lib, w, i, o, p: F.embedding_bag(
        i, w, o, mode="sum", per_sample_weights=p), one(
        S((6, 3), lambda rng: _BAG_INPUT, lambda rng: _BAG_OFFSETS, (8,))), gradgrad=False,
         torch_not_oracle=_NO_BAG_JVP),
    # linear's primitive (nn/functional.py NOTE [linear]): matrix, vector, stacked and empty
    # inputs, with and without bias; a bias of another shape takes the composite
    _nnf("linear", lambda F, lib, x, w, *b: F.linear(x, w, *b), one(
        S((4, 3), (5, 3), (5,)), S((3,), (5, 3), (5,)), S((2, 4, 3), (5, 3)), S((4, 3), (5, 3)),
        S((0, 3), (5, 3), (5,)), S((4, 3), (5, 3), (1,)))),
    _nnf("bilinear", lambda F, lib, a, b, w, *c: F.bilinear(a, b, w, *c), one(
        S((4, 3), (4, 2), (5, 3, 2), (5,)), S((2, 3), (2, 2), (4, 3, 2)))),
    _nnf("scaled_dot_product_attention", lambda F, lib, q, k, v, **kw: (
        F.scaled_dot_product_attention(q, k, v, **kw)), one(
        S((2, 3, 2), (2, 4, 2), (2, 4, 2)), S((1, 3, 2), (1, 4, 2), (1, 4, 2), is_causal=True),
        S((3, 2), (4, 2), (4, 2), scale=0.3))),
    _nnf("scaled_dot_product_attention_mask", lambda F, lib, q, k, v, m: (
        F.scaled_dot_product_attention(q, k, v, attn_mask=m)), one(
        S((2, 3, 4), (2, 5, 4), (2, 5, 2), lambda rng: np.array(
            [[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)))),
    _nnf("multi_head_attention_forward", _mha, one(
        S((2, 1, 2), (3, 1, 2), (3, 1, 2), (6, 2), (6,), (2, 2), (2,)),
        S((2, 2), (2, 2), (2, 2), (6, 2), (6,), (2, 2), (2,)),
        S((2, 2, 2), (3, 2, 2), (3, 2, 2), (6, 2), (6,), (2, 2), (2,), lambda rng: np.array(
            [[False, True, False], [False, False, True]]),
          average_attn_weights=False))),
    _nnf("ctc_loss", lambda F, lib, x, **kw: F.ctc_loss(
        x.log_softmax(-1), lib.tensor(_CTC_TARGETS), lib.tensor([5, 4]), lib.tensor([3, 0]),
        **kw), one(S((5, 2, 4)), S((5, 2, 4), reduction="none", blank=3)), gradgrad=False,
        torch_not_oracle={"jvp": "torch has no forward AD for ctc_loss"}),
]
OPS += NN_FUNCTIONAL


# ---- conv/pool (conv14)
def _functional(name):
    """fn(lib, *args, **kwargs) calling lib.nn.functional.<name>."""
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


CONV_POOL = [
    OpInfo("conv1d", _functional("conv1d"), one(
        S((1, 4, 5), (4, 2, 3), (4,), stride=2, padding=1, groups=2),
        S((3, 6), (2, 3, 2), None, padding="same", dilation=2))),
    OpInfo("conv2d", _functional("conv2d"), one(
        S((1, 2, 4, 4), (3, 2, 3, 2), (3,)),
        S((1, 4, 4, 5), (2, 2, 2, 3), None, stride=(2, 1), padding=(1, 0), dilation=(1, 2),
          groups=2),
        S((1, 2, 4, 3), (2, 2, 3, 3), (2,), padding="same", dilation=(2, 1)),
        S((0, 2, 4, 4), (3, 2, 3, 3), (3,)))),
    OpInfo("conv3d", _functional("conv3d"), one(
        S((1, 1, 3, 3, 2), (2, 1, 2, 2, 2), (2,), padding=1, stride=(1, 2, 1)))),
    OpInfo("conv_transpose1d", _functional("conv_transpose1d"), one(
        S((1, 4, 3), (4, 2, 3), (4,), stride=2, padding=1, output_padding=1, groups=2))),
    OpInfo("conv_transpose2d", _functional("conv_transpose2d"), one(
        S((1, 2, 3, 3), (2, 2, 3, 2), (2,), stride=2, padding=1, output_padding=1,
          dilation=(1, 2)),
        S((2, 3, 3), (2, 2, 2, 2), None))),
    OpInfo("unfold", _functional("unfold"), one(
        S((1, 2, 5, 4), kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
        S((2, 4, 4), kernel_size=2))),
    OpInfo("fold", _functional("fold"), one(
        S((1, 6, 9), output_size=(5, 6), kernel_size=(2, 3), padding=1, stride=2),
        S((8, 9), output_size=4, kernel_size=2, dilation=1, stride=1))),
    OpInfo("max_pool1d", _functional("max_pool1d"), one(
        S((1, 2, 7), 3, 2, 1, ceil_mode=True, return_indices=True, gen_x=distinct))),
    OpInfo("max_pool2d", _functional("max_pool2d"), one(
        S((1, 2, 4, 4), 2, gen_x=distinct),
        S((1, 2, 7, 6), L(3, 2), 2, 1, ceil_mode=True, return_indices=True, gen_x=distinct),
        S((1, 5, 6), 2, 1, 1, dilation=2, return_indices=True, gen_x=distinct))),
    # the cotangent and tangent of max pooling as ops (window_put and window_take forward)
    OpInfo("max_pool2d_vjp", lambda lib, x, g: lib.func.vjp(
        lambda u: lib.nn.functional.max_pool2d(u, 2), x)[1](g)[0], one(
        S((1, 2, 4, 5), (1, 2, 2, 2), gen_x=distinct))),
    OpInfo("max_pool2d_jvp", lambda lib, x, t: lib.func.jvp(
        lambda u: lib.nn.functional.max_pool2d(u, 3, 2, 1), (x,), (t,))[1], one(
        S((1, 2, 5, 4), (1, 2, 5, 4), gen_x=distinct)),
        torch_not_oracle={"jvp": "torch's forward AD cannot nest a dual level around func.jvp"}),
    OpInfo("avg_pool1d", _functional("avg_pool1d"), one(
        S((1, 2, 7), 3, 2, 1, ceil_mode=True, count_include_pad=False))),
    OpInfo("avg_pool2d", _functional("avg_pool2d"), one(
        S((1, 2, 4, 4), 2),
        S((1, 1, 7, 6), L(3, 2), 2, 1, ceil_mode=True),
        S((1, 7, 6), 3, 2, 1, count_include_pad=False),
        S((1, 1, 7, 6), 3, 2, divisor_override=4))),
    OpInfo("adaptive_avg_pool1d", _functional("adaptive_avg_pool1d"), one(S((1, 2, 7), 3))),
    OpInfo("adaptive_avg_pool2d", _functional("adaptive_avg_pool2d"), one(
        S((1, 1, 7, 6), L(3, 4)), S((2, 5, 4), L(None, 1)))),
    OpInfo("adaptive_max_pool2d", _functional("adaptive_max_pool2d"), one(
        S((1, 1, 7, 6), L(3, 4), gen_x=distinct),
        S((2, 5, 4), 2, return_indices=True, gen_x=distinct))),
    OpInfo("pad_constant", _functional("pad"), one(
        S((2, 3, 4), L(1, 2, 0, 3)), S((2, 3, 4), L(-1, 2, 1, -1), value=1.5))),
    OpInfo("pad_reflect", _functional("pad"), one(S((1, 2, 4, 5), L(2, 1, 3, 1), mode="reflect"))),
    OpInfo("pad_replicate", _functional("pad"), one(S((2, 3, 4), L(3, 1), mode="replicate"))),
    OpInfo("pad_circular", _functional("pad"), one(
        S((1, 2, 3, 4), L(4, 1, 2, -1), mode="circular"))),
    OpInfo("interpolate_nearest", _functional("interpolate"), one(
        S((1, 2, 4, 5), scale_factor=(1.7, 0.6)), S((2, 3, 4), size=7))),
    OpInfo("interpolate_bilinear", _functional("interpolate"), one(
        S((1, 2, 4, 5), size=(3, 7), mode="bilinear"),
        S((1, 2, 3, 4), scale_factor=2.3, mode="bilinear", align_corners=True))),
    OpInfo("pixel_shuffle", _functional("pixel_shuffle"), one(S((1, 8, 2, 2), 2), S((4, 2, 3), 2))),
]
OPS += CONV_POOL
# their grad_fn is the last op of the composition (torch has one fused node)
CONV_POOL_NAMED_DIFFERENTLY = {op.name for op in CONV_POOL}


# ---- special functions
def _special(name):
    return lambda lib, *a, **k: getattr(lib.special, name)(*a, **k)


# the incomplete gamma functions differentiated in x, a (a list) constant: torch has no
# derivative in a;
# torch's asymptotic series for a in 20..200 near x = a is accurate to ~1e-9 (ours agrees with
# mpmath to 1e-11, test_special.py); torch has no forward AD for them
_IGAMMA_SAMPLES = one(
    S((2, 3), lambda rng: uniform(rng, (3,), 0.3, 4.0).tolist(),
      gen_x=lambda rng, s: uniform(rng, s, 0.1, 6.0)),
    S((4,), lambda rng: uniform(rng, (4,), 20.0, 40.0).tolist(),
      gen_x=lambda rng, s: uniform(rng, s, 15.0, 45.0)),
    S((), [0.7, 2.5], gen_x=_positive), S((0, 2), 1.5, gen_x=_positive))
_NO_IGAMMA_JVP = {"jvp": "torch has no forward AD for igamma/igammac"}

# torch's polygamma (the derivative of digamma) is accurate to ~1e-9 only; ours agrees with
# mpmath to 1e-15 (test_special.py), so comparisons that reach it use rtol=1e-8
SPECIAL = [
    _unary("lgamma", 0.2, 6.0, rtol=1e-8), _unary("digamma", 0.2, 6.0, rtol=1e-8),
    _unary("erfinv", -0.95, 0.95),
    _unary("erfc"), _unary("i0"), _unary("sinc", avoid_zero=True),
    OpInfo("lgamma_negative", lambda lib, x: lib.lgamma(x), unary_samples(-2.9, -2.1), rtol=1e-8),
    OpInfo("digamma_negative", lambda lib, x: x.digamma(), unary_samples(-1.9, -1.1), rtol=1e-8),
    OpInfo("polygamma", lambda lib, x, n: lib.polygamma(n, x), one(
        S((2, 3), 1, gen_x=_positive), S((4,), 2, gen_x=_positive), S((), 0, gen_x=_positive)),
        rtol=1e-8),
    OpInfo("special.i0e", _special("i0e"), unary_samples(-9.0, 9.0, avoid_zero=True)),
    OpInfo("special.i1e", _special("i1e"), unary_samples(-9.0, 9.0, avoid_zero=True)),
    OpInfo("special.i1", _special("i1"), unary_samples(avoid_zero=True)),
    OpInfo("special.ndtr", _special("ndtr"), unary_samples(-4.0, 4.0)),
    OpInfo("special.ndtri", _special("ndtri"), unary_samples(0.05, 0.95)),
    OpInfo("special.log_ndtr", _special("log_ndtr"), unary_samples(-6.0, 6.0)),
    OpInfo("special.entr", _special("entr"), unary_samples(0.1, 3.0)),
    OpInfo("special.xlog1py", _special("xlog1py"), binary_samples(-2.0, 2.0, -0.5, 2.0,
                                                                  scalars=(0.5,))),
    OpInfo("special.expit", _special("expit"), unary_samples()),
    OpInfo("igamma", lambda lib, x, a: lib.igamma(_const(lib, a, x), x), _IGAMMA_SAMPLES,
           rtol=1e-8, torch_not_oracle=_NO_IGAMMA_JVP),
    OpInfo("special.gammaincc", lambda lib, x, a: lib.special.gammaincc(_const(lib, a, x), x),
           _IGAMMA_SAMPLES, rtol=1e-8, torch_not_oracle=_NO_IGAMMA_JVP),
]
OPS += SPECIAL


# ---- elementwise/reductions (elem14)
def _special_values(rng):
    return np.array([1.5, np.nan, np.inf, -np.inf, -0.5, 0.0])


ELEM14 = [
    OpInfo("nan_to_num", lambda lib, x, **k: lib.nan_to_num(x, **k), one(
        S((2, 3)), S(()), S((0, 2)), kink(S(_special_values)),
        kink(S(_special_values, nan=2.0, posinf=9.0, neginf=-7.5)))),
    OpInfo("nan_to_num_method", lambda lib, x: x.nan_to_num(neginf=1.0), unary_samples()),
    OpInfo("copysign", lambda lib, x, y: lib.copysign(x, y),
           binary_samples(y_away=True, scalars=(2.5, -3))),
    OpInfo("copysign_method", lambda lib, x, y: x.copysign(y), one(
        kink(S(lambda rng: np.array([0.0, -1.0, 2.0]), lambda rng: np.array([-1.0, -0.0, 0.0]))))),
    # torch records a grad_fn whose backward raises: compare the values (test_ops checks the
    # error)
    OpInfo("heaviside", lambda lib, x, v: lib.heaviside(x.detach(), v.detach()), one(
        S(lambda rng: np.array([-1.0, 0.0, 2.0, 0.0]), (1,)), S((2, 3), (3,)), S((), ())),
        grad=False),
    OpInfo("nextafter", lambda lib, x, y: x.nextafter(y), binary_samples(scalars=())),
    OpInfo("median", lambda lib, x, **k: lib.median(x, **k), one(
        S((2, 5), gen_x=distinct), S((), gen_x=distinct), # (0,): test_stats
        S((2, 4), dim=1, gen_x=distinct), S((3, 2), dim=0, keepdim=True, gen_x=distinct),
        S((), dim=0), S((0, 3), dim=1), kink(S(lambda rng: np.array([1.0, 3, 3, 2, 1, 5]))))),
    OpInfo("median_method", lambda lib, x: x.median(-1), one(
        kink(S(lambda rng: np.array([[1.0, np.nan, 2.0], [0.5, 0.25, 3.0]]))))),
    OpInfo("nanmedian", lambda lib, x, **k: lib.nanmedian(x, **k), one(
        S((2, 5), gen_x=distinct), S((2, 4), dim=0, gen_x=distinct),
        kink(S(lambda rng: np.array([1.0, np.nan, 2.0, np.nan, 5.0]))),
        kink(S(lambda rng: np.array([[1.0, np.nan, 2.0, np.nan], [np.nan, 4.0, 0.5, -1.0]]),
               dim=1)),
        kink(S(lambda rng: np.array([np.nan] * 4)))),   # all NaN: torch's index is arbitrary
        torch_not_oracle={"jvp": "torch's tangent of an all-NaN nanmedian is 0/0 (NaN) while its "
                                 "gradient is shared by the NaNs; ours is consistent with it"}),   # all NaN: torch's index is arbitrary
    OpInfo("kthvalue", lambda lib, x, k, **kw: x.kthvalue(k, **kw), one(
        S((2, 5), 2, gen_x=distinct), S((3, 4), 3, dim=0, keepdim=True, gen_x=distinct),
        S((), 1), S((0, 3), 2, dim=1))),
    OpInfo("mode", lambda lib, x, **k: lib.mode(x, **k), one(
        kink(S(lambda rng: np.array([[1.0, 3, 3, 1, 2, 2, 0], [5, 5, 1, 1, 1, 2, 3]]))),
        kink(S(lambda rng: np.array([[1.0, 3, 3, 1, 2, 2, 0], [5, 5, 1, 1, 1, 2, 3]]), dim=0,
               keepdim=True)), S((), dim=0), S(lambda rng: np.array([2, 2, 1, 1, 7])))),
    OpInfo("cummax", lambda lib, x, dim: lib.cummax(x, dim), one(
        S((2, 5), 1, gen_x=distinct), S((4, 2), 0, gen_x=distinct), S((), 0), S((0, 3), 1),
        kink(S(lambda rng: np.array([1.0, 3, 3, 1, np.nan, 2, np.nan, 9]), 0)),
        S(lambda rng: np.array([1, 3, 3, 0]), 0))),
    OpInfo("cummin", lambda lib, x, dim: x.cummin(dim), one(
        S((2, 5), -1, gen_x=distinct), S((), 0), kink(S(lambda rng: np.array([1.0, 3, 1, 0, 0]), 0)))),
    OpInfo("logcumsumexp", lambda lib, x, dim: x.logcumsumexp(dim), one(
        S((2, 5), 1), S((3, 2), 0), S((), 0), S((0, 3), 1),
        kink(S(lambda rng: np.array([-30.0, 0.0, -np.inf, 3.0]), 0))),
        torch_not_oracle={"jvp": "torch's logcumsumexp tangent loses the small entries (at "
                                 "[-30, 0, -inf, 3] its first tangent is off by 20x); "
                                 "test_op_fd checks ours"}),
    # a tensor q built inside (its gradient and the check of its values: test_stats)
    OpInfo("quantile", lambda lib, x, q, **k: lib.quantile(
        x, lib.tensor(q, dtype=x.dtype) if isinstance(q, tuple) else q, **k), one(
        S((3, 5), L(0.1, 0.55, 0.9), dim=1, gen_x=distinct),
        S((3, 5), 0.375, gen_x=distinct), S((2, 3), 0.4, dim=0, keepdim=True, gen_x=distinct),
        S((2, 3), 0.4, dim=None, keepdim=True, gen_x=distinct), S((), 0.3, dim=0),
        S((4, 3), 0.3, dim=0, interpolation="lower", gen_x=distinct),
        S((4, 3), 0.3, dim=0, interpolation="higher", gen_x=distinct),
        S((4, 3), 0.3, dim=-1, interpolation="midpoint", gen_x=distinct),
        S((5, 3), 0.375, dim=0, interpolation="nearest", gen_x=distinct),
        kink(S(lambda rng: np.array([[1.0, np.nan, 2.0], [4.0, 3.0, 2.5]]), 0.7, dim=1)))),
    OpInfo("nanquantile", lambda lib, x, q, **k: x.nanquantile(q, **k), one(
        S((3, 5), 0.375, gen_x=distinct), S((2, 4), 0.6, dim=1, gen_x=distinct),
        kink(S(lambda rng: np.array([[1.0, np.nan, 2.0, 3.0], [4.0, 3.0, 2.5, 1.0]]), 0.7,
               dim=1)))),
    # not differentiable (torch records none or a NotImplemented grad_fn): values, dtypes
    OpInfo("unique", lambda lib, x, **k: lib.unique(x.detach(), **k), one(
        S(lambda rng: np.array([3, 1, 2, 1, 3]), return_inverse=True,
          return_counts=True),
        S(lambda rng: np.array([[3, 1], [3, 1], [0, 2]]), dim=0, return_inverse=True,
          return_counts=True),
        S(lambda rng: np.array([[3, 1, 3], [0, 2, 0]]), dim=1, return_inverse=True),
        S(lambda rng: np.array([[2, 1], [2, 1]]), return_inverse=True), S(lambda rng: np.zeros(0, np.int64)), S(lambda rng: np.array(5))),
        grad=False),   # on floats (vmap cannot batch them): test_stats
    OpInfo("unique_consecutive", lambda lib, x, **k: x.detach().unique_consecutive(**k), one(
        S(lambda rng: np.array([3, 3, 1, 1, 3]), return_inverse=True, return_counts=True),
        S(lambda rng: np.array([[3, 1], [3, 1], [0, 2], [3, 1]]), dim=0, return_inverse=True,
          return_counts=True),
        S(lambda rng: np.array([[3, 1], [1, 1]]), return_inverse=True),
        S(lambda rng: np.zeros(0, dtype=np.int64), return_counts=True)), grad=False),
    OpInfo("bincount", lambda lib, x, *w, **k: lib.bincount(x, *(v.detach() for v in w), **k),
           one(S(lambda rng: np.array([0, 3, 3, 1])), S(lambda rng: np.array([2, 0]), minlength=5),
               S(lambda rng: np.zeros(0, np.int64))), grad=False),   # weights: test_stats
    OpInfo("histc", lambda lib, x, **k: x.detach().histc(**k), one(
        S((50,), bins=7, min=-2, max=2), S((3, 4), bins=4, min=-1, max=1),
        S((0,), bins=2, min=-1, max=1.5)), grad=False),   # data ranges: test_stats
    OpInfo("bucketize", lambda lib, x, b, **k: lib.bucketize(x, b, **k), one(
        S(lambda rng: np.array([1, 5, 9, 0, 10]), lambda rng: np.array([1, 3, 5, 7, 9])),
        S(lambda rng: np.array([[1, 5], [9, 4]]), lambda rng: np.array([1, 3, 5, 7, 9]),
          right=True, out_int32=True),
        S(4, lambda rng: np.array([1, 3, 5, 7, 9]))), grad=False),
    OpInfo("searchsorted", lambda lib, s, x, *sorter, **k: lib.searchsorted(
        s, x, sorter=sorter[0] if sorter else None, **k), one(
        S(lambda rng: np.array([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]]),
          lambda rng: np.array([[3, 6, 9, 0, 11], [3, 6, 9, 2, 2]])),
        S(lambda rng: np.array([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]]),
          lambda rng: np.array([[3, 6, 9], [3, 6, 9]]), side="right"),
        S(lambda rng: np.array([1, 3, 5, 7, 9]), lambda rng: np.array(4), out_int32=True),
        S(lambda rng: np.array([9, 1, 5, 3, 7]), lambda rng: np.array([4, 9, 0]),
          lambda rng: np.array([1, 3, 2, 4, 0]))), grad=False),
    # float inputs, so that the transform tests batch them (and run the batching rules)
    OpInfo("bincount_weights", lambda lib, w: lib.bincount(lib.tensor([0, 2, 2, 1, 4]), w.detach()),
           one(S((5,))), grad=False),
    OpInfo("searchsorted_float", lambda lib, s, x: lib.searchsorted(s.detach().sort(-1).values,
                                                                   x.detach()),
           one(S((2, 5), (2, 3)), S((5,), (2, 3))), grad=False),
]
OPS += ELEM14
# compositions whose top node torch names differently (the grads still match)
ELEM14_NAMED_DIFFERENTLY = {"median", "median_method", "nanmedian", "kthvalue", "mode", "cummax",
                            "cummin", "nan_to_num", "quantile", "nanquantile"}


# ----------------------------------------------------------------- complex numbers and torch.fft
# Real inputs and real outputs around complex intermediates: every test of the catalogue
# (values, grads, double grads, jvp, vmap, finite differences) then checks the complex rules.
def _z(lib, x, y):
    return lib.complex(x, y)


def _c(name, fn, shapes=((2, 3), (2, 3)), **kw):
    return OpInfo(name, fn, one(S(*shapes)), **kw)


COMPLEX = [
    _c("complex_parts", lambda lib, x, y: lib.view_as_real(_z(lib, x, y))),
    _c("complex_real_imag", lambda lib, x, y: (_z(lib, x, y).real * 2, _z(lib, x, y).imag)),
    _c("complex_conj", lambda lib, x, y: lib.view_as_real(_z(lib, x, y).conj_physical() * _z(lib, y, x))),
    _c("complex_abs_angle", lambda lib, x, y: (_z(lib, x, y).abs(), _z(lib, x, y).angle())),
    _c("complex_sgn", lambda lib, x, y: lib.view_as_real(_z(lib, x, y).sgn())),
    _c("complex_polar", lambda lib, r, t: lib.view_as_real(lib.polar(r.exp(), t))),
    _c("view_as_complex", lambda lib, x: (lib.view_as_complex(x) * (1 + 2j)).abs(),
       shapes=((3, 2),)),
    _c("complex_arith", lambda lib, x, y: lib.view_as_real(
        (_z(lib, x, y) * _z(lib, y, x) / (_z(lib, x, y) + 3)).exp())),
    _c("complex_matmul", lambda lib, x, y: lib.view_as_real(_z(lib, x, y) @ _z(lib, y, x).mT)),
    _c("fft_fft", lambda lib, x, y: lib.view_as_real(lib.fft.fft(_z(lib, x, y), n=4))),
    _c("fft_ifft2", lambda lib, x, y: lib.view_as_real(lib.fft.ifft2(_z(lib, x, y), norm="ortho"))),
    _c("fft_rfft", lambda lib, x: lib.view_as_real(lib.fft.rfft(x, dim=0)), shapes=((4, 3),)),
    _c("fft_irfft", lambda lib, x, y: lib.fft.irfft(_z(lib, x, y), n=6), shapes=((2, 4), (2, 4))),
    _c("fft_hfft", lambda lib, x, y: lib.fft.hfft(_z(lib, x, y), norm="forward")),
]
OPS += COMPLEX


# ---- Tensor methods and creation (issue 14)
_SR_INDEX = np.array([[0, 1, 0, 2], [2, 2, 1, 0]])


def _scatter_reduce_samples(reduces):
    def gen(rng):
        for reduce in reduces:
            for include_self in (True, False):
                yield Sample((uniform(rng, (2, 3)), 1, _SR_INDEX, uniform(rng, (2, 4)), reduce),
                             {"include_self": include_self})
        if "prod" in reduces:
            yield Sample((uniform(rng, (0, 3)), 0, np.zeros((0, 3), np.int64),
                          uniform(rng, (0, 3)), "prod"))
            # zeros in a product, one per position (two: test_tensor_ops)
            yield Sample((np.array([[0.5, 2.0, 0.0]]), 1, np.array([[0, 1, 0, 2, 2]]),
                          np.array([[0.0, 3.0, 1.5, 0.0, 2.0]]), "prod"))
            return
        yield Sample((uniform(rng, (3, 4)), 0, _SR_INDEX, uniform(rng, (2, 4)), "amin"))
        # an index smaller than the input in a dim it does not scatter along
        yield Sample((uniform(rng, (3, 5)), 0, np.array([[0, 2], [2, 2]]), uniform(rng, (2, 2)),
                      "mean"), {"include_self": False})
        yield Sample((uniform(rng, (3,)), -1, np.array([0, 0, 2, 2]), uniform(rng, (4,)), "amax"))
        # ties share the gradient (torch's convention); an excluded input equal to the result:
        # test_tensor_ops (torch gives it a share)
        for x0, include_self in ((1.0, True), (0.5, False)):
            yield Sample((np.array([[x0, 2.0, 4.0]]), 1, np.array([[0, 1, 0, 2]]),
                          np.array([[1.0, 3.0, 1.0, 2.0]]), "amax"),
                         {"include_self": include_self}, smooth=False)
    return gen


def _index_reduce_samples(reduces):
    def gen(rng):
        index = np.array([0, 2, 0, 1, 2])
        for reduce in reduces:
            for include_self in (True, False):
                yield Sample((uniform(rng, (3, 4)), 0, index, uniform(rng, (5, 4)), reduce),
                             {"include_self": include_self})
        if "prod" not in reduces:
            yield Sample((uniform(rng, (2, 3)), -1, index.astype(np.int32), uniform(rng, (2, 5)),
                          "amax"))
            yield Sample((uniform(rng, (3,)), 0, np.zeros(0, np.int64), uniform(rng, (0,)),
                          "mean"))
    return gen


_NO_INDEX_REDUCE_JVP = {"jvp": "torch has no forward AD for index_reduce; test_op_fd checks ours"}
_NO_PROD_JVP = {"jvp": "torch's forward AD of a 'prod' reduction into indices gives no tangent "
                       "(zero); test_op_fd checks ours"}


def _bool(shape, p=0.5):
    return lambda rng: rng.uniform(size=shape) < p


TENSOR_OPS = [
    OpInfo("scatter_reduce", lambda lib, x, d, i, s, r, **k: x.scatter_reduce(d, i, s, r, **k),
           _scatter_reduce_samples(("sum", "mean", "amax", "amin"))),
    OpInfo("scatter_reduce_prod", lambda lib, x, d, i, s, r, **k: x.scatter_reduce(
        d, i, s, r, **k), _scatter_reduce_samples(("prod",)), torch_not_oracle=_NO_PROD_JVP),
    # a 0-d input is reduced as a 1-element one (its node is the reshape back)
    OpInfo("scatter_reduce_0d", lambda lib, x, i, s: x.scatter_reduce(0, i, s, "mean"), one(
        S((), lambda rng: np.array(0), ()), S((), lambda rng: np.array([0, 0]), (2,)))),
    OpInfo("scatter_reduce_fn", lambda lib, x, d, i, s, r: lib.scatter_reduce(x, d, i, s, r),
           one(S((2, 3), 0, lambda rng: np.array([[1, 0, 1]]), (1, 3), "mean"))),
    # in place (one float input: vmap refuses writing a batched value into an unbatched tensor)
    OpInfo("scatter_reduce_", lambda lib, x, i: x.clone().scatter_reduce_(1, i, x * -2, "amax"),
           one(S((2, 4), lambda rng: _SR_INDEX))),
    OpInfo("index_reduce", lambda lib, x, d, i, s, r, **k: x.index_reduce(d, i, s, r, **k),
           _index_reduce_samples(("mean", "amax", "amin")), torch_not_oracle=_NO_INDEX_REDUCE_JVP),
    OpInfo("index_reduce_prod", lambda lib, x, d, i, s, r, **k: x.index_reduce(d, i, s, r, **k),
           _index_reduce_samples(("prod",)), torch_not_oracle=_NO_INDEX_REDUCE_JVP),
    OpInfo("index_reduce_", lambda lib, x, i: x.clone().index_reduce_(0, i, x.flip(0), "amin"),
           one(S((3, 2), lambda rng: np.array([1, 1, 0]))), torch_not_oracle=_NO_INDEX_REDUCE_JVP),
    # torch has no derivative for scatter's reduce=; compare the values
    OpInfo("scatter_reduce_arg", lambda lib, x, d, i, v, r: x.detach().scatter(d, i, v, reduce=r),
           one(S((2, 3), 1, lambda rng: _SR_INDEX, 2.5, "multiply"),
               S((2, 3), 1, lambda rng: _SR_INDEX, -1.5, "add")), grad=False),
    OpInfo("masked_scatter", lambda lib, x, m, s: x.masked_scatter(m, s), one(
        S((2, 3), _bool((2, 3)), (8,)), S((2, 3), _bool((3,)), (2, 4)),
        S((3,), _bool((2, 3)), (7,)), S((2, 3), _bool((2, 3), 0.0), (0,)),
        S((0, 3), _bool((0, 3)), (2,)))),
    OpInfo("masked_scatter_fn", lambda lib, x, m, s: lib.masked_scatter(x, m, s), one(
        S((4,), lambda rng: np.array([True, False, True, True]), (3,)))),
    OpInfo("put", lambda lib, x, i, s, **k: x.put(i, s, **k), one(
        S((2, 3), lambda rng: np.array([[0, 4], [5, -3]]), (2, 2)),
        S((2, 3), lambda rng: np.array([1, -5, 2, 1, 1]), (5,), accumulate=True),
        S((), lambda rng: np.array(0), ()), S((3,), lambda rng: np.zeros(0, np.int64), (0,)))),
    OpInfo("put_", lambda lib, x, i: x.clone().put_(i, x[0, :2] * 3, accumulate=True), one(
        S((2, 3), lambda rng: np.array([4, 4])))),
    OpInfo("take_method", lambda lib, x, i: x.take(i), one(
        S((2, 3), lambda rng: np.array([[0, -1], [5, 0]])), S((), lambda rng: np.array([0, 0]))),
        ),
    # as_strided reads memory: a flat copy of x (made inside, so that under vmap each example
    # is one block of memory, which torch's batching rule requires)
    OpInfo("as_strided", lambda lib, x, *a: x.reshape(-1).clone().as_strided(*a), one(
        S((2, 3), L(2, 2), L(1, 2), 1), S((2, 3), L(3, 2), L(1, 1)), S((3, 2), L(3,), L(2,), 0),
        S((2, 3), L(2, 0), L(1, 1), 2), S((2, 2), L(), L(), 3))),
    OpInfo("unfold_method", lambda lib, x, *a: x.unfold(*a), one(
        S((3, 4), 1, 2, 1), S((5, 3), 0, 2, 2), S((2, 7), -1, 3, 2), S((4,), 0, 0, 1),
        S((0, 3), 1, 2, 1), S((2, 3), 0, 2, 1))),
    OpInfo("unfold_0d", lambda lib, x: x.unfold(0, 1, 1), one(S(()))),
    OpInfo("interpolate_bicubic", _functional("interpolate"), one(
        S((1, 2, 4, 5), size=(3, 7), mode="bicubic"),
        S((2, 1, 5, 4), scale_factor=(1.7, 0.6), mode="bicubic", align_corners=True),
        S((1, 1, 3, 3), scale_factor=2, mode="bicubic", align_corners=False))),
    # torch's antialiased kernel repeats one row when an output dim is 1: test_tensor_ops
    OpInfo("interpolate_antialias", _functional("interpolate"), one(
        S((1, 2, 8, 7), size=(3, 4), mode="bilinear", antialias=True),
        S((1, 1, 9, 6), scale_factor=(0.4, 0.5), mode="bicubic", antialias=True),
        S((2, 1, 5, 6), size=(7, 3), mode="bicubic", antialias=True, align_corners=True),
        S((1, 2, 6, 5), size=(2, 9), mode="bilinear", antialias=True, align_corners=True))),
    OpInfo("combinations", lambda lib, x, *a, **k: lib.combinations(x, *a, **k), one(
        S((4,)), S((4,), 3), S((3,), 3, with_replacement=True), S((3,), 0), S((1,), 2),
        S((3,), 1))),
    OpInfo("cartesian_prod", lambda lib, *xs: lib.cartesian_prod(*xs), one(
        S((2,), (3,)), S((3,)), S((2,), (1,), (2,)), S((2,), (0,)))),
    OpInfo("block_diag", lambda lib, *xs: lib.block_diag(*xs), one(
        S((2, 2), (3,), (), (0, 2)), S((1, 3)), S((2, 3), (3, 1)))),
    OpInfo("block_diag_mixed_dtypes", lambda lib, x: lib.block_diag(
        lib.ones(2, 2, dtype=lib.int64), x), one(S((2,))), grad=False),
    OpInfo("tril_indices", lambda lib, *a, **k: lib.tril_indices(*a, **k), one(
        S(3, 4), S(4, 3, 1), S(3, 3, -1, dtype=None), S(0, 2), S(2, 5, 7)), grad=False),
    OpInfo("triu_indices", lambda lib, *a, **k: lib.triu_indices(*a, **k), one(
        S(3, 4), S(4, 3, 1), S(3, 3, -2), S(2, 0)), grad=False),
    OpInfo("tril_bool", lambda lib, x, *d: (x > 0).tril(*d), one(S((3, 4)), S((2, 3, 3), -1)),
           grad=False),
    OpInfo("triu_bool", lambda lib, x, *d: lib.triu(x > 0, *d), one(S((3, 4)), S((4, 3), 1)),
           grad=False),
    OpInfo("isclose", lambda lib, x, y, **k: lib.isclose(x, y, **k), one(
        S((2, 3), (2, 3), rtol=0.5), S((3, 1), (1, 4), atol=1.0, rtol=0.0),
        S(lambda rng: np.array([1.0, np.nan, np.inf, -np.inf]),
          lambda rng: np.array([1.0, np.nan, np.inf, np.inf]), equal_nan=True),
        S(lambda rng: np.array([3, 7, -2]), lambda rng: np.array([5, 7, -4]), atol=2)), grad=False),
]
OPS += TENSOR_OPS
# compositions whose top node torch names differently (the gradients still match)
TENSOR_OPS_NAMED_DIFFERENTLY = {"scatter_reduce_0d", "unfold_0d", "interpolate_bicubic",
                                "interpolate_antialias",
                                "masked_scatter", "masked_scatter_fn", "put", "put_",
                                "take_method", "combinations", "cartesian_prod", "block_diag"}


# ----------------------------------------------------------------- torch.linalg: solvers, norms
def _spd(lib, a):
    """A symmetric positive-definite matrix made from any square `a` (vmap's examples shuffle
    the entries of a sample, so the op's input is built inside the function)."""
    n = a.shape[-1]
    return a @ a.mT + n * lib.eye(n, dtype=a.dtype)


def _tri_factor(lib, a, upper=False):
    """A well-conditioned triangular factor made from any square `a`."""
    n = a.shape[-1]
    return (a.triu() if upper else a.tril()) + n * lib.eye(n, dtype=a.dtype)


# torch's forward-over-forward of these is off (a factor of 2 for solve, det, slogdet):
# ours matches finite differences of the jvp (test_linalg checks it)
_FWD_OVER = {"forward_over": "torch's jvp of the jvp is not the second derivative here; "
                             "test_linalg checks ours against finite differences"}
LINALG_SOLVE = [
    OpInfo("linalg.inv", lambda lib, a: lib.linalg.inv(a), one(
        S((3, 3)), S((2, 3, 3)), S((1, 1)), S((0, 0)), S((2, 0, 0)), S((0, 2, 2)))),
    OpInfo("linalg.inv_ex", lambda lib, a: lib.linalg.inv_ex(a), one(S((2, 3, 3)))),
    OpInfo("inverse", lambda lib, a: a.inverse(), one(S((4, 4)))),
    OpInfo("linalg.det", lambda lib, a: lib.linalg.det(a), one(
        S((3, 3)), S((2, 3, 3)), S((1, 1)), S((0, 0)), S((2, 4, 4))), torch_not_oracle=_FWD_OVER),
    OpInfo("det", lambda lib, a: a.det(), one(S((2, 2))), torch_not_oracle=_FWD_OVER),
    OpInfo("linalg.slogdet", lambda lib, a: lib.linalg.slogdet(a), one(
        S((3, 3)), S((2, 4, 4)), S((0, 0))), torch_not_oracle=_FWD_OVER),
    OpInfo("logdet", lambda lib, a: lib.logdet(_spd(lib, a)), one(S((3, 3)), S((2, 2, 2))),
           torch_not_oracle=_FWD_OVER),
    OpInfo("linalg.solve", lambda lib, a, b: lib.linalg.solve(a, b), one(
        S((3, 3), (3, 2)), S((3, 3), (2, 3, 4)), S((2, 0, 0), (0, 1))), torch_not_oracle=_FWD_OVER),
    OpInfo("linalg.solve_vector_or_right", lambda lib, a, b, **k: lib.linalg.solve(a, b, **k),
           one(S((2, 3, 3), (3,)), S((2, 3, 3), (2, 3)), S((3, 3), (2, 3), left=False)),
           torch_not_oracle=_FWD_OVER),
    OpInfo("linalg.solve_ex", lambda lib, a, b: lib.linalg.solve_ex(a, b), one(
        S((2, 3, 3), (2, 3, 2))), torch_not_oracle=_FWD_OVER),
    OpInfo("linalg.solve_triangular", lambda lib, a, b, **k: lib.linalg.solve_triangular(
        a + 3 * lib.eye(a.shape[-1], dtype=a.dtype), b, **k), one(
        S((3, 3), (3, 2), upper=True), S((2, 3, 3), (3, 4), upper=False, unitriangular=True))),
    OpInfo("linalg.solve_triangular_right", lambda lib, a, b, **k: lib.linalg.solve_triangular(
        a + 3 * lib.eye(a.shape[-1], dtype=a.dtype), b, left=False, **k), one(
        S((3, 3), (2, 3), upper=False), S((3, 3), (2, 2, 3), upper=True, unitriangular=True))),
    OpInfo("linalg.cholesky", lambda lib, a, **k: lib.linalg.cholesky(_spd(lib, a), **k), one(
        S((3, 3)), S((2, 3, 3)), S((3, 3), upper=True), S((0, 0)))),
    OpInfo("linalg.cholesky_ex", lambda lib, a: lib.linalg.cholesky_ex(_spd(lib, a)), one(
        S((2, 4, 4)))),
    OpInfo("cholesky_solve", lambda lib, b, a, **k: lib.cholesky_solve(
        b, _tri_factor(lib, a, **k), **k), one(S((3, 2), (3, 3)), S((2, 3, 1), (3, 3), upper=True))),
    OpInfo("cholesky_inverse", lambda lib, a, **k: lib.cholesky_inverse(
        _tri_factor(lib, a, **k), **k), one(S((3, 3)), S((2, 3, 3), upper=True)),
        torch_not_oracle={"jvp": "torch's cholesky_inverse tangent is off (ours matches finite "
                                 "differences: test_op_fd)", "forward_over": "as its jvp"}),
    OpInfo("cholesky", lambda lib, a, *u: lib.cholesky(_spd(lib, a), *u), one(
        S((3, 3)), S((2, 3, 3), True)),
        torch_not_oracle={"jvp": "torch.cholesky has no forward AD (linalg.cholesky's is ours)",
                          "forward_over": "as its jvp"}),
    OpInfo("triangular_solve", lambda lib, b, a, **k: lib.triangular_solve(
        b, a + 3 * lib.eye(a.shape[-1], dtype=a.dtype), **k), one(
        S((3, 2), (3, 3)), S((2, 3, 1), (3, 3), upper=False, transpose=True),
        S((3, 2), (2, 3, 3), unitriangular=True)),
        torch_not_oracle={"jvp": "torch's triangular_solve tangent uses all of A's tangent, "
                                 "not its triangle (ours matches finite differences)",
                          "forward_over": "as its jvp"}),
    OpInfo("lu", lambda lib, a: lib.lu(a, get_infos=True), one(S((3, 3)))),
    OpInfo("lu_solve", lambda lib, b, a: b.lu_solve(*lib.linalg.lu_factor(a)), one(
        S((3, 2), (3, 3)))),
    OpInfo("linalg.lu_factor", lambda lib, a: lib.linalg.lu_factor(a), one(
        S((3, 3)), S((2, 4, 4)), S((0, 0)), S((3, 5)), S((2, 5, 3)))),
    OpInfo("linalg.lu_factor_ex", lambda lib, a: lib.linalg.lu_factor_ex(a), one(S((2, 3, 3)))),
    OpInfo("linalg.lu", lambda lib, a: lib.linalg.lu(a), one(
        S((3, 3)), S((2, 4, 4)), S((3, 4)), S((4, 2)))),
    OpInfo("linalg.lu_solve", lambda lib, a, b, **k: lib.linalg.lu_solve(
        *lib.linalg.lu_factor(a), b, **k), one(
        S((3, 3), (3, 2)), S((2, 3, 3), (2, 3, 1), adjoint=True), S((3, 3), (2, 3), left=False))),
    OpInfo("linalg.matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), one(
        S((3, 3)), S((2, 3, 3)), S((1, 1)), S((0, 0)),
        S(lambda rng: np.array([[0.0, 6.0, 0.0], [-6.0, 0.0, 0.0], [0.0, 0.0, 0.5]])
          + uniform(rng, (3, 3), -0.5, 0.5)))),
    OpInfo("matrix_exp", lambda lib, a: a.matrix_exp(), one(S((2, 2)))),
    OpInfo("linalg.matrix_power", lambda lib, a, n: lib.linalg.matrix_power(a, n), one(
        S((3, 3), 3), S((2, 3, 3), -2), S((3, 3), 0), S((3, 3), 1), S((2, 2), 6))),
    OpInfo("linalg.vector_norm", lambda lib, x, *a, **k: lib.linalg.vector_norm(x, *a, **k), one(
        S((2, 3)), S((2, 3), 1, gen_x=away_from_zero), S((2, 3, 4), 3, L(0, 2), True),
        S((2, 3), float("inf"), 1, gen_x=distinct), S((2, 3), -float("inf"), 0, gen_x=distinct),
        S((2, 3), 0), S((4,), 0.5, gen_x=away_from_zero), S((3, 2), -1, 0, gen_x=away_from_zero),
        S((0, 3), 2, 1), S((0, 3), 1), S(()))),
    # torch's second derivative at a zero norm is nan; the first is 0
    OpInfo("linalg.vector_norm_at_zero", lambda lib, x, *a: lib.linalg.vector_norm(x, *a), one(
        kink(S(lambda rng: np.zeros(3), 2)), kink(S(lambda rng: np.zeros(3), 3)),
        kink(S(lambda rng: np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0]]), 3, 1))), gradgrad=False),
    OpInfo("linalg.vector_norm_ties", lambda lib, x: lib.linalg.vector_norm(x, float("inf"), 1),
           one(kink(S(lambda rng: np.array([[1.0, -3.0, 3.0], [2.0, 2.0, -2.0]]))))),
    OpInfo("linalg.matrix_norm", lambda lib, x, *a, **k: lib.linalg.matrix_norm(x, *a, **k), one(
        S((2, 3)), S((2, 3, 4), "fro", L(0, 2), True), S((3, 3), 1, gen_x=distinct),
        S((2, 3, 4), -1, gen_x=distinct), S((3, 4), float("inf"), gen_x=distinct),
        S((2, 4, 3), -float("inf"), L(-1, 0), True, gen_x=distinct), S((3, 4), 2),
        S((2, 3, 4), -2, L(0, 2), True), S((2, 3, 3), "nuc"), S((4, 2, 3), "nuc", L(2, 0)))),
    OpInfo("linalg.norm", lambda lib, x, *a, **k: lib.linalg.norm(x, *a, **k), one(
        S((2, 3, 4)), S((2, 3), 1, gen_x=distinct), S((4,), float("inf"), gen_x=distinct),
        S((2, 3, 4), 3, 1, gen_x=away_from_zero), S((2, 3, 4), None, L(0, 1)),
        S((2, 3, 4), "fro", L(2, 1), True))),
    OpInfo("linalg.cross", lambda lib, x, y, **k: lib.linalg.cross(x, y, **k), one(
        S((2, 3), (1, 3)), S((3, 4), (3, 1), dim=0))),
    OpInfo("linalg.vecdot", lambda lib, x, y, **k: lib.linalg.vecdot(x, y, **k), one(
        S((2, 3), (3,)), S((3, 4), (3, 1), dim=0), S((0, 2), (2,)))),
    OpInfo("linalg.multi_dot", lambda lib, *xs: lib.linalg.multi_dot(xs), one(
        S((3,), (3, 4)), S((2, 3), (3, 4), (4, 5), (5,)), S((2, 6), (6, 1), (1, 7), (7, 2)),
        S((4,), (4, 2), (2, 3), (3,)))),
    OpInfo("linalg.diagonal", lambda lib, x, **k: lib.linalg.diagonal(x, **k), one(
        S((2, 3, 4)), S((3, 4), offset=1), S((2, 3, 4), dim1=0, dim2=2, offset=-1))),
]
OPS += LINALG_SOLVE
# compositions whose top node torch names differently (the grads still match)
LINALG_SOLVE_NAMED_DIFFERENTLY = {
    "cholesky_inverse",
    "linalg.lu", "linalg.lu_solve", "linalg.matrix_power", "linalg.cross", "linalg.multi_dot",
    "triangular_solve", "lu_solve", "cholesky"}


# ----------------------------------------------------------------- spectral linear algebra
# Singular vectors and eigenvectors are defined up to sign, so each function returns quantities
# that do not depend on it (U f(S) Vh, projections onto leading singular or eigen spaces); eigh
# gets a symmetric matrix (x + x^T) because torch's gradient is that of a symmetric input.
def _svd_uses(lib, U, S, Vh):
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return S, (U * S.sin().unsqueeze(-2)) @ Vh, U[..., :1] @ U[..., :1].mT


def _eigh_uses(lib, L, V):
    return L, (V * L.sin().unsqueeze(-2)) @ V.mT, V[..., :2] @ V[..., :2].mT


def _unit(rng, shape):
    """Entries in [-1, 1]: eigenvalues of size ~1, where torch's float32 eig keeps 1e-5."""
    return uniform(rng, shape, -1.0, 1.0)


def _eig_uses(lib, L, V):
    """Power sums of the eigenvalues and sum_j |V_ij|^2 L_j: free of the order of the
    eigenvalues and of each eigenvector's phase (its only freedom, as the norm is 1)."""
    sums = lib.view_as_real(lib.stack([L.sum(-1), (L * L).sum(-1)], -1))
    if V is None:
        return (sums,)
    return sums, lib.view_as_real(((V * V.conj()).real * L.unsqueeze(-2)).sum(-1))


def _quiet(fn):
    """torch warns (once) that torch.qr and torch.svd are deprecated; arraygrad does not."""
    def run(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(*args, **kwargs)
    return run


_MATRICES = [S((4, 3)), S((3, 4)), S((3, 3)), S((2, 4, 3)), S((2, 1, 2, 3))]
LINALG_SPECTRAL = [
    OpInfo("linalg.svd", lambda lib, x, **k: _svd_uses(lib, *lib.linalg.svd(x, **k)), one(
        *_MATRICES, S((4, 3), full_matrices=False), S((2, 3, 4), full_matrices=False))),
    OpInfo("linalg.svdvals", lambda lib, x: lib.linalg.svdvals(x), one(*_MATRICES, S((0, 3)))),
    OpInfo("svd_old", _quiet(lambda lib, x, **k: (lambda U, S, V: _svd_uses(lib, U, S, V.mT))(
        *lib.svd(x, **k))), one(S((4, 3)), S((3, 4)), S((2, 4, 3), some=False))),
    OpInfo("svd_old_no_uv", _quiet(lambda lib, x: x.svd(compute_uv=False)),
           one(S((4, 3)), S((2, 3, 4)))),
    OpInfo("linalg.eigh", lambda lib, x, **k: _eigh_uses(lib, *lib.linalg.eigh(x + x.mT, **k)),
           one(S((3, 3)), S((2, 4, 4)), S((4, 4), UPLO="U"), S((1, 1)))),
    OpInfo("linalg.eigvalsh", lambda lib, x, **k: lib.linalg.eigvalsh(x + x.mT, **k),
           one(S((3, 3)), S((2, 4, 4), UPLO="U"), S((0, 0)))),
    OpInfo("linalg.eig", lambda lib, x: _eig_uses(lib, *lib.linalg.eig(x)),
           one(S((3, 3), gen_x=_unit), S((2, 4, 4), gen_x=_unit), S((1, 1)))),
    OpInfo("linalg.eig_complex", lambda lib, x, y: _eig_uses(lib, *lib.linalg.eig(_z(lib, x, y))),
           one(S((3, 3), (3, 3)), S((2, 2, 2), (2, 2, 2)))),
    OpInfo("linalg.eigvals", lambda lib, x: _eig_uses(lib, lib.linalg.eigvals(x), None)[0],
           one(S((3, 3), gen_x=_unit), S((2, 4, 4), gen_x=_unit))),
    OpInfo("linalg.qr", lambda lib, x, **k: tuple(lib.linalg.qr(x, **k)), one(
        *_MATRICES, S((3, 4), mode="complete"), S((3, 3), mode="complete"))),
    OpInfo("linalg.qr_r", lambda lib, x: lib.linalg.qr(x, mode="r")[1],
           one(S((4, 3)), S((2, 3, 4))), grad=False),
    OpInfo("qr_old", _quiet(lambda lib, x, **k: tuple(x.qr(**k))),
           one(S((4, 3)), S((3, 4), some=False))),
    OpInfo("linalg.pinv", lambda lib, x, *a, **k: lib.linalg.pinv(x, *a, **k), one(
        *_MATRICES, kink(S((4, 3), atol=0.8)), kink(S((4, 3), rtol=0.4)),
        kink(S((3, 4), 0.4)), S((0, 3)))),
    OpInfo("linalg.pinv_hermitian", lambda lib, x, **k: lib.linalg.pinv(x + x.mT, hermitian=True,
                                                                         **k),
           one(S((3, 3)), S((2, 4, 4)), kink(S((4, 4), atol=1.0)))),
    OpInfo("pinverse", lambda lib, x, *a: x.pinverse(*a), one(S((4, 3)), kink(S((3, 4), 0.3)))),
    OpInfo("linalg.lstsq", lambda lib, a, b, **k: tuple(lib.linalg.lstsq(a, b, **k)), one(
        S((5, 3), (5, 2)), S((5, 3), (5,)), S((3, 3), (3, 2)), S((3, 5), (3, 2)),
        S((2, 5, 3), (2, 5, 2)), S((5, 3), (5, 2), driver="gels"),
        S((2, 5, 3), (1, 5, 2), driver="gels"), S((5, 3), (5,), driver="gels"),
        # the singular values these drivers return have no derivative (torch's choice, which
        # finite differences cannot see)
        kink(S((5, 3), (5, 2), driver="gelsd")), kink(S((2, 5, 3), (2, 5, 2), driver="gelss")))),
    OpInfo("linalg.matrix_rank",
           lambda lib, x, *a, **k: lib.linalg.matrix_rank(x.detach(), *a, **k), one(
               S((4, 3)), S((2, 3, 4)), S((4, 3), atol=1.0), S((4, 3), rtol=0.5),
               S((4, 3), 1.0), S((3, 3), hermitian=True), S((0, 3)),
               S(lambda rng: np.outer(rng.uniform(-2, 2, 4), rng.uniform(-2, 2, 3)))),
           grad=False),
    OpInfo("linalg.householder_product",
           lambda lib, a, tau: lib.linalg.householder_product(a, tau), one(
               S((5, 3), (2,)), S((4, 4), (4,)), S((2, 5, 3), (2, 3))),
           torch_not_oracle={"forward_over": "torch's jvp of its householder_product jvp is off "
                                             "(by 9.5 where the value is 7.7); test_linalg_"
                                             "spectral checks ours against finite differences"}),
]
OPS += LINALG_SPECTRAL
# compositions whose top node torch names differently (the grads still match)
SPECTRAL_NAMED_DIFFERENTLY = {"linalg.svd", "svd_old", "linalg.eigh",
                              "linalg.householder_product", "linalg.eig", "linalg.eig_complex",
                              "linalg.eigvals"}


# ---- more torch.* math: inverse hyperbolic functions, angle conversions, gcd/lcm, addmv/addr,
# index_copy, renorm, mvlgamma
MORE_MATH = [
    OpInfo("asinh", lambda lib, x: x.asinh(), unary_samples()),
    OpInfo("acosh", lambda lib, x: lib.acosh(x), unary_samples(1.2, 3.0)),
    OpInfo("atanh", lambda lib, x: lib.arctanh(x), unary_samples(-0.8, 0.8)),
    OpInfo("exp2", lambda lib, x: lib.exp2(x), unary_samples()),
    OpInfo("frac", lambda lib, x: x.frac(), unary_samples(avoid_zero=True)),
    OpInfo("deg2rad_rad2deg", lambda lib, x: (lib.deg2rad(x), x.rad2deg()), unary_samples()),
    OpInfo("float_power", lambda lib, x, y: lib.float_power(x.abs() + 0.5, y),
           binary_samples(scalars=(2.5, -3))),
    OpInfo("ldexp", lambda lib, x, y: lib.ldexp(x, y), binary_samples(scalars=())),
    OpInfo("gcd_lcm", lambda lib, x, y: (lib.gcd((x * 9).long(), (y * 6).long()),
                                         (x * 9).long().lcm((y * 6).long())),
           binary_samples(scalars=()), grad=False),
    OpInfo("addmv", lambda lib, x, m, v, **k: lib.addmv(x, m, v, **k), one(
        S((3,), (3, 4), (4,)), S((), (2, 3), (3,), beta=0.5, alpha=2.0),
        S((3,), (3, 0), (0,), beta=0))),
    OpInfo("addr", lambda lib, x, a, b, **k: x.addr(a, b, **k), one(
        S((3, 4), (3,), (4,)), S((4,), (3,), (4,), beta=2.0, alpha=-1.0))),
    OpInfo("index_copy", lambda lib, x, s, i: x.index_copy(1, i, s), one(
        S((3, 4), (3, 2), lambda rng: np.array([3, 0])),
        S((2, 3), (2, 0), lambda rng: np.zeros(0, np.int64)))),
    OpInfo("renorm", lambda lib, x, **k: lib.renorm(x, **k), one(
        S((3, 4), p=2, dim=0, maxnorm=1.0), S((2, 3, 2), p=1, dim=1, maxnorm=1.5),
        S((2, 4), p=3, dim=1, maxnorm=0.5))),
    OpInfo("mvlgamma", lambda lib, x, **k: lib.mvlgamma(x.abs() + 2, **k), one(
        S((3, 4), p=1), S((2, 3), p=3), S((), p=2)), rtol=1e-8),    # trigamma's precision
]
OPS += MORE_MATH
# compositions whose top node torch names differently (the gradients still match)
MORE_MATH_NAMED_DIFFERENTLY = {"deg2rad_rad2deg", "float_power", "ldexp", "addmv", "addr",
                               "index_copy", "renorm", "mvlgamma"}


# ---- NumPy-style array functions (ops/arrays.py, ops/numerics.py): compositions, so every
# transform comes from the primitives they call
def _nan_at(rng, shape):
    x = uniform(rng, shape)
    x.reshape(-1)[::3] = np.nan
    return x


def _weights(rng):
    return np.array([1, 2, 0, 3])


ARRAY_FUNCTIONS = [
    OpInfo("atleast_3d", lambda lib, x, y, z: lib.atleast_3d(x, y, z), one(S((), (4,), (2, 3)))),
    OpInfo("column_stack", lambda lib, x, y, z: lib.column_stack([x, y, z]),
           one(S((3,), (3, 2), (3,)))),
    OpInfo("dstack", lambda lib, x, y: lib.dstack([x, y]), one(S((2, 3), (2, 3)), S((3,), (3,)))),
    OpInfo("tensor_split", lambda lib, x, s, **k: lib.tensor_split(x, s, **k), one(
        S((7,), 3), S((2, 6), L(1, 4, -1), dim=1), S((5, 2), L(0, 9))),
        gradgrad=False),
    OpInfo("hsplit_vsplit", lambda lib, x: lib.hsplit(x, 2) + lib.vsplit(x, [1]),
           one(S((3, 4)))),
    OpInfo("fliplr_flipud", lambda lib, x: (lib.fliplr(x), x.flipud()), one(S((2, 3)))),
    OpInfo("rot90", lambda lib, x, *a: lib.rot90(x, *a), one(
        S((2, 3)), S((2, 3, 4), 2, L(2, 0)), S((2, 3), -1), S((2, 3), 0))),
    OpInfo("diag_embed", lambda lib, x, **k: lib.diag_embed(x, **k), one(
        S((2, 3)), S((4,), offset=1), S((2, 3), offset=-1, dim1=2, dim2=0))),
    OpInfo("diagflat", lambda lib, x, *a: lib.diagflat(x, *a), one(S((2, 2)), S((3,), -1))),
    OpInfo("diagonal_scatter", lambda lib, x, s, **k: lib.diagonal_scatter(x, s, **k), one(
        S((3, 4), (3,)), S((3, 4), (2,), offset=2), S((2, 3, 3), (3, 2), offset=-1, dim1=2,
                                                    dim2=0))),
    OpInfo("select_scatter", lambda lib, x, s, *a: lib.select_scatter(x, s, *a), one(
        S((3, 4), (4,), 0, 1), S((2, 3, 2), (2, 2), 1, -1))),
    OpInfo("slice_scatter", lambda lib, x, s, **k: lib.slice_scatter(x, s, **k), one(
        S((5, 3), (2, 3), start=1, end=4, step=2), S((2, 4), (2, 3), dim=1, start=1))),
    OpInfo("repeat_interleave", lambda lib, x, r, **k: lib.repeat_interleave(x, r, **k), one(
        S((2, 3), 2), S((2, 3), 3, dim=1), S((3, 2), lambda rng: np.array([1, 0, 2]), dim=0),
        S((), 2))),
    OpInfo("nansum_nanmean", lambda lib, x, **k: (lib.nansum(x, **k), x.nanmean(**k)), one(
        lambda rng: Sample((_nan_at(rng, (3, 4)),)),
        lambda rng: Sample((_nan_at(rng, (3, 4)),), {"dim": 1}),
        lambda rng: Sample((_nan_at(rng, (2, 4)),), {"dim": 0, "keepdim": True}))),
    OpInfo("dist", lambda lib, x, y, *a: lib.dist(x, y, *a), one(
        S((3, 4), (4,)), S((2, 3), (2, 3), 1), S((2, 3), (2, 3), 3), S((3,), (3,), float("inf")))),
    OpInfo("fmax_fmin", lambda lib, x, y: (lib.fmax(x, y), y.fmin(x)), binary_samples(scalars=())),
    OpInfo("logaddexp2", lambda lib, x, y: lib.logaddexp2(x, y), binary_samples(scalars=())),
    OpInfo("frexp", lambda lib, x: lib.frexp(x * 5)[0], unary_samples(avoid_zero=True)),
    # torch's own vander backward fails (a saved value modified in place): test_array_functions
    # checks ours with finite differences
    OpInfo("vander", lambda lib, x, *a, **k: lib.vander(x, *a, **k), one(
        S((4,)), S((3,), 5, increasing=True), S((3,), 1)), grad=False),
    OpInfo("lp_pool1d", lambda lib, x, p, k, **kw: lib.nn.functional.lp_pool1d(
        x.abs() + 0.5, p, k, **kw), one(S((2, 3, 5), 2, 2), S((1, 2, 5), 3, 2, ceil_mode=True))),
    OpInfo("lp_pool2d", lambda lib, x, p, k, **kw: lib.nn.functional.lp_pool2d(
        x.abs() + 0.5, p, k, **kw), one(S((2, 3, 5, 4), 3, L(2, 2), stride=1),
                                        S((1, 2, 4, 4), 1.5, 2, ceil_mode=True))),
    OpInfo("max_unpool",
           lambda lib, x, **kw: lib.nn.functional.max_unpool2d(
               *lib.nn.functional.max_pool2d(x, 2, return_indices=True), 2, **kw),
           one(S((2, 3, 4, 4)), S((1, 2, 5, 4), output_size=(5, 4)))),
    OpInfo("gradient", lambda lib, f, **k: lib.gradient(f, **k), one(
        S((5,)), S((3, 4)), S((3, 4), dim=1, spacing=2.0), S((3, 4, 3), edge_order=2),
        S((4, 3), dim=[1, 0], spacing=[0.5, 3.0], edge_order=2))),
    OpInfo("gradient_coordinates",
           lambda lib, f, x, **k: lib.gradient(f, spacing=(x.abs().cumsum(0) + 0.1,), dim=0, **k),
           one(S((4, 3), (4,)), S((5,), (5,), edge_order=2))),
    OpInfo("trapezoid", lambda lib, y, *a, **k: lib.trapezoid(y, *a, **k), one(
        S((3, 4)), S((3, 4), dx=0.5, dim=0),
        S((3, 4), lambda rng: np.cumsum(rng.uniform(0.1, 1, 4))))),
    OpInfo("trapezoid_x", lambda lib, y, x: lib.trapezoid(y, x.cumsum(0), dim=0), one(
        S((3, 2), (3, 2)))),
    OpInfo("cumulative_trapezoid", lambda lib, y, **k: lib.cumulative_trapezoid(y, **k), one(
        S((3, 4)), S((3, 4), dx=2.0, dim=0))),
    OpInfo("cov", lambda lib, x, **k: lib.cov(x, **k), one(
        S((3, 5)), S((4,)), S((2, 4), correction=0),
        lambda rng: Sample((uniform(rng, (2, 4)),), {"fweights": _weights(rng)}),
        lambda rng: Sample((uniform(rng, (2, 4)),), {"aweights": rng.uniform(0.1, 1, 4)}),
        lambda rng: Sample((uniform(rng, (2, 4)),), {"fweights": _weights(rng),
                                                     "aweights": rng.uniform(0.1, 1, 4)}))),
    OpInfo("corrcoef", lambda lib, x: lib.corrcoef(x), one(S((3, 5)), S((2, 4)))),
    OpInfo("adjoint", lambda lib, x: (lib.adjoint(x), x.mH, x[0].H), one(S((2, 3, 4)))),
    OpInfo("narrow_copy", lambda lib, x: (lib.narrow_copy(x, 1, 1, 2), lib.permute_copy(x, (1, 0)),
                                          lib.diagonal_copy(x)), one(S((3, 4)))),
    OpInfo("msort", lambda lib, x: lib.msort(x), one(S((4, 3), gen_x=distinct))),
    OpInfo("signbit", lambda lib, x: (lib.signbit(x), x.isposinf(), lib.isneginf(x / 0)),
           unary_samples(), grad=False),
    OpInfo("bit_shifts", lambda lib, x, y: ((x * 9).long() << (y.abs() * 3).long(),
                                            lib.bitwise_right_shift((x * 99).int(), (y * 9).int())),
           binary_samples(scalars=()), grad=False),
]
OPS += ARRAY_FUNCTIONS
# compositions whose top node torch names differently (the gradients still match)
ARRAY_FUNCTIONS_NAMED_DIFFERENTLY = {op.name for op in ARRAY_FUNCTIONS}
