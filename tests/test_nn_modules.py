"""nn modules of the normalisation, dropout, embedding, activation and loss families vs torch:
constructor defaults, parameter/buffer names and state_dict keys, repr, forward in train and
eval mode, parameter gradients, running statistics, and init distributions."""
import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close, to_numpy


def _both(torch, name, *args, **kwargs):
    """The same module in both libraries, arraygrad's loaded with torch's float64 state."""
    tm = getattr(torch.nn, name)(*args, **kwargs).double()
    am = getattr(ag.nn, name)(*args, **kwargs).double()
    state = {k: ag.tensor(to_numpy(v)) for k, v in tm.state_dict().items()}
    am.load_state_dict(state)
    return am, tm


def _inputs(torch, arrays):
    out_a, out_t = [], []
    for x in arrays:
        x = np.asarray(x)
        grad = x.dtype.kind == "f"
        out_a.append(ag.tensor(x, requires_grad=grad))
        out_t.append(torch.tensor(x, requires_grad=grad))
    return out_a, out_t


def _check_module(torch, am, tm, arrays, train=True):
    am.train(train)
    tm.train(train)
    xa, xt = _inputs(torch, arrays)
    ya, yt = am(*xa), tm(*xt)
    # torch's hardsigmoid backward multiplies by 1/6 rounded to float32
    rtol = 1e-7 if type(tm).__name__ == "Hardsigmoid" else 1e-10
    assert_close(ya, yt, what=f"{type(tm).__name__} output: ")
    if yt.requires_grad:
        cot = np.random.default_rng(0).standard_normal(tuple(yt.shape))
        pa = [p for p in am.parameters()] + [x for x in xa if x.requires_grad]
        pt = [p for p in tm.parameters()] + [x for x in xt if x.requires_grad]
        ga = ag.autograd.grad(ya, pa, ag.tensor(cot), allow_unused=True)
        gt = torch.autograd.grad(yt, pt, torch.tensor(cot), allow_unused=True)
        for i, (a, t) in enumerate(zip(ga, gt)):
            if t is None:
                assert a is None or not to_numpy(a).any()
            else:
                assert_close(a, t, rtol, what=f"{type(tm).__name__} grad {i}: ")
    for k, v in tm.state_dict().items():
        assert_close(am.state_dict()[k], v, what=f"{type(tm).__name__} state {k}: ")


R = np.random.default_rng(42)


def _u(*shape):
    return R.uniform(-2, 2, shape)


