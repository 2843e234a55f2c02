"""nn.RNN/LSTM/GRU and their cells vs torch (float64, same weights): outputs, final states,
input and parameter gradients, state_dict names, init bounds, repr, errors, and per-sample
gradients under vmap(grad) vs torch.func."""
import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close, to_numpy

rng = np.random.default_rng(15)

CONFIGS = [
    ("RNN", {}),
    ("RNN", dict(nonlinearity="relu", num_layers=2, bidirectional=True)),
    ("RNN", dict(num_layers=3, bias=False, batch_first=True)),
    ("LSTM", {}),
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(num_layers=2, proj_size=2, bidirectional=True)),
    ("GRU", {}),
    ("GRU", dict(num_layers=2, bidirectional=True, bias=False)),
]


def _pair(torch, name, *args, **kwargs):
    """The same module in both libraries, arraygrad's loaded with torch's float64 weights."""
    tm = getattr(torch.nn, name)(*args, **kwargs).double()
    am = getattr(ag.nn, name)(*args, **kwargs).double()
    assert list(am.state_dict()) == list(tm.state_dict())
    for (ka, va), (kt, vt) in zip(am.state_dict().items(), tm.state_dict().items()):
        assert tuple(va.shape) == tuple(vt.shape), ka
    am.load_state_dict({k: ag.tensor(to_numpy(v)) for k, v in tm.state_dict().items()})
    return am, tm


def _tensors(torch, *arrays):
    return ([ag.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _flat(out):
    """Output and final states as a flat list."""
    y, h = out
    return [y] + (list(h) if isinstance(h, tuple) else [h])


def _compare(torch, am, tm, xa, xt):
    """Forward results and gradients (of a random cotangent) wrt inputs and parameters."""
    outs_a = _flat(am(*xa))
    outs_t = _flat(tm(*xt))
    for k, (a, t) in enumerate(zip(outs_a, outs_t)):
        assert_close(a, t, what=f"{type(tm).__name__} output {k}: ")
    cots = [rng.standard_normal(tuple(t.shape)) for t in outs_t]
    loss_a = sum((o * ag.tensor(c)).sum() for o, c in zip(outs_a, cots))
    loss_t = sum((o * torch.tensor(c)).sum() for o, c in zip(outs_t, cots))
    loss_a.backward()
    loss_t.backward()
    for (name, pa), pt in zip(am.named_parameters(), tm.parameters()):
        assert_close(pa.grad, pt.grad, what=f"grad of {name}: ")
    for a, t in zip(xa, xt):
        assert_close(a.grad, t.grad, what="input grad: ")


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=lambda c: str(c))
def test_module_matches_torch(torch, name, kwargs):
    am, tm = _pair(torch, name, 3, 4, **kwargs)
    x = rng.standard_normal((2, 5, 3) if kwargs.get("batch_first") else (5, 2, 3))
    xa, xt = _tensors(torch, x)
    _compare(torch, am, tm, xa, xt)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=lambda c: str(c))
def test_module_with_initial_state_matches_torch(torch, name, kwargs):
    am, tm = _pair(torch, name, 3, 4, **kwargs)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h = kwargs.get("proj_size", 4)
    x = rng.standard_normal((2, 5, 3) if kwargs.get("batch_first") else (5, 2, 3))
    arrays = [x, rng.standard_normal((layers, 2, h))]
    if name == "LSTM":
        arrays.append(rng.standard_normal((layers, 2, 4)))
    (xa, *sa), (xt, *st) = _tensors(torch, *arrays)
    outs_a = _flat(am(xa, tuple(sa) if name == "LSTM" else sa[0]))
    outs_t = _flat(tm(xt, tuple(st) if name == "LSTM" else st[0]))
    for a, t in zip(outs_a, outs_t):
        assert_close(a, t)
    sum(o.sum() for o in outs_a).backward()
    sum(o.sum() for o in outs_t).backward()
    for a, t in zip([xa] + sa, [xt] + st):
        assert_close(a.grad, t.grad, what="grad of input/initial state: ")


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input_matches_torch(torch, name):
    am, tm = _pair(torch, name, 3, 4, num_layers=2, bidirectional=True)
    x, h = rng.standard_normal((5, 3)), rng.standard_normal((4, 4))
    if name == "LSTM":
        (xa, ha, ca), (xt, ht, ct) = _tensors(torch, x, h, h + 1)
        ya, (hna, cna) = am(xa, (ha, ca))
        yt, (hnt, cnt) = tm(xt, (ht, ct))
        assert_close(cna, cnt)
    else:
        (xa, ha), (xt, ht) = _tensors(torch, x, h)
        ya, hna = am(xa, ha)
        yt, hnt = tm(xt, ht)
    assert_close(ya, yt)
    assert_close(hna, hnt)
    assert_close(am(xa)[0], tm(xt)[0])


