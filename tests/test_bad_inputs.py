"""Bad inputs (issue 9): every case runs in torch and arraygrad; both must raise the same
exception type (or both succeed with the same result), and the message is torch's wherever
our wording does not deliberately differ.

Categories: wrong types (lists, None, strings where tensors go), wrong shapes, wrong dtypes,
out-of-range dims and indices, empty inputs, creation arguments.
"""
import warnings

import numpy as np
import pytest

import arraygrad as ag


def x23(L):
    return L.arange(6.).reshape(2, 3)

def x1(L):
    return L.arange(3.)

def e0(L):
    return L.ones(0)

UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "neg", "relu", "floor",
         "sign", "square", "reciprocal", "sum", "mean", "prod", "amax", "argmax", "logsumexp_",
         "softmax_", "cumsum_", "flatten", "t", "clone", "isnan", "logical_not", "trace", "diag",
         "nonzero", "all", "any", "std", "var", "norm", "erf", "atan", "expm1", "log1p", "round",
         "trunc", "ceil", "rsqrt", "sinh", "asin", "unbind", "ravel", "tril", "triu"]
ARGS = {"logsumexp_": ("logsumexp", (0,)), "softmax_": ("softmax", (0,)), "cumsum_": ("cumsum", (0,))}

def _unary(name, bad):
    real, extra = ARGS.get(name, (name, ()))
    return lambda L: getattr(L, real)(bad, *extra)

BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "lt", "atan2", "fmod",
          "remainder", "floor_divide", "logical_and", "matmul", "dot", "mm", "outer", "where_"]

CASES = []
for n in UNARY:
    CASES.append((f"{n}(list)", _unary(n, [1., 2.])))
    CASES.append((f"{n}(None)", _unary(n, None)))
    CASES.append((f"{n}(str)", _unary(n, "ab")))
for n in BINARY:
    if n == "where_":
        CASES.append(("where(list cond)", lambda L: L.where([True, False], x1(L)[:2], x1(L)[:2])))
        continue
    CASES.append((f"{n}(None, x)", (lambda n: lambda L: getattr(L, n)(None, x1(L)))(n)))
    CASES.append((f"{n}(x, None)", (lambda n: lambda L: getattr(L, n)(x1(L), None))(n)))
    CASES.append((f"{n}(x, str)", (lambda n: lambda L: getattr(L, n)(x1(L), "a"))(n)))
    CASES.append((f"{n}(list, list)", (lambda n: lambda L: getattr(L, n)([1., 2.], [1., 2.]))(n)))