MODULES = [
    # name, ctor args, ctor kwargs, input arrays
    ("BatchNorm1d", (3,), {}, [_u(5, 3)]),
    ("BatchNorm1d", (3,), {"momentum": None}, [_u(4, 3, 2)]),
    ("BatchNorm1d", (3,), {"affine": False, "track_running_stats": False}, [_u(5, 3)]),
    ("BatchNorm2d", (2,), {"momentum": 0.3, "eps": 1e-3}, [_u(3, 2, 2, 3)]),
    ("BatchNorm3d", (2,), {}, [_u(2, 2, 2, 1, 2)]),
    ("InstanceNorm1d", (3,), {}, [_u(2, 3, 5)]),
    ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}, [_u(2, 3, 5)]),
    ("InstanceNorm2d", (2,), {"affine": True}, [_u(2, 2, 3, 3)]),
    ("InstanceNorm2d", (2,), {}, [_u(2, 3, 3)]),
    ("LayerNorm", ((3, 4),), {}, [_u(2, 3, 4)]),
    ("LayerNorm", (4,), {"elementwise_affine": False}, [_u(2, 3, 4)]),
    ("LayerNorm", (4,), {"bias": False}, [_u(3, 4)]),
    ("GroupNorm", (2, 4), {}, [_u(2, 4, 3)]),
    ("GroupNorm", (3, 6), {"affine": False, "eps": 1e-3}, [_u(2, 6, 2, 2)]),
    ("RMSNorm", (4,), {}, [_u(2, 3, 4)]),
    ("LocalResponseNorm", (3,), {"alpha": 0.1}, [_u(2, 5, 3)]),
    ("Bilinear", (3, 2, 4), {}, [_u(5, 3), _u(5, 2)]),
    ("Bilinear", (3, 2, 4), {"bias": False}, [_u(3), _u(2)]),
    ("PReLU", (), {}, [_u(2, 3, 4)]),
    ("PReLU", (3,), {"init": 0.1}, [_u(2, 3, 4)]),
    ("Embedding", (6, 3), {}, [np.array([[0, 2, 5], [1, 1, 4]])]),
    ("Embedding", (6, 3), {"padding_idx": 1}, [np.array([[0, 2, 5], [1, 1, 4]])]),
    ("EmbeddingBag", (6, 3), {}, [np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 2])]),
    ("EmbeddingBag", (6, 3), {"mode": "max"}, [np.array([[0, 2, 5], [1, 1, 4]])]),
    ("EmbeddingBag", (6, 3), {"mode": "sum", "padding_idx": 2},
     [np.array([[0, 2, 5], [2, 1, 4]])]),
    ("PairwiseDistance", (), {"p": 3.0, "keepdim": True}, [_u(4, 3), _u(4, 3)]),
    ("CosineSimilarity", (), {"dim": 0}, [_u(4, 3), _u(4, 3)]),
    ("Dropout", (0.3,), {}, [_u(3, 4)]),
    ("AlphaDropout", (0.3,), {}, [_u(3, 4)]),
] + [(name, args, {}, [_u(2, 4)]) for name, args in [
    ("GELU", ()), ("SiLU", ()), ("Mish", ()), ("ELU", (0.5,)), ("SELU", ()), ("CELU", (1.5,)),
    ("LeakyReLU", (0.2,)), ("Hardtanh", (-0.5, 1.5)), ("ReLU6", ()), ("Hardswish", ()),
    ("Hardsigmoid", ()), ("Softplus", (2.0, 3.0)), ("Softsign", ()), ("Tanhshrink", ()),
    ("Threshold", (0.1, -3.0)), ("GLU", ()), ("LogSigmoid", ()), ("Softmin", (1,)),
    ("Hardshrink", (0.3,)), ("Softshrink", (0.3,)), ("RReLU", ()), ("Softmax2d", ())]]
MODULES = [m if m[0] != "Softmax2d" else (m[0], m[1], m[2], [_u(2, 3, 2)]) for m in MODULES]