@pytest.mark.parametrize("name,kwargs", [("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu")),
                                         ("LSTMCell", {}), ("GRUCell", dict(bias=False))],
                         ids=lambda c: str(c))
def test_cells_match_torch(torch, name, kwargs):
    am, tm = _pair(torch, name, 3, 4, **kwargs)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    arrays = [x, h] + ([h - 1] if name == "LSTMCell" else [])
    (xa, *sa), (xt, *st) = _tensors(torch, *arrays)
    state_a = tuple(sa) if name == "LSTMCell" else sa[0]
    state_t = tuple(st) if name == "LSTMCell" else st[0]
    ya, yt = am(xa, state_a), tm(xt, state_t)
    ya, yt = (list(ya), list(yt)) if name == "LSTMCell" else ([ya], [yt])
    for a, t in zip(ya, yt):
        assert_close(a, t)
    sum(o.sum() * (k + 1) for k, o in enumerate(ya)).backward()
    sum(o.sum() * (k + 1) for k, o in enumerate(yt)).backward()
    for (n, pa), pt in zip(am.named_parameters(), tm.parameters()):
        assert_close(pa.grad, pt.grad, what=f"grad of {n}: ")
    for a, t in zip([xa] + sa, [xt] + st):
        assert_close(a.grad, t.grad)
    # no state and unbatched input
    ya, yt = am(xa[0]), tm(xt[0])
    ya, yt = (list(ya), list(yt)) if name == "LSTMCell" else ([ya], [yt])
    for a, t in zip(ya, yt):
        assert_close(a, t)


def test_parameters_init_and_repr(torch):
    m = ag.nn.LSTM(3, 16, num_layers=2, bidirectional=True, proj_size=5)
    t = torch.nn.LSTM(3, 16, num_layers=2, bidirectional=True, proj_size=5)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert repr(m) == repr(t)
    for p in m.parameters():
        v = to_numpy(p)
        assert p.dtype == ag.float32
        assert np.all(np.abs(v) <= 0.25) and v.std() > 0.1     # U(-1/4, 1/4)
    for args, kw in [((3, 4), dict(nonlinearity="relu", bias=False)), ((3, 4), {})]:
        assert repr(ag.nn.RNNCell(*args, **kw)) == repr(torch.nn.RNNCell(*args, **kw))
        assert repr(ag.nn.GRU(*args, batch_first=True)) == repr(torch.nn.GRU(*args, batch_first=True))
    assert len(m.all_weights) == 4 and len(m.all_weights[0]) == 5
    assert ag.nn.RNN(3, 4, 2, "relu").nonlinearity == "relu"


def test_dropout_between_layers():
    m = ag.nn.GRU(3, 8, num_layers=2, dropout=0.5).double()
    x = ag.tensor(rng.standard_normal((4, 2, 3)))
    m.eval()
    y_eval = to_numpy(m(x)[0])
    np.testing.assert_array_equal(to_numpy(m(x)[0]), y_eval)
    m.train()
    assert not np.allclose(to_numpy(m(x)[0]), y_eval)
    m.dropout = 0.0
    np.testing.assert_allclose(to_numpy(m(x)[0]), y_eval)