CASES += [
    # operators with wrong operand types
    ("x + None", lambda L: x1(L) + None),
    ("x + str", lambda L: x1(L) + "a"),
    ("x * object", lambda L: x1(L) * object()),
    ("x @ list", lambda L: x23(L) @ [1., 2., 3.]),
    ("x < str", lambda L: x1(L) < "a"),
    # integer division by zero
    ("int // 0", lambda L: L.tensor([1, 2]) // 0),
    ("int % 0", lambda L: L.tensor([1, 2]) % 0),
    ("int fmod 0", lambda L: L.fmod(L.tensor([1, 2]), 0)),
    ("int div trunc 0", lambda L: L.div(L.tensor([1, 2]), 0, rounding_mode="trunc")),
    ("int div floor 0", lambda L: L.div(L.tensor([1, 2]), L.tensor([0, 1]), rounding_mode="floor")),
    ("div bad rounding", lambda L: L.div(x1(L), 2, rounding_mode="up")),
    ("float // 0 ok", lambda L: L.tensor([1., -1.]) // 0),
    # shapes
    ("add broadcast", lambda L: x23(L) + L.ones(2)),
    ("matmul shapes", lambda L: x23(L) @ x23(L)),
    ("matmul 0-d", lambda L: L.tensor(1.) @ x1(L)),
    ("mm 1-d", lambda L: L.mm(x1(L), x23(L))),
    ("mm shapes", lambda L: L.mm(x23(L), x23(L))),
    ("bmm 2-d", lambda L: L.bmm(x23(L), x23(L))),
    ("bmm batch", lambda L: L.bmm(L.ones(2, 2, 3), L.ones(3, 3, 2))),
    ("dot 2-d", lambda L: L.dot(x23(L), x23(L))),
    ("dot sizes", lambda L: L.dot(x1(L), L.ones(2))),
    ("mv shapes", lambda L: L.mv(x23(L), L.ones(2))),
    ("outer 2-d", lambda L: L.outer(x23(L), x1(L))),
    ("matmul dtypes", lambda L: L.ones(2, 2) @ L.ones(2, 2, dtype=L.float64)),
    ("mm dtypes", lambda L: L.mm(L.ones(2, 2), L.ones(2, 2, dtype=L.float64))),
    ("dot dtypes", lambda L: L.dot(L.ones(2), L.ones(2, dtype=L.float64))),
    ("matmul int float", lambda L: L.ones(2, 2, dtype=L.long) @ L.ones(2, 2)),
    ("einsum operands", lambda L: L.einsum("ij,jk->ik", x23(L))),
    ("einsum dims", lambda L: L.einsum("ijk->i", x23(L))),
    ("einsum sizes", lambda L: L.einsum("ij,ij->i", x23(L), L.ones(3, 2))),
    ("einsum bad char", lambda L: L.einsum("i1->i", x23(L))),
    ("cross no 3", lambda L: L.cross(x23(L)[:, :2], x23(L)[:, :2], dim=1)),
    ("reshape bad", lambda L: x23(L).reshape(4, 2)),
    ("reshape -1 -1", lambda L: x23(L).reshape(-1, -1)),
    ("reshape -2", lambda L: x23(L).reshape(-2, 3)),
    ("reshape float", lambda L: x23(L).reshape(2.0, 3)),
    ("view bad", lambda L: x23(L).view(4)),
    ("view noncontig", lambda L: x23(L).t().view(6)),
    ("expand bad", lambda L: x23(L).expand(3, 3)),
    ("expand fewer", lambda L: x23(L).expand(3)),
    ("expand -1 lead", lambda L: x1(L).expand(-1, 3)),
    ("permute dup", lambda L: x23(L).permute(0, 0)),
    ("permute count", lambda L: x23(L).permute(0)),
    ("repeat fewer", lambda L: x23(L).repeat(2)),
    ("repeat negative", lambda L: x23(L).repeat(-1, 1)),
    ("cat ranks", lambda L: L.cat([x23(L), x1(L)])),
    ("cat sizes", lambda L: L.cat([x23(L), L.ones(2, 2)], 0)),
    ("cat empty list", lambda L: L.cat([])),
    ("cat None", lambda L: L.cat([x1(L), None])),
    ("cat tensor not list", lambda L: L.cat(x23(L))),
    ("cat 0-d", lambda L: L.cat([L.tensor(1.), L.tensor(2.)])),
    ("stack sizes", lambda L: L.stack([x1(L), L.ones(2)])),
    ("stack empty", lambda L: L.stack([])),
    ("stack None", lambda L: L.stack([x1(L), None])),
    ("split sizes sum", lambda L: x1(L).split([1, 1])),
    ("split 0", lambda L: x1(L).split(0)),
    ("chunk 0", lambda L: x1(L).chunk(0)),
    ("chunk negative", lambda L: x1(L).chunk(-1)),
    ("unflatten bad", lambda L: x23(L).unflatten(1, (2, 2))),
    ("flatten start>end", lambda L: L.ones(2, 3, 4).flatten(2, 1)),
    ("narrow out of range", lambda L: L.arange(5).narrow(0, 3, 4)),
    ("narrow negative length", lambda L: L.arange(5).narrow(0, 1, -1)),
    ("narrow start out", lambda L: L.arange(5).narrow(0, 6, 0)),
    ("select out of range", lambda L: x23(L).select(0, 5)),
    ("setitem shape", lambda L: x23(L).__setitem__(0, L.ones(2))),
    ("sum_to_size bad", lambda L: x23(L).sum_to_size(4)),
    ("tril 1-d", lambda L: x1(L).tril()),
    ("trace 1-d", lambda L: x1(L).trace()),
    ("diag 3-d", lambda L: L.ones(2, 2, 2).diag()),
    ("t 3-d", lambda L: L.ones(2, 2, 2).t()),
    ("meshgrid indexing", lambda L: L.meshgrid(x1(L), x1(L), indexing="ab")),
    ("broadcast_tensors bad", lambda L: L.broadcast_tensors(x23(L), L.ones(2))),
    ("broadcast_to bad", lambda L: L.broadcast_to(x23(L), (3, 3))),
    # dims out of range
    ("sum dim", lambda L: x23(L).sum(2)),
    ("sum dims dup", lambda L: x23(L).sum((0, 0))),
    ("mean dim", lambda L: x23(L).mean(-3)),
    ("prod dim", lambda L: x23(L).prod(2)),
    ("amax dim", lambda L: x23(L).amax(2)),
    ("max dim", lambda L: x23(L).max(2)),
    ("min dim", lambda L: x23(L).min(-3)),
    ("argmax dim", lambda L: x23(L).argmax(2)),
    ("argmin dim", lambda L: x23(L).argmin(2)),
    ("softmax dim", lambda L: x23(L).softmax(2)),
    ("log_softmax dim", lambda L: x23(L).log_softmax(2)),
    ("logsumexp dim", lambda L: x23(L).logsumexp(2)),
    ("cumsum dim", lambda L: x23(L).cumsum(2)),
    ("cumprod dim", lambda L: x23(L).cumprod(2)),
    ("var dim", lambda L: x23(L).var(2)),
    ("std dim", lambda L: x23(L).std(2)),
    ("norm dim", lambda L: x23(L).norm(dim=2)),
    ("all dim", lambda L: x23(L).all(2)),
    ("any dim", lambda L: x23(L).any(2)),
    ("sort dim", lambda L: x23(L).sort(2)),
    ("argsort dim", lambda L: x23(L).argsort(2)),
    ("topk dim", lambda L: x23(L).topk(1, 2)),
    ("topk k", lambda L: x23(L).topk(4, 1)),
    ("topk negative k", lambda L: x23(L).topk(-1, 1)),
    ("transpose dim", lambda L: x23(L).transpose(0, 2)),
    ("unsqueeze dim", lambda L: x23(L).unsqueeze(3)),
    ("squeeze dim", lambda L: x23(L).squeeze(2)),
    ("movedim dim", lambda L: x23(L).movedim(0, 2)),
    ("movedim dup", lambda L: x23(L).movedim((0, 0), (0, 1))),
    ("flatten dim", lambda L: x23(L).flatten(0, 2)),
    ("flip dim", lambda L: x23(L).flip(2)),
    ("flip dup", lambda L: x23(L).flip(0, 0)),
    ("roll dim", lambda L: x23(L).roll(1, 2)),
    ("roll mismatch", lambda L: x23(L).roll((1, 1), 0)),
    ("diagonal dim", lambda L: x23(L).diagonal(0, 0, 2)),
    ("diagonal same dims", lambda L: x23(L).diagonal(0, 0, 0)),
    ("narrow dim", lambda L: x23(L).narrow(2, 0, 1)),
    ("select dim", lambda L: x23(L).select(2, 0)),
    ("unbind dim", lambda L: x23(L).unbind(2)),
    ("split dim", lambda L: x23(L).split(1, 2)),
    ("chunk dim", lambda L: x23(L).chunk(2, 2)),
    ("cat dim", lambda L: L.cat([x23(L), x23(L)], 2)),
    ("stack dim", lambda L: L.stack([x23(L), x23(L)], 3)),
    ("index_select dim", lambda L: x23(L).index_select(2, L.tensor([0]))),
    ("gather dim", lambda L: x23(L).gather(2, L.zeros(2, 3, dtype=L.long))),
    ("diff dim", lambda L: x23(L).diff(dim=2)),
    ("size dim", lambda L: x23(L).size(2)),
    ("dim as float", lambda L: x23(L).sum(0.5)),
    ("dim as str", lambda L: x23(L).transpose("a", 0)),
    # indexing
    ("getitem out of range", lambda L: x23(L)[5]),
    ("getitem negative", lambda L: x23(L)[-3]),
    ("getitem too many", lambda L: x23(L)[0, 0, 0]),
    ("getitem step", lambda L: x23(L)[::-1]),
    ("getitem zero step", lambda L: x23(L)[::0]),
    ("getitem float", lambda L: x23(L)[1.5]),
    ("getitem str", lambda L: x23(L)["a"]),
    ("getitem float tensor", lambda L: x23(L)[L.tensor([0.])]),
    ("getitem tensor out", lambda L: x23(L)[L.tensor([5])]),
    ("getitem mask shape", lambda L: x23(L)[L.ones(3, dtype=L.bool)]),
    ("getitem 0-d int", lambda L: L.tensor(1.)[0]),
    ("gather index rank", lambda L: x23(L).gather(0, L.zeros(3, dtype=L.long))),
    ("gather index dtype", lambda L: x23(L).gather(0, L.zeros(2, 3))),
    ("gather int32", lambda L: x23(L).gather(0, L.zeros(2, 3, dtype=L.int32))),
    ("gather out of range", lambda L: x23(L).gather(0, L.full((2, 3), 5, dtype=L.long))),
    ("gather index too big", lambda L: x23(L).gather(0, L.zeros(3, 3, dtype=L.long))),
    ("index_select float", lambda L: x23(L).index_select(0, L.tensor([0.]))),
    ("index_select out", lambda L: x23(L).index_select(0, L.tensor([5]))),
    ("index_select 2-d index", lambda L: x23(L).index_select(0, L.zeros(1, 1, dtype=L.long))),
    ("masked_fill float mask", lambda L: x23(L).masked_fill(L.ones(2, 3), 0.)),
    ("masked_fill shape", lambda L: x23(L).masked_fill(L.ones(2, dtype=L.bool), 0.)),
    ("masked_fill tensor value", lambda L: x23(L).masked_fill(L.ones(2, 3, dtype=L.bool), L.ones(2))),
    ("masked_select shape", lambda L: x23(L).masked_select(L.ones(2, dtype=L.bool))),
    ("masked_select float", lambda L: x23(L).masked_select(L.ones(2, 3))),
    ("take out of range", lambda L: x23(L).take(L.tensor([10]))),
    ("take float", lambda L: x23(L).take(L.tensor([1.]))),
    ("scatter_add shape", lambda L: x23(L).scatter_add(0, L.zeros(2, 3, dtype=L.long), L.ones(1, 3))),
    ("scatter_add out", lambda L: x23(L).scatter_add(0, L.full((2, 3), 7, dtype=L.long), L.ones(2, 3))),
    ("index_add out", lambda L: x23(L).index_add(0, L.tensor([5]), L.ones(1, 3))),
    ("where float cond", lambda L: L.where(L.tensor([1., 0.]), L.ones(2), L.zeros(2))),
    ("where int cond", lambda L: L.where(L.tensor([1, 0]), L.ones(2), L.zeros(2))),
    ("where shapes", lambda L: L.where(L.ones(3, dtype=L.bool), L.ones(2), L.zeros(2))),
    ("bitwise float", lambda L: x1(L) & x1(L)),
    ("mean int", lambda L: L.tensor([1, 2]).mean()),
    ("softmax int", lambda L: L.tensor([1, 2]).softmax(0)),
    ("requires_grad int", lambda L: L.tensor([1, 2], requires_grad=True)),
    ("sub bools", lambda L: L.tensor([True]) - L.tensor([False])),
    ("neg bool", lambda L: -L.tensor([True])),
    ("clamp none", lambda L: x1(L).clamp()),
    ("clamp str", lambda L: x1(L).clamp("a")),
    ("pow int negative", lambda L: L.tensor([2]) ** -1),
    ("item multi", lambda L: x1(L).item()),
    ("bool multi", lambda L: bool(x1(L))),
    ("len 0-d", lambda L: len(L.tensor(1.))),
    ("iter 0-d", lambda L: iter(L.tensor(1.))),
    ("index of float", lambda L: [1, 2][L.tensor(1.)]),
    ("to device", lambda L: x1(L).to("banana")),
    ("to cpu", lambda L: x1(L).to("cpu")),
    ("type str", lambda L: x1(L).type("banana")),
    # empty inputs
    ("max empty", lambda L: e0(L).max()),
    ("min empty", lambda L: e0(L).min()),
    ("amax empty", lambda L: e0(L).amax()),
    ("argmax empty", lambda L: e0(L).argmax()),
    ("argmin empty", lambda L: e0(L).argmin()),
    ("max dim empty", lambda L: L.ones(0, 2).max(0)),
    ("max dim nonempty", lambda L: L.ones(0, 2).max(1)),
    ("topk empty", lambda L: e0(L).topk(1)),
    ("sum empty", lambda L: e0(L).sum()),
    ("prod empty", lambda L: e0(L).prod()),
    ("mean empty", lambda L: e0(L).mean()),
    ("softmax empty", lambda L: e0(L).softmax(0)),
    ("logsumexp empty", lambda L: e0(L).logsumexp(0)),
    ("cumsum empty", lambda L: e0(L).cumsum(0)),
    ("sort empty", lambda L: e0(L).sort().values),
    ("norm empty", lambda L: e0(L).norm()),
    ("matmul empty", lambda L: L.ones(2, 0) @ L.ones(0, 3)),
    ("cat empties", lambda L: L.cat([e0(L), e0(L)])),
    ("stack empties", lambda L: L.stack([e0(L), e0(L)])),
    ("reshape empty", lambda L: e0(L).reshape(0, 5)),
    ("reshape empty -1", lambda L: e0(L).reshape(-1, 0)),
    ("nonzero empty", lambda L: e0(L).nonzero()),
    ("flip empty", lambda L: e0(L).flip(0)),
    ("diagonal empty", lambda L: L.ones(0, 3).diagonal()),
    ("getitem empty", lambda L: e0(L)[0]),
    ("index_select empty", lambda L: x23(L).index_select(0, L.tensor([], dtype=L.long))),
    ("all empty", lambda L: e0(L).all()),
    ("chunk empty", lambda L: e0(L).chunk(2)),
    ("split empty", lambda L: e0(L).split(2)),
    # creation
    ("zeros float", lambda L: L.zeros(2.5)),
    ("zeros negative", lambda L: L.zeros(-1)),
    ("zeros str", lambda L: L.zeros("a")),
    ("zeros None", lambda L: L.zeros(None)),
    ("zeros list float", lambda L: L.zeros([2, 2.5])),
    ("ones dtype str", lambda L: L.ones(2, dtype="float32")),
    ("ones dtype numpy", lambda L: L.ones(2, dtype=np.float32)),
    ("full dtype str", lambda L: L.full((2,), 1., dtype="x")),
    ("full value str", lambda L: L.full((2,), "a")),
    ("full negative", lambda L: L.full((-2,), 1.)),
    ("empty negative", lambda L: L.empty(2, -3)),
    ("rand negative", lambda L: L.rand(-1)),
    ("randn int dtype", lambda L: L.randn(2, dtype=L.long)),
    ("rand int dtype", lambda L: L.rand(2, dtype=L.long)),
    ("rand generator", lambda L: L.rand(2, generator=1)),
    ("randn generator", lambda L: L.randn(2, generator="g")),
    ("randint low>=high", lambda L: L.randint(5, 1, (2,))),
    ("randint float size", lambda L: L.randint(5, (2.5,))),
    ("randint no size", lambda L: L.randint(5)),
    ("randperm negative", lambda L: L.randperm(-1)),
    ("arange step sign", lambda L: L.arange(0, 5, -1)),
    ("arange step 0", lambda L: L.arange(0, 5, 0)),
    ("arange nan", lambda L: L.arange(0, float("nan"))),
    ("arange inf", lambda L: L.arange(0, float("inf"))),
    ("arange str", lambda L: L.arange("a")),
    ("linspace negative", lambda L: L.linspace(0, 1, -1)),
    ("linspace float steps", lambda L: L.linspace(0, 1, 2.5)),
    ("logspace negative", lambda L: L.logspace(0, 1, -1)),
    ("eye negative", lambda L: L.eye(-1)),
    ("eye m negative", lambda L: L.eye(2, -1)),
    ("eye float", lambda L: L.eye(2.5)),
    ("tensor ragged", lambda L: L.tensor([[1, 2], [3]])),
    ("tensor None", lambda L: L.tensor(None)),
    ("tensor str", lambda L: L.tensor("abc")),
    ("tensor list of None", lambda L: L.tensor([1, None])),
    ("tensor object array", lambda L: L.tensor(np.array([1, "a"], dtype=object))),
    ("tensor str array", lambda L: L.tensor(np.array(["a"]))),
    ("tensor datetime", lambda L: L.tensor(np.array(["2020-01-01"], dtype="datetime64[D]"))),
    ("tensor dict", lambda L: L.tensor({"a": 1})),
    ("tensor dtype str", lambda L: L.tensor([1.], dtype="float32")),
    ("as_tensor str", lambda L: L.as_tensor("abc")),
    ("from_numpy list", lambda L: L.from_numpy([1., 2.])),
    ("from_numpy object", lambda L: L.from_numpy(np.array([1, "a"], dtype=object))),
    ("from_numpy uint16", lambda L: L.from_numpy(np.zeros(2, np.uint16))),
    ("zeros_like list", lambda L: L.zeros_like([1., 2.])),
    ("ones_like None", lambda L: L.ones_like(None)),
    ("full_like str", lambda L: L.full_like(x1(L), "a")),
    ("manual_seed str", lambda L: L.manual_seed("a")),
    ("set_default_dtype int", lambda L: L.set_default_dtype(L.int64)),
]


# where arraygrad's exception type differs from torch's, and why
OURS_DIFFER = {
    # torch's norm() crashes with an internal AttributeError; ours is the parser's TypeError
    "norm(list)": TypeError, "norm(None)": TypeError, "norm(str)": TypeError,
    # dtypes arraygrad has no tensor type for are refused
    "from_numpy uint16": TypeError,
}

# same exception type, our own wording (more specific, or naming the op the parser-style way)
OWN_WORDS = {
    'all(list)', 'all(None)', 'all(str)', 'any(list)', 'any(None)', 'any(str)', 'std(list)',
    'std(None)', 'std(str)', 'var(list)', 'var(None)', 'var(str)', 'pow(None, x)',
    'pow(x, None)', 'pow(x, str)', 'pow(list, list)', 'eq(None, x)', 'eq(x, None)', 'eq(x, str)',
    'eq(list, list)', 'lt(None, x)', 'lt(x, None)', 'lt(x, str)', 'lt(list, list)',
    'fmod(None, x)', 'fmod(x, None)', 'fmod(x, str)', 'fmod(list, list)', 'remainder(None, x)',
    'remainder(x, None)', 'remainder(x, str)', 'remainder(list, list)', 'floor_divide(None, x)',
    'floor_divide(x, None)', 'floor_divide(x, str)', 'floor_divide(list, list)',
    'where(list cond)', 'x + None', 'x + str', 'x * object', 'x @ list', 'x < str',
    'add broadcast', 'einsum dims', 'einsum sizes', 'reshape float', 'expand fewer',
    'expand -1 lead', 'repeat negative', 'cat tensor not list', 'setitem shape', 'dim as float',
    'dim as str', 'getitem zero step', 'getitem float', 'getitem str', 'getitem mask shape',
    'masked_fill shape', 'masked_fill tensor value', 'masked_select shape', 'where shapes',
    'mean int', 'requires_grad int', 'clamp str', 'pow int negative', 'argmax empty',
    'argmin empty', 'reshape empty -1', 'zeros negative', 'randn int dtype', 'rand int dtype',
    'rand generator', 'randn generator', 'randint float size', 'randint no size', 'arange str',
    'linspace float steps', 'tensor object array', 'tensor str array', 'tensor datetime',
    'from_numpy object',
}


def _outcome(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return None, fn(lib)
        except Exception as e:      # noqa: BLE001 -- the exception is what is compared
            return e, None


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_bad_input_as_torch(torch, name, fn):
    their_err, theirs = _outcome(torch, fn)
    my_err, mine = _outcome(ag, fn)
    expected = OURS_DIFFER.get(name, type(their_err) if their_err is not None else None)
    if expected is None:
        assert my_err is None, f"{name}: torch succeeds, arraygrad raised {my_err!r}"
        if isinstance(theirs, torch.Tensor):
            assert tuple(mine.shape) == tuple(theirs.shape)
            np.testing.assert_allclose(np.asarray(mine.tolist(), dtype=float),
                                       np.asarray(theirs.tolist(), dtype=float), equal_nan=True)
        return
    assert type(my_err) is expected, \
        f"{name}: torch raises {type(their_err).__name__}({their_err}), arraygrad {my_err!r}"
    if name not in OWN_WORDS and name not in OURS_DIFFER:
        assert str(my_err) == str(their_err).replace("torch.", "arraygrad.")