@pytest.mark.parametrize("name,args,kwargs,arrays", MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_module_matches_torch(torch, name, args, kwargs, arrays):
    am, tm = _both(torch, name, *args, **kwargs)
    assert list(am.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in am.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in am.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert repr(am) == repr(tm)
    random = name in ("Dropout", "AlphaDropout", "RReLU")
    if not random:
        _check_module(torch, am, tm, arrays, train=True)
        _check_module(torch, am, tm, arrays, train=True)    # running stats move twice
    _check_module(torch, am, tm, arrays, train=False)


def test_batchnorm_running_stats_over_training_steps(torch):
    am, tm = _both(torch, "BatchNorm2d", 3, momentum=None)
    for step in range(3):
        x = R.standard_normal((4, 3, 2, 2)) * (step + 1) + step
        am(ag.tensor(x))
        tm(torch.tensor(x))
    assert int(am.num_batches_tracked) == 3
    for k in ("running_mean", "running_var"):
        assert_close(getattr(am, k), getattr(tm, k))
    am.eval()
    tm.eval()
    x = R.standard_normal((2, 3, 2, 2))
    assert_close(am(ag.tensor(x)), tm(torch.tensor(x)))
    am.reset_running_stats()
    assert not am.running_mean.numpy().any() and int(am.num_batches_tracked) == 0


def test_default_init_and_dtypes():
    assert ag.nn.BatchNorm1d(4).weight.dtype is ag.float32
    ln = ag.nn.LayerNorm(5)
    assert to_numpy(ln.weight).tolist() == [1.0] * 5 and to_numpy(ln.bias).tolist() == [0.0] * 5
    emb = ag.nn.Embedding(1000, 8, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert not w[3].any() and abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05
    bil = ag.nn.Bilinear(16, 4, 5)
    assert tuple(bil.weight.shape) == (5, 16, 4) and np.abs(to_numpy(bil.weight)).max() <= 0.25
    assert to_numpy(ag.nn.PReLU(3).weight).tolist() == [0.25] * 3


def test_dropout_modules_train_and_eval():
    ag.manual_seed(0)
    x = ag.ones(2000)
    d = ag.nn.Dropout(0.25)
    y = d(x).numpy()
    assert np.allclose(np.unique(y), [0.0, 1 / 0.75])
    assert abs((y == 0).mean() - 0.25) < 0.05
    d.eval()
    assert d(x) is x
    d2 = ag.nn.Dropout2d(0.5)
    y = d2(ag.ones(50, 8, 3, 3)).numpy()
    assert (y.reshape(400, 9).std(1) == 0).all()        # whole channels kept or dropped
    a = ag.nn.AlphaDropout(0.2)
    y = a(ag.randn(20000)).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05    # self-normalising
    with pytest.raises(ValueError, match="between 0 and 1"):
        ag.nn.Dropout(1.5)


def test_embedding_from_pretrained_and_max_norm(torch):
    w = R.standard_normal((5, 3)) * 3
    am = ag.nn.Embedding.from_pretrained(ag.tensor(w), max_norm=1.0)
    tm = torch.nn.Embedding.from_pretrained(torch.tensor(w), max_norm=1.0)
    idx = np.array([0, 3, 3])
    assert_close(am(ag.tensor(idx)), tm(torch.tensor(idx)))
    assert_close(am.weight, tm.weight)                   # rows 0 and 3 renormalised in place
    assert not am.weight.requires_grad


def test_module_errors_match_torch(torch):
    for name, args, x in [("BatchNorm1d", (3,), np.zeros((2, 3, 4, 5))),
                          ("BatchNorm2d", (3,), np.zeros((2, 3))),
                          ("InstanceNorm1d", (3,), np.zeros((2, 3, 4, 5)))]:
        with pytest.raises(ValueError) as ea:
            getattr(ag.nn, name)(*args)(ag.tensor(x))
        with pytest.raises(ValueError) as et:
            getattr(torch.nn, name)(*args)(torch.tensor(x))
        assert str(ea.value) == str(et.value)
    with pytest.raises(ValueError, match="divisible"):
        ag.nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        ag.nn.BatchNorm1d(3)(ag.zeros(1, 3))


def test_loss_modules_match_torch(torch):
    x, y = _u(4, 3), R.uniform(0.1, 0.9, (4, 3))
    sign = np.array([1.0, -1.0, 1.0, -1.0])
    cases = [
        ("HuberLoss", {"delta": 0.5}, [x, y]), ("BCELoss", {}, [y, R.uniform(0, 1, (4, 3))]),
        ("BCEWithLogitsLoss", {"pos_weight": np.array([1.0, 2.0, 0.5])}, [x, y]),
        ("KLDivLoss", {"reduction": "batchmean"}, [x, y]),
        ("KLDivLoss", {"reduction": "sum", "log_target": True}, [x, _u(4, 3)]),
        ("PoissonNLLLoss", {"full": True}, [x, y * 4]),
        ("GaussianNLLLoss", {"reduction": "sum"}, [x, _u(4, 3), y]),
        ("MarginRankingLoss", {"margin": 0.2}, [_u(4), _u(4), sign]),
        ("HingeEmbeddingLoss", {}, [_u(4), sign]),
        ("CosineEmbeddingLoss", {"margin": 0.1}, [x, _u(4, 3), sign]),
        ("SoftMarginLoss", {}, [_u(4), sign]),
        ("MultiLabelSoftMarginLoss", {}, [x, (y > 0.5) * 1.0]),
        ("MultiLabelMarginLoss", {},
         [x, np.array([[2, 0, -1], [1, -1, 0], [0, 1, 2], [-1, 0, 0]])]),
        ("MultiMarginLoss", {"p": 2, "weight": np.array([1.0, 2.0, 0.5])},
         [x, np.array([0, 2, 1, 1])]),
        ("TripletMarginLoss", {"swap": True}, [x, _u(4, 3), _u(4, 3)]),
        ("TripletMarginWithDistanceLoss", {"margin": 0.5}, [x, _u(4, 3), _u(4, 3)]),
        ("CrossEntropyLoss", {"label_smoothing": 0.1, "reduction": "sum"},
         [x, np.array([0, 2, 1, 1])]),
    ]
    for name, kw, arrays in cases:
        kw_a = {k: ag.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        kw_t = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        am, tm = getattr(ag.nn, name)(**kw_a), getattr(torch.nn, name)(**kw_t)
        assert list(am.state_dict()) == list(tm.state_dict()), name
        # targets of these losses take no gradient in torch
        xa = [ag.tensor(a, requires_grad=i == 0) for i, a in enumerate(arrays)]
        xt = [torch.tensor(a, requires_grad=i == 0) for i, a in enumerate(arrays)]
        la, lt = am(*xa), tm(*xt)
        assert_close(la, lt, what=f"{name}: ")
        ga, = ag.autograd.grad(la, xa[0])
        gt, = torch.autograd.grad(lt, xt[0])
        assert_close(ga, gt, what=f"{name} grad: ")


MHA_CASES = [
    ({}, {}),
    ({"batch_first": True}, {"need_weights": False}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {"average_attn_weights": False}),
    ({"kdim": 3, "vdim": 5, "bias": False}, {}),
    ({}, {"key_padding_mask": np.array([[False, True, False, False, False],
                                        [False, False, False, True, True]])}),
    ({"add_bias_kv": True}, {"attn_mask": R.uniform(-1, 0, (3, 5))}),
    ({}, {"attn_mask": np.triu(np.ones((3, 5), bool), 1), "need_weights": False,
          "is_causal": True}),
]


@pytest.mark.parametrize("ctor,call", MHA_CASES)
def test_multihead_attention_matches_torch(torch, ctor, call):
    am, tm = _both(torch, "MultiheadAttention", 4, 2, **ctor)
    assert list(am.state_dict()) == list(tm.state_dict()) and repr(am) == repr(tm)
    kdim, vdim = ctor.get("kdim", 4), ctor.get("vdim", 4)
    first = ctor.get("batch_first", False)
    shape = (lambda n, l, e: (n, l, e)) if first else (lambda n, l, e: (l, n, e))
    arrays = [_u(*shape(2, 3, 4)), _u(*shape(2, 5, kdim)), _u(*shape(2, 5, vdim))]
    xa, xt = _inputs(torch, arrays)
    kw_a = {k: ag.tensor(v) if isinstance(v, np.ndarray) else v for k, v in call.items()}
    kw_t = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in call.items()}
    (oa, wa), (ot, wt) = am(*xa, **kw_a), tm(*xt, **kw_t)
    assert_close(oa, ot)
    assert (wa is None) == (wt is None)
    if wt is not None:
        assert_close(wa, wt)
    cot = R.standard_normal(tuple(ot.shape))
    pa, pt = list(am.parameters()) + xa, list(tm.parameters()) + xt
    for a, t in zip(ag.autograd.grad(oa, pa, ag.tensor(cot)),
                    torch.autograd.grad(ot, pt, torch.tensor(cot))):
        assert_close(a, t)


def test_multihead_attention_unbatched_and_errors(torch):
    am, tm = _both(torch, "MultiheadAttention", 4, 2)
    x = _u(3, 4)
    (oa, wa), (ot, wt) = am(*[ag.tensor(x)] * 3), tm(*[torch.tensor(x)] * 3)
    assert_close(oa, ot)
    assert_close(wa, wt)
    with pytest.raises(AssertionError, match="divisible"):
        ag.nn.MultiheadAttention(5, 2)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        am(*[ag.tensor(x)] * 3, is_causal=True)