def test_errors_match_torch(torch):
    checks = [
        (lambda nn: nn.RNN(3, 4)(lib.randn(2, 2, 2, 3)), ValueError, "Expected input to be 2D or 3D"),
        (lambda nn: nn.RNN(3, 4)(lib.randn(2, 2, 5)), RuntimeError, "must be equal to input_size"),
        (lambda nn: nn.RNN(3, 4)(lib.randn(2, 2, 3), lib.randn(2, 2, 4)), RuntimeError,
         r"Expected hidden size \(1, 2, 4\), got \[2, 2, 4\]"),
        (lambda nn: nn.GRU(3, 4)(lib.randn(2, 2, 3), lib.randn(2, 4)), RuntimeError,
         "hx should also be 3-D"),
        (lambda nn: nn.LSTM(3, 4)(lib.randn(2, 3), (lib.randn(1, 2, 4), lib.randn(1, 2, 4))),
         RuntimeError, "hx and cx should also be 2-D"),
        (lambda nn: nn.LSTM(3, 4)(lib.randn(2, 2, 3), (lib.randn(1, 2, 4), lib.randn(1, 3, 4))),
         RuntimeError, r"Expected hidden\[1\] size"),
        (lambda nn: nn.GRU(3, 4)(lib.randn(0, 2, 3)), RuntimeError,
         "Expected sequence length to be larger than 0"),
        (lambda nn: nn.LSTM(3, 4).double()(lib.randn(2, 2, 3)), ValueError,
         r"input dtype \(.*float32\) does not match weight dtype \(.*float64\)"),
        (lambda nn: nn.RNN(3, 4, nonlinearity="foo"), ValueError, "Unknown nonlinearity"),
        (lambda nn: nn.RNN(3, 4, dropout=1.5), ValueError, "dropout should be a number"),
        (lambda nn: nn.GRU(3, 4, proj_size=2), ValueError, "proj_size argument is only"),
        (lambda nn: nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller"),
        (lambda nn: nn.RNN(3, 0), ValueError, "hidden_size must be greater than zero"),
        (lambda nn: nn.RNN(3, 4, num_layers=0), ValueError, "num_layers must be greater"),
        (lambda nn: nn.RNNCell(3, 4)(lib.randn(2, 2, 3)), ValueError, "Expected input to be 1D or 2D"),
        (lambda nn: nn.GRUCell(3, 4)(lib.randn(2, 5)), RuntimeError, "inconsistent input_size"),
        (lambda nn: nn.LSTMCell(3, 4)(lib.randn(2, 3), (lib.randn(3, 4), lib.randn(3, 4))),
         RuntimeError, "Input batch size 2 doesn't match hidden0 batch size 3"),
    ]
    for lib in (torch, ag):
        for make, exc, msg in checks:
            with pytest.raises(exc, match=msg):
                make(lib.nn)
    with pytest.raises(TypeError, match="LSTM: hx must be a tuple"):
        ag.nn.LSTM(3, 4)(ag.randn(2, 2, 3), ag.randn(1, 2, 4))
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ag.nn.RNN(3, 4, dropout=0.5)


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_per_sample_grads_under_vmap_match_torch(torch, name):
    """torch.func's per-sample-gradients recipe over unbatched sequences. torch.func cannot
    vmap its fused RNN kernels, so the reference is torch's autograd one sample at a time."""
    am, tm = _pair(torch, name, 3, 4, num_layers=2, bidirectional=True)
    xs = rng.standard_normal((3, 5, 3))
    params = {k: v.detach() for k, v in am.named_parameters()}

    def loss(params, seq):
        out, _ = ag.func.functional_call(am, params, (seq,))
        return (out ** 2).sum()

    ours = ag.func.vmap(ag.func.grad(loss), in_dims=(None, 0))(params, ag.tensor(xs))
    for i, x in enumerate(xs):
        tm.zero_grad()
        (tm(torch.tensor(x))[0] ** 2).sum().backward()
        for k, p in tm.named_parameters():
            assert_close(ours[k][i], p.grad, what=f"sample {i}, {k}: ")


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_gradcheck_forward_ad_and_double_backward(name):
    """Finite differences for first derivatives (reverse and forward mode) and second
    derivatives, wrt the input, the initial state and a weight."""
    m = getattr(ag.nn, name)(2, 2, bidirectional=True).double()
    x = ag.tensor(rng.standard_normal((2, 1, 2)), requires_grad=True)
    h = ag.tensor(rng.standard_normal((2, 1, 2)), requires_grad=True)
    w = m.weight_hh_l0_reverse

    def f(x, h, w):
        out = ag.func.functional_call(m, {"weight_hh_l0_reverse": w},
                                      (x, (h, h * 0.5) if name == "LSTM" else h))
        return out[0]

    args = (x, h, w.detach().requires_grad_())
    assert ag.autograd.gradcheck(f, args, check_forward_ad=True)
    assert ag.autograd.gradgradcheck(f, args, fast_mode=True)


# ----------------------------------------------------------------- packed sequences
def _packed_run(L, module, enforce_sorted, with_hx):
    """A packed batch (lengths out of order unless enforce_sorted) through `module`; returns the
    padded output, final states, and gradients of the input and parameters."""
    R = L.nn.utils.rnn
    r = np.random.default_rng(3)
    lengths = [5, 3, 2, 1] if enforce_sorted else [2, 5, 1, 3]
    x = L.tensor(r.standard_normal((4, 5, 3)), requires_grad=True)
    packed = R.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=enforce_sorted)
    hx = None
    if with_hx:
        layers = module.num_layers * (2 if module.bidirectional else 1)
        hx = L.tensor(r.standard_normal((layers, 4, 4)))
        if isinstance(module, L.nn.LSTM):
            hx = (hx, L.tensor(r.standard_normal((layers, 4, 4))))
    out, h = module(packed, hx)
    assert isinstance(out, R.PackedSequence)
    y, _ = R.pad_packed_sequence(out, batch_first=True)
    states = list(h) if isinstance(h, tuple) else [h]
    loss = (y * y.detach().cos()).sum() + sum((s * s.detach().sin()).sum() for s in states)
    loss.backward()
    return [y, *states, x.grad, *(p.grad for p in module.parameters())]


@pytest.mark.parametrize("name,kwargs", [("RNN", {}), ("LSTM", dict(num_layers=2,
                                                                    bidirectional=True)),
                                         ("GRU", dict(bidirectional=True))])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_input_matches_torch(torch, name, kwargs, enforce_sorted):
    am, tm = _pair(torch, name, 3, 4, **kwargs)
    for with_hx in (False, True):
        am.zero_grad()
        tm.zero_grad()
        got = _packed_run(ag, am, enforce_sorted, with_hx)
        want = _packed_run(torch, tm, enforce_sorted, with_hx)
        for k, (a, t) in enumerate(zip(got, want)):
            assert_close(a, t, what=f"{name} packed result {k}: ")


def _pack_round_trip(L, batch_first, enforce_sorted):
    R = L.nn.utils.rnn
    r = np.random.default_rng(4)
    lengths = [5, 3, 2, 1] if enforce_sorted else [2, 5, 1, 3]
    shape = (4, 5, 3) if batch_first else (5, 4, 3)
    x = L.tensor(r.standard_normal(shape), requires_grad=True)
    p = R.pack_padded_sequence(x, L.tensor(lengths), batch_first=batch_first,
                               enforce_sorted=enforce_sorted)
    y, n = R.pad_packed_sequence(p, batch_first=batch_first, padding_value=-1.0,
                                 total_length=6)
    (y * y.detach().cos()).sum().backward()
    idx = [None if i is None else i for i in (p.sorted_indices, p.unsorted_indices)]
    return [p.data, p.batch_sizes, y, n, x.grad] + [i for i in idx if i is not None]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_pad_match_torch(torch, batch_first, enforce_sorted):
    got = _pack_round_trip(ag, batch_first, enforce_sorted)
    want = _pack_round_trip(torch, batch_first, enforce_sorted)
    assert len(got) == len(want)
    for a, t in zip(got, want):
        assert a.dtype.name == str(t.dtype).split(".")[1]
        assert_close(a, t)


def test_sequence_helpers_match_torch(torch):
    r = np.random.default_rng(5)
    arrays = [r.standard_normal((n, 2)) for n in (3, 1, 4)]
    res = {}
    for L in (ag, torch):
        R = L.nn.utils.rnn
        seqs = [L.tensor(a) for a in arrays]
        packed = R.pack_sequence(seqs, enforce_sorted=False)
        res[L] = [R.pad_sequence(seqs), R.pad_sequence(seqs, batch_first=True, padding_value=7.0,
                                                       padding_side="left"),
                  packed.data, packed.batch_sizes,
                  *R.unpack_sequence(packed),
                  *R.unpad_sequence(R.pad_sequence(seqs, batch_first=True), L.tensor([3, 1, 4]),
                                    batch_first=True)]
    for a, t in zip(res[ag], res[torch]):
        assert_close(a, t)


def test_packing_errors_match_torch(torch):
    for L in (ag, torch):
        R = L.nn.utils.rnn
        x = L.zeros(4, 3, 2)
        with pytest.raises(RuntimeError, match="sorted in decreasing order"):
            R.pack_padded_sequence(x, [1, 3, 2])
        with pytest.raises(RuntimeError, match="greater than 0"):
            R.pack_padded_sequence(x, [3, 2, 0])
        p = R.pack_padded_sequence(x, [4, 2, 1])
        with pytest.raises(ValueError, match="Expected total_length to be at least"):
            R.pad_packed_sequence(p, total_length=3)
